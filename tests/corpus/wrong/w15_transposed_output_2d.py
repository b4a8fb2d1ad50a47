# Mistake: for a 2-D batch computes E @ hidden.T, returning (V, B) instead of (B, V).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    if hidden.ndim == 2:
        return embedding_matrix @ hidden.T
    return hidden @ embedding_matrix.T
