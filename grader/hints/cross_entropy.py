"""Hint ideas of ``cross_entropy(logits, targets)``: the mean over the N rows of
``logsumexp(logits[i]) - logits[i, targets[i]]``.

A helper's trial: an overflow (``got inf, expected 6082.33``) got no hint. Named here
(a mean over N * C is the generic ``axis_factor``):

* ``no_max_shift`` (:func:`diagnose_non_finite`): ``exp`` of the unshifted logits, computed in
  the case's dtype, overflows to infinity (a logit above about 11.1 in float16, 88.7 in float32
  and bfloat16, 709.8 in float64), so the log of the sum is infinite;
* ``log_of_softmax`` (:func:`diagnose_non_finite`): the target's probability underflows to 0
  in the case's dtype before its log, shifted or not (``-log(0)`` is infinite);
* ``no_max_shift_and_underflow`` (:func:`diagnose_non_finite`): a case where both happen in its
  dtype (logits in the thousands): both named, neither guessed (a newcomer's unshifted
  ``log(sum(exp))`` was told not to take the log of a softmax it never computed);
* ``probability_not_log`` (values): ``1 - softmax[target]`` or ``-softmax[target]`` averaged, the
  log left out;
* ``targets_not_int64`` (:func:`diagnose_exception`): the library function called takes class
  indices only as int64 (PyTorch's ``F.cross_entropy`` and ``nll_loss`` refuse int32 targets).
"""
from __future__ import annotations

import re

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
    """An infinite or NaN loss where the expected one is finite. Two mistakes give it, told
    apart by what each computes in the case's dtype: ``exp`` of the unshifted logits overflows
    (``no_max_shift``), or the target's probability (a softmax, shifted or not) underflows to 0
    before its log (``log_of_softmax``: a helper's trial was told to subtract the maximum, which
    its code did). Where the case lets both happen, or only the second, the second is named: its
    advice (logsumexp minus the target's logit) mends both. Else the generic hint."""
    z, t = case.inputs.get("logits"), case.inputs.get("targets")
    if z is not None and np.ndim(z) == 2 and np.size(z) and not np.all(np.isfinite(got)) \
            and np.all(np.isfinite(ref)):
        from ..dtypes import dtype_of
        try:
            with np.errstate(all="ignore"):
                low = np.asarray(z).astype(dtype_of(case.dtype))
                overflow = not np.all(np.isfinite(np.log(np.sum(np.exp(low).astype(np.float64), axis=-1))))
                underflow = False
                if t is not None and np.shape(t) == np.shape(z)[:1] and np.all((np.asarray(t) >= 0)
                                                                               & (np.asarray(t) < np.shape(z)[1])):
                    e = np.exp(low - low.max(axis=-1, keepdims=True))
                    p = (e / e.sum(axis=-1, keepdims=True))[np.arange(np.shape(z)[0]), np.asarray(t).astype(np.int64)]
                    underflow = bool(np.any(p == 0))
        except (TypeError, ValueError):
            overflow = underflow = False
        if underflow and overflow:
            return Hint(idea="no_max_shift_and_underflow", facts={"dtype": case.dtype})
        if underflow:
            return Hint(idea="log_of_softmax", facts={"dtype": case.dtype})
        if overflow:
            return Hint(idea="no_max_shift", facts={"dtype": case.dtype})
    return generic.non_finite_hint(got, ref)


def diagnose_raises(case: Any, accepted: list[str]) -> Hint | None:
    """Why the case's targets must raise (``case.inputs``: ``logits`` (N, C), ``targets`` (N,);
    ``accepted``: the exception types that would pass), as facts, or None: a newcomer's negative
    target was told only "these inputs break the function's contract", where embedding_lookup
    names the ID (``grader/words/cross_entropy.py`` words them)."""
    logits, targets = case.inputs.get("logits"), case.inputs.get("targets")
    if logits is None or targets is None or np.ndim(logits) != 2:
        return None
    t = np.asarray(targets)
    classes = int(np.shape(logits)[-1])
    raise_what = " or ".join(accepted)
    if t.dtype.kind in "fc" or t.dtype.name == "bfloat16":
        return Hint(idea="float_targets", facts={"dtype": t.dtype.name, "raise": raise_what})
    if t.dtype.kind in "iu" and t.size:
        low, high = int(t.min()), int(t.max())
        if low < 0:
            return Hint(idea="negative_target", facts={"target": low, "classes": classes, "raise": raise_what})
        if high >= classes:
            return Hint(idea="target_out_of_range", facts={"target": high, "classes": classes, "raise": raise_what})
    return None


#: PyTorch's refusals of int32 class indices (``F.cross_entropy``, ``F.nll_loss``; 2.x wordings)
_LONG_ONLY = re.compile(r"expected (scalar type|target dtype to be) Long|not implemented for 'Int'|"
                        r"Long(Tensor)? but (got|found) (scalar type )?Int", re.IGNORECASE)


def diagnose_exception(message: str, shapes: dict[str, list[int]] | None = None) -> Hint | None:
    """An exception the submission raised (``message``: its first line): the library function it
    called took the int32 targets for an error (``targets_not_int64``), or None."""
    return Hint(idea="targets_not_int64") if _LONG_ONLY.search(message or "") else None
