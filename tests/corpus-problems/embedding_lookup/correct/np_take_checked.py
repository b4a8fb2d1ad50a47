# NumPy: ValueError for bad dtypes and ranges, then np.take along the rows.
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    ids = np.asarray(token_ids)
    if ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("token ids must be integers")
    if ids.size and not (0 <= ids.min() and ids.max() < len(embedding_matrix)):
        raise ValueError("token id out of range")
    return np.take(embedding_matrix, ids, axis=0)
