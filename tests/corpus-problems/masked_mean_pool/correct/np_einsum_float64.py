# NumPy: einsum in float64, divide by the clamped count, round once to the inputs' dtype.
import numpy as np


def masked_mean_pool(embeddings, mask):
    m = mask.astype(np.float64)
    total = np.einsum("...ld,...l->...d", embeddings.astype(np.float64), m)
    count = m.sum(axis=-1)[..., None]
    return (total / np.maximum(count, 1.0)).astype(embeddings.dtype)
