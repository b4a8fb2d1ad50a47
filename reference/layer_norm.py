"""Reference solution of ``layer_norm`` (problems/layer_norm.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def layer_norm(x, gamma, beta, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over the last axis (biased variance)."""
    x = jnp.asarray(x)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = jnp.mean(centred * centred, axis=-1, keepdims=True)
    return centred / jnp.sqrt(var + eps) * jnp.asarray(gamma) + jnp.asarray(beta)
