"""Source: the original (non-inverted) dropout of Srivastava et al. (2014) at training time, ``x * mask`` with the 1 - p factor left to test time (https://jmlr.org/papers/v15/srivastava14a.html)
Expect: tolerance
Why: kept elements are not scaled by 1 / (1 - p): right only where p = 0.
"""
import numpy as np


def dropout_with_mask(x, keep, p):
    return x * keep
