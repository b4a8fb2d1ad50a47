"""Source: a mask of dropped elements used as a keep mask (``x * (mask == 0)`` where the mask already means "keep"; a pattern, no single file cited)
Expect: tolerance
Why: keeps exactly the elements that should be dropped.
"""
import numpy as np


def dropout_with_mask(x, keep, p):
    return x * ~keep / (1 - p)
