# Correct (JAX): JAX indexing clamps bad IDs silently, so check the concrete values first.
import jax.numpy as jnp


def embedding_lookup(token_ids, embedding_matrix):
    if not jnp.issubdtype(token_ids.dtype, jnp.integer):
        raise TypeError("token_ids must have an integer dtype")
    vocab_size = embedding_matrix.shape[0]
    if token_ids.size and (bool(jnp.any(token_ids < 0)) or bool(jnp.any(token_ids >= vocab_size))):
        raise IndexError("token id out of range")
    return jnp.take(embedding_matrix, token_ids, axis=0)
