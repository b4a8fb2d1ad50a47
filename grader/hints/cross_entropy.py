"""Hint ideas of ``cross_entropy(logits, targets)``: the mean over the N rows of
``logsumexp(logits[i]) - logits[i, targets[i]]``.

A helper's trial: an overflow (``got inf, expected 6082.33``) got no hint. Named here
(a mean over N * C is the generic ``axis_factor``):

* ``no_max_shift`` (:func:`diagnose_non_finite`): ``exp`` of the unshifted logits, computed in
  the case's dtype, overflows to infinity (a logit above about 11.1 in float16, 88.7 in float32
  and bfloat16, 709.8 in float64), so the log of the sum is infinite;
* ``probability_not_log`` (values): ``1 - softmax[target]`` or ``-softmax[target]`` averaged, the
  log left out.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import Hint, Idea, Names, generic, softmax_along


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The value mistakes above as predictions (``logits`` float64, ``targets`` integers)."""
    z, t = inputs.get("logits"), inputs.get("targets")
    if z is None or t is None or z.ndim != 2 or z.shape[0] == 0 or expected.shape != () or t.shape != z.shape[:1]:
        return []
    if np.any((t < 0) | (t >= z.shape[1])):
        return []
    picked = softmax_along(z)[np.arange(z.shape[0]), t.astype(np.int64)]
    return [Idea(id="probability_not_log", text=None, predicted=np.asarray(-np.mean(picked))),
            Idea(id="probability_not_log", text=None, predicted=np.asarray(np.mean(1 - picked)))]


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """An infinite or NaN loss where the expected one is finite, which ``exp`` of the unshifted
    logits in the case's dtype gives: the maximum was not subtracted (``no_max_shift``); else
    the generic hint."""
    z = case.inputs.get("logits")
    if z is not None and np.ndim(z) == 2 and np.size(z) and not np.all(np.isfinite(got)) \
            and np.all(np.isfinite(ref)):
        from ..dtypes import dtype_of
        try:
            with np.errstate(all="ignore"):
                e = np.exp(np.asarray(z).astype(dtype_of(case.dtype)))
                naive = np.log(np.sum(e.astype(np.float64), axis=-1))
        except (TypeError, ValueError):
            naive = None
        if naive is not None and not np.all(np.isfinite(naive)):
            return Hint(idea="no_max_shift", facts={"dtype": case.dtype})
    return generic.non_finite_hint(got, ref)
