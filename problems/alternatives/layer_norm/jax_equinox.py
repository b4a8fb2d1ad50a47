"""Source: https://github.com/patrick-kidger/equinox/blob/9336d820b2ef66b360fc6cb3611b3da5cefbb14d/equinox/nn/_normalisation.py#L144
Expect: pass
Why: equinox.nn.LayerNorm.__call__ (upcast to at least float32, mean/var, rsqrt(var + eps), weight then bias, cast back) applied over the last axis instead of via vmap.
"""
import jax
import jax.numpy as jnp


def layer_norm(x, gamma, beta, eps=1e-5):
    orig_dtype = x.dtype
    dtype = jnp.promote_types(x.dtype, jnp.float32)
    x = x.astype(dtype)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    variance = jnp.var(x, axis=-1, keepdims=True)
    variance = jnp.maximum(0.0, variance)
    inv = jax.lax.rsqrt(variance + eps)
    out = (x - mean) * inv
    out = gamma.astype(dtype) * out
    out = out + beta.astype(dtype)
    return out.astype(orig_dtype)
