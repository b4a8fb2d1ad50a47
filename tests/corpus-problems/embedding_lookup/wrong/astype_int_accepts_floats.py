# Converts the ids with astype(np.int64): float and bool ids are accepted instead of refused.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    ids = np.asarray(token_ids).astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= embedding_matrix.shape[0]):
        raise IndexError("token id out of range")
    return embedding_matrix[ids]
