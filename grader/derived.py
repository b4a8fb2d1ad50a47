"""The derived tolerance: an allowance the grader works out from the reference itself, so that an
author names no tolerance model (``tolerance: {model: derived}``, the default).

For one case in graded dtype ``t`` (unit roundoff ``u``, output dtype ``o`` with ``u_o``), with
``f`` the reference computed exactly (float64 on the float64 images of the inputs), the allowed
absolute error of output element ``i`` is (docs/tolerance.md, "Derived", which gives the
sources and the measured margins)::

    A_i = F * (cond_i + spread(comp)_i + sqrt(L) u_acc |f_i| + 3 u_o |f_i|) + 2 u_o max_j |f_j| + F * tiny_o
                                                                (0 where f_i is not finite)

- ``cond_i = max_k |f(x_k) - f(x)|_i``: the first-order effect of rounding the inputs, measured
  by finite differences at the rounding's own scale: each ``x_k`` (k = 1..K) moves every finite
  non-zero float input by one unit in the last place of its dtype, up or down at random (the
  backward error of one rounding per input; Higham 2002, sections 1.5-1.6 and 3.1: a backward
  stable computation errs by about the condition number times ``u``, and ``cond`` estimates
  ``sum_j |df_i/dx_j| |x_j| u`` along K random sign patterns);
- ``comp_i = max_k |f_t(x_k) - f(x_k)|_i`` over ``k = 0..K`` (``x_0 = x``): the rounding of the
  computation, measured by running the reference itself in the graded dtype (JAX with x64 off:
  its reductions of float16 and bfloat16 accumulate in float32, which is what the statement asks
  of a correct half implementation); where the half run overflows, the float32 run rounded to
  the half dtype stands in; for float64, the float32 run's error times ``2 * 2**-29`` (to first
  order a rounding error scales with ``u``; twice, since in float64 the reference's own rounding
  is of the same size as the submission's);
- ``sqrt(L) u_acc |f_i|``: a sum of ``L`` terms added in another correct order (``L``: the
  longest sum of the reference, read from its jaxpr; ``u_acc`` the unit roundoff of the
  accumulator: float32 for half dtypes, else the dtype's). The reference's own run (``comp``)
  sums in XLA's blocked order, within about a unit; recursive summation errs by about
  ``sqrt(L) u`` relative (Higham 2002, section 4.2: the bound is ``(L - 1) u``, and rounding
  errors of random sign add in quadrature). Measured: torch's float32 ``vector_norm`` of
  262,144 terms is 62 u off, 3.9 allowances without this term;
- ``spread``: each element takes the largest ``comp`` of its neighbours along every axis (a
  window of 3), so that an element where the reference's own rounding happened to be exact does
  not become exact for everyone (another correct order of operations rounds elsewhere);
- ``3 u_o |f_i|``: the final rounding to the output dtype and the few units in the last place an
  elementary function (exp, log, erf, sin) of any correct library may be off by, for the
  submission and for the reference (measured: NumPy's and PyTorch's float64 softmax differ from
  JAX's by up to 4 u |f| over 4099 logits); ``tiny_o``: the smallest normal number of the output
  dtype (flushed subnormals, underflow);
- ``2 u_o max_j |f_j|``: a normwise floor (Higham 2002, section 1.2): one rounding of the case's
  largest output, allowed at every element, for the elements whose own terms cancel inside a
  correct computation (``1 + erf(x / sqrt 2)`` for very negative x: the reference rounds it to 0,
  another correct order to a tiny non-zero number);
- ``F`` (``tolerance.factor``, default :data:`FACTOR`): the safety factor over one estimate.

Everything is deterministic: the probes' signs come from ``grader.cases.Stream`` keyed by the
case. The reference is trusted code: it runs in the grader's process.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .cases import Stream
from .dtypes import HALF_DTYPES, dtype_of, smallest_normal, unit_roundoff
from .spec import Problem

FACTOR = 4.0  # the default safety factor F
PROBES = 3    # K: perturbed copies of the inputs
F32_TO_F64 = 2 * 2.0 ** -29  # u(float64) / u(float32), twice: in float64 the reference's own rounding counts too
NORMWISE = 2.0  # a rounding of the case's largest output, for the submission and the reference, anywhere
ULPS = 3  # units of the output's last place every correct library may be off by (rounding, exp, log, erf)
#: the accumulator a correct implementation sums in: float32 for half dtypes (the statement's rule)
ACCUMULATOR = {"float16": "float32", "bfloat16": "float32"}


def _float_names(problem: Problem, inputs: dict[str, Any]) -> list[str]:
    """The float array inputs (graded or of a fixed float dtype), in the spec's order."""
    out = []
    for p in problem.parameters:
        if p.name in inputs and p.scalar is None:
            a = np.asarray(inputs[p.name])
            if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
                out.append(p.name)
    return out


def one_ulp(stream: Stream, a: np.ndarray) -> np.ndarray:
    """``a`` with every finite non-zero element moved one unit in the last place of its dtype, up
    or down in magnitude at random; an element that would leave the normal range stays put.

    Works on the bit pattern (sign and magnitude), so it serves bfloat16 as well as NumPy's floats.
    """
    a = np.asarray(a)
    if a.size == 0:
        return a.copy()
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    bits = a.copy(order="C").view(width)   # not np.ascontiguousarray: it makes 0-d 1-d
    one = width(1)
    with np.errstate(over="ignore"):
        moved = np.where(stream.signs(a.shape) > 0, bits + one, bits - one).astype(width).view(a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        wide, wide_moved = a.astype(np.float64), moved.astype(np.float64)
    tiny = smallest_normal(a.dtype.name)
    ok = (np.isfinite(wide) & (wide != 0) & np.isfinite(wide_moved) & (np.abs(wide_moved) >= tiny)
          & (np.sign(wide_moved) == np.sign(wide)))
    return np.where(ok, moved, a)


def _spread(a: np.ndarray) -> np.ndarray:
    """The largest value of each element and its neighbours along every axis (a window of 3)."""
    out = a
    for axis in range(a.ndim):
        if a.shape[axis] < 2:
            continue
        m = out.copy()
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        m[tuple(hi)] = np.maximum(m[tuple(hi)], out[tuple(lo)])
        m[tuple(lo)] = np.maximum(m[tuple(lo)], out[tuple(hi)])
        out = m
    return out


def _low(call: Callable[..., Any], problem: Problem, inputs: dict[str, Any], floats: list[str], dtype: str,
         out_dtype: str) -> np.ndarray:
    """The reference run in the graded dtype (module doc), as float64 (float32 for float64)."""
    work = "float32" if dtype == "float64" else dtype
    given = {k: (np.asarray(v).astype(dtype_of(work)) if k in floats and np.asarray(v).dtype == np.float64 else v)
             for k, v in inputs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # x64 off truncates int64 ids to int32: harmless here
        out = np.asarray(np.asarray(call(problem, given, wide=False)), dtype=np.float64)
        if work in HALF_DTYPES:
            exact = None
            if not np.all(np.isfinite(out)):
                up = {k: (np.asarray(v).astype(np.float32) if k in floats else v) for k, v in inputs.items()}
                f32 = np.asarray(np.asarray(call(problem, up, wide=False)), dtype=np.float64)
                exact = f32.astype(dtype_of(out_dtype)).astype(np.float64) if out_dtype in HALF_DTYPES else f32
                out = np.where(np.isfinite(out), out, exact)
    return out


def allowance(call: Callable[..., Any], problem: Problem, inputs: dict[str, Any], ref: np.ndarray, dtype: str,
              out_dtype: str, key: str = "", length: int = 1) -> np.ndarray:
    """The derived allowance of one case (module doc): float64, shaped like ``ref``, >= 0, never
    NaN; 0 where ``ref`` is not finite (such an element must match exactly).

    Args:
        call: runs the reference, ``call(problem, inputs, wide=True)`` (``grader.reference.call``).
        inputs: the case's inputs (parameter name -> array in its dtype, scalars as 0-d arrays).
        ref: the exact output (float64), as :func:`grader.reference.evaluate` computed it.
        dtype: the case's graded dtype; out_dtype: the output's dtype.
        key: seeds the probes' signs (the case's name).
        length: ``L``, the most terms one sum of the reference adds (``grader.reference.longest_sum``).

    Raises:
        Exception: whatever the reference raises on a probe (the caller words it).
    """
    factor = float(problem.tolerance.get("factors", {}).get(dtype, problem.tolerance.get("factor", FACTOR)))
    ref = np.asarray(ref, dtype=np.float64)
    floats = _float_names(problem, inputs)
    stream = Stream("derived", problem.id, key, dtype)
    scale = F32_TO_F64 if dtype == "float64" else 1.0
    cond = np.zeros_like(ref)
    comp = np.zeros_like(ref)
    variants: list[tuple[dict[str, Any], np.ndarray]] = [(inputs, ref)]
    for _ in range(PROBES if floats else 0):
        x = {k: (one_ulp(stream, v) if k in floats else v) for k, v in inputs.items()}
        fx = np.asarray(call(problem, x), dtype=np.float64)
        if fx.shape == ref.shape:
            variants.append((x, fx))
    with np.errstate(invalid="ignore", over="ignore"):
        for x, fx in variants[1:]:
            cond = np.fmax(cond, np.abs(fx - ref))
        for x, fx in variants:
            low = _low(call, problem, x, floats, dtype, out_dtype)
            if low.shape == ref.shape:
                comp = np.fmax(comp, np.abs(low - fx) * scale)
        summed = np.sqrt(max(1, int(length))) * unit_roundoff(ACCUMULATOR.get(dtype, dtype)) * np.abs(ref)
        total = factor * (cond + _spread(np.where(np.isfinite(comp), comp, 0.0)) + summed
                          + ULPS * unit_roundoff(out_dtype) * np.abs(ref))
        finite = np.abs(ref[np.isfinite(ref)])
        largest = float(finite.max()) if finite.size else 0.0
        total = total + NORMWISE * unit_roundoff(out_dtype) * largest + factor * smallest_normal(out_dtype)
    total = np.where(np.isfinite(ref) & np.isfinite(total), total, 0.0)
    return total.astype(np.float64)
