# Correct: np.inner sums over the last axis of both arguments.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.inner(hidden, embedding_matrix)
