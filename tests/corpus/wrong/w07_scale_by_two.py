# Mistake: multiplies the logits by a constant factor 2.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return 2 * (hidden @ embedding_matrix.T)
