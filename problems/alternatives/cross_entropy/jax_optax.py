"""Source: https://github.com/google-deepmind/optax/blob/01be1bf394dc7baa327ba03b55af9d95d2168ee1/optax/losses/_classification.py
Expect: pass
Why: optax.softmax_cross_entropy_with_integer_labels (logsumexp - take_along_axis label logit), averaged, plus an explicit range check because JAX indexing clamps instead of raising.
"""
import jax
import jax.numpy as jnp
import numpy as np


def cross_entropy(logits, targets):
    if not jnp.issubdtype(targets.dtype, jnp.integer):
        raise TypeError("targets must be integers")
    t = np.asarray(targets)
    if t.size and (t.min() < 0 or t.max() >= logits.shape[-1]):
        raise IndexError("target out of range")
    x = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
    label_logits = jnp.take_along_axis(x, jnp.expand_dims(targets, -1), axis=-1).take(0, axis=-1)
    log_normalizers = jax.nn.logsumexp(x, axis=-1)
    return jnp.mean(log_normalizers - label_logits).astype(logits.dtype)
