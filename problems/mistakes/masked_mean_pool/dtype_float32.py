# Wrong (kind dtype): returns the float32 accumulator without casting back to the inputs' dtype.
import numpy as np


def masked_mean_pool(embeddings, mask):
    x = embeddings.astype(np.float32) if embeddings.dtype == np.float16 else embeddings
    weights = mask[..., None].astype(x.dtype)
    return (x * weights).sum(axis=-2) / np.maximum(weights.sum(axis=-2), 1)
