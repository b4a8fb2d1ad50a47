# Checks the range but not the dtype: a bool array of vocab_size entries is used as a mask.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    ids = np.asarray(token_ids)
    if ids.size and (ids.min() < 0 or ids.max() >= embedding_matrix.shape[0]):
        raise IndexError("token id out of range")
    return embedding_matrix[ids]
