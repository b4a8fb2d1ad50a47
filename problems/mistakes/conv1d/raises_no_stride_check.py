"""Source: the sliding-window form (https://numpy.org/doc/stable/reference/generated/numpy.lib.stride_tricks.sliding_window_view.html) with a defensive ``max(stride, 1)`` instead of a check, a common guard against a zero slice step
Expect: raises
Why: right for stride >= 1, but stride 0 quietly becomes stride 1 and returns an answer where the statement asks for ValueError.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv1d(x, w, stride=1, padding=0):
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    windows = sliding_window_view(xp, w.shape[-1], axis=-1)[:, :, ::max(stride, 1)]
    return np.einsum("bcik,ock->boi", windows, w, optimize=True)   # (without optimize: a float16 sum)
