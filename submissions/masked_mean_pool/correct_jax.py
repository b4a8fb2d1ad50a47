# Correct (JAX): jnp.where keeps padding out, a float32 sum for half inputs, zeros for empty rows.
import jax.numpy as jnp


def masked_mean_pool(embeddings, mask):
    acc = jnp.promote_types(embeddings.dtype, jnp.float32)
    x = jnp.where(mask[..., None], embeddings.astype(acc), 0)
    count = jnp.sum(mask, axis=-1, dtype=acc)[..., None]
    mean = jnp.sum(x, axis=-2) / jnp.maximum(count, 1)
    return mean.astype(embeddings.dtype)
