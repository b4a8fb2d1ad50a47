"""Reference solution of ``embedding_lookup`` (problems/embedding_lookup.yaml), run by the grader in JAX.

``embedding_matrix[token_ids]``: one table row per ID, the rows exactly. The grader passes
``token_ids`` in its own integer (or, for the cases that must raise, float or bool) dtype and the
table as float64; JAX indexing would clamp an out-of-range ID silently, so the IDs are checked
on their concrete values first.
"""
import jax.numpy as jnp
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    """Rows of ``embedding_matrix`` (V, d) for ``token_ids`` (any shape): ``token_ids.shape + (d,)``.

    Raises:
        TypeError: ``token_ids`` is not of an integer dtype (floats, bool).
        IndexError: an ID is negative or ``>= V``.
    """
    ids = np.asarray(token_ids)
    if ids.dtype.kind not in "iu":  # bool is kind "b": a mask, not IDs
        raise TypeError(f"token_ids must have an integer dtype, not {ids.dtype}")
    vocab_size = np.shape(embedding_matrix)[0]
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise IndexError(f"token ids must lie in [0, {vocab_size})")
    return jnp.take(jnp.asarray(embedding_matrix), jnp.asarray(ids), axis=0)
