"""Source: https://github.com/songofhawk/simplerpa/blob/2f341ad3c70dc82ef05da2fc8dd88ce1318c2d17/test/find_template/get_sorted_top_k.py
Expect: tolerance
Why: np.argsort(z)[:, -k:] without the np.flip that file applies: the right k indices, but in ascending order of score.
"""
import numpy as np


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    return np.argsort(scores, axis=-1)[..., -k:]
