"""Source: https://github.com/d2l-ai/d2l-en/blob/23d7a5aecceee57d1292c56e90cce307f183bb0a/d2l/jax.py#L1376
Expect: pass
Why: d2l's JAX PositionalEncoding.setup (float32 X = arange / 10000**(arange(0, d, 2)/d), P[..., 0::2] = sin, P[..., 1::2] = cos) without the leading batch axis, cos trimmed for odd d.
"""
import jax.numpy as jnp


def sinusoidal_positional_encoding(seq_len, d_model):
    P = jnp.zeros((seq_len, d_model), dtype=jnp.float32)
    X = jnp.arange(seq_len, dtype=jnp.float32).reshape(-1, 1) / jnp.power(
        10000, jnp.arange(0, d_model, 2, dtype=jnp.float32) / d_model)
    P = P.at[:, 0::2].set(jnp.sin(X))
    P = P.at[:, 1::2].set(jnp.cos(X)[:, : d_model // 2])
    return P
