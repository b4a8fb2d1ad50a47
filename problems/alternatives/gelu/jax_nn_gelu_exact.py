"""Source: https://docs.jax.dev/en/latest/_autosummary/jax.nn.gelu.html
Expect: pass
Why: jax.nn.gelu with approximate=False is the exact erf form (its default, approximate=True, is the tanh one).
"""
import jax


def gelu(x):
    return jax.nn.gelu(x, approximate=False)
