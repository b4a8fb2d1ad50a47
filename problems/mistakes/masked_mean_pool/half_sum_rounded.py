# Wrong (kind tolerance): sums a float16 or bfloat16 input in float32 but rounds the sum to the
# input dtype before dividing, as jnp.sum or torch.sum of such an array does: two roundings where
# one is allowed.
import numpy as np


def masked_mean_pool(embeddings, mask):
    accumulate = np.float32 if embeddings.dtype.itemsize < 4 else embeddings.dtype
    with np.errstate(over="ignore"):
        total = (embeddings.astype(accumulate) * mask[..., None]).sum(axis=-2).astype(embeddings.dtype)
    count = np.maximum(mask.sum(axis=-1, keepdims=True), 1).astype(embeddings.dtype)
    return (total / count).astype(embeddings.dtype)
