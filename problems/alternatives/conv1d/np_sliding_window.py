"""Source: https://numpy.org/doc/stable/reference/generated/numpy.lib.stride_tricks.sliding_window_view.html (windows of the padded signal) and an einsum over channels and taps
Expect: pass
Why: pad, take every stride-th window of length K, contract channels and taps.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    windows = sliding_window_view(xp, w.shape[-1], axis=-1)[:, :, ::stride]   # (B, C_in, L_out, K)
    return np.einsum("bcik,ock->boi", windows, w, optimize=True)
