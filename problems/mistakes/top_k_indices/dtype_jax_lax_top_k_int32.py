"""Source: https://docs.jax.dev/en/latest/_autosummary/jax.lax.top_k.html
Expect: dtype
Why: jax.lax.top_k returns int32 indices even with x64 enabled; returned as is they are not int64.
"""
import jax


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    return jax.lax.top_k(scores, k)[1]
