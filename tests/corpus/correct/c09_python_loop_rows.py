# Correct: an explicit Python loop over the vocabulary rows, one dot product per row.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    vocab = embedding_matrix.shape[0]
    out = np.empty(hidden.shape[:-1] + (vocab,), dtype=hidden.dtype)
    for v in range(vocab):
        out[..., v] = hidden @ embedding_matrix[v]
    return out
