# Correct (NumPy): check the dtype and the range of the IDs, then index the table.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    token_ids = np.asarray(token_ids)
    if token_ids.dtype.kind not in "iu":
        raise TypeError(f"token_ids must have an integer dtype, not {token_ids.dtype}")
    vocab_size = embedding_matrix.shape[0]
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= vocab_size):
        raise IndexError(f"token ids must lie in [0, {vocab_size})")
    return embedding_matrix[token_ids]
