"""Source: ``head_dim = D / n_heads``, true division where ``//`` is meant (Python 2 code ported to Python 3; a pattern, not one file)
Expect: exception
Why: D / n_heads is a float, and reshape refuses a float size (TypeError).
"""
import numpy as np


def split_heads(x, n_heads):
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads:
        raise ValueError("n_heads must divide D")
    return np.transpose(np.reshape(x, (B, T, n_heads, D / n_heads)), (0, 2, 1, 3))
