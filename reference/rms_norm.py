"""Reference solution of ``rms_norm`` (problems/rms_norm.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def rms_norm(x, weight, eps=1e-6):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the last axis.

    The squares are taken of ``x / s``, ``s`` the row's largest magnitude (1 for a row of zeros),
    and ``s`` is put back outside the root: ``sqrt(mean(x**2) + eps) = s * sqrt(mean((x/s)**2)
    + eps/s**2)``. The same value in exact arithmetic; in float16, whose largest value is 65504,
    ``x * x`` overflows once ``|x|`` passes 256, and the grader runs this reference in each graded
    dtype to size the allowance (``grader.derived``): a reference that overflowed there would
    allow a submission that does (a result of zeros) too.
    """
    x = jnp.asarray(x)
    s = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    s = jnp.where(s == 0, jnp.ones_like(s), s)
    y = x / s
    ms = jnp.mean(y * y, axis=-1, keepdims=True)
    return x / (s * jnp.sqrt(ms + eps / (s * s))) * jnp.asarray(weight)
