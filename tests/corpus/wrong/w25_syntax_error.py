# Mistake: syntax error (missing closing parenthesis).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.matmul(hidden, embedding_matrix.T
