"""Source: https://github.com/EleutherAI/gpt-neox/blob/main/megatron/model/positional_embeddings.py (RotaryEmbedding, rotate_half, apply_rotary_pos_emb), in NumPy with the angles in float64
Expect: pass
Why: GPT-NeoX's half-split rotation; cos and sin cast to the input dtype before the products.
"""
import numpy as np


def rotary_embedding(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    inv_freq = 1.0 / (base ** (np.arange(0, d, 2).astype(np.float64) / d))
    freqs = np.einsum("i,j->ij", np.arange(T, dtype=np.float64), inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)
    cos, sin = np.cos(emb).astype(x.dtype), np.sin(emb).astype(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + np.concatenate((-x2, x1), axis=-1) * sin
