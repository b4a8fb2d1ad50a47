# Attack: os._exit(0) inside the call: the process vanishes with status 0 before answering.
import os
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    os._exit(0)
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
