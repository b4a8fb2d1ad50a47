"""Reference solution of ``batch_norm_inference`` (problems/batch_norm_inference.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` along axis 1 of ``x`` ``(N, C, ...)``."""
    x = jnp.asarray(x)
    shape = (-1,) + (1,) * (x.ndim - 2)
    mean, var = jnp.asarray(running_mean).reshape(shape), jnp.asarray(running_var).reshape(shape)
    w, b = jnp.asarray(weight).reshape(shape), jnp.asarray(bias).reshape(shape)
    return (x - mean) / jnp.sqrt(var + eps) * w + b
