# Correct (JAX): ask for a float32 (or float64) result from the dot, then round back to the input dtype.
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    acc = jnp.float64 if hidden.dtype == jnp.float64 else jnp.float32
    out = jnp.matmul(hidden, embedding_matrix.T, preferred_element_type=acc)
    return out.astype(hidden.dtype)
