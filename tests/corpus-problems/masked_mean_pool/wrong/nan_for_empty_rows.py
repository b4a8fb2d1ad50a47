# Divides by the count with no guard: rows with no valid token give NaN.
import numpy as np


def masked_mean_pool(embeddings, mask):
    m = mask[..., None].astype(np.float64)
    with np.errstate(invalid="ignore"):
        return ((embeddings * m).sum(axis=-2) / m.sum(axis=-2)).astype(embeddings.dtype)
