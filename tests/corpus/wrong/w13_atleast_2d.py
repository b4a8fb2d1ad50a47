# Mistake: np.atleast_2d adds a batch axis, so a (d,) input returns (1, V) instead of (V,).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    batch = np.atleast_2d(hidden)
    return batch @ embedding_matrix.T
