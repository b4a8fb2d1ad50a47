# JAX: sum of the masked vectors in float32 (or wider), zeros where no token is valid.
import jax.numpy as jnp


def masked_mean_pool(embeddings, mask):
    acc = jnp.promote_types(embeddings.dtype, jnp.float32)
    total = jnp.sum(jnp.where(mask[..., None], embeddings, 0).astype(acc), axis=-2)
    count = jnp.sum(mask, axis=-1).astype(acc)[..., None]
    return jnp.where(count > 0, total / jnp.where(count > 0, count, 1), 0).astype(embeddings.dtype)
