"""Source: https://github.com/EleutherAI/gpt-neox/blob/main/megatron/model/positional_embeddings.py (rotate_half and apply_rotary_pos_emb, which never check that the rotary dimension is even)
Expect: raises
Why: right for even d; for odd d the halves are d // 2 and d - d // 2 features, the concatenation is d wide again and the frequency table is cut to d: an answer comes back where ValueError is due.
"""
import numpy as np


def rotary_embedding(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    inv_freq = 1.0 / (base ** (np.arange(0, d, 2) / d))          # (d + 1) // 2 frequencies
    emb = np.concatenate([np.outer(np.arange(T), inv_freq)] * 2, axis=-1)[..., :d]
    half = d // 2
    x1, x2 = x[..., :half], x[..., half:]
    rotated = np.concatenate((-x2, x1), axis=-1)
    return x * np.cos(emb).astype(x.dtype) + rotated * np.sin(emb).astype(x.dtype)
