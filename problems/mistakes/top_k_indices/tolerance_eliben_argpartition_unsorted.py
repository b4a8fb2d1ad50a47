"""Source: https://github.com/eliben/deep-learning-samples/blob/7a41935c286e74eba742456f04667fd612de55d0/pytorch-samples/topk.py
Expect: tolerance
Why: np.argpartition(x, -k)[-k:] gives the top k in no particular order ("not necessarily sorted"), not descending by score.
"""
import numpy as np


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    return np.argpartition(scores, -k, axis=-1)[..., -k:]
