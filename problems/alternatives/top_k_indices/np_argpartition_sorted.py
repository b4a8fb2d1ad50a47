"""Source: https://github.com/songofhawk/simplerpa/blob/2f341ad3c70dc82ef05da2fc8dd88ce1318c2d17/test/find_template/get_sorted_top_k.py
Expect: pass
Why: get_sorted_top_k(reverse=True): argpartition with kth=-k, take the last k, sort them by score and flip; only the indices returned, k range-checked.
"""
import numpy as np


def top_k_indices(scores, k, axis=-1):
    n = scores.shape[axis]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    axis_length = scores.shape[axis]
    partition_index = np.take(np.argpartition(scores, kth=-k, axis=axis),
                              range(axis_length - k, axis_length), axis)
    top_scores = np.take_along_axis(scores, partition_index, axis)
    sorted_index = np.flip(np.argsort(top_scores, axis=axis), axis=axis)
    return np.take_along_axis(partition_index, sorted_index, axis).astype(np.int64)
