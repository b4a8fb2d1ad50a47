# a newcomer's: jnp.sum of float16 or bfloat16 values accumulates in float32 and rounds the total to the
# input dtype before the division; 14 tolerance failures at 1.01-1.35x the allowance had no hint
import jax
import jax.numpy as jnp

@jax.jit
def masked_mean_pool(embeddings, mask):
    m = mask[..., None].astype(embeddings.dtype)
    s = jnp.sum(embeddings * m, axis=-2)         # half sum
    return s / jnp.maximum(jnp.sum(m, axis=-2), 1)
