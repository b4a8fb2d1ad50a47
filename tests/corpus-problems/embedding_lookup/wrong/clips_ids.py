# Clips out-of-range ids to the table instead of raising.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.kind not in "iu":
        raise TypeError("integer ids only")
    return embedding_matrix[np.clip(token_ids, 0, embedding_matrix.shape[0] - 1)]
