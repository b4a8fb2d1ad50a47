# Correct: loop over the flattened leading positions, one matrix-vector product each.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    d_model = embedding_matrix.shape[1]
    rows = hidden.reshape(-1, d_model)
    out = np.zeros((rows.shape[0], embedding_matrix.shape[0]), dtype=hidden.dtype)
    for i, row in enumerate(rows):
        out[i] = embedding_matrix @ row
    return out.reshape(hidden.shape[:-1] + (embedding_matrix.shape[0],))
