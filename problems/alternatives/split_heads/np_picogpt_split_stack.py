"""Source: https://github.com/jaymody/picoGPT/blob/main/gpt2.py (mha: ``qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))``), batched and stacked on a head axis
Expect: pass
Why: np.split into n_heads contiguous blocks of features, stacked before the time axis.
"""
import numpy as np


def split_heads(x, n_heads):
    if n_heads < 1 or x.shape[-1] % n_heads:
        raise ValueError("n_heads must divide D")
    return np.stack(np.split(x, n_heads, axis=-1), axis=1)
