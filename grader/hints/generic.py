"""Generic hint ideas: every problem gets them, worded with the spec's own names.

No idea here knows what a problem computes. Each value idea is a *prediction* of the output,
judged against the actual output by :func:`judge` (the rule of every hint: a hint that guesses is
worse than none), and the shape, dtype and type ideas state facts the values confirm:

* **values** (:func:`value_ideas`): the result computed in a lower precision (every value on
  that format's grid, the grid visible beyond the allowance, and the output within the tolerance
  model's allowance *in that format* of the reference rounded to it; bfloat16 and float16 told
  apart by the prediction, never by the grid alone), the last two axes swapped (a square result),
  a constant factor (named as an input's axis size where it is one: a mean over the wrong
  count), a constant offset, one offset per row (all axes but the last), and the
  ideas of the problem's own hint module (:mod:`grader.hints`). Of the ideas that fit, the one
  with the smallest residual is named, unless an idea of another id fits about as well (4x): then
  none is. A failure that flushing subnormals to zero explains gets none. When no idea
  explains the output in its own dtype, the ideas are judged again with a lower format's
  rounding (:func:`_in_lower_precision`: two mistakes at once, such as ``ddof=1`` computed in
  float32): the idea is named, and the lower format too where every value is a number of it.
* **shape** (:func:`shape_hint`): the right values with the axes reversed, or with an axis of
  size 1 added or dropped (checked on the values: a shape alone names no cause).
* **dtype** (:func:`dtype_hint`), **type** (:func:`type_hint`), **non-finite**
  (:func:`non_finite_hint`: NaN exactly where the result is 0), **exceptions**
  (:func:`exception_hint`: NotImplementedError only; a shape error names no cause).

Which dtypes and ranks fail is said by the report's summary (``grader.summary``), for every
problem, with the first parameter's name.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

import numpy as np

from ..dtypes import dtype_of, smallest_normal, smallest_subnormal, unit_roundoff
from . import Hint, Idea, Names, as_float

MIN_EVIDENCE = 4  # elements an idea must change beyond the allowance unless it matches to rounding
IMPROVE = 0.5  # an idea's residual must be at most this share of the right answer's
FITTED = 0.25  # ... and this share for an idea with a fitted parameter (a factor, offsets)
AMBIGUOUS = 4.0  # another id within this factor of the best residual: the case cannot tell them apart
#: an idea judged with a lower format's rounding (:func:`_in_lower_precision`) claims that format
#: only when what it leaves is at least this share of the format's unit roundoff times the output
NOT_LOWER = 0.01

#: For a result in each dtype, the formats it may have been computed in instead.
LOWER = {"float64": ("float32", "bfloat16", "float16"), "float32": ("bfloat16", "float16")}

#: Ids the grader's own hints use (generic and bundled): an instructor's idea with one of these
#: ids is reported as ``<module>.<id>``, so that no summary reconciles it as another problem's.
RESERVED = frozenset({
    # generic
    "lower_precision", "transposed", "scaled", "shifted", "row_shifted", "extra_axis", "lost_axis", "promoted",
    "demoted", "dtype", "not_numeric", "not_array", "none", "jax_array", "nan_where_zero", "not_implemented",
    "mutation", "constant_shape", "axis_factor", "variance_count", "not_handled", "swapped_outputs", "near_zero",
    # tied_lm_head
    "zeros", "softmax", "log_softmax", "sign_flip", "abs", "relu", "factor", "normalised_hidden", "cosine",
    "normalised_table", "standardised_hidden", "row_offset", "no_transpose", "returns_hidden", "swapped_axes",
    "first_row", "feature_dropped", "half_accumulation", "offset", "column_offset", "where", "added_axis",
    "flattened", "squeezed", "vocab_dropped", "hidden_shape", "first_row_only", "wrong_vocab", "scalar",
    "empty_batch", "integer", "other_half", "nan_zero_rows", "overflow", "shapes_do_not_line_up",
})


def _rss(a: np.ndarray) -> float:
    return math.sqrt(float(np.square(a).sum()))


#: outputs of at least this many elements are first tested on every n-th element (about 1,024 of
#: them): a condition that must hold at every element and fails there fails for the whole output,
#: at a small part of the cost (a failing check's hints judge a dozen ideas per failing case)
SAMPLED = 16384


def _every(a: Any, step: int, shape: tuple[int, ...]) -> np.ndarray:
    """Every ``step``-th element of ``a`` broadcast to ``shape``, in C order (a copy, 1-D)."""
    return np.broadcast_to(a, shape).flat[::step]


def _condition_one(p: np.ndarray, got: np.ndarray, ref: np.ndarray, carried: Any, u: float,
                   tiny: float) -> tuple[bool, np.ndarray, np.ndarray]:
    """Condition (1) of :func:`judge` (``p`` finite, and ``got`` within four times ``carried``
    plus two roundings of ``p`` and ``ref`` at every element), with ``|got - p|`` and those two
    roundings: on every element, or on a sample (:data:`SAMPLED`), where a miss is the verdict."""
    rounding = 2 * u * (np.abs(p) + np.abs(ref)) + tiny
    err = np.abs(got - p)
    return bool(np.all(np.isfinite(p)) and np.all(err <= 4 * np.abs(carried) + rounding)), err, rounding


def judge(predicted: Any, got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str,
          carried: np.ndarray | None = None, improve: float = IMPROVE) -> float | None:
    """The residual of an idea's prediction when it explains the output, else None.

    It explains the output when (1) ``got`` is within four times the allowance carried through
    the mistake (``carried``, default ``allowed``) plus two roundings in ``dtype`` of
    ``predicted`` at every element; (2) the prediction would itself fail (it differs from ``ref``
    beyond the allowance plus a rounding somewhere, or beyond the allowance where ``got`` is
    ``predicted`` at every element, to the last bit); (3) its root-sum-square residual is at most ``improve``
    times the right answer's; (4) it changes at least :data:`MIN_EVIDENCE` elements beyond the
    allowance, or else matches ``got`` to rounding at every element (a few numbers land in a
    band by chance).

    Args:
        predicted: the mistake's output, array-like; got: the output, float64; ref: the exact
            output, float64; allowed: the verdict's allowance per element (zeros: exact);
            dtype: the output dtype's name.
    """
    p = as_float(predicted)
    if p.shape != got.shape:
        return None
    u, tiny = unit_roundoff(dtype), 4 * smallest_subnormal(dtype)
    carried = allowed if carried is None else carried
    if p.size >= SAMPLED and not _condition_one(*(_every(a, p.size // 1024, p.shape) for a in (p, got, ref, carried)),
                                                u, tiny)[0]:
        return None   # it misses at one element of a sample: it misses
    holds, err, rounding = _condition_one(p, got, ref, carried, u, tiny)
    if not holds:
        return None
    changed = int(np.count_nonzero(np.abs(p - ref) > allowed + u * np.abs(ref) + tiny))
    if changed == 0 and not (np.any(np.abs(p - ref) > allowed) and np.all(err <= tiny)):
        # within a rounding of the allowance it explains only an output it matches bit for bit
        # (two roundings of a half dtype where one is allowed: 1.01-1.35x the allowance)
        return None
    residual = _rss(got - p)
    if residual > improve * _rss(got - ref):
        return None
    if changed < MIN_EVIDENCE and not np.all(err <= rounding):
        return None
    return residual


def _on_grid(got: np.ndarray, low_dt: Any) -> bool:
    """Whether every value of ``got`` (float64) is a number of the format ``low_dt``; a large
    output is first tested on a sample (:data:`SAMPLED`), which settles most misses."""
    if got.size >= SAMPLED:
        g = _every(got, got.size // 1024, got.shape)
        if not np.array_equal(g.astype(low_dt).astype(np.float64), g):
            return False
    return bool(np.array_equal(got.astype(low_dt).astype(np.float64), got))


def _flushed(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str) -> bool:
    """Every wrong element is a subnormal (or zero) flushed or not: no mistake to name."""
    tn = smallest_normal(dtype)
    bad = ~(np.abs(got - ref) <= allowed)
    return bool(np.all((np.abs(ref[bad]) < tn) & (np.abs(got[bad]) < tn)))


def lower_precision(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str,
                    allowed_in: Callable[[str], np.ndarray], names: Names) -> tuple[Hint, float] | None:
    """The result computed in a format of :data:`LOWER` (a cast, or JAX without x64), or None.

    Per format: every output value is a number of it (significand *and* exponent range); at two
    distinct right values at least, rounding the right answer to it moves it beyond the allowance (zeros and
    small whole numbers lie on every grid and prove nothing); and ``got`` is within four times
    ``allowed_in(format)`` (the tolerance model in that format) plus one rounding of the right
    answer rounded to it. Of the formats that pass, the one leaving the smaller residual is
    named, only when it leaves at most half the residual of every other (bfloat16 numbers in
    float16's range are float16 numbers too).

    Returns:
        (the hint, its residual), or None.
    """
    fitting: list[tuple[float, str]] = []
    for low in LOWER.get(dtype, ()):
        low_dt = dtype_of(low)
        with np.errstate(all="ignore"):
            if not _on_grid(got, low_dt):
                continue
            rounded = ref.astype(low_dt).astype(np.float64)
        moved = ref[np.abs(rounded - ref) > allowed]
        if not np.all(np.isfinite(rounded)) or not np.any(moved != moved[:1]):
            continue  # two distinct values at least: one value repeated (a shrunk case) is one piece of evidence
        tn = smallest_normal(low)  # below it the format's grid is coarser than its unit roundoff says
        band = 4 * allowed_in(low) + 2 * unit_roundoff(low) * np.abs(ref) + tn * (np.abs(ref) < tn)
        if np.all(np.abs(got - rounded) <= band):
            fitting.append((_rss(got - rounded), low))
    if not fitting:
        return None
    fitting.sort()
    if len(fitting) >= 2 and fitting[0][0] >= 0.5 * fitting[1][0]:
        return None  # two formats explain it about as well (both exactly, too): name neither
    residual, low = fitting[0]
    # worded for the learner's framework by grader/words/generic.py (a cast in its code; JAX
    # without x64 for JAX learners only)
    facts = {"computed_in": low, "dtype": dtype, "function": names.function,
             "first": names.parameters[0] if names.parameters else ""}
    return Hint(idea="lower_precision", facts=facts), residual


#: factors a wrong count of a variance or mean gives, for n values along the last axis (their
#: causes are worded by grader/words/generic.py, by formula)
_COUNT_FACTORS: tuple[tuple[Callable[[int], float], str], ...] = (
    (lambda n: math.sqrt((n - 1) / n), "sqrt((n - 1) / n)"),
    (lambda n: math.sqrt(n / (n - 1)), "sqrt(n / (n - 1))"),
    (lambda n: (n - 1) / n, "(n - 1) / n"),
    (lambda n: n / (n - 1), "n / (n - 1)"),
)


def _variance_count(c: float, n: int) -> Hint | None:
    """The hint for a constant factor ``c`` that is one of :data:`_COUNT_FACTORS` for ``n >= 3``
    values along the last axis (to 1% of its distance from 1), or None. A factor of 0.8165 on rows of 3
    is sqrt(2/3): normalising with the unbiased standard deviation."""
    if n < 3:   # with n = 2 the factors are 0.5, 2 and sqrt(2): too common to mean a count
        return None
    for value, formula in _COUNT_FACTORS:
        v = value(n)
        if abs(c - v) <= 0.01 * abs(v - 1):   # 1% of the factor's distance from 1: rows of 256 need 1.00196
            return Hint(idea="variance_count", facts={"factor": c, "n": n, "formula": formula})
    return None


def _axis_factor(c: float, shapes: dict[str, tuple[int, ...]] | None) -> Hint | None:
    """The hint for a constant factor ``c`` that is ``1/n`` or ``n`` for the size ``n >= 3`` of
    one input's axis (to 1e-3 relative): a mean taken over the wrong count (a cross entropy
    divided by N * C instead of N is 1/C), a sum where a mean was asked; or ``1/sqrt(n)`` or
    ``sqrt(n)`` (``root``: a sum of squares for their mean under a root, an RMS norm over the
    sum). None otherwise, and where one factor reads both ways (1/4 is 1/n for n = 4 and
    1/sqrt(16): a helper's trial was told "divided by 4 (= x.shape[-2])" for a sum over 16).
    ``shapes``: parameter name -> the case input's shape, in call order. Every axis of the size
    is named (facts ``where``: ``["logits.shape[-1]"]``), the last axis of each input first;
    sizes of 1 and 2 (and under a root, 3 and 4) are too common to mean anything."""
    if not shapes or not math.isfinite(c) or c <= 0:
        return None
    found = []
    for root in (False, True):
        for how, n_of in (("divided", 1 / c), ("multiplied", c)):
            n_of = n_of * n_of if root else n_of
            n = round(n_of)
            if n < (5 if root else 3) or abs(n_of - n) > 2e-3 * n:   # 1/2 and 2 (root of 4) are too common
                continue
            where = [f"{name}.shape[{k - len(shape)}]" for name, shape in shapes.items()
                     for k in reversed(range(len(shape))) if shape[k] == n]
            if where:
                found.append(Hint(idea="axis_factor", facts={"factor": c, "n": n, "how": how, "where": where,
                                                             "root": root}))
    return found[0] if len(found) == 1 else None


class _Fits:
    """The parameters :func:`_fitted` fits to one output (``got`` against ``ref`` on the ``keep``
    elements): computed once when first asked, then judged in the output's dtype and in each lower
    format (:func:`_in_lower_precision` asked the same medians again for float32, bfloat16 and
    float16: a stub returning zeros is on every grid)."""

    def __init__(self, got: np.ndarray, ref: np.ndarray, keep: np.ndarray) -> None:
        self.got, self.ref, self.keep = got, ref, keep

    @functools.cached_property
    def factor(self) -> float:
        """The least-squares factor ``c`` of ``got ~ c * ref`` (NaN without a nonzero ``ref``)."""
        with np.errstate(all="ignore"):
            return float(np.sum(self.got * self.ref) / np.sum(self.ref * self.ref)) if np.any(self.ref) else math.nan

    @functools.cached_property
    def offset(self) -> tuple[float, bool]:
        """The median of ``got - ref`` over ``keep``, and whether ``ref`` varies there."""
        keep = self.keep
        c = float(np.median((self.got - self.ref)[keep])) if keep.any() else 0.0
        return c, bool(keep.any() and np.ptp(np.where(np.isfinite(self.ref), self.ref, 0.0)[keep]) > 0)

    @functools.cached_property
    def rows(self) -> np.ndarray:
        """The median of ``got - ref`` per row (last axis), over ``keep``, 0 for a row without any."""
        with np.errstate(all="ignore"):
            return np.nan_to_num(_row_medians(np.where(self.keep, self.got - self.ref, np.nan)))


def _row_medians(d: np.ndarray) -> np.ndarray:
    """``np.nanmedian(d, axis=-1, keepdims=True)`` in one sort (NaN for a row of NaN only): NumPy's
    goes row by row in Python (``apply_along_axis``), 1.7 s of the hints of 18 failing checks.
    The same values: the middle element, or the mean of the two middle ones."""
    s = np.sort(d, axis=-1)                          # NaN last
    n = np.count_nonzero(~np.isnan(d), axis=-1)[..., None]
    lo = np.take_along_axis(s, np.maximum((n - 1) // 2, 0), axis=-1)
    hi = np.take_along_axis(s, np.minimum(n // 2, max(d.shape[-1] - 1, 0)), axis=-1)
    return np.where(n % 2 == 1, lo, (lo + hi) / 2)


def _fitted(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str,
            full_ref: np.ndarray | None = None, fix: Callable[[Any], np.ndarray] | None = None,
            keep: np.ndarray | None = None,
            shapes: dict[str, tuple[int, ...]] | None = None, fits: _Fits | None = None) -> list[tuple[Hint, float]]:
    """A constant factor, a constant offset and one offset per row, each judged with the
    stricter :data:`FITTED` share and a fitted value read to 4 significant digits.

    With matched infinities (:func:`value_ideas`): ``got`` and ``ref`` hold 0 there, the
    predictions are made from ``full_ref`` (the infinities included: ``-inf * 2`` is still
    ``-inf``, ``-inf * -2`` is not) and passed through ``fix``, and the offsets are fitted on the
    ``keep`` elements only. A factor that is an input's axis size or its reciprocal is named
    as such (:func:`_axis_factor`, with ``shapes``). ``fits``: the same output's parameters,
    fitted once (:class:`_Fits`; made here when not given)."""
    full_ref = ref if full_ref is None else full_ref
    fix = fix or (lambda p: p)
    keep = np.ones(ref.shape, dtype=bool) if keep is None else keep
    if _zeros_fit(got, ref, allowed, dtype):
        # zeros explain the output as well: a fitted factor or offset only restates that (a
        # probability for a log-probability read as "a constant factor of -0.0003817" in bfloat16)
        return []
    fits = _Fits(got, ref, keep) if fits is None else fits
    out: list[tuple[Hint, float]] = []
    c = fits.factor
    # a factor within 5e-4 of 1 reads as "1" at 4 digits and names nothing (float32 rounding,
    # an eps in the wrong place): no hint rather than "a constant factor of 1"
    # a factor fitted to fewer than MIN_EVIDENCE elements fits them exactly whatever the mistake
    # (any 0-d output is "a constant factor" of the right one): there only a factor that names
    # something counts (a count: a sum for a mean, n for n - 1; or its reciprocal)
    few = int(keep.sum()) < MIN_EVIDENCE
    if math.isfinite(c) and c != 0 and abs(c - 1) >= 5e-4 and \
            (not few or _names_a_count(c, ref) or _axis_factor(c, shapes) is not None):
        r = judge(fix(c * full_ref), got, ref, allowed, dtype, max(abs(c), 1.0) * allowed, FITTED)
        if r is not None:
            out.append((_variance_count(c, ref.shape[-1] if ref.ndim else 0) or _axis_factor(c, shapes)
                        or Hint(idea="scaled", facts={"factor": c}), r))
    # an offset fitted to a constant right answer (softmax of 16 equal logits: 1/16 each) fits
    # any constant result: zeros from an overflow read as "a constant -0.0625 was added"
    c, varied = fits.offset
    if c != 0 and int(keep.sum()) >= MIN_EVIDENCE and varied:
        r = judge(fix(full_ref + c), got, ref, allowed, dtype, None, FITTED)
        if r is not None:
            out.append((Hint(idea="shifted", facts={"offset": c}), r))
    if ref.ndim >= 2 and ref.shape[-1] >= MIN_EVIDENCE and ref.size // ref.shape[-1] >= 2:
        rows = fits.rows
        if np.ptp(rows) > 4 * float(np.max(allowed)) + unit_roundoff(dtype) * float(np.max(np.abs(ref))):
            r = judge(fix(full_ref + rows), got, ref, allowed, dtype, 2 * allowed, FITTED)
            if r is not None:
                out.append((Hint(idea="row_shifted"), r))
    return out


def _zeros_fit(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str) -> bool:
    """Whether an output of zeros is within :func:`judge`'s condition (1) of ``got`` (every
    element within four allowances and two roundings of 0): then ``got`` says no more than "about
    zero", whatever factor or offset fits it."""
    u, tiny = unit_roundoff(dtype), 4 * smallest_subnormal(dtype)
    return _condition_one(np.zeros_like(got), got, ref, allowed, u, tiny)[0]


def near_zero(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str) -> Hint | None:
    """``near_zero`` where the output is zero, or within the allowance of zero, at every element
    while the expected values are not (a zero output would fail): the last resort of
    :func:`value_ideas`, after every idea that names a mistake."""
    if not _zeros_fit(got, ref, allowed, dtype):
        return None
    off = np.abs(ref) > np.abs(allowed) + unit_roundoff(dtype) * np.abs(ref) + 4 * smallest_subnormal(dtype)
    if int(np.count_nonzero(off)) < min(MIN_EVIDENCE, ref.size):
        return None
    return Hint(idea="near_zero", facts={"exact": bool(np.all(got == 0))})


def _names_a_count(c: float, ref: np.ndarray) -> bool:
    """Whether the factor ``c`` is a whole number of at least 2 or its reciprocal (to 1e-3), or
    the n/(n-1)-type factor of a variance count: what a factor fitted to a 0-d output can name."""
    for x in (abs(c), 1 / abs(c)):
        if x >= 1.5 and abs(x - round(x)) <= 1e-3 * x:
            return True
    return _variance_count(c, ref.shape[-1] if ref.ndim else 0) is not None


def matched_non_finite(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where the exact output is infinite or NaN and ``got`` has the same value (NaN for NaN):
    the matched infinities of a masked output (``-inf`` logits), right and not to be explained."""
    with np.errstate(all="ignore"):
        return ~np.isfinite(ref) & ((got == ref) | (np.isnan(got) & np.isnan(ref)))


def swapped_outputs(got: dict[str, np.ndarray], refs: dict[str, np.ndarray],
                    allowed: dict[str, np.ndarray]) -> Hint | None:
    """Two outputs of a several-output function returned in each other's place: for outputs
    ``a`` and ``b`` (declaration order) of the same shape, ``got[a]`` within ``b``'s allowance
    of ``refs[b]`` and ``got[b]`` within ``a``'s of ``refs[a]``, while neither is right in its
    own place. An instructor's learner returning ``(var, mean)`` for ``(mean, var)`` was told
    "the whole result was multiplied by a constant factor of 0.5" (it fitted one case). Arrays
    are float64; ``allowed``: each output's allowance per element."""
    names = [n for n in refs if n in got and n in allowed]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ga, gb, ra, rb = got[a], got[b], refs[a], refs[b]
            if ga.shape != rb.shape or gb.shape != ra.shape or ra.shape != rb.shape:
                continue
            with np.errstate(all="ignore"):
                crossed = bool(np.all(np.abs(ga - rb) <= allowed[b]) and np.all(np.abs(gb - ra) <= allowed[a]))
                own = bool(np.all(np.abs(ga - ra) <= allowed[a]) or np.all(np.abs(gb - rb) <= allowed[b]))
            if crossed and not own:
                return Hint(idea="swapped_outputs", facts={"first": a, "second": b, "order": list(refs)})
    return None


def value_ideas(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str,
                allowed_in: Callable[[str], np.ndarray], names: Names,
                problem_ideas: list[Idea] | None = None,
                shapes: dict[str, tuple[int, ...]] | None = None) -> Hint | None:
    """The mistake behind a value mismatch, from the generic ideas and the problem's own, or None.

    Infinities (and NaNs) that ``got`` matches where ``ref`` has them (the ``-inf`` of masked
    logits) are right: the ideas are judged on the other elements, as if both held 0 there, and
    a prediction must have the same infinity there too (a constant factor keeps ``-inf``, a
    negative one or a transpose does not). Any other non-finite element (in ``got``, or an
    infinity of ``ref`` that ``got`` misses) gets no value hint: the failure's message says it.

    Args:
        got: the output, float64, shaped like ``ref``; ref: the exact output, float64;
        allowed: the verdict's allowance per element (zeros for an exact comparison);
        dtype: the output dtype's name; allowed_in: the tolerance model's allowance for the same
        case in another dtype (for :func:`lower_precision`); names: the spec's names;
        problem_ideas: the problem module's :class:`Idea` predictions (already renamed off
        :data:`RESERVED`); shapes: the case's array inputs' shapes by parameter name (a factor
        that is an axis size is named so).
    """
    if ref.size == 0 or got.shape != ref.shape:
        return None
    matched = matched_non_finite(got, ref)
    if not np.all((np.isfinite(got) & np.isfinite(ref)) | matched):
        return None
    full_ref = ref
    if matched.any():
        got, ref = np.where(matched, 0.0, got), np.where(matched, 0.0, ref)
        allowed = np.where(matched, 0.0, np.broadcast_to(allowed, ref.shape))
        plain_allowed_in = allowed_in

        def allowed_in(low: str) -> np.ndarray:   # noqa: F811 - the same, 0 where matched
            return np.where(matched, 0.0, np.broadcast_to(plain_allowed_in(low), ref.shape))

        def fix(p: Any) -> np.ndarray:
            """A prediction with 0 where it has the matched value (and keeps any other infinity)."""
            p = as_float(p)
            if p.shape != full_ref.shape:
                return p
            with np.errstate(all="ignore"):
                return np.where(matched & ((p == full_ref) | (np.isnan(p) & np.isnan(full_ref))), 0.0, p)
    else:
        def fix(p: Any) -> Any:
            return p
    with np.errstate(all="ignore"):
        if _flushed(got, ref, allowed, dtype):
            return None
        low = lower_precision(got, ref, allowed, dtype, allowed_in, names)
        if low is not None:
            return low[0]
        fits = _Fits(got, ref, ~matched)   # fitted once, judged in each format
        candidates = _candidates(got, ref, allowed, dtype, full_ref, fix, matched, problem_ideas, shapes, fits=fits)
        if not candidates:
            return _in_lower_precision(got, ref, allowed, dtype, full_ref, fix, matched, names, problem_ideas,
                                       shapes, fits) or near_zero(got, ref, allowed, dtype)
    return _best(candidates, got, ref)


def _candidates(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str, full_ref: np.ndarray,
                fix: Callable[[Any], Any], matched: np.ndarray, problem_ideas: list[Idea] | None,
                shapes: dict[str, tuple[int, ...]] | None, carried: np.ndarray | None = None,
                fits: _Fits | None = None) -> list[tuple[float, Hint]]:
    """The value ideas that explain ``got`` (:func:`judge`), each with its residual: the problem's
    own, the last two axes swapped (a square result), and the fitted ones (:func:`_fitted`).
    ``carried``: the allowance each is judged with (:func:`_in_lower_precision`: a lower
    format's); by default the case's own, swapped for the transpose."""
    out: list[tuple[float, Hint]] = []
    for idea in problem_ideas or []:
        r = judge(fix(idea.predicted), got, ref, allowed, dtype, carried)
        if r is not None:
            out.append((r, Hint(idea=idea.id, facts=dict(idea.params), text=idea.text)))
    if ref.ndim >= 2 and ref.shape[-1] == ref.shape[-2] >= 2:
        r = judge(fix(np.swapaxes(full_ref, -1, -2)), got, ref, allowed, dtype,
                  np.swapaxes(allowed, -1, -2) if carried is None else carried)
        if r is not None:
            out.append((r, Hint(idea="transposed", facts={"axes": "last_two"})))
    fitted_allowed = allowed if carried is None else carried
    return out + [(r, h) for h, r in _fitted(got, ref, fitted_allowed, dtype, full_ref, fix, ~matched, shapes, fits)]


def _best(candidates: list[tuple[float, Hint]], got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """The candidate of smallest residual, unless one of another id is within :data:`AMBIGUOUS`."""
    if not candidates:
        return None
    floor = 1e-3 * _rss(got - ref)
    candidates.sort(key=lambda c: max(c[0], floor))
    best_r, best = candidates[0]
    if any(h.idea != best.idea and max(r, floor) <= AMBIGUOUS * max(best_r, floor) for r, h in candidates[1:]):
        return None
    return best


def _in_lower_precision(got: np.ndarray, ref: np.ndarray, allowed: np.ndarray, dtype: str, full_ref: np.ndarray,
                        fix: Callable[[Any], Any], matched: np.ndarray, names: Names,
                        problem_ideas: list[Idea] | None,
                        shapes: dict[str, tuple[int, ...]] | None = None, fits: _Fits | None = None) -> Hint | None:
    """Two mistakes at once: a mistake of the problem's ideas (or the generic transpose and
    fitted ones) *and* the result computed in a lower format (a newcomer's trial: layer norm with
    ``ddof=1`` computed in float32 got a hint in float16 and float32 but none in float64, where
    neither mistake alone explains the output).

    Tried only when no idea explains the output in its own dtype. Each format of :data:`LOWER`
    whose grid holds every value of ``got`` (finest first; for a float64 result float32 also
    without it) judges the ideas as if the output dtype were that format: two roundings of it
    at every element, plus one rounding of the case's largest value (a normwise floor for the
    format's rounding inside the computation, Higham 2002, section 1.2). The first idea that
    explains the output (unambiguously, :func:`_best`) is named: with the facts
    ``also_computed_in`` (the format), ``on_grid``, ``dtype`` and ``first`` (the first
    parameter), which :func:`grader.words.render` words as a second clause, only where every
    value is a number of that format and what the idea leaves is of that format's rounding
    (:data:`NOT_LOWER`); else the idea alone. A leftover of float32's size is no proof of
    float32: a helper's trial read "computed in float32" in pure float64 code whose leftover
    was an eps, an erf approximation (1.5e-7) or a hard-coded constant.
    """
    for i, low in enumerate(LOWER.get(dtype, ())):
        on_grid = _on_grid(got, dtype_of(low))
        if not on_grid and (i > 0 or dtype != "float64"):
            continue   # without its grid only float32 inside a float64 result, and then the idea alone
        u = unit_roundoff(low)
        carried = np.broadcast_to(allowed, ref.shape) + u * float(np.max(np.abs(ref)))
        candidates = _candidates(got, ref, allowed, low, full_ref, fix, matched, problem_ideas, shapes, carried, fits)
        best = _best(candidates, got, ref)
        if best is None:
            continue
        residual = min(r for r, h in candidates if h is best)
        if not on_grid or residual < NOT_LOWER * u * _rss(ref):
            # no grid, or what the idea leaves is far below the format's rounding: the idea alone.
            # A leftover of float32's size is no proof of float32 (a helper's trial: an eps,
            # an erf approximation of 1.5e-7, a hard-coded constant read as "computed in
            # float32" in pure float64 code); only a result made of float32 numbers is
            return best
        if best.text is not None:   # an instructor's sentence is shown as it is: no second clause
            return None
        first = names.parameters[0] if names.parameters else ""
        return Hint(idea=best.idea, facts={**best.facts, "also_computed_in": low, "on_grid": True,
                                           "dtype": dtype, "first": first})
    return None


# ---------------------------------------------------------------------------------------------
# shapes, dtypes, types, non-finite values, exceptions

def type_hint(type_name: str, want: str) -> Hint:
    """The hint for a non-array result (``type_name`` as the child reported it: a builtin's
    name, ``module.QualName``, or ``"array of dtype X"``); ``want``: the expected dtype."""
    if type_name in ("list", "tuple"):
        return Hint(idea="not_array", facts={"returned": type_name})
    if type_name == "NoneType":
        return Hint(idea="none")
    if type_name.startswith("array of dtype"):
        return Hint(idea="not_numeric", facts={"dtype": type_name[len("array of dtype"):].strip(), "want": want})
    module = type_name.rsplit(".", 1)[0] if "." in type_name else ""
    if module.split(".")[0] in ("jax", "jaxlib"):
        return Hint(idea="jax_array", facts={"returned": type_name})
    return Hint(idea="not_array", facts={"returned": type_name})


def shape_hint(got: np.ndarray, ref: np.ndarray,
               inputs: dict[str, tuple[int, ...]] | None = None) -> Hint | None:
    """A wrong shape that the values show to be the right result with its axes reversed or an
    axis of size 1 added or dropped; or, by the shapes alone, a reduction over the wrong axis of
    an input (``inputs``: the case's array inputs' shapes by parameter name): the result is that
    input's shape without one axis and the expected one is it without another (an instructor's
    trial: a masked mean over d_model instead of seq_len read "shape (3,) != expected (2,)" in
    75 cases and nothing more). None otherwise."""
    axis = _reduced_axis(tuple(got.shape), tuple(ref.shape), inputs or {})
    if axis is not None:
        return axis
    # the size first: converting a reply of the cap's size (256 MiB of bool) to float64 before
    # looking cost the grader's own process 2.4 GB per case
    if got.size != ref.size or ref.size == 0 or not (got.dtype.kind in "fiub" or got.dtype.name == "bfloat16"):
        return None
    g = np.asarray(got, dtype=np.float64)
    if g.ndim == ref.ndim and g.ndim >= 2 and tuple(reversed(g.shape)) == ref.shape and np.array_equal(
            np.transpose(g), ref.astype(got.dtype).astype(np.float64)):
        return Hint(idea="transposed", facts={"axes": "reversed"})
    if np.array_equal(g.reshape(ref.shape), ref.astype(got.dtype).astype(np.float64)):
        if g.ndim > ref.ndim:
            return Hint(idea="extra_axis", facts={"shape": [int(s) for s in ref.shape]})
        if g.ndim < ref.ndim:
            return Hint(idea="lost_axis", facts={"shape": [int(s) for s in ref.shape]})
    return None


def _reduced_axis(got: tuple[int, ...], want: tuple[int, ...], inputs: dict[str, tuple[int, ...]]) -> Hint | None:
    """The wrong-axis reduction :func:`shape_hint` names, when exactly one input and one pair of
    axes (counted from the end) explain both shapes, the two axes of different sizes."""
    found = []
    for name, shape in inputs.items():
        n = len(shape)
        if n < 2 or len(got) != n - 1 or len(want) != n - 1:
            continue
        drops = lambda target: [k for k in range(n) if shape[:k] + shape[k + 1:] == target]  # noqa: E731
        used, instead = drops(got), drops(want)
        if len(used) == 1 and len(instead) == 1 and shape[used[0]] != shape[instead[0]]:
            found.append(Hint(idea="reduced_axis", facts={"of": name, "used": used[0] - n, "instead": instead[0] - n,
                                                          "from_front": used[0], "rank": n}))
    return found[0] if len(found) == 1 else None


def dtype_hint(got: np.ndarray, want: str, rule: tuple[str, str]) -> Hint:
    """What to return instead of a result of the wrong dtype, in the statement's words
    (``rule``: how the statement says it, and the parameter to copy the dtype from)."""
    have = np.asarray(got).dtype.name
    facts = {"got": have, "want": want, "rule": rule[0], "like": rule[1]}
    order = {"bfloat16": 0, "float16": 0, "float32": 1, "float64": 2}
    if have in order and want in order and order[have] > order[want]:
        return Hint(idea="promoted", facts={**facts, "how": "promoted"})
    if have in order and want in order and order[have] < order[want]:
        return Hint(idea="demoted", facts={**facts, "how": "demoted"})
    return Hint(idea="dtype", facts=facts)


def non_finite_only_in(rows: np.ndarray, got: np.ndarray, ref: np.ndarray) -> bool:
    """Whether ``got`` is infinite or NaN somewhere the finite ``ref`` is not, and only in the
    ``rows`` (a bool per row along the last axis: layer_norm's constant rows, rms_norm's rows of
    zeros, where a missing eps divides 0 by 0)."""
    with np.errstate(all="ignore"):
        bad = np.any(~np.isfinite(got) & np.isfinite(ref), axis=-1)
    return bool(np.any(bad) and np.all(rows[bad]) and np.all(np.isfinite(ref)))


def non_finite_hint(got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """NaN exactly where the expected value is 0 and nowhere else: a 0/0 (a division by a zero count?)."""
    if got.shape != ref.shape:
        return None
    nan = np.isnan(got)
    zero = ref == 0
    if nan.any() and np.all(zero[nan]) and np.all(np.isfinite(got[~zero])):
        return Hint(idea="nan_where_zero")
    return None


#: the import statement of a module name a numeric submission commonly uses without importing it
IMPORTS = {"np": "import numpy as np", "numpy": "import numpy", "jnp": "import jax.numpy as jnp", "jax": "import jax",
           "torch": "import torch", "F": "import torch.nn.functional as F", "nn": "from torch import nn",
           "math": "import math", "lax": "from jax import lax"}


#: Python's words for a call whose arguments do not fit the function's parameters
_SIGNATURE = re.compile(r"TypeError: (?P<fn>[\w.]+)\(\) (?:got an unexpected keyword argument '(?P<kw>\w+)'|"
                        r"missing \d+ required (?:positional|keyword-only) arguments?|"
                        r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given|"
                        r"got multiple values for argument '\w+')")


def signature_hint(message: str, params: list[str]) -> Hint | None:
    """A call the submission's function refused for its parameters (``message``: the
    TypeError's first line; ``params``: the case's arguments in call order, as the statement
    names them): the parameters to write, by name (a newcomer's ``epsilon=`` got the TypeError
    twice and not the statement's ``eps``)."""
    found = _SIGNATURE.search(message or "")
    if found is None or not params:
        return None
    return Hint(idea="signature", facts={"function": found.group("fn").rsplit(".", 1)[-1], "params": list(params),
                                         "unexpected": found.group("kw")})


def exception_hint(message: str) -> Hint | None:
    """A hint for an exception, from its message: a stub's NotImplementedError, or a NameError
    of a module name the file never imported (``np``, ``jnp``, ``torch``...: :data:`IMPORTS`;
    an instructor's trial: a file with no import read "exception: 75 cases" and nothing more).
    NumPy code that was handed torch tensors (``.astype`` on a tensor, a torch dtype given to
    NumPy) is told why it got tensors. A shape error, a reshape or a broadcast names no cause
    without knowing the problem."""
    text = message or ""
    missing = re.match(r"NameError: name '([A-Za-z_]+)' is not defined", text)
    if missing and missing.group(1) in IMPORTS:
        return Hint(idea="missing_import", facts={"name": missing.group(1), "statement": IMPORTS[missing.group(1)]})
    if re.match(r"AttributeError: 'Tensor' object has no attribute '(astype|tobytes|flat)'", text) \
            or re.match(r"TypeError: (Cannot interpret 'torch\.\w+' as a data type|Got unsupported ScalarType)", text):
        # NumPy code handed torch tensors: a NumPy file that imports torch too is graded as PyTorch
        # (a newcomer's correct NumPy file with an unused import torch read 0/10 and no hint)
        return Hint(idea="numpy_code_given_tensors")
    if text.startswith("NotImplementedError"):
        said = text[len("NotImplementedError"):].lstrip(": ").strip()
        stub = re.search(r"(?i)\b(todo|fixme|xxx|write|implement|your (code|solution)|fill in|exercise)", said)
        refusal = re.search(r"(?i)\b(only|supported|support|rank|ranks|ndim|dimensions?|axes|axis|dtypes?|"
                            r"[0-9]+-?d)\b", said)
        if said and refusal and not stub:
            # a deliberate refusal ("only 2-D input is supported"): these inputs are not handled
            return Hint(idea="not_handled", facts={"said": said[:120]})
        return Hint(idea="not_implemented")
    return None
