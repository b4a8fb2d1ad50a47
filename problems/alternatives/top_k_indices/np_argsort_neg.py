"""Source: https://github.com/songofhawk/simplerpa/blob/2f341ad3c70dc82ef05da2fc8dd88ce1318c2d17/test/find_template/get_sorted_top_k.py
Expect: pass
Why: the full-sort check in the same file, np.flip(np.argsort(z, axis=1)[:, -k:], axis=1), generalised to the last axis.
"""
import numpy as np


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    return np.flip(np.argsort(scores, axis=-1)[..., -k:], axis=-1).astype(np.int64)
