"""Hint ideas of ``conv1d(x, w, stride=1, padding=0)``: deep learning's convolution is a
cross-correlation, ``out[b, o, i] = sum_{c, k} x_pad[b, c, i * stride + k] * w[o, c, k]``.

Each idea predicts the output of one mistake, named only when that prediction reproduces the
output (``grader.hints.generic.judge``):

* ``flipped_kernel``: the kernel reversed along K, as the signal-processing convolution
  (``np.convolve``, ``scipy.signal.convolve``) computes it: the commonest conv1d mistake, which
  the statement warns about, was told "a constant factor of -1" on a kernel ``[1, 0, -1]`` and
  nothing on random kernels (a newcomer's trial).
"""
from __future__ import annotations

import numpy as np

from . import Idea, Names


def cross_correlation(x: np.ndarray, w: np.ndarray, stride: int, padding: int) -> np.ndarray:
    """``x`` (B, C_in, L) cross-correlated with ``w`` (C_out, C_in, K), float64: (B, C_out, L_out)."""
    from numpy.lib.stride_tricks import sliding_window_view
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    windows = sliding_window_view(xp, w.shape[-1], axis=-1)[:, :, ::stride]   # (B, C_in, L_out, K)
    return np.einsum("bcik,ock->boi", windows, w)


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistake above as a prediction (``inputs``: ``x`` and ``w`` float64, ``stride`` and
    ``padding`` 0-d when the case gives them)."""
    x, w = inputs.get("x"), inputs.get("w")
    if x is None or w is None or x.ndim != 3 or w.ndim != 3 or w.shape[-1] < 2 or x.size * w.shape[0] > 1 << 24:
        return []
    stride = int(inputs["stride"]) if "stride" in inputs else 1
    padding = int(inputs["padding"]) if "padding" in inputs else 0
    if stride < 1 or padding < 0 or w.shape[-1] > x.shape[-1] + 2 * padding:
        return []
    with np.errstate(all="ignore"):
        flipped = cross_correlation(x, w[:, :, ::-1], stride, padding)
    if flipped.shape != expected.shape:
        return []
    return [Idea(id="flipped_kernel", text=None, predicted=flipped)]
