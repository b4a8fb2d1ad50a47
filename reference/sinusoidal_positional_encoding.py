"""Reference solution of ``sinusoidal_positional_encoding`` (problems/sinusoidal_positional_encoding.yaml).

Run by the grader in JAX: in float64 for the exact table, in float32 (x64 off) to estimate the
rounding of a float32 angle computation, which the statement accepts.
"""
import jax.numpy as jnp


def sinusoidal_positional_encoding(seq_len, d_model):
    """``PE[p, 2i] = sin(p / 10000**(2i/d))``, ``PE[p, 2i+1] = cos(...)``: (seq_len, d_model)."""
    p = jnp.arange(seq_len, dtype=float)[:, None]
    j = jnp.arange(d_model)
    pair = (j // 2 * 2).astype(p.dtype)
    angle = p / jnp.power(10000.0, pair / d_model)
    return jnp.where(j % 2 == 0, jnp.sin(angle), jnp.cos(angle))
