"""Hint ideas of ``layer_norm(x, gamma, beta, eps=1e-5)``: ``(x - mean) / sqrt(var + eps) *
gamma + beta`` over the last axis, the variance the biased one (divided by d).

Each idea predicts the output of one mistake seen in learners' code (a newcomer's trial: the
course pack's layer_norm gave no hint for any of them), named only when that prediction
reproduces the output (``grader.hints.generic.judge``):

* ``unbiased_variance``: the variance divided by d - 1 (``ddof=1``, torch's ``var`` default);
* ``eps_outside_sqrt``: ``sqrt(var) + eps`` instead of ``sqrt(var + eps)``;
* ``gamma_ignored`` / ``beta_ignored``: the scale or the shift left out;
* ``no_centring``: the root mean square of ``x`` instead of its standard deviation (RMS norm).
"""
from __future__ import annotations

import numpy as np

from . import Idea, Names


def _norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, *, ddof: int = 0,
          eps_outside: bool = False, centre: bool = True) -> np.ndarray:
    """Layer norm of ``x`` (float64) over the last axis, with one of the mistakes above."""
    d = x.shape[-1]
    with np.errstate(all="ignore"):
        mean = x.mean(axis=-1, keepdims=True) if centre else 0.0
        centred = x - mean
        var = (centred * centred).sum(axis=-1, keepdims=True) / max(d - ddof, 1)
        std = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
        return centred / std * gamma + beta


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions of the output (``inputs`` float64: ``x``, ``gamma``,
    ``beta`` and ``eps``; ``expected`` the exact output, float64)."""
    x, gamma, beta = inputs.get("x"), inputs.get("gamma"), inputs.get("beta")
    if x is None or gamma is None or beta is None or x.ndim < 1 or x.size == 0 or x.shape != expected.shape:
        return []
    eps = float(np.asarray(inputs.get("eps", 1e-5)))
    zero, one = np.zeros_like(beta), np.ones_like(gamma)
    out = [Idea(id="eps_outside_sqrt", text=None, predicted=_norm(x, gamma, beta, eps, eps_outside=True)),
           Idea(id="no_centring", text=None, predicted=_norm(x, gamma, beta, eps, centre=False))]
    if x.shape[-1] > 1:
        out.insert(0, Idea(id="unbiased_variance", text=None, predicted=_norm(x, gamma, beta, eps, ddof=1),
                           params={"d": int(x.shape[-1])}))
    if not np.allclose(gamma, 1.0):
        out.append(Idea(id="gamma_ignored", text=None, predicted=_norm(x, one, beta, eps)))
    if np.any(beta != 0):
        out.append(Idea(id="beta_ignored", text=None, predicted=_norm(x, gamma, zero, eps)))
    return out
