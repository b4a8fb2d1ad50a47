# Mistake (JAX): upcasts bfloat16 inputs to float32 for accuracy and returns float32 (wrong dtype).
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    if hidden.dtype == jnp.bfloat16:
        hidden = hidden.astype(jnp.float32)
        embedding_matrix = embedding_matrix.astype(jnp.float32)
    return hidden @ embedding_matrix.T
