"""Source: https://github.com/eliben/deep-learning-samples/blob/7a41935c286e74eba742456f04667fd612de55d0/pytorch-samples/topk.py
Expect: type
Why: topk_np returns the tuple (x[idx], idx) like torch.topk, not an index array (sorted here so that the tuple is the only fault).
"""
import numpy as np


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    idx = np.flip(np.argsort(scores, axis=-1)[..., -k:], axis=-1)
    return np.take_along_axis(scores, idx, -1), idx
