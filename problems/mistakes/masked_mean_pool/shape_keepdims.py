# Wrong (kind shape): keeps the sequence axis, (..., 1, d_model).
import numpy as np


def masked_mean_pool(embeddings, mask):
    acc = np.promote_types(embeddings.dtype, np.float32)
    weights = mask[..., None].astype(acc)
    total = (embeddings.astype(acc) * weights).sum(axis=-2, keepdims=True)
    return (total / np.maximum(weights.sum(axis=-2, keepdims=True), 1)).astype(embeddings.dtype)
