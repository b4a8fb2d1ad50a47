"""Source: a newcomer's trial of the course pack (2026-12-07, a torch file with ``dim=0``).
Expect: tolerance
Why: the mean and variance are taken along the first axis instead of the last: right for a 1-D
``x`` (one axis), off from rank 2 on.
"""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    work = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    mean = work.mean(axis=0, keepdims=True)
    var = work.var(axis=0, keepdims=True)
    return ((work - mean) / np.sqrt(var + eps) * gamma + beta).astype(x.dtype)
