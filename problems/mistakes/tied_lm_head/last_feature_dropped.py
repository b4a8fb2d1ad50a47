"""Mistake (tolerance): an off-by-one slice leaves the last feature out of every dot product."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return hidden[..., :-1] @ embedding_matrix[:, :-1].T
