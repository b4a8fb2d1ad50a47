# Correct (JAX): the single-vector head E @ h, lifted over each leading axis with jax.vmap.
import jax
import jax.numpy as jnp


def _one(vector, table):
    return jnp.dot(table, vector)  # (V, d) @ (d,) -> (V,)


def tied_lm_head(hidden, embedding_matrix):
    fn = _one
    for _ in range(hidden.ndim - 1):
        fn = jax.vmap(fn, in_axes=(0, None))
    return fn(hidden, embedding_matrix)
