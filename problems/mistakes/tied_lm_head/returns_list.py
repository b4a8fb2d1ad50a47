"""Mistake (type): returns nested Python lists instead of an array."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return (hidden @ embedding_matrix.T).tolist()
