"""Reference solution of ``gelu`` (problems/gelu.yaml), run by the grader in JAX."""
import jax
import jax.numpy as jnp


def gelu(x):
    """``0.5 x (1 + erf(x / sqrt 2))`` element by element."""
    x = jnp.asarray(x)
    return 0.5 * x * (1 + jax.scipy.special.erf(x / jnp.sqrt(2.0).astype(x.dtype)))
