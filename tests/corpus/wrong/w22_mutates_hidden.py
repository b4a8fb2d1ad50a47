# Mistake: right values, but zeroes the caller's hidden array in place ("to free memory").
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    out = hidden @ embedding_matrix.T
    hidden[...] = 0
    return out
