# Correct (JAX): jnp.einsum inside a jitted function.
import jax
import jax.numpy as jnp


@jax.jit
def _head(h, e):
    return jnp.einsum("...d,vd->...v", h, e)


def tied_lm_head(hidden, embedding_matrix):
    return _head(hidden, embedding_matrix)
