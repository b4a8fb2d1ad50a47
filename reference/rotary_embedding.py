"""Reference solution of ``rotary_embedding`` (problems/rotary_embedding.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def rotary_embedding(x, base=10000.0):
    """RoPE with the rotate_half convention: shape and dtype of ``x`` (``(..., T, d)``).

    Raises:
        ValueError: ``d`` is odd.
    """
    x = jnp.asarray(x)
    t, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"the feature size d = {d} must be even")
    inv_freq = base ** (-jnp.arange(0, d, 2, dtype=jnp.float64) / d)
    angle = jnp.arange(t, dtype=jnp.float64)[:, None] * inv_freq[None, :]
    angle = jnp.concatenate([angle, angle], axis=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    rotated = jnp.concatenate([-x2, x1], axis=-1)
    return x * jnp.cos(angle).astype(x.dtype) + rotated * jnp.sin(angle).astype(x.dtype)
