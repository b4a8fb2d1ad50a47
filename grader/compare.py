"""Compare a submission's output with the reference: type, shape, dtype, finiteness, values, inputs.

The checks run in that fixed order; every problem found is collected, and the first one
decides the failure's kind (``grader.results.CASE_KINDS``). Messages are built from the
mismatch data in one place (:func:`_tolerance_failure`, ...), so reporters never re-derive them.

Tolerance model ``sum_of_products`` (docs/tolerance.md has the derivation and the measured
margins). For an output element ``y = sum_k a_k b_k`` over ``n`` terms, with ``ref`` its exact
value and ``S = sum_k |a_k| |b_k|`` (the reference evaluated on ``|inputs|``), the allowed
absolute error is::

    allowed = u_out * |ref|                  # rounding the result to the output dtype
            + 2 * (n + 1) * u_acc * S        # accumulation in any order (Higham 2002, sec. 3.1:
                                             #   |fl(x.y) - x.y| <= gamma_n |x|.|y|, and
                                             #   gamma_n <= (n + 1) u while n (n + 1) u <= 1),
                                             #   counted twice: the submission's and the reference's
            + 3 * u_out * S                  # half dtypes only: products rounded to the half
                                             #   dtype before a float32 sum (u * S), times 3
            + 2 * (n + 1) * tiny_acc         # underflow with flush-to-zero (XLA on the CPU, GPUs,
            + tiny_out                       #   fast-math BLAS): each product and each partial sum
                                             #   below the computing dtype's smallest normal number
                                             #   may become 0 (error < tiny_acc each, n of each), and
                                             #   the result below the output dtype's smallest normal
                                             #   may become 0 (error < tiny_out); gradual underflow
                                             #   errs less (tiny / 2 per rounding)

``u_out`` is the output dtype's unit roundoff (``grader.dtypes``); ``u_acc`` is 2**-24 (float32
accumulation, what BLAS, NumPy's float16 loops and XLA use for half and single precision) or
2**-53 for float64; ``tiny_acc`` and ``tiny_out`` are the smallest *normal* numbers of the
accumulation dtype (float32 or float64) and of the output dtype. Graded inputs are never
subnormal (``grader.cases`` flushes them when it makes a case), so denormals-are-zero on input
changes nothing. Margins measured with benchmarks/tolerance_margins.py (1000 cases per dtype,
NumPy, JAX and loop implementations): correct code stays under 0.41 of the allowance in every
dtype (docs/tolerance.md).
Summing in the half dtype itself (a Python loop over ``d_model`` with a float16 accumulator) is
outside the model: its error grows like ``n * u_out * S`` and the hints name it.

Model ``exact`` (and ``compare: exact`` cases) allows no error: the probes there (zero rows,
scaled basis vectors) are computed exactly by every correct method. The sign of a zero is not
graded (``-0.0 == 0.0``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import diagnose
from .cases import Case
from .dtypes import HALF_DTYPES, dtype_of, smallest_normal, unit_roundoff
from .results import Failure
from .runner import CallOutcome

SMALL = 64  # arrays of at most this many elements are shown with their values
U_ACC_SINGLE = 2.0 ** -24  # float32 accumulation (half and single precision inputs)
U_ACC_DOUBLE = 2.0 ** -53  # float64 accumulation
ACC_FACTOR = 2  # the accumulation bound counted twice: the submission's and the reference's sums
HALF_PRODUCT_FACTOR = 3  # products rounded to a half dtype: u*S, times 3 (worst ratio 1/2, see docs)
UNDERFLOW_FACTOR = 2  # flushed products and flushed partial sums: n + 1 of each at most


@dataclass
class Expected:
    """The reference's answer for one case: exact float64 values and the condition scale S."""

    ref: np.ndarray
    scale: np.ndarray | None
    n: int  # terms per output element (the contraction size); 0 for the exact model


def allowed_error(dtype: str, ref: np.ndarray, scale: np.ndarray | None, n: int) -> np.ndarray:
    """Per-element allowed absolute error of the ``sum_of_products`` model (see the module doc).

    Args:
        dtype: the output dtype's name (``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``).
        ref: the exact result, float64, any shape.
        scale: ``S``, the reference evaluated on the absolute values of the inputs, shaped like
            ``ref``; None means the exact model (every allowance is 0).
        n: the number of products per element (``d_model``), an int >= 0.

    Returns:
        A float64 array shaped like ``ref``, every element > 0 unless ``scale`` is None.

    Raises:
        ValueError: ``dtype`` is not a floating dtype (from ``grader.dtypes``).

    Sources: Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed., 2002), section
    3.1, the dot product bound ``|fl(x.y) - x.y| <= gamma_n |x|.|y|`` with
    ``gamma_n = n u / (1 - n u)`` (taken as ``(n + 1) u``, which bounds it while
    ``n (n + 1) u <= 1``); sections 2.1-2.2 for ``u`` and underflow; docs/tolerance.md for the
    half-dtype factor and the measured margins.
    """
    u_out = unit_roundoff(dtype)
    if scale is None:
        return np.zeros_like(ref, dtype=np.float64)
    u_acc = U_ACC_DOUBLE if dtype_of(dtype) == np.float64 else U_ACC_SINGLE
    allowed = u_out * np.abs(ref) + ACC_FACTOR * (n + 1) * u_acc * scale
    if dtype in HALF_DTYPES:
        allowed = allowed + HALF_PRODUCT_FACTOR * u_out * scale
    tiny_acc = smallest_normal(np.float64 if u_acc == U_ACC_DOUBLE else np.float32)
    return allowed + (UNDERFLOW_FACTOR * (n + 1) * tiny_acc + smallest_normal(dtype))


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _values(arr: np.ndarray) -> Any:
    return np.asarray(arr, dtype=np.float64).tolist()


def _safe(idea: Any, *args: Any) -> diagnose.Hint | None:
    """A hint, or None if finding it failed: hints are advice and never change or break a verdict."""
    try:
        return idea(*args)
    except Exception:  # noqa: BLE001 - a hint that cannot be computed is left out
        return None


def _hinted(failure: Failure, hint: diagnose.Hint | None) -> Failure:
    """``failure`` with ``hint``'s text, and its id and parameters in ``data`` (for the summary)."""
    if hint is not None:
        failure.hint = hint.text
        failure.data["hint_id"] = hint.id
        if hint.params:
            failure.data["hint_params"] = hint.params
    return failure


def compare(case: Case, outcome: CallOutcome, expected: Expected) -> Failure | None:
    """The failure of one case, or None when the output is right.

    Args:
        case: the case (its inputs in the case dtype).
        outcome: what the submission's process returned (``grader.runner.CallOutcome``).
        expected: the reference's exact values, scale and ``n``.
    """
    if outcome.status == "type":
        return _hinted(Failure("type", f"the function returned {outcome.message}, not an array",
                               data={"returned": outcome.message}), _safe(diagnose.diagnose_type, outcome.message))
    got = outcome.result
    assert got is not None
    ref = expected.ref
    want_shape, want_dtype = tuple(ref.shape), case.dtype
    problems: list[Failure] = []
    if tuple(got.shape) != want_shape:
        problems.append(_hinted(Failure(
            "shape", f"shape {tuple(got.shape)} != expected {want_shape}",
            data={"got": list(got.shape), "expected": list(want_shape)}),
            _safe(diagnose.diagnose_shape, case, got, ref)))
    if got.dtype.name != want_dtype:
        problems.append(_hinted(Failure(
            "dtype", f"dtype {got.dtype.name} != expected {want_dtype} (the inputs' dtype)",
            data={"got": got.dtype.name, "expected": want_dtype}), _safe(diagnose.diagnose_dtype, case, got)))
    if not problems or problems[0].kind == "dtype":
        value_failure = _compare_values(case, got, expected)
        if value_failure is not None:
            problems.append(value_failure)
    if outcome.mutated:
        problems.append(_hinted(Failure(
            "mutation", f"the function changed its input{'s' if len(outcome.mutated) > 1 else ''} "
                        f"{', '.join(outcome.mutated)} in place",
            data={"mutated": list(outcome.mutated)}),
            diagnose.Hint("mutation", "work on a copy (or use operations that return new arrays) "
                                      "instead of writing into an input")))
    if not problems:
        return None
    first = problems[0]
    for extra in problems[1:]:
        first.details.append(f"also {extra.kind}: {extra.message}")
        if first.hint is None and extra.hint:
            first.hint = extra.hint
            for key in ("hint_id", "hint_params"):
                if key in extra.data:
                    first.data[key] = extra.data[key]
        first.data.setdefault("also", []).append({"kind": extra.kind, "message": extra.message})
    return first


def _compare_values(case: Case, got: np.ndarray, expected: Expected) -> Failure | None:
    ref = expected.ref
    if got.dtype.kind not in "fiub" and got.dtype.name != "bfloat16":
        return None  # complex or other: the dtype failure says it all
    g = np.asarray(got, dtype=np.float64)
    finite_ref = np.isfinite(ref)
    bad = ~np.isfinite(g) & finite_ref
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        n_bad = int(bad.sum())
        return _hinted(Failure(
            "non_finite",
            f"{n_bad} / {g.size} elements are NaN or infinite where the expected values are finite",
            details=[f"first at index {idx}: got {g[idx]}, expected {_fmt(ref[idx])}"],
            data={"count": n_bad, "total": int(g.size), "index": list(idx)}),
            _safe(diagnose.diagnose_non_finite, case, g, ref))
    if case.compare == "exact":
        allowed = np.zeros_like(ref)
        rounded = ref.astype(dtype_of(case.dtype)).astype(np.float64)
        err = np.abs(g - rounded)
        mask = ~(g == rounded)
    else:
        allowed = allowed_error(case.dtype, ref, expected.scale, expected.n)
        err = np.abs(g - ref)
        mask = ~(err <= allowed)
    if not mask.any():
        return None
    return _tolerance_failure(case, g, ref, err, allowed, mask, expected)


def _tolerance_failure(case: Case, g: np.ndarray, ref: np.ndarray, err: np.ndarray,
                       allowed: np.ndarray, mask: np.ndarray, expected: Expected) -> Failure:
    n_bad, total = int(mask.sum()), int(mask.size)
    with np.errstate(all="ignore"):
        ratio = np.where(allowed > 0, err / np.where(allowed > 0, allowed, 1.0), np.where(err > 0, np.inf, 0.0))
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(mask, ratio, -1))), ratio.shape))
    w_ratio = float(ratio[worst])
    exact = case.compare == "exact"
    message = (f"{n_bad} / {total} elements ({100.0 * n_bad / total:.1f}%) "
               + ("differ from the exact result" if exact else "are outside the tolerance"))
    details = [
        f"worst at index {worst}: got {_fmt(g[worst])}, expected {_fmt(ref[worst])}, "
        f"error {_fmt(err[worst])}, allowed {_fmt(allowed[worst])}"
        + ("" if exact or not math.isfinite(w_ratio) else f" ({w_ratio:.3g}x the allowance)"),
    ]
    data = {"mismatched": n_bad, "total": total, "worst_index": list(worst),
            "got": float(g[worst]), "expected": float(ref[worst]),
            "error": float(err[worst]), "allowed": float(allowed[worst]),
            "ratio": w_ratio if math.isfinite(w_ratio) else None}
    if exact:
        details.append("this case is computed exactly by every correct method (no rounding happens), "
                       "so the result must match exactly")
    else:
        s_worst = float(expected.scale[worst]) if expected.scale is not None else 0.0
        data["scale"] = s_worst
        details.append(f"tolerance: {case.dtype} (unit roundoff {unit_roundoff(case.dtype):.3g}), "
                       f"d = {expected.n} terms per element, scaled by S = {_fmt(s_worst)} there "
                       f"(the same computation on |{'|, |'.join(case.inputs)}|; docs/tolerance.md)")
    hint = _safe(diagnose.diagnose_values, case, g, ref, expected.scale, allowed)
    return _hinted(Failure("tolerance", message, details=details, data=data), hint)
