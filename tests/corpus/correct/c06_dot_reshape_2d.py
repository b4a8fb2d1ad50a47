# Correct: flatten leading axes to a 2-D matrix, np.dot, then restore the leading axes.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    vocab, d_model = embedding_matrix.shape
    lead = hidden.shape[:-1]
    rows = np.reshape(hidden, (-1, d_model))
    flat = np.dot(rows, embedding_matrix.T)
    return flat.reshape(lead + (vocab,))
