# Mistake: returns the worked example's answer [2, -1, 1] for every input.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.array([2.0, -1.0, 1.0], dtype=hidden.dtype)
