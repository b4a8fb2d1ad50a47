"""Source: https://github.com/google/flax/blob/main/flax/linen/attention.py (MultiHeadDotProductAttention's output DenseGeneral contracts the (num_heads, head_dim) axes), written as swapaxes and reshape
Expect: pass
Why: bring tokens before heads, then flatten (heads, head_dim).
"""
import jax.numpy as jnp


def merge_heads(x):
    B, H, T, Dh = x.shape
    return jnp.reshape(jnp.swapaxes(x, 1, 2), (B, T, H * Dh))
