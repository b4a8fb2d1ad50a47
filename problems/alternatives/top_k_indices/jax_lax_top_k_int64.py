"""Source: https://docs.jax.dev/en/latest/_autosummary/jax.lax.top_k.html
Expect: pass
Why: jax.lax.top_k over the last axis, descending; its int32 indices cast to int64, k range-checked.
"""
import jax
import jax.numpy as jnp


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    _, idx = jax.lax.top_k(scores, k)
    return idx.astype(jnp.int64)
