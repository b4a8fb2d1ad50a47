"""Source: minGPT's split (https://github.com/karpathy/minGPT/blob/master/mingpt/model.py, ``k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)``) written as one view straight to (B, H, T, Dh), the common multi-head bug
Expect: tolerance
Why: ``x.reshape(B, H, T, Dh)`` has the right shape but mixes tokens into heads: only exact where H = 1 or T = 1.
"""
import numpy as np


def split_heads(x, n_heads):
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads:
        raise ValueError("n_heads must divide D")
    return x.reshape(B, n_heads, T, D // n_heads)
