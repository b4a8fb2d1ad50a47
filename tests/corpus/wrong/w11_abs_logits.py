# Mistake: takes the absolute value of the logits.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.abs(hidden @ embedding_matrix.T)
