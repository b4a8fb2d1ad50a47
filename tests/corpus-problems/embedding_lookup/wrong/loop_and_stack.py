# Stacks one row per id: np.stack of no rows raises for empty ids, and a 0-d id cannot be iterated.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.kind not in "iu":
        raise TypeError("integer ids only")
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= embedding_matrix.shape[0]):
        raise IndexError("token id out of range")
    rows = [embedding_matrix[i] for i in token_ids.reshape(-1)]
    return np.stack(rows).reshape(token_ids.shape + embedding_matrix.shape[1:])
