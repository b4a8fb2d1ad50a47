"""Source: https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_flax_llama.py (create_sinusoidal_positions, rotate_half, apply_rotary_pos_emb), angles in float64 (the grader runs JAX with x64)
Expect: pass
Why: Flax LLaMA's sin/cos table, split into the sin and cos halves, applied with rotate_half.
"""
import jax.numpy as jnp
import numpy as np


def rotary_embedding(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    inv_freq = 1.0 / (base ** (np.arange(0, d, 2) / d))
    freqs = np.einsum("i , j -> i j", np.arange(T), inv_freq).astype("float64")
    emb = np.concatenate((freqs, freqs), axis=-1)
    cos, sin = jnp.asarray(np.cos(emb), dtype=x.dtype), jnp.asarray(np.sin(emb), dtype=x.dtype)
    rotated = jnp.concatenate((-x[..., d // 2:], x[..., : d // 2]), axis=-1)
    return x * cos + rotated * sin
