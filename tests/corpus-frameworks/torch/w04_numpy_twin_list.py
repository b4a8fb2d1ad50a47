# wrong: a Python list (the twin of a NumPy .tolist())
import torch


def tied_lm_head(hidden, embedding_matrix):
    return (hidden @ embedding_matrix.T).tolist()
