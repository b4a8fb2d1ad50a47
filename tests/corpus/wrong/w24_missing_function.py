# Mistake: the function has the wrong name (tied_head), so tied_lm_head is missing.
import numpy as np


def tied_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
