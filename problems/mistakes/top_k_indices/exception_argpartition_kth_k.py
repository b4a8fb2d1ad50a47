"""Source: https://github.com/songofhawk/simplerpa/blob/2f341ad3c70dc82ef05da2fc8dd88ce1318c2d17/test/find_template/get_sorted_top_k.py
Expect: exception
Why: the reverse=False branch's np.argpartition(array, kth=top_k) needs kth < n, so the valid k = n raises "kth out of bounds".
"""
import numpy as np


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    idx = np.take(np.argpartition(-scores, kth=k, axis=-1), range(0, k), -1)
    order = np.argsort(-np.take_along_axis(scores, idx, -1), axis=-1, kind="stable")
    return np.take_along_axis(idx, order, -1)
