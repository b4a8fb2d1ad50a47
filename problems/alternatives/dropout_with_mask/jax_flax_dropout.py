"""Source: https://github.com/google/flax/blob/main/flax/linen/stochastic.py (Dropout.__call__: ``keep_prob = 1.0 - rate``, ``jnp.where(mask, inputs / keep_prob, jnp.zeros_like(inputs))``)
Expect: pass
Why: Flax's dropout with the Bernoulli draw replaced by the given mask.
"""
import jax.numpy as jnp


def dropout_with_mask(x, keep, p):
    keep_prob = 1.0 - p
    return jnp.where(keep, x / keep_prob, jnp.zeros_like(x))
