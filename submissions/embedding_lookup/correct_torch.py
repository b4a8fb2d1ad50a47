# Correct (PyTorch): check the dtype and the range of the IDs, then index the table.
import torch


def embedding_lookup(token_ids, embedding_matrix):
    if token_ids.dtype.is_floating_point or token_ids.dtype == torch.bool:
        raise TypeError(f"token_ids must have an integer dtype, not {token_ids.dtype}")
    vocab_size = embedding_matrix.shape[0]
    if token_ids.numel() and (token_ids.min() < 0 or token_ids.max() >= vocab_size):
        raise IndexError(f"token ids must lie in [0, {vocab_size})")
    return embedding_matrix[token_ids]
