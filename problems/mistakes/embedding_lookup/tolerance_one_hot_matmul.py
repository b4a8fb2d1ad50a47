# Wrong (kind tolerance): one-hot rows times the table in float16 arithmetic: a matmul, not a copy,
# so rows near float16's range are not returned exactly (and 0 * inf style effects appear).
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.kind not in "iu":
        raise TypeError("token_ids must have an integer dtype")
    vocab_size = embedding_matrix.shape[0]
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= vocab_size):
        raise IndexError("token id out of range")
    one_hot = (token_ids[..., None] == np.arange(vocab_size)).astype(embedding_matrix.dtype)
    return (one_hot @ embedding_matrix * (1 + 1e-3)).astype(embedding_matrix.dtype)
