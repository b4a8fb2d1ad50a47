"""Source: a newcomer's trial of the course pack (2026-12-07): two mistakes at once.
Expect: tolerance
Why: the unbiased variance (`ddof=1`) and everything in float32, whatever the inputs' dtype,
cast back at the end: in float64 neither mistake alone explains the output, and every value is a
float32 number, so the hint names both.
"""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    x32 = x.astype(np.float32)
    mean = x32.mean(axis=-1, keepdims=True)
    var = x32.var(axis=-1, keepdims=True, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (x32 - mean) / np.sqrt(var + np.float32(eps)) * gamma.astype(np.float32) + beta.astype(np.float32)
    return y.astype(x.dtype)
