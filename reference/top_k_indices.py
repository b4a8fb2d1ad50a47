"""Reference solution of ``top_k_indices`` (problems/top_k_indices.yaml), run by the grader in JAX."""
import jax
import jax.numpy as jnp


def top_k_indices(scores, k):
    """The indices (int64) of the ``k`` largest entries along the last axis, descending.

    Raises:
        ValueError: ``k`` is outside ``[1, n]``.
    """
    x = jnp.asarray(scores)
    if not 1 <= k <= x.shape[-1]:
        raise ValueError(f"k = {k} is outside [1, {x.shape[-1]}]")
    _, idx = jax.lax.top_k(x, k)
    return idx.astype(jnp.int64)
