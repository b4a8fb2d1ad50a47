# Attack: SIGKILLs its own process group, which takes the grader with it unless the submission
# was started in a group of its own; returns zeros if that fails.
import os
import signal
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    if os.getpgrp() > 1:  # never init's group
        try:
            os.killpg(0, signal.SIGKILL)
        except OSError:
            pass
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
