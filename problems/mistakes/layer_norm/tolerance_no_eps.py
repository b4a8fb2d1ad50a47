"""Source: a newcomer's trial of the course pack (2026-12-07), eps left out of the root.
Expect: tolerance
Why: `(x - mean) / sqrt(var)` without eps is a few units in the last place off in float32 and
float64 where the variance is about 1, and divides 0 by 0 on a row whose values are all equal
(NaN there: those cases fail as non_finite).
"""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((x - mean) / np.sqrt(var) * gamma + beta).astype(x.dtype)
