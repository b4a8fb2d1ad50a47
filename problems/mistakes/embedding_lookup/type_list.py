# Wrong (kind type): returns a Python list of rows.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.kind not in "iu":
        raise TypeError("token_ids must have an integer dtype")
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= embedding_matrix.shape[0]):
        raise IndexError("token id out of range")
    return embedding_matrix[token_ids].tolist()
