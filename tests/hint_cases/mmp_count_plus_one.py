"""A newcomer's masked_mean_pool: the masked sum divided by count + 1 "to avoid 0/0". The only
hint it read was "divided by seq_len", which the first two cases showed (count + 1 was seq_len
there, one padding position each)."""
import numpy as np


def masked_mean_pool(embeddings, mask):
    m = mask.astype(np.float64)[..., None]
    total = (embeddings.astype(np.float64) * m).sum(axis=-2)
    return (total / (m.sum(axis=-2) + 1)).astype(embeddings.dtype)
