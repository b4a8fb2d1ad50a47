# Correct: np.matmul against the transposed embedding table.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.matmul(hidden, embedding_matrix.T)
