# Attack: os.abort() (SIGABRT, possibly a core dump) inside the call.
import os
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    os.abort()
