"""Source: https://docs.jax.dev/en/latest/_autosummary/jax.nn.softmax.html
Expect: pass
Why: jax.nn.softmax subtracts the max before exp and keeps the input dtype.
"""
import jax


def softmax(logits, axis=-1):
    return jax.nn.softmax(logits, axis=axis)
