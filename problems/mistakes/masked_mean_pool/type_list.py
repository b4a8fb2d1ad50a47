# Wrong (kind type): returns a list.
import numpy as np


def masked_mean_pool(embeddings, mask):
    acc = np.promote_types(embeddings.dtype, np.float32)
    weights = mask[..., None].astype(acc)
    out = (embeddings.astype(acc) * weights).sum(axis=-2) / np.maximum(weights.sum(axis=-2), 1)
    return out.astype(embeddings.dtype).tolist()
