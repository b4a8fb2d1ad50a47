# Wrong (kind raises): plain JAX indexing clamps out-of-range IDs instead of raising.
import jax.numpy as jnp


def embedding_lookup(token_ids, embedding_matrix):
    return embedding_matrix[token_ids]
