"""Hint ideas of ``softmax(logits, axis=-1)``: the normalised exponentials along ``axis``.

Each idea predicts the output of one mistake seen in learners' code (a newcomer's trial: the
course pack's softmax gave no hint for either), and is named only when that prediction
reproduces the output (``grader.hints.generic.judge``):

* ``wrong_axis``: the softmax taken along another axis than ``axis`` (``axis=0``, or the
  default last axis when another was asked for); ``whole_array``: over every entry at once;
* ``no_max_shift`` (:func:`diagnose_non_finite`): ``exp`` of the logits without subtracting the
  slice's maximum first overflows to infinity once a logit passes ``log`` of the dtype's largest
  number (about 11.1 in float16, 88.7 in float32 and bfloat16, 709.8 in float64), and
  ``inf / inf`` is NaN; the statement asks for the shift.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import Hint, Idea, Names, generic, softmax_along


def _axis(inputs: dict[str, np.ndarray], ndim: int) -> int | None:
    """The case's ``axis`` as a non-negative int (the default -1 when the case passes none)."""
    value = inputs.get("axis")
    try:
        axis = -1 if value is None else int(np.asarray(value))
    except (TypeError, ValueError):
        return None
    return axis % ndim if -ndim <= axis < ndim else None


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The softmax along each other axis longer than 1, and over the whole array (``inputs``:
    ``logits`` float64 and ``axis``; ``expected`` the exact output, float64)."""
    x = inputs.get("logits")
    if x is None or x.ndim < 1 or x.size == 0 or x.shape != expected.shape:
        return []
    axis = _axis(inputs, x.ndim)
    if axis is None:
        return []
    out = [Idea(id="wrong_axis", text=None, predicted=softmax_along(x, other),
                params={"axis_used": other - x.ndim, "axis": axis - x.ndim})
           for other in range(x.ndim) if other != axis and x.shape[other] > 1]
    if x.ndim > 1 and x.size > x.shape[axis]:
        out.append(Idea(id="whole_array", text=None, predicted=softmax_along(x, None)))
    return out


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """NaN or infinity where the probability is finite, exactly where ``exp`` of the unshifted
    logits, computed in the case's dtype, gives them: the maximum was not subtracted; else the
    generic idea (a 0/0). Predicted from what the mistake computes, not from the logits' size
    alone: a global maximum subtracted instead makes exp underflow to 0/0 in other places (a
    format consumer's read: that was told "exp overflowed")."""
    x = case.inputs.get("logits")
    if x is not None and got.shape == ref.shape and np.shape(x) == ref.shape and np.ndim(x) >= 1:
        from ..dtypes import dtype_of
        axis = _axis(case.inputs, np.ndim(x))
        if axis is not None:
            try:
                low = np.asarray(x).astype(dtype_of(case.dtype))
                with np.errstate(all="ignore"):
                    e = np.exp(low)
                    naive = np.asarray(e / np.sum(e, axis=axis, keepdims=True), dtype=np.float64)
            except (TypeError, ValueError):
                naive = None
            bad = ~np.isfinite(got)
            if naive is not None and bad.any() and np.array_equal(bad, ~np.isfinite(naive)) \
                    and np.all(np.isfinite(ref[bad])):
                # facts of ints and names only: a float fact withholds a seeded case's hint
                # (grader.reports.common.without_expected)
                return Hint(idea="no_max_shift", facts={"dtype": case.dtype, "axis": axis - np.ndim(x)})
    return generic.non_finite_hint(got, ref)
