"""Source: https://github.com/kandarpa02/milliGPT/blob/4833c689172c06a1dcca59d39e238d269b157150/main/decoder/layernorm/lnorm.py
Expect: tolerance
Why: the JAX version of the same pattern, jnp.std(x) + eps in the denominator (eps outside the sqrt).
"""
import jax.numpy as jnp


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    std = jnp.std(x, axis=-1, keepdims=True)
    norm = (x - mean) / (std + eps)
    return gamma * norm + beta
