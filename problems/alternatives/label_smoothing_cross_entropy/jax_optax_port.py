"""Source: https://github.com/google-deepmind/optax/blob/main/optax/losses/_classification.py (softmax_cross_entropy) and optax's smooth_labels (``(1.0 - alpha) * labels + alpha / num_categories``), ported (optax is not installed in the sandbox)
Expect: pass
Why: one-hot labels smoothed as optax does, then -sum(labels * log_softmax(logits)) per row, averaged.
"""
import jax
import jax.numpy as jnp


def label_smoothing_cross_entropy(logits, targets, smoothing=0.1):
    num_categories = logits.shape[-1]
    labels = jax.nn.one_hot(targets, num_categories, dtype=logits.dtype)
    labels = (1.0 - smoothing) * labels + smoothing / num_categories
    return jnp.mean(-jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1), axis=-1))
