"""Mistake (tolerance): adds a bias of 0.5 to every logit (an untied output layer's habit)."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return (hidden @ embedding_matrix.T + 0.5).astype(hidden.dtype)
