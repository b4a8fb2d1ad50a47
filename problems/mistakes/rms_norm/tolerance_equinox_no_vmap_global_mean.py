"""Source: https://github.com/patrick-kidger/equinox/blob/9336d820b2ef66b360fc6cb3611b3da5cefbb14d/equinox/nn/_normalisation.py#L391
Expect: tolerance
Why: equinox's RMSNorm takes jnp.mean(x**2) over the whole array because it expects to be vmapped; called on a batch without vmap it normalises by one global RMS instead of per row.
"""
import jax
import jax.numpy as jnp


def rms_norm(x, weight, eps=1e-6):
    orig_dtype = x.dtype
    dtype = jnp.promote_types(x.dtype, jnp.float32)
    x = x.astype(dtype)
    inv_rms = jax.lax.rsqrt(jnp.mean(x**2) + eps)
    out = inv_rms * x
    out = weight.astype(dtype) * out
    return out.astype(orig_dtype)
