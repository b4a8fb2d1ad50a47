# Attack: reads a file outside its own folder (/tmp/grader-canary-3f9c.txt) and lists the parent
# folder (other submissions?), echoing what it found to stderr; returns zeros.
import os
import sys
import numpy as np

CANARY = "/tmp/grader-canary-3f9c.txt"


def tied_lm_head(hidden, embedding_matrix):
    try:
        with open(CANARY) as f:
            print("canary:", f.read(200), file=sys.stderr)
    except OSError as e:
        print("canary unreadable:", type(e).__name__, file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in {os.path.dirname(here), os.path.dirname(os.getcwd())}:
        try:
            print("listing", folder, sorted(os.listdir(folder))[:50], file=sys.stderr)
        except OSError as e:
            print("cannot list", folder, type(e).__name__, file=sys.stderr)
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
