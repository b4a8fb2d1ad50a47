"""Source: rotate_half written ``cat((x2, -x1))`` instead of ``cat((-x2, x1))`` (the sign of https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_llama.py's rotate_half, flipped)
Expect: tolerance
Why: rotates every pair by -angle: right only at position 0.
"""
import numpy as np


def rotary_embedding(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    inv_freq = 1.0 / (base ** (np.arange(0, d, 2) / d))
    emb = np.concatenate([np.outer(np.arange(T), inv_freq)] * 2, axis=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * np.cos(emb).astype(x.dtype) + np.concatenate((x2, -x1), axis=-1) * np.sin(emb).astype(x.dtype)
