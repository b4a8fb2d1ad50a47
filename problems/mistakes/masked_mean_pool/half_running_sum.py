# Wrong (kind non_finite): keeps the running sum in the input dtype; in float16 it overflows on long sequences.
import numpy as np


def masked_mean_pool(embeddings, mask):
    total = np.zeros(embeddings.shape[:-2] + embeddings.shape[-1:], dtype=embeddings.dtype)
    for t in range(embeddings.shape[-2]):
        total = total + embeddings[..., t, :] * mask[..., t, None].astype(embeddings.dtype)
    count = mask.sum(axis=-1)[..., None].astype(embeddings.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return (total / np.maximum(count, 1)).astype(embeddings.dtype)
