"""Mistake (mutation): right logits, but doubles hidden in place first and leaves it so."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    hidden *= 2
    return (hidden @ embedding_matrix.T) * hidden.dtype.type(0.5)
