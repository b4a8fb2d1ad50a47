# Mistake: L2-normalises hidden before the projection (NaN for an all-zero hidden vector).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    unit = hidden / np.linalg.norm(hidden, axis=-1, keepdims=True)
    return unit @ embedding_matrix.T
