"""Source: the einops pattern with the factors swapped, ``rearrange(x, 'b t (d h) -> b h t d', h=n_heads)`` where '(h d)' is meant (the order einops' own docs warn about: https://einops.rocks/1-einops-basics/), written with reshape (einops is not installed in the sandbox)
Expect: tolerance
Why: head h takes every n_heads-th feature (h, h + H, ...) instead of the h-th contiguous block: the shape is right, the values are shuffled.
"""
import numpy as np


def split_heads(x, n_heads):
    b, t, d = x.shape
    if n_heads < 1 or d % n_heads:
        raise ValueError("n_heads must divide D")
    return x.reshape(b, t, d // n_heads, n_heads).transpose(0, 3, 1, 2)
