"""A correct NumPy submission: logits from the tied embedding table."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.matmul(hidden, embedding_matrix.T)
