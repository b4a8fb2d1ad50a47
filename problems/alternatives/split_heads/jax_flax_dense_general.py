"""Source: https://github.com/google/flax/blob/main/flax/linen/attention.py (MultiHeadDotProductAttention: DenseGeneral to (..., num_heads, head_dim), then the heads axis moved by the einsum '...qhd,...khd->...hqk')
Expect: pass
Why: reshape to (B, T, H, Dh) and jnp.swapaxes(1, 2), as flax's layout then einsum does.
"""
import jax.numpy as jnp


def split_heads(x, n_heads):
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads:
        raise ValueError("n_heads must divide D")
    return jnp.swapaxes(jnp.reshape(x, (B, T, n_heads, D // n_heads)), 1, 2)
