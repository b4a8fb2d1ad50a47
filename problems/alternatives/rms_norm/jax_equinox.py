"""Source: https://github.com/patrick-kidger/equinox/blob/9336d820b2ef66b360fc6cb3611b3da5cefbb14d/equinox/nn/_normalisation.py#L391
Expect: pass
Why: equinox.nn.RMSNorm.__call__ (upcast to >= float32, rsqrt(mean(x**2) + eps) * x, weight, cast back), taken over the last axis as vmap would.
"""
import jax
import jax.numpy as jnp


def rms_norm(x, weight, eps=1e-6):
    orig_dtype = x.dtype
    dtype = jnp.promote_types(x.dtype, jnp.float32)
    x = x.astype(dtype)
    inv_rms = jax.lax.rsqrt(jnp.mean(x**2, axis=-1, keepdims=True) + eps)
    out = inv_rms * x
    out = weight.astype(dtype) * out
    return out.astype(orig_dtype)
