# Mistake: flattens all leading axes and never restores them: returns (B*T, V) (and (1, V) for a vector).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    rows = hidden.reshape(-1, hidden.shape[-1])
    return rows @ embedding_matrix.T
