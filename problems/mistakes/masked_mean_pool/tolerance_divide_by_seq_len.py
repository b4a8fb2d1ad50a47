# Wrong (kind tolerance): divides the masked sum by seq_len instead of the number of valid tokens.
import numpy as np


def masked_mean_pool(embeddings, mask):
    acc = np.promote_types(embeddings.dtype, np.float32)
    total = (embeddings.astype(acc) * mask[..., None]).sum(axis=-2)
    return (total / embeddings.shape[-2]).astype(embeddings.dtype)
