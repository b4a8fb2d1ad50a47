# Attack: unbounded recursion (ends in RecursionError, or a crash if the C stack runs out first).
import numpy as np


def _deeper(x, n):
    return _deeper(x, n + 1) + 1


def tied_lm_head(hidden, embedding_matrix):
    return _deeper(hidden @ embedding_matrix.T, 0)
