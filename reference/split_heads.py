"""Reference solution of ``split_heads`` (problems/split_heads.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def split_heads(x, n_heads):
    """``(B, T, D) -> (B, n_heads, T, D // n_heads)``, head ``h`` the ``h``-th block of features.

    Raises:
        ValueError: ``n_heads < 1`` or it does not divide ``D``.
    """
    x = jnp.asarray(x)
    b, t, d = x.shape
    if n_heads < 1 or d % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide D = {d}")
    return x.reshape(b, t, n_heads, d // n_heads).transpose(0, 2, 1, 3)
