# Returns the float64 mean without casting back to the inputs' dtype.
import numpy as np


def masked_mean_pool(embeddings, mask):
    m = mask[..., None].astype(np.float64)
    return (embeddings * m).sum(axis=-2) / np.maximum(m.sum(axis=-2), 1)
