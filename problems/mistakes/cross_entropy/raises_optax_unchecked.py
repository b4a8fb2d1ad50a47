"""Source: https://github.com/google-deepmind/optax/blob/01be1bf394dc7baa327ba03b55af9d95d2168ee1/optax/losses/_classification.py
Expect: raises
Why: optax's integer-label loss checks the label dtype but not the range; jnp.take_along_axis clamps/fills an out-of-range label instead of raising.
"""
import jax
import jax.numpy as jnp


def cross_entropy(logits, targets):
    if not jnp.issubdtype(targets.dtype, jnp.integer):
        raise ValueError("labels must be integers")
    label_logits = jnp.take_along_axis(logits, jnp.expand_dims(targets, -1), axis=-1).take(0, axis=-1)
    log_normalizers = jax.nn.logsumexp(logits, axis=-1)
    return jnp.mean(log_normalizers - label_logits)
