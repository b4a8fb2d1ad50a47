"""Source: a "valid" convolution that forgets the padding argument (the sliding-window form of e.g. https://numpy.org/doc/stable/reference/generated/numpy.lib.stride_tricks.sliding_window_view.html's example, with no np.pad)
Expect: shape
Why: without the zeros at both ends the output is 2 * padding / stride steps short.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    K = w.shape[-1]
    windows = sliding_window_view(x, K, axis=-1)[:, :, ::stride]   # (B, C_in, L_out, K)
    return np.einsum("bcik,ock->boi", windows, w)
