"""Hint ideas of ``rms_norm(x, weight, eps=1e-6)``: ``x / sqrt(mean(x**2) + eps) * weight`` over
the last axis.

Each idea predicts the output of one mistake (a helper's trial: the course pack's rms_norm gave
no hint), named only when that prediction reproduces the output
(``grader.hints.generic.judge``):

* ``no_eps``: eps left out (``sqrt(mean(x**2))``), and (:func:`diagnose_non_finite`) the NaN of
  a row of zeros that it gives (0/0);
* ``eps_outside_sqrt``: ``sqrt(mean(x**2)) + eps``;
* ``weight_ignored``: the scale left out;
* ``centred``: the mean subtracted first (layer norm without its shift);
* ``wrong_axis``: the mean of squares taken along another axis than the last (``dim=0``);
  ``whole_array``: over every element at once;
* ``eps_ignored``: a constant eps of the learner's own (1e-5, 1e-6, 1e-8) instead of the argument;
* ``square_overflow``: ``x**2`` computed in float16, where it overflows to infinity above
  about 256 and the row becomes 0 (``x / inf``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import Hint, Idea, Names, generic

HALF_SQUARE_LIMIT = 65504.0   # float16's largest number: x**2 overflows above its root
#: eps constants learners write instead of the argument (PyTorch's 1e-5 and 1e-6, 1e-8)
FIXED_EPS = (1e-5, 1e-6, 1e-8)


def _rms(x: np.ndarray, weight: np.ndarray, eps: float, *, axis: int | None = -1, eps_outside: bool = False,
         centre: bool = False) -> np.ndarray:
    """RMS norm of ``x`` (float64) with one of the mistakes above (``eps=0`` for ``no_eps``)."""
    with np.errstate(all="ignore"):
        v = x - x.mean(axis=-1, keepdims=True) if centre else x
        ms = np.mean(v * v, axis=axis, keepdims=True)
        den = np.sqrt(ms) + eps if eps_outside else np.sqrt(ms + eps)
        return v / den * weight


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions (``inputs`` float64: ``x``, ``weight``, ``eps``)."""
    x, weight = inputs.get("x"), inputs.get("weight")
    if x is None or weight is None or x.ndim < 1 or x.size == 0 or x.shape != expected.shape:
        return []
    eps = float(np.asarray(inputs.get("eps", 1e-6)))
    out = [Idea(id="eps_outside_sqrt", text=None, predicted=_rms(x, weight, eps, eps_outside=True)),
           Idea(id="centred", text=None, predicted=_rms(x, weight, eps, centre=True))]
    if eps > 0:
        out.append(Idea(id="no_eps", text=None, predicted=_rms(x, weight, 0.0)))
    if not np.allclose(weight, 1.0):
        out.append(Idea(id="weight_ignored", text=None, predicted=_rms(x, np.ones_like(weight), eps)))
    out += [Idea(id="wrong_axis", text=None, predicted=_rms(x, weight, eps, axis=a), params={"axis_used": a - x.ndim})
            for a in range(x.ndim - 1) if x.shape[a] > 1]
    if x.ndim > 1 and x.size > x.shape[-1]:   # one mean over every element (a helper's trial: read as axis -2)
        out.append(Idea(id="whole_array", text=None, predicted=_rms(x, weight, eps, axis=None)))
    # the eps argument ignored for a constant of the learner's own (the defaults of the
    # frameworks and papers): where the case's eps is another, "eps was left out" would mislead
    out += [Idea(id="eps_ignored", text=None, predicted=_rms(x, weight, fixed), params={"eps": fixed})
            for fixed in FIXED_EPS if eps > 0 and not np.isclose(fixed, eps, rtol=1e-3, atol=0)]
    if names.dtype == "float16" and np.any(x * x > HALF_SQUARE_LIMIT):
        with np.errstate(all="ignore"):
            sq = np.where(x * x > HALF_SQUARE_LIMIT, np.inf, x * x)
            predicted = x / np.sqrt(np.mean(sq, axis=-1, keepdims=True) + eps) * weight
        out.append(Idea(id="square_overflow", text=None, predicted=predicted, params={"dtype": "float16"}))
    return out


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """NaN only in rows of zeros (along the last axis) where the expected output is finite: a
    division by ``sqrt(mean(x**2))`` without eps (``no_eps``); else the generic hint."""
    x = np.asarray(case.inputs.get("x"), dtype=np.float64) if "x" in case.inputs else None
    eps = float(np.asarray(case.inputs.get("eps", 1e-6), dtype=np.float64))
    if x is not None and x.ndim >= 1 and x.shape[-1] > 0 and got.shape == ref.shape == x.shape and eps > 0:
        if generic.non_finite_only_in(np.all(x == 0, axis=-1), got, ref):
            return Hint(idea="no_eps", facts={"where": "zero_rows"})
    return generic.non_finite_hint(got, ref)
