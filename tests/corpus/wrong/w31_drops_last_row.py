# Mistake: off-by-one: projects onto E[:-1], dropping the last vocabulary row.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix[:-1].T
