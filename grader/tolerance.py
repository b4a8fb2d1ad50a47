"""Tolerance models: how far a correct output element may be from the exact one.

A registry (:data:`MODELS`) that ``grader.compare`` (verdicts) and ``grader.diagnose`` (hints)
both read; it imports only ``grader.dtypes``, so neither import cycles through the other.
A spec names its model in ``tolerance.model``; each model has

* ``allowed(dtype, ref, scale, n)``: the per-element allowed absolute error, float64, shaped
  like ``ref``, never NaN;
* ``describe(dtype, n, scale, names)``: one line for a report, or None (the exact model says
  nothing about terms or scales).

Models (docs/tolerance.md derives each):

``derived`` (the default)
    worked out from the reference itself for each case (``grader.derived``): the effect of
    rounding the inputs plus the rounding of the reference run in the graded dtype, times a
    safety factor; carried as the case's ``scale``.
``exact``
    no error at all (every correct method computes the result exactly: a lookup, a copy).
``sum_of_products``
    an element ``y = sum_k a_k b_k`` of ``n`` terms with the condition scale
    ``S = sum_k |a_k| |b_k|`` (the reference on the absolute values of the float inputs):
    ``u_out |ref| + 2 (n+1) u_acc S [+ 3 u_out S for half dtypes] + 2 (n+1) tiny_acc + tiny_out``
    (Higham 2002, section 3.1).
``masked_mean``
    an element ``y = (1/c) sum_{t valid} x_t`` of ``c`` valid terms with
    ``S = (1/c) sum |x_t|`` (the reference on ``|x|``): ``u_out |ref| + 2 (c+1) u_acc S
    + 2 (c+1) tiny_acc + tiny_out`` where ``c > 0``, and exactly 0 where ``c = 0`` (a row with no
    valid term must give 0; ``-0.0`` counts as 0). ``n`` is then an array of counts broadcast
    against ``ref``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtypes import HALF_DTYPES, dtype_of, smallest_normal, unit_roundoff

U_ACC_SINGLE = 2.0 ** -24  # float32 accumulation (half and single precision inputs)
U_ACC_DOUBLE = 2.0 ** -53  # float64 accumulation
ACC_FACTOR = 2  # the accumulation bound counted twice: the submission's and the reference's sums
HALF_PRODUCT_FACTOR = 3  # products rounded to a half dtype: u*S, times 3 (worst ratio 1/2, see docs)
UNDERFLOW_FACTOR = 2  # flushed products and flushed partial sums: n + 1 of each at most


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _u_acc(dtype: str) -> float:
    return U_ACC_DOUBLE if dtype_of(dtype) == np.float64 else U_ACC_SINGLE


def _tiny_acc(dtype: str) -> float:
    return smallest_normal(np.float64 if dtype_of(dtype) == np.float64 else np.float32)


def exact_allowed(dtype: str, ref: np.ndarray, scale: np.ndarray | None, n: int | np.ndarray) -> np.ndarray:
    """Model ``exact``: zeros shaped like ``ref`` (float64).

    Raises:
        ValueError: ``dtype`` is not a floating dtype.
    """
    unit_roundoff(dtype)  # the same check as the other models
    return np.zeros_like(np.asarray(ref), dtype=np.float64)


def sum_of_products_allowed(dtype: str, ref: np.ndarray, scale: np.ndarray | None,
                            n: int | np.ndarray) -> np.ndarray:
    """Per-element allowed absolute error of ``sum_of_products`` (module doc; docs/tolerance.md).

    Args:
        dtype: the output dtype's name (``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``).
        ref: the exact result, float64, any shape.
        scale: ``S``, the reference on the absolute values of the float inputs, shaped like
            ``ref``; None means the exact model (every allowance is 0).
        n: the number of products per element (the contraction size), an int >= 0.

    Returns:
        A float64 array shaped like ``ref``, every element > 0 unless ``scale`` is None.

    Raises:
        ValueError: ``dtype`` is not a floating dtype (from ``grader.dtypes``).

    Sources: Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed., 2002), section
    3.1, ``|fl(x.y) - x.y| <= gamma_n |x|.|y|`` with ``gamma_n = n u / (1 - n u)`` (taken as
    ``(n + 1) u``, which bounds it while ``n (n + 1) u <= 1``); sections 2.1-2.2 for ``u`` and
    underflow; docs/tolerance.md for the half-dtype factor and the measured margins.
    """
    u_out = unit_roundoff(dtype)
    if scale is None:
        return np.zeros_like(ref, dtype=np.float64)
    u_acc = _u_acc(dtype)
    allowed = u_out * np.abs(ref) + ACC_FACTOR * (n + 1) * u_acc * scale
    if dtype in HALF_DTYPES:
        allowed = allowed + HALF_PRODUCT_FACTOR * u_out * scale
    return allowed + (UNDERFLOW_FACTOR * (n + 1) * _tiny_acc(dtype) + smallest_normal(dtype))


def masked_mean_allowed(dtype: str, ref: np.ndarray, scale: np.ndarray | None,
                        n: int | np.ndarray) -> np.ndarray:
    """Per-element allowed absolute error of ``masked_mean`` (module doc; docs/tolerance.md).

    Args:
        dtype: the output dtype's name.
        ref: the exact masked means, float64, any shape.
        scale: ``S``, the masked mean of ``|x|`` (the reference on ``|inputs|``), shaped like
            ``ref``; None means the exact model.
        n: ``c``, the count of valid terms per element: an int or an integer array that
            broadcasts against ``ref`` (a row's count for each of its features).

    Returns:
        A float64 array shaped like ``ref``: exactly 0 where ``c == 0``, > 0 elsewhere, never
        NaN (a NaN or infinite ``ref`` or ``scale`` gives an allowance of 0 there, so such an
        element can only match exactly).

    Raises:
        ValueError: ``dtype`` is not a floating dtype.

    Source: Higham 2002, section 3.1 (a sum of ``c`` terms in any order errs by at most
    ``gamma_(c-1) sum |x_t|``), plus one rounding for the division by ``c`` and one to the
    output dtype (section 2.2); counted twice as for ``sum_of_products``.
    """
    u_out = unit_roundoff(dtype)
    ref = np.asarray(ref, dtype=np.float64)
    if scale is None:
        return np.zeros_like(ref, dtype=np.float64)
    c = np.broadcast_to(np.asarray(n, dtype=np.float64), ref.shape)
    s = np.broadcast_to(np.asarray(scale, dtype=np.float64), ref.shape)
    finite = np.isfinite(ref) & np.isfinite(s)
    r = np.where(finite, np.abs(ref), 0.0)
    s = np.where(finite, s, 0.0)
    allowed = (u_out * r + ACC_FACTOR * (c + 1) * _u_acc(dtype) * s
               + UNDERFLOW_FACTOR * (c + 1) * _tiny_acc(dtype) + smallest_normal(dtype))
    return np.where((c > 0) & finite, allowed, 0.0)


def derived_allowed(dtype: str, ref: np.ndarray, scale: np.ndarray | None, n: int | np.ndarray) -> np.ndarray:
    """Model ``derived``: the allowance ``grader.derived.allowance`` computed with the reference
    (carried in ``scale``); zeros where there is none (an exact comparison).

    Raises:
        ValueError: ``dtype`` is not a floating dtype.
    """
    unit_roundoff(dtype)
    ref = np.asarray(ref, dtype=np.float64)
    if scale is None:
        return np.zeros_like(ref)
    a = np.broadcast_to(np.asarray(scale, dtype=np.float64), ref.shape)
    return np.where(np.isfinite(a) & (a > 0), a, 0.0)


def _describe_derived(dtype: str, n: int | np.ndarray, scale: float, names: tuple[str, ...]) -> str:
    return (f"tolerance: derived from the reference in {dtype} (unit roundoff {unit_roundoff(dtype):.3g}): "
            f"4 x (the effect of rounding each input by one unit in the last place, plus the rounding of the "
            f"reference computed in {dtype}, plus the final rounding) there")


def _describe_exact(dtype: str, n: int | np.ndarray, scale: float, names: tuple[str, ...]) -> str | None:
    return None


def _describe_sum_of_products(dtype: str, n: int | np.ndarray, scale: float, names: tuple[str, ...]) -> str:
    return (f"tolerance: {dtype} (unit roundoff {unit_roundoff(dtype):.3g}), "
            f"d = {int(np.max(n)) if np.ndim(n) else int(n)} terms per element, scaled by S = {_fmt(scale)} there "
            f"(the same computation on |{'|, |'.join(names)}|)")


def _describe_masked_mean(dtype: str, n: int | np.ndarray, scale: float, names: tuple[str, ...]) -> str:
    c = int(n)
    if c == 0:
        return (f"tolerance: none there: a row with no valid entry must give exactly 0 "
                f"(-0.0 counts as 0)")
    return (f"tolerance: {dtype} (unit roundoff {unit_roundoff(dtype):.3g}), a mean of c = {c} valid "
            f"terms there, scaled by S = {_fmt(scale)} (the mean of |{names[0] if names else 'x'}| over them)")


@dataclass(frozen=True)
class Model:
    """One tolerance model: its name, its allowance and its one-line description for reports.

    ``uses_scale``: the reference is also run on the absolute values of the float inputs to
    give ``S``. ``spec_key``: the ``tolerance`` field that names a size symbol or parameter the
    model needs (``contraction`` / ``count``), or None.
    """

    name: str
    allowed: Callable[[str, np.ndarray, np.ndarray | None, "int | np.ndarray"], np.ndarray]
    describe: Callable[[str, "int | np.ndarray", float, tuple[str, ...]], str | None]
    uses_scale: bool
    spec_key: str | None


MODELS: dict[str, Model] = {
    "derived": Model("derived", derived_allowed, _describe_derived, False, None),
    "exact": Model("exact", exact_allowed, _describe_exact, False, None),
    "sum_of_products": Model("sum_of_products", sum_of_products_allowed, _describe_sum_of_products, True,
                             "contraction"),
    "masked_mean": Model("masked_mean", masked_mean_allowed, _describe_masked_mean, True, "count"),
}


def model(name: str) -> Model:
    """The registered model called ``name``.

    Raises:
        KeyError: no such model (the spec schema lists the registered names).
    """
    return MODELS[name]
