# Mistake: divides by |hidden| and multiplies back: right values, except NaN when hidden is all zeros.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    norm = np.sqrt(np.sum(hidden.astype(np.float64) ** 2, axis=-1, keepdims=True))
    direction = hidden / norm
    return ((direction @ embedding_matrix.T) * norm).astype(hidden.dtype)
