"""Source: https://cs231n.github.io/neural-networks-2/#reg (inverted dropout: ``U1 = (np.random.rand(*H1.shape) < p) / p; H1 *= U1`` with p the keep probability), with the given mask and p the drop probability, not in place
Expect: pass
Why: the lecture notes' inverted dropout: a mask divided by the keep probability, multiplied in.
"""
import numpy as np


def dropout_with_mask(x, keep, p):
    U1 = keep / (1 - p)
    return (x * U1).astype(x.dtype)
