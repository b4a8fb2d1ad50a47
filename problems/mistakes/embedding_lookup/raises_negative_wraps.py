# Wrong (kind raises): checks only the upper bound, so -1 silently picks the last row.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.kind not in "iu":
        raise TypeError("token_ids must have an integer dtype")
    if np.any(token_ids >= embedding_matrix.shape[0]):
        raise IndexError("token id >= vocab_size")
    return embedding_matrix[token_ids]
