"""The wording of conv1d's hint ideas (``grader/hints/conv1d.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    # no library named: NumPy's and SciPy's convolve flip it, and a PyTorch learner's port of them too
    "flipped_kernel": lambda f, c: ("the values match the kernel reversed along K: that is the signal-processing "
                                    "convolution, which flips the kernel, where conv1d is a cross-correlation: "
                                    "out[b, o, i] = sum over c and k of x_padded[b, c, i * stride + k] * w[o, c, k], "
                                    "the kernel not reversed"),
}
