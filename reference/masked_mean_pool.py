"""Reference solution of ``masked_mean_pool`` (problems/masked_mean_pool.yaml), run by the grader in JAX.

The grader passes ``embeddings`` as float64 (exact images of the graded inputs) and ``mask`` as
bool; for the tolerance's scale it calls this again on ``|embeddings|`` with the same mask, which
gives the mean of ``|x|`` over the valid tokens (grader/tolerance.py, ``masked_mean``).
"""
import jax.numpy as jnp


def masked_mean_pool(embeddings, mask):
    """Mean of ``embeddings`` (..., L, d) over the positions where ``mask`` (..., L) is True: (..., d).

    A sequence with no True gives a zero vector.
    """
    x = jnp.asarray(embeddings)
    w = jnp.asarray(mask, dtype=bool)[..., None].astype(x.dtype)
    total = jnp.sum(x * w, axis=-2)
    count = jnp.sum(w, axis=-2)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), jnp.zeros_like(total))
