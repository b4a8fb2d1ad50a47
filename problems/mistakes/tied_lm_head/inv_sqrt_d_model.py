"""Mistake (tolerance): scales the logits by 1/sqrt(d_model), as attention scores are."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    d_model = hidden.shape[-1]
    return ((hidden @ embedding_matrix.T) / np.sqrt(d_model)).astype(hidden.dtype)
