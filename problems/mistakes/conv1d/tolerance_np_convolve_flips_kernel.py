"""Source: the signal-processing convolution, ``np.convolve(signal, kernel, mode="valid")`` (NumPy's convolve flips the kernel: https://numpy.org/doc/stable/reference/generated/numpy.convolve.html), where deep learning's conv1d is a cross-correlation; written with windows so that it costs what a correct solution costs
Expect: tolerance
Why: the kernel is reversed: right only for symmetric kernels and K = 1.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    windows = sliding_window_view(xp, w.shape[-1], axis=-1)[:, :, ::stride]
    return np.einsum("bcik,ock->boi", windows, w[:, :, ::-1])
