"""Source: https://docs.jax.dev/en/latest/_autosummary/jax.nn.gelu.html
Expect: tolerance
Why: jax.nn.gelu defaults to approximate=True, the tanh approximation.
"""
import jax


def gelu(x):
    return jax.nn.gelu(x)
