"""Source: a newcomer's trial of the grader (2026-12-06), the textbook float16 mistake.
Expect: tolerance
Why: squares and averages in the input's dtype; in float16 ``x * x`` overflows (to inf) once
|x| passes 256, so a row of large values comes back as zeros. The mean of squares in float32,
or of x scaled by its largest magnitude, is right. It passed 10/10 before the spec had a case of
large values (``large_values``).
"""
import numpy as np


def rms_norm(x, weight, eps=1e-6):
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return x / np.sqrt(ms + eps) * weight
