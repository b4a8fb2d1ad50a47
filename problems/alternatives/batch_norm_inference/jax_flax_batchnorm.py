"""Source: https://github.com/google/flax/blob/main/flax/linen/normalization.py (_normalize: ``y = x - mean``, ``mul = lax.rsqrt(var + epsilon)``, ``mul *= scale``, ``y *= mul``, ``y += bias``), with the feature axis 1
Expect: pass
Why: Flax's BatchNorm with use_running_average: the rsqrt is multiplied into the scale first.
"""
import jax.numpy as jnp
from jax import lax


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    shape = (-1,) + (1,) * (x.ndim - 2)
    y = x - running_mean.reshape(shape)
    mul = lax.rsqrt(running_var.reshape(shape) + eps)
    mul = mul * weight.reshape(shape)
    y = y * mul
    return y + bias.reshape(shape)
