# Mistake: forgets the transpose (hidden @ E instead of hidden @ E.T); fails or is wrong unless V == d.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix
