# Correct (JAX): jnp.matmul against the transposed table.
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    return jnp.matmul(hidden, jnp.transpose(embedding_matrix))
