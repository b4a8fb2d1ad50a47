# Attack: sleeps for an hour inside the call (idle, no CPU); the grader's timeout must end it.
import time
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    time.sleep(3600)
    return hidden
