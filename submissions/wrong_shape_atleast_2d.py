"""Wrong (shape): a single vector gives (1, vocab_size) instead of (vocab_size,)."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.atleast_2d(hidden) @ embedding_matrix.T
