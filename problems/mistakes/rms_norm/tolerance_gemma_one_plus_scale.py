"""Source: https://github.com/google-deepmind/gemma/blob/7691fd4e7f26c9ec5db38110dddb3addfab4d767/gemma/gm/nn/_layers.py#L41
Expect: tolerance
Why: Gemma's RMSNorm multiplies by (1 + scale) (its scale is zero-initialised), not by the weight itself.
"""
import jax
import jax.numpy as jnp


def rms_norm(x, weight, eps=1e-6):
    var = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    normed_inputs = x * jax.lax.rsqrt(var + eps)
    scale = jnp.expand_dims(weight, axis=range(len(x.shape) - 1))
    normed_inputs = normed_inputs * (1 + scale)
    return normed_inputs
