"""Hint ideas of ``gelu(x)``: ``0.5 * x * (1 + erf(x / sqrt(2)))``, element by element.

Each idea predicts the output of one mistake (a helper's trial: the tanh approximation, which
the statement names, got no hint), named only when that prediction reproduces the output
(``grader.hints.generic.judge``):

* ``tanh_approximation``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))`` (PyTorch's
  ``approximate="tanh"``, ``jax.nn.gelu``'s default);
* ``sigmoid_approximation``: ``x * sigmoid(1.702 x)``;
* ``erf_without_sqrt2``: ``0.5 x (1 + erf(x))``, the ``/ sqrt(2)`` left out.
"""
from __future__ import annotations

import math

import numpy as np

from . import Idea, Names


def _erf(x: np.ndarray) -> np.ndarray:
    """erf element by element in float64 (``math.erf``; the hint modules use no SciPy)."""
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions (``inputs``: ``x`` float64)."""
    x = inputs.get("x")
    if x is None or x.size == 0 or x.shape != expected.shape or x.size > 1 << 20:
        return []
    with np.errstate(all="ignore"):
        tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        sigmoid = x / (1 + np.exp(-1.702 * x))
        return [Idea(id="tanh_approximation", text=None, predicted=tanh),
                Idea(id="sigmoid_approximation", text=None, predicted=sigmoid),
                Idea(id="erf_without_sqrt2", text=None, predicted=0.5 * x * (1 + _erf(x)))]
