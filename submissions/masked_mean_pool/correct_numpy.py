# Correct (NumPy): masked sum in float32 (or wider), divide by the clamped count, cast back.
import numpy as np


def masked_mean_pool(embeddings, mask):
    acc = np.promote_types(embeddings.dtype, np.float32)
    weights = mask[..., None].astype(acc)
    total = (embeddings.astype(acc) * weights).sum(axis=-2)
    count = weights.sum(axis=-2)
    return (total / np.maximum(count, 1)).astype(embeddings.dtype)
