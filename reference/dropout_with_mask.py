"""Reference solution of ``dropout_with_mask`` (problems/dropout_with_mask.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def dropout_with_mask(x, keep, p):
    """``x / (1 - p)`` where ``keep``, else 0; the shape and dtype of ``x``."""
    x = jnp.asarray(x)
    return jnp.where(jnp.asarray(keep), x / (1 - p), jnp.zeros_like(x))
