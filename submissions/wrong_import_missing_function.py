"""Wrong (import): the function has another name."""
import numpy as np


def lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
