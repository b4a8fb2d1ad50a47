"""Source: https://github.com/jaymody/picoGPT/blob/main/gpt2.py (mha: ``np.split(x, n_head, axis=-1)`` per head), written as one reshape and transpose
Expect: pass
Why: reshape to (B, T, H, Dh), then move H before T.
"""
import numpy as np


def split_heads(x, n_heads):
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads:
        raise ValueError(f"n_heads={n_heads} must divide D={D}")
    return np.transpose(x.reshape(B, T, n_heads, D // n_heads), (0, 2, 1, 3))
