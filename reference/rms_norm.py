"""Reference solution of ``rms_norm`` (problems/rms_norm.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def rms_norm(x, weight, eps=1e-6):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the last axis."""
    x = jnp.asarray(x)
    ms = jnp.mean(x * x, axis=-1, keepdims=True)
    return x / jnp.sqrt(ms + eps) * jnp.asarray(weight)
