# Correct: transpose the table with the swapaxes method, then np.matmul.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    table_t = embedding_matrix.swapaxes(-1, -2)
    return np.matmul(hidden, table_t)
