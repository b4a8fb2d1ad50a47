"""Mistake (dtype): computes float64 inputs in float32 and returns the float32 result."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    if hidden.dtype == np.float64:
        return hidden.astype(np.float32) @ embedding_matrix.astype(np.float32).T
    return hidden @ embedding_matrix.T
