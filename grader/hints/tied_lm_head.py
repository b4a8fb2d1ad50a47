"""tied_lm_head's hint ideas (``hints: tied_lm_head``): logits, softmax, 1/sqrt(d_model), the table's
transpose, float32 for float64, a half running sum, vocabulary blocks...

The stage hooks of :mod:`grader.hints` (``diagnose_values``, ``diagnose_shape``, ``diagnose_dtype``,
``diagnose_type``, ``diagnose_non_finite``) replace the generic stages of ``grader.hints.generic``
for this problem only; ``grader.diagnose`` runs them. Every idea here assumes the inputs
``hidden (..., d_model)`` and ``embedding_matrix (vocab_size, d_model)`` and speaks of logits.

How each idea is tested against the actual output:

A hint names a cause only when that cause, tested against the output, explains the error;
otherwise the report says where and by how much, and names none. Never by reading the
learner's source, never from a message pattern or a shape alone. Each idea ("softmax was
applied", "a constant was added") is turned into a *prediction*, the output that mistake would
give, computed from the exact reference values and the case's inputs; an idea *fits*
(:meth:`_Ctx.fits`) only when

1. the prediction explains the output at least twice as well as the right answer does (root
   sum of squares of the residuals; four times for ideas with fitted parameters), so a near
   miss is never pinned on a loose match;
2. the output equals the prediction within a loose band at every element (:meth:`_Ctx.band`:
   four times the tolerance model's allowance carried through the mistake, plus rounding in
   the case dtype and what flushing subnormals to zero can move), so that the mistaken code's
   own rounding does not hide it;
3. the prediction would itself fail (it differs from the right answer by more than the model's
   allowance and the flush bound somewhere), so an idea that changes nothing explains nothing;
4. for fitted parameters (a factor, offsets), which absorb the mean of any error, the residual
   also looks like rounding: no larger than half the allowance (root sum of squares) plus the
   prediction's own rounding, and following no trend in the logits (:meth:`_Ctx.systematic`).

The band comes from the ``sum_of_products`` tolerance model (``grader.tolerance.sum_of_products_allowed``)
even on ``compare: exact`` cases, whose verdict allows no error at all; the scale
``S = |hidden| @ |embedding_matrix|.T`` is recomputed from the inputs when the case has none.

Order (:data:`VALUE_IDEAS`): a failure that flushing subnormals to zero explains (XLA on the
CPU, GPUs) gets no cause at all. Then a computation in a lower precision, tested per format
(:func:`_lower_precision`: the value grid with its exponent range, visible beyond the
allowance, and the format's prediction; bfloat16 and float16 told apart by the prediction).
Then the parameter-free ideas (all zeros, softmax, log-softmax, sign, abs, ReLU, factors tied
to d_model, normalisations, row shifts by the mean or maximum, a missing transpose, swapped
axes, the first row everywhere, a feature left out): of those that fit, the one with the
smallest residual wins, unless an idea of another kind fits about as well (within 4x): the
case cannot tell them apart, and none is named. A running sum kept in the half dtype is
simulated on a sample of elements (:func:`_half_accumulation`) and competes with the best of
them. Then ideas with fitted parameters (a constant factor, a constant offset, one offset per
row, one per vocabulary entry), which need more elements than parameters (one number fits any
offset) unless the value is a plain one (0.5, 1e-3, 1/8); one that fits as well as the
parameter-free winner and is not of its family (:data:`FAMILY`) makes the case ambiguous too.
Last, :func:`_where` says where the wrong elements are (a run of rows or vocabulary entries at
the start or end, only the negative logits...), which names no cause.

Cost: every idea is vectorised; none does a matmul on the case's full size except the
lower-precision prediction, and only when every output value lies on that format's grid. Ideas
that cost ``d_model`` operations per element run on at most :data:`SAMPLE` elements.

Shape, dtype, type, non-finite and exception hints follow the same rule: an overflow is named
only where an intermediate really leaves the dtype's range, "the table needs a transpose" only
when the message shows ``d_model`` contracted against ``vocab_size`` and the case's shapes
confirm it, a reduction or a missing row only when the values show it.

Every hint is a :class:`Hint`: an ``id`` for machines and for combining the hints of many
cases (:func:`combine`, used by the report's summary), ``params`` (the fitted factor...) and
one sentence for people.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np

from . import Hint, generic

from ..cases import Case
from ..dtypes import HALF_DTYPES, dtype_of, max_finite, smallest_normal, smallest_subnormal, unit_roundoff

#: Value ideas in the order they are tried.
VALUE_IDEAS = (
    "lower_precision",  # decided first
    "zeros", "softmax", "log_softmax", "sign_flip", "abs", "relu", "factor", "normalised_hidden", "cosine",
    "normalised_table", "standardised_hidden", "row_offset", "no_transpose", "returns_hidden",
    "swapped_axes", "first_row", "feature_dropped",  # parameter-free: the best fit wins
    "half_accumulation",  # a prediction on a sample of elements, before any fitted parameter
    "factor", "offset", "row_offset", "column_offset",  # fitted parameters, in this order
    "where",  # fallback: where the wrong elements are, no cause
)


FITTED = 0.25  # an idea with fitted parameters must leave at most this share of the residual
MIN_FITTED = 8  # informative elements a fitted factor or offset needs unless its value is plain
SAMPLE = 256  # elements simulated by ideas that cost d_model operations per element
SAMPLE_TERMS = 1 << 21  # ... and at most this many terms in all (256 elements up to d_model = 8192)
TREND_SAMPLE = 4096  # elements binned by the trend test of fitted ideas

#: For a result in each dtype, the formats of lower precision it may have been computed in.
#: (float16 inputs computed in bfloat16 are left out: float16's allowance, about 2**-9 S, hides
#: bfloat16's grid.)
LOWER = {"float64": ("float32", "bfloat16", "float16"), "float32": ("bfloat16", "float16")}


def _flush_bound(dt: str, ref: np.ndarray, scale: np.ndarray, n: int, h: np.ndarray | None,
                 e: np.ndarray | None) -> np.ndarray:
    """How much flushing subnormals to zero (XLA on the CPU, GPUs, fast-math BLAS) can move each
    element: products and partial sums below the smallest normal number of the accumulating
    dtype (float32 for half and single precision, float64 for float64) lost, at most
    ``min(S, (n + 1) tn_acc)`` of each; the result below the output dtype's smallest normal
    number lost; and, when an input is itself subnormal, the products it takes part in
    (:func:`_subnormal_products`)."""
    tn = smallest_normal(dt)
    tn_acc = smallest_normal("float64" if dt == "float64" else "float32")
    out = 2 * np.minimum(scale, (n + 1) * tn_acc) + np.minimum(np.abs(ref) + scale, tn)
    if h is not None and e is not None and out.shape == h.shape[:-1] + (e.shape[0],):
        out = out + _subnormal_products(h, e, tn)
    return out


SUBNORMAL_TERMS = 1024  # subnormal inputs followed one by one; beyond, a cruder bound


def _subnormal_products(h: np.ndarray, e: np.ndarray, tn: float) -> np.ndarray | float:
    """``|h_sub| @ |E|.T + |h| @ |E_sub|.T``, the products that involve a subnormal input
    (``0 < |x| < tn``), without a matmul and without a float64 copy of the inputs: each
    subnormal entry adds one row or column; past :data:`SUBNORMAL_TERMS` of them, ``tn`` times
    the other input's row sums bounds it."""
    n, vocab = h.shape[-1], e.shape[0]
    h2 = h.reshape(-1, n)
    sub_h, sub_e = _subnormal(h2, tn), _subnormal(e, tn)
    count = int(np.count_nonzero(sub_h)) + int(np.count_nonzero(sub_e))
    if count == 0:
        return 0.0  # the usual case: graded inputs are never subnormal
    out = np.zeros((h2.shape[0], vocab))
    if count > SUBNORMAL_TERMS:
        out += tn * (np.abs(e).sum(axis=1, dtype=np.float64)[None, :] * sub_h.any(axis=1)[:, None]
                     + np.abs(h2).sum(axis=1, dtype=np.float64)[:, None] * sub_e.any(axis=1)[None, :])
        return out.reshape(h.shape[:-1] + (vocab,))
    r, k = np.nonzero(sub_h)
    np.add.at(out, r, np.abs(h2[r, k].astype(np.float64))[:, None] * np.abs(e[:, k].T.astype(np.float64)))
    j, k = np.nonzero(sub_e)
    np.add.at(out.T, j, np.abs(e[j, k].astype(np.float64))[:, None] * np.abs(h2[:, k].T.astype(np.float64)))
    return out.reshape(h.shape[:-1] + (vocab,))


#: Exponent and significand bit masks per floating format width (float16 and bfloat16 differ).
_BITS = {"float16": (np.uint16, 0x7C00, 0x03FF), "bfloat16": (np.uint16, 0x7F80, 0x007F),
         "float32": (np.uint32, 0x7F800000, 0x007FFFFF),
         "float64": (np.uint64, 0x7FF0000000000000, 0x000FFFFFFFFFFFFF)}


def _subnormal(a: np.ndarray, tn: float) -> np.ndarray:
    """Where ``a`` holds subnormal numbers (exponent bits all zero, significand not): on the bit
    patterns, since half-precision arithmetic in NumPy is slow; by value for other dtypes."""
    a = np.asarray(a)
    bits = _BITS.get(a.dtype.name)
    if bits is None or not a.flags.c_contiguous:
        return (np.abs(a) < tn) & (a != 0)
    raw = a.view(bits[0])
    return ((raw & bits[0](bits[1])) == 0) & ((raw & bits[0](bits[2])) != 0)


def _rss(a: np.ndarray) -> float:
    """Root sum of squares of all elements (``np.linalg.norm`` of the flattened array, without
    BLAS: under load, waking BLAS threads costs more than the sum)."""
    return math.sqrt(float(np.square(a).sum()))


def _fmt(x: float) -> str:
    return f"{x:.4g}"


class _Ctx:
    """Everything the value ideas need, computed once per failure."""

    def __init__(self, case: Case, got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None,
                 allowed: np.ndarray) -> None:
        from ..tolerance import sum_of_products_allowed as allowed_error

        self.case, self.dt = case, case.dtype
        self.got = np.asarray(got, dtype=np.float64)
        self.ref = np.asarray(ref, dtype=np.float64)
        arrays = [np.asarray(a, dtype=np.float64) for a in case.inputs.values()]
        self.h = arrays[0] if arrays else None
        self.e = arrays[1] if len(arrays) > 1 else None
        fits = (self.h is not None and self.e is not None and self.h.ndim >= 1 and self.e.ndim == 2
                and self.h.shape[-1] == self.e.shape[1])
        if not fits:
            self.h = self.e = None
        self.n = int(self.h.shape[-1]) if self.h is not None else 1
        self.v = int(self.e.shape[0]) if self.e is not None else None  # vocab_size
        if scale is None and self.h is not None:
            scale = np.abs(self.h) @ np.abs(self.e).T
        self.scale = (np.asarray(scale, dtype=np.float64) if scale is not None
                      else np.abs(self.ref))
        self.u = unit_roundoff(self.dt)
        self.tiny = smallest_subnormal(self.dt)
        self.model = allowed_error(self.dt, self.ref, self.scale, self.n)  # never all zero
        self.verdict = np.asarray(allowed, dtype=np.float64)
        exact = not np.any(self.verdict)
        rounded = self.ref.astype(dtype_of(self.dt)).astype(np.float64) if exact else self.ref
        self.bad = ~(np.abs(self.got - rounded) <= self.verdict)  # the failing elements
        self.vocab = int(self.ref.shape[-1]) if self.ref.ndim else 1
        self.rows = int(self.ref.size // max(self.vocab, 1))
        raw = list(case.inputs.values())
        self.flush = _flush_bound(self.dt, self.ref, self.scale, self.n,
                                  *((raw[0], raw[1]) if self.h is not None else (None, None)))
        self.residual = math.inf  # of the last prediction that fitted
        self.base_residual = _rss(self.got - self.ref)  # the right answer's
        # few elements the mistake can show in: every idea must then match to rounding (below)
        self.few = int(np.count_nonzero(np.abs(self.ref) > self.model)) < MIN_FITTED
        self.null_band = self.band(np.zeros_like(self.ref))  # how far from all zeros says nothing
        self._sample: np.ndarray | None = None
        self._trend_pick: np.ndarray | None = None

    def band(self, predicted: np.ndarray, carried: np.ndarray | None = None) -> np.ndarray:
        """How far the output may be from ``predicted`` and still match it.

        ``carried`` is the model allowance carried through the mistake (e.g. ``c * allowed``
        for a factor ``c``); the default is the allowance itself.
        """
        carried = self.model if carried is None else carried
        return (4 * np.abs(carried) + 4 * self.u * (np.abs(predicted) + np.abs(self.ref))
                + 4 * (self.n + 1) * self.tiny + self.flush)

    def fits(self, predicted: np.ndarray, carried: np.ndarray | Callable[[], np.ndarray] | None = None,
             improve: float = 0.5, trend_axis: int | None | str = "none") -> bool:
        """The output matches ``predicted``, which would fail, and explains the output far better
        than the right answer does: its root-sum-square residual is at most ``improve`` times the
        right answer's (ideas with fitted parameters ask for more: 0.25).

        ``trend_axis`` (ideas with fitted parameters): a fitted offset or factor absorbs the mean
        of any error, so the residual must also look like the rounding of correct code: a root
        sum of squares at most a quarter of the carried allowance's plus the prediction's own
        rounding, and no trend in the right
        answer (:meth:`systematic`, with the right answer centred over that axis, ``None`` for
        all elements). A residual that fails either says the error is of another kind (a
        running sum that stalls, say). The first of these also applies to every idea when fewer
        than :data:`MIN_FITTED` elements are informative (``|ref|`` above the allowance): a few
        numbers land inside a wide band by chance."""
        if predicted.shape != self.got.shape or not np.all(np.isfinite(predicted)):
            return False
        # the cheap test first: most ideas leave far more than half the right answer's residual
        residual = _rss(self.got - predicted)
        if residual > improve * self.base_residual:
            return False
        if callable(carried):
            carried = carried()
        band = self.band(predicted, carried)
        if not np.all(np.abs(self.got - predicted) <= band):
            return False
        if np.any(predicted) and np.all(np.abs(self.got) <= self.null_band):
            return False  # the output is as close to all zeros as to this: it shows nothing more
        if not np.any(np.abs(predicted - self.ref) > self.model + self.flush):
            return False
        if trend_axis != "none" or self.few:
            # fitted parameters absorb the mean of any error: what is left must look like
            # rounding (root sum of squares at most a quarter of the carried allowance's: the
            # allowance is a worst case, correct code stays under half of it elementwise and far
            # under on average; plus the rounding of the prediction itself to the dtype) and
            # follow no trend in the logits
            carried = self.model if carried is None else carried
            rounding = self.u * (np.abs(predicted) + np.abs(self.ref)) + self.flush
            if residual > 0.25 * _rss(np.broadcast_to(carried, self.got.shape)) + _rss(rounding):
                return False
            if trend_axis != "none" and self.systematic(self.got - predicted, trend_axis):
                return False
        self.residual = residual
        return True

    def systematic(self, resid: np.ndarray, axis: int | None) -> bool:
        """True when ``resid`` follows the right answer: a least-squares line in the right
        answer (centred over ``axis``), or the means of ``resid`` in eight bins of the right
        answer, explain more than half of its energy and are larger than half the allowance (so
        that rounding noise, which follows nothing, never counts)."""
        if resid.size < 8:
            return False
        if axis is None:
            t = self.ref - self.ref.mean()
        elif axis == 0:
            flat = self.ref.reshape(-1, self.vocab)
            t = (flat - flat.mean(axis=0, keepdims=True)).reshape(self.ref.shape)
        else:
            t = self.ref - self.ref.mean(axis=axis, keepdims=True)
        tt = float(np.square(t).sum())
        if not tt > 0:
            return False
        total = float(np.square(resid).sum())
        floor = 0.5 * _rss(self.model)
        explained = float((resid * t).sum()) ** 2 / tt
        if explained > 0.5 * total and math.sqrt(explained) > floor:
            return True
        # any smooth trend, not only a line (a fitted factor leaves no linear one): the mean
        # residual in bins of the right answer, on a fixed sample of at most TREND_SAMPLE elements
        ft, fr = t.ravel(), resid.ravel()
        if ft.size > TREND_SAMPLE:
            if self._trend_pick is None:  # one fixed sample per failure (a draw costs a permutation)
                self._trend_pick = np.random.default_rng(1).choice(ft.size, TREND_SAMPLE, replace=False)
            ft, fr = ft[self._trend_pick], fr[self._trend_pick]
        bins = np.array_split(fr[np.argsort(ft, kind="stable")], min(8, ft.size // 4))
        between = sum(len(b) * float(b.mean()) ** 2 for b in bins if len(b))
        share = ft.size / resid.size  # the sample's share of the energy
        return between > 0.5 * float(np.square(fr).sum()) and math.sqrt(between) > floor * math.sqrt(share)

    def sample(self) -> np.ndarray:
        """Flat indices of at most :data:`SAMPLE` elements (fewer for a long ``d_model``): the
        worst half by error over allowance, the rest drawn with a fixed seed; every element
        when there are no more. For ideas that cost ``d_model`` operations per element."""
        if self._sample is None:
            size = self.ref.size
            m = max(8, min(SAMPLE, SAMPLE_TERMS // max(self.n, 1)))
            if size <= m:
                self._sample = np.arange(size)
            else:
                ratio = (np.abs(self.got - self.ref) / self.model).ravel()
                worst = np.argpartition(-ratio, m // 2)[: m // 2]
                rest = np.random.default_rng(0).choice(size, m, replace=False)
                self._sample = np.unique(np.concatenate([worst, rest]))[:m]
        return self._sample


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _logsumexp(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=-1, keepdims=True)
    return top + np.log(np.exp(x - top).sum(axis=-1, keepdims=True))


#: the factors tied to a size s that a mistake may multiply logits by, and their names ({} is the size's)
_SIZE_FACTORS = ((lambda s: 1 / math.sqrt(s), "1/sqrt({})"), (lambda s: math.sqrt(s), "sqrt({})"),
                 (lambda s: 1 / s, "1/{}"), (lambda s: float(s), "{}"))


def _named_factor(c: float, n: int, v: int | None = None) -> str | None:
    """The name of ``c`` when it is one of the factors tied to d_model ``n`` (``"1/sqrt(d_model)"``,
    ``"sqrt(d_model)"``, ``"1/d_model"``, ``"d_model"``) or to vocab_size ``v`` (the same four), for
    sizes > 1; None otherwise. When d_model equals vocab_size the value cannot tell which, and
    the name says both (``"1/d_model or 1/vocab_size"``) rather than guess."""
    def match(size: int | None, label: str) -> str | None:
        if not size or size <= 1:
            return None
        for fn, name in _SIZE_FACTORS:
            if abs(c - fn(size)) <= 1e-6 * fn(size):
                return name.format(label)
        return None

    by_d, by_v = match(n, "d_model"), match(v, "vocab_size")
    if by_d and by_v:
        return f"{by_d} or {by_v}"
    return by_d or by_v


def _round_param(c: float, u: float) -> float:
    """``c`` with the digits the dtype can carry (0.49993 in float16 -> 0.5)."""
    if c == 0 or not math.isfinite(c):
        return c
    digits = max(2, int(-math.log10(u)))
    return float(f"{c:.{digits}g}")


def _is_simple(c: float) -> bool:
    """A value a person would type: 0.5, 2, 1e-3, 0.125, 1/3 (two significant digits, or 1/k)."""
    if c == 0 or not math.isfinite(c):
        return False
    if abs(c - float(f"{c:.2g}")) <= 1e-9 * abs(c):
        return True
    k = 1 / c
    return abs(k - round(k)) <= 1e-9 * abs(k) and abs(k) <= 1000


def _plain_forms(c: float) -> list[float]:
    """Plainer numbers near ``c``, plainest first: one significant digit (0.5, 2, 0.001), 1/k,
    a power of two, two significant digits. The caller keeps one only if it explains the
    output as well as ``c`` itself."""
    if c == 0 or not math.isfinite(c):
        return []
    forms = [float(f"{c:.1g}")]
    if abs(c) < 0.67:
        forms.append(1 / round(1 / c))
    forms += [math.copysign(2.0 ** round(math.log2(abs(c))), c), float(f"{c:.2g}")]
    return [f for f in dict.fromkeys(forms) if f != c and f != 0]


def _fit_plain(x: _Ctx, fitted: float, predict: Callable[[float], np.ndarray],
               carried: Callable[[float], np.ndarray]) -> float | None:
    """``fitted`` or a plainer form of it (:func:`_plain_forms`): when ``fitted`` fits, the
    plainest form whose prediction fits with a residual at most 10% larger; when it does not
    (the estimate picked up rounding: 0.0009999275 for a bias of 1e-3 in float32), the plain
    form that fits with the smallest residual; None when none fits. ``x.residual`` is left at
    the returned value's residual."""
    base = x.residual if x.fits(predict(fitted), carried(fitted), FITTED, trend_axis=None) else None
    best: tuple[float, float] | None = None
    for plain in _plain_forms(fitted):
        if not x.fits(predict(plain), carried(plain), FITTED, trend_axis=None):
            continue
        if base is not None:
            if x.residual <= 1.1 * base + 1e-300:
                return plain
        elif best is None or x.residual < best[1]:
            best = (plain, x.residual)
    if base is not None:
        x.residual = base
        return fitted
    if best is not None:
        x.residual = best[1]
        return best[0]
    return None


def _lower_precision(x: _Ctx) -> Hint | None:
    """A computation in a lower-precision format, tested per format of :data:`LOWER`.

    Three tests: every output value is a number of that format (its significand width *and*
    exponent range: a cast there and back changes nothing); the format's grid is visible, i.e. at
    two distinct right values at least, rounding the right answer to the format moves it by more than the
    case's allowance and what flushing subnormals explains (a random value lands on float16's
    grid by chance once in 2**13, on float32's once in 2**29; zeros and small whole numbers
    land on every grid and prove nothing); and the output matches what the format predicts (the
    inputs and the result rounded to it, or only the result) within four times that format's
    allowance. Of the formats that pass, the one whose prediction leaves the smaller residual is
    named, and only when it leaves at most half the residual of every other (bfloat16 numbers in
    float16's range are float16 numbers too: the prediction decides)."""
    from ..tolerance import sum_of_products_allowed as allowed_error

    fitting: list[tuple[float, str]] = []
    for low in LOWER.get(x.dt, ()):
        low_dt = dtype_of(low)
        with np.errstate(all="ignore"):
            if not np.array_equal(x.got.astype(low_dt).astype(np.float64), x.got):
                continue
            rounded = x.ref.astype(low_dt).astype(np.float64)
            visible = np.abs(rounded - x.ref) > x.model + x.flush
            if np.unique(x.ref[visible]).size < 2:
                continue  # one value on a grid is no evidence, however often it repeats (a shrunk case)
            preds = [rounded]
            if x.h is not None:
                hl, el = (a.astype(low_dt).astype(np.float64) for a in (x.h, x.e))
                preds.insert(0, (hl @ el.T).astype(low_dt).astype(np.float64))
        band = (4 * allowed_error(low, x.ref, x.scale, x.n) + 4 * x.u * np.abs(x.ref)
                + np.minimum(np.abs(x.ref) + x.scale, smallest_normal(low)) + x.flush)
        residuals = [_rss(x.got - p) for p in preds
                     if np.all(np.isfinite(p)) and np.all(np.abs(x.got - p) <= band)]
        if residuals:
            fitting.append((min(residuals), low))
    if not fitting or not np.any(x.bad):
        return None
    fitting.sort()
    if len(fitting) >= 2 and fitting[0][0] >= 0.5 * fitting[1][0]:
        return None  # two formats explain it about as well (both exactly, too): name neither
    low = fitting[0][1]
    if x.dt == "float64" and low == "float32":
        text = ("every value is a float32 number and the errors are float32's: the float64 inputs "
                "were computed in float32 precision (a cast to float32?); compute in the inputs' dtype")
    else:
        text = (f"every value is a {low} number and the errors are {low}'s: the {x.dt} inputs were "
                f"computed in {low} precision (a cast to {low}?); compute in the inputs' dtype")
    return Hint("lower_precision", text, {"computed_in": low})


def _factor_or_offset_ambiguous(x: _Ctx) -> bool:
    """True when one informative number fits a plain factor and a plain offset alike
    (0.0495 -> 0.0595 is x1.2 or +0.01): then neither hint is given for this case."""
    informative = np.abs(x.ref) > x.model
    if int(informative.sum()) >= 2 or not np.any(informative):
        return False
    got, ref = float(x.got[informative][0]), float(x.ref[informative][0])
    factor, offset = _round_param(got / ref, x.u), _round_param(got - ref, x.u)
    return _is_simple(factor) and _is_simple(offset)


def _fitted_factor(x: _Ctx) -> Hint | None:
    if _factor_or_offset_ambiguous(x):
        return None
    informative = np.abs(x.ref) > x.model
    if not np.any(informative):
        return None
    with np.errstate(all="ignore"):
        c = float(np.sum(x.got * x.ref) / np.sum(x.ref * x.ref))
    if not math.isfinite(c) or c == 0 or abs(c - 1) < 4 * x.u:
        return None
    fitted = _round_param(c, x.u)
    if int(informative.sum()) < 2:
        return None  # one number fits a factor and an offset alike, and any noise as well
    c = _fit_plain(x, fitted, lambda c: c * x.ref, lambda c: max(abs(c), 1.0) * x.model)
    if c is None or (int(informative.sum()) < MIN_FITTED and not _few_and_plain(x, c, c * x.ref)):
        return None  # a few numbers fit any factor; only a plain one, matched to rounding, is evidence
    return _factor_hint(c, x.n, x.v)


def _few_and_plain(x: _Ctx, c: float, predicted: np.ndarray) -> bool:
    """For outputs with fewer than :data:`MIN_FITTED` informative elements: the fitted value is a
    plain one (0.5, 1/8) and its prediction matches the output as correct code would (half the
    allowance plus rounding at every element), not just within the band."""
    rounding = 0.5 * x.model + x.u * (np.abs(predicted) + np.abs(x.ref)) + x.flush
    return _is_simple(c) and bool(np.all(np.abs(x.got - predicted) <= rounding))


def _factor_hint(c: float, n: int, v: int | None = None) -> Hint:
    """The ``factor`` hint for logits multiplied by ``c`` (d_model ``n``, vocab_size ``v``)."""
    name = _named_factor(c, n, v)
    if name is not None:
        sizes = (f"d_model = vocab_size = {n}" if " or " in name else
                 f"vocab_size = {v}" if "vocab_size" in name else f"d_model = {n}")
        shown = f"{name} = {_fmt(c)} ({sizes})"
        why = ("; scaling belongs to attention scores, not to the output logits"
               if name in ("1/sqrt(d_model)", "sqrt(d_model)") else "")
    else:
        shown, why = _fmt(c), ""
    return Hint("factor", f"looks like the logits were multiplied by a factor of {shown}{why}; leave them unscaled",
                {"factor": c, "d_model": n, "vocab_size": v, "named": name})


def _offsets(x: _Ctx) -> Hint | None:
    if _factor_or_offset_ambiguous(x):
        return None
    diff = x.got - x.ref

    def hopeless(centred: np.ndarray) -> bool:
        # the mean minimises the residual of an offset: if even it leaves more than FITTED of
        # the right answer's residual, no median-based offset fits (skips the costly medians)
        return _rss(centred) > FITTED * x.base_residual

    # one constant for every element
    median = float(np.median(diff))
    fitted = _round_param(median, x.u) if not hopeless(diff - diff.mean()) else 0.0
    if fitted != 0:
        # one number fits any offset (exp, softmax of one logit and a bias of 1 all turn 0 into 1);
        # several zeros that all became the same plain constant are evidence
        single = x.ref.size < 2 or (int(np.count_nonzero(np.abs(x.ref) > x.model)) < 2 and not np.all(x.ref == 0))
        c = None if single else _fit_plain(x, fitted, lambda c: x.ref + c, lambda c: x.model)
        if c is not None and (x.ref.size >= MIN_FITTED or _few_and_plain(x, c, x.ref + c)):
            return Hint("offset", f"looks like a constant offset of {_fmt(c)} was added to every logit (a bias?); "
                                  f"the head has no bias", {"offset": c})
    if x.few:
        return None  # an offset per row or per vocabulary entry needs many more elements
    # an offset per row or per entry must explain far more than one constant does (else the
    # constant was rejected for a reason: rounding at the dtype's resolution, say)
    constant = _rss(diff - median)
    # one offset per row (per hidden vector)
    if (x.vocab >= 2 and x.ref.ndim >= 1 and x.rows >= 2 and x.rows * (x.vocab - 1) >= MIN_FITTED
            and not hopeless(diff - diff.mean(axis=-1, keepdims=True))):
        row = np.median(diff, axis=-1, keepdims=True)
        if (np.any(row != 0) and _rss(diff - row) <= 0.5 * constant
                and x.fits(x.ref + row, 2 * x.model, FITTED, trend_axis=-1)):
            return Hint("row_offset", "looks like each row of logits was shifted by its own constant "
                                      "offset (one per position); return the logits unshifted")
    # one offset per vocabulary entry: a bias vector
    distinct_rows = x.rows >= 2 and np.ptp(x.ref.reshape(-1, x.vocab), axis=0).max() > 0
    flat = diff.reshape(-1, x.vocab)
    if (distinct_rows and x.vocab * (x.rows - 1) >= MIN_FITTED and x.ref.ndim >= 1
            and not hopeless(flat - flat.mean(axis=0, keepdims=True))):
        col = np.median(flat, axis=0)
        shifted = x.ref + col.reshape((1,) * (x.ref.ndim - 1) + (-1,))
        if (np.ptp(col) > 0 and _rss(x.got - shifted) <= 0.5 * constant
                and x.fits(shifted, 2 * x.model, FITTED, trend_axis=0)):
            return Hint("column_offset", "looks like a bias vector (an offset per vocabulary entry) was "
                                         "added; the tied head has no bias")
    return None


#: For each parameter-free idea, the fitted ideas it is a special case of: when one of those also
#: fits, the parameter-free idea is the more specific explanation, not a rival.
FAMILY = {"log_softmax": {"row_offset"}, "row_offset": {"row_offset"},
          "factor": {"factor"}, "sign_flip": {"factor"}}  # not "offset": one row shifted by its
# mean, or by a plain constant, are two explanations the case cannot tell apart

#: A parameter-free idea: its hint, its prediction (None: it cannot apply), the allowance it carries.
Candidate = tuple[Callable[[], Hint], Callable[[], np.ndarray | None], Callable[[], np.ndarray]]


def _parameter_free(x: _Ctx) -> list[Candidate]:
    """Every parameter-free idea as (hint, prediction, allowance carried through the mistake),
    in the order of :data:`VALUE_IDEAS`; a prediction of None means the idea cannot apply."""
    from ..tolerance import sum_of_products_allowed as allowed_error

    def const(hid: str, text: str, params: dict[str, Any] | None = None) -> Callable[[], Hint]:
        return lambda: Hint(hid, text, params or {})

    def through(p: np.ndarray | None, s: np.ndarray | None) -> np.ndarray:
        """The model allowance of a mistaken sum of products ``p`` with scale ``s``."""
        return allowed_error(x.dt, p, s, x.n) if p is not None and s is not None else x.model

    row_max = x.model.max(axis=-1, keepdims=True)
    all_zero = bool(np.all(x.got == 0))
    out: list[Candidate] = [
        (const("zeros", "the result is all zeros: were the logits computed and returned?"),
         lambda: np.zeros_like(x.ref) if all_zero else None, lambda: x.model),
        (const("softmax", "looks like softmax was applied to the logits: return the raw logits "
                          "(softmax belongs to the loss or to sampling)"),
         lambda: _softmax(x.ref) if x.vocab >= 2 else None,  # one logit: softmax is all ones, no evidence
         lambda: 2 * _softmax(x.ref) * row_max),
        (const("log_softmax", "looks like log-softmax was applied (log-probabilities): return the raw logits"),
         lambda: x.ref - _logsumexp(x.ref), lambda: 2 * row_max),
        (const("sign_flip", "the sign is flipped: the logits are the dot products themselves, not their negatives"),
         lambda: -x.ref, lambda: x.model),
        (const("abs", "looks like abs() was applied: logits can be negative"), lambda: np.abs(x.ref), lambda: x.model),
        (const("relu", "looks like a ReLU (max with 0) was applied: logits can be negative"),
         lambda: np.maximum(x.ref, 0.0), lambda: x.model),
    ]
    if x.n > 1:
        for c in (1 / math.sqrt(x.n), 1 / x.n, math.sqrt(x.n), float(x.n)):
            out.append((lambda c=c: _factor_hint(c, x.n, x.v), lambda c=c: c * x.ref, lambda c=c: max(c, 1.0) * x.model))
    if x.h is not None:
        h, e = x.h, x.e
        hn = np.sqrt(np.einsum("...k,...k->...", h, h))[..., None]
        en = np.sqrt(np.einsum("jk,jk->j", e, e))
        # with d_model = 1 a normalised vector is its sign: normalising hidden, the table or both
        # then differ by signs and magnitudes of one number each, too little to tell them apart
        h_ok, e_ok = bool(np.all(hn > 0)) and x.n >= 2, bool(np.all(en > 0)) and x.n >= 2
        out += [
            (const("normalised_hidden", "looks like the hidden vectors were normalised to unit length first; "
                                        "use them as they are"),
             lambda: x.ref / hn if h_ok else None, lambda: x.model / hn),
            (const("cosine", "looks like cosine similarity (hidden vectors and table rows normalised); the "
                             "logits are plain dot products"),
             lambda: x.ref / hn / en if h_ok and e_ok else None, lambda: x.model / hn / en),
            (const("normalised_table", "looks like the rows of the embedding matrix were normalised to unit "
                                       "length; use the table as it is"),
             lambda: x.ref / en if e_ok else None, lambda: x.model / en),
        ]
        sd = h.std(axis=-1, keepdims=True)
        if x.n >= 2 and np.all(sd > 0):
            # z = (h - mean) / sd, so z @ E.T = (ref - mean * E.sum(1)) / sd: no second matmul; the
            # scale |z| @ |E|.T is bounded by (S + |mean| |E|.sum(1)) / sd
            mean = h.mean(axis=-1, keepdims=True)
            out.append((const("standardised_hidden", "looks like each hidden vector was standardised (mean "
                                                     "subtracted, divided by its std, as in a layer norm) first; "
                                                     "use hidden as it is"),
                        lambda: (x.ref - mean * e.sum(axis=1)) / sd,
                        lambda: through((x.ref - mean * e.sum(axis=1)) / sd,
                                        (x.scale + np.abs(mean) * np.abs(e).sum(axis=1)) / sd)))
    if x.ref.ndim >= 1:  # with one logit per row these predict zeros, as log-softmax does: a tie
        out += [
            (const("row_offset", "looks like each row was shifted by an offset, its own mean (subtracted); "
                                 "return the logits unshifted"),
             lambda: x.ref - x.ref.mean(axis=-1, keepdims=True), lambda: 2 * x.model),
            (const("row_offset", "looks like each row was shifted by an offset, its largest logit (subtracted, "
                                 "the first step of a stable softmax?); return the logits unshifted"),
             lambda: x.ref - x.ref.max(axis=-1, keepdims=True), lambda: 2 * x.model),
        ]
    if x.h is not None and x.e.shape[0] == x.e.shape[1]:
        out.append((const("no_transpose", "looks like the table was not transposed (hidden @ embedding_matrix): "
                                          "use hidden @ embedding_matrix.T; the shapes only agree because "
                                          "vocab_size = d_model here"),
                    lambda: x.h @ x.e, lambda: through(x.h @ x.e, np.abs(x.h) @ np.abs(x.e))))
    if x.h is not None and x.h.shape == x.ref.shape:
        out.append((const("returns_hidden", "the result is hidden itself: the projection onto the embedding "
                                            "matrix was not applied (hidden @ embedding_matrix.T)"),
                    lambda: x.h, lambda: x.model))
    if x.ref.ndim >= 2 and x.ref.shape[-1] == x.ref.shape[-2]:
        out.append((const("swapped_axes", "looks like the last two axes are swapped (embedding_matrix @ "
                                          "hidden.T?): the vocabulary axis must be the last one"),
                    lambda: np.swapaxes(x.ref, -1, -2), lambda: np.swapaxes(x.model, -1, -2)))
    if x.rows >= 2 and x.vocab >= 2:  # rows of one logit: a repeated number is no evidence
        def first(a: np.ndarray) -> np.ndarray:
            return np.broadcast_to(a.reshape(-1, x.vocab)[0], (x.rows, x.vocab)).reshape(x.ref.shape)
        out.append((const("first_row", "every row holds the logits of the first hidden vector: compute one row "
                                       "of logits per hidden vector (all leading positions)"),
                    lambda: first(x.ref), lambda: first(x.model)))
    if x.h is not None and x.n >= 1:  # with d_model = 1 this predicts zeros: a tie with "zeros"
        for k, which in ((-1, "last"), (0, "first")):
            # the sum without term k: ref minus an outer product, no matmul
            out.append((const("feature_dropped", f"looks like the {which} feature (one of the d_model = {x.n} "
                                                 f"columns) was left out of the dot products: contract over all "
                                                 f"of d_model"),
                        lambda k=k: x.ref - x.h[..., k:k + 1 if k != -1 else None] * x.e[:, k],
                        lambda k=k: through(x.ref - x.h[..., k:k + 1 if k != -1 else None] * x.e[:, k],
                                            np.maximum(x.scale - np.abs(x.h[..., k:k + 1 if k != -1 else None])
                                                       * np.abs(x.e[:, k]), 0.0))))
    return out


def _half_accumulation(x: _Ctx) -> tuple[Hint, float, np.ndarray] | None:
    """A running sum kept in the half dtype, tested as a prediction on a sample of elements.

    The prediction simulates ``acc = 0; for k in range(d_model): acc = acc + h[k] * E[j, k]``
    with ``acc`` and each product in the case's half dtype (``np.add.accumulate`` in that dtype:
    one rounding per step, in a fixed order) for the elements of :meth:`_Ctx.sample`. It fits
    when, on those elements, the output is within the band of the prediction, the prediction
    would fail, and it leaves at most half the residual the right answer leaves.

    Returns:
        (the hint, the residual on the sample, the sample's flat indices), or None.
    """
    if x.dt not in HALF_DTYPES or not np.any(x.verdict) or x.h is None or x.n < 2:
        return None  # exact probes are exact in any precision and any order
    idx = x.sample()
    r, c = np.divmod(idx, x.vocab)
    half = dtype_of(x.dt)
    with np.errstate(all="ignore"):
        products = (x.h.reshape(-1, x.n)[r] * x.e[c]).astype(half)
        pred = np.add.accumulate(products, axis=1)[:, -1].astype(np.float64)
    got, ref = x.got.ravel()[idx], x.ref.ravel()[idx]
    model, flush = x.model.ravel()[idx], x.flush.ravel()[idx]
    if not np.all(np.isfinite(pred)):
        return None
    band = 4 * model + 4 * x.u * (np.abs(pred) + np.abs(ref)) + flush
    if not np.all(np.abs(got - pred) <= band) or not np.any(np.abs(pred - ref) > model + flush):
        return None
    residual = _rss(got - pred)
    if residual > 0.5 * _rss(got - ref):
        return None
    hint = Hint("half_accumulation",
                f"the values match a running sum kept in {x.dt} (each partial sum rounded to {x.dt}, as in a "
                f"loop with a {x.dt} accumulator), which loses accuracy as the sum grows: accumulate in "
                f"float32 and cast back, as matmul does")
    return hint, residual, idx


def _block(idx: np.ndarray, total: int) -> str | None:
    """``"first"``/``"last"`` when ``idx`` is a run at the start/end of range(total), ``"one"`` for
    a single index, else None (a scattered set is no recognisable part)."""
    k = len(idx)
    if k == 0 or k == total:
        return None
    if list(idx) == list(range(total - k, total)):
        return "last"
    if list(idx) == list(range(k)):
        return "first"
    return "one" if k == 1 else None


def _where(x: _Ctx) -> Hint | None:
    """Where the wrong elements are, when that is a recognisable part of the output: a run of
    rows or vocabulary entries at the start or end (or a single one), or only the negative or
    only the positive logits."""
    bad = x.bad
    n_bad, total = int(bad.sum()), int(bad.size)
    if n_bad == 0 or n_bad == total or x.ref.ndim == 0:
        return None
    flat = bad.reshape(-1, x.vocab)
    rows = np.flatnonzero(flat.any(axis=1))
    cols = np.flatnonzero(flat.any(axis=0))
    tail = " (they came back as 0: never computed?)" if np.all(x.got[bad] == 0) else ""
    parts: list[str] = []
    params: dict[str, Any] = {}
    short = single = False
    for idx, total_, one, many, key in ((rows, x.rows, "row", "rows", "rows"),
                                        (cols, x.vocab, "vocabulary entry", "vocabulary entries", "columns")):
        if total_ < 2 or len(idx) == total_:
            continue
        where = _block(idx, total_)
        if where is None:
            return None
        dense = flat[idx, :] if key == "rows" else flat[:, idx]
        if dense.mean() < 0.5:
            return None  # most elements there are right: no clean part
        short |= where == "last"
        single = len(idx) == 1
        if where == "one":
            part = f"{one} {int(idx[0])} of {total_}"
        elif single:
            part = f"the {where} of {total_} {many}"
        else:
            part = f"the {where} {len(idx)} of {total_} {many}"
        parts.append(part + (" (hidden vectors, leading axes flattened)" if key == "rows" else ""))
        params[key] = idx.tolist()
    if parts:
        verb = "is" if len(parts) == 1 and single else "are"
        text = f"only {' and '.join(parts)} {verb} wrong{tail}"
        if short:
            text += ": a loop or slice that stops short?"
        return Hint("where", text, params)
    if np.all(x.ref[bad] < 0) and np.any(~bad & (x.ref > 0)):
        return Hint("where", f"only logits that should be negative are wrong ({n_bad} of {total}){tail}: "
                             f"logits can be negative", {"sign": "negative"})
    if np.all(x.ref[bad] > 0) and np.any(~bad & (x.ref < 0)):
        return Hint("where", f"only logits that should be positive are wrong ({n_bad} of {total}){tail}",
                    {"sign": "positive"})
    return None


def _list(idx: np.ndarray, limit: int = 6) -> str:
    shown = ", ".join(str(int(i)) for i in idx[:limit])
    return shown + (", ..." if len(idx) > limit else "")


def diagnose_values(case: Case, got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None,
                    allowed: np.ndarray) -> Hint | None:
    """The recognised mistake behind a value mismatch, or None.

    Args:
        case: the case (its inputs: ``hidden (..., d)``, ``embedding_matrix (V, d)``, in the
            case dtype).
        got: the submission's output (any float dtype), shaped like ``ref``.
        ref: the exact float64 reference output, ``(..., V)``.
        scale: the condition scale ``S`` shaped like ``ref``, or None (exact cases: it is
            recomputed from the inputs).
        allowed: the per-element allowance the verdict used (all zero for exact cases).

    Returns:
        A :class:`Hint`, or None when no idea fits (or the arrays are empty).
    """
    if ref.size == 0 or np.shape(got) != ref.shape:
        return None
    with np.errstate(all="ignore"):
        x = _Ctx(case, got, ref, scale, allowed)
        if not np.all(np.isfinite(x.got)):
            return None
        if np.all(np.abs(x.got - x.ref) <= x.model + x.flush):
            return None  # wrong only by what flushing subnormals to zero explains: no cause to name
        hint = _lower_precision(x)
        if hint:
            return hint
        # every parameter-free idea that fits is a candidate; the one that explains the output
        # best wins (an earlier, more specific one on a tie), unless an idea of another kind
        # explains it about as well (a residual within 4x): then the case cannot tell them apart
        # (softmax and an offset of 0.5 on zero inputs, normalised rows and a factor of 1/2 on
        # rows 2 e_k, a ReLU and an all-zero result on negative logits), and no cause is named.
        floor = 1e-3 * x.base_residual  # residuals below it are equal (rounding)
        candidates = []
        for order, (make, predict, carried) in enumerate(_parameter_free(x)):
            predicted = predict()
            if predicted is None or not x.fits(predicted, carried):
                continue
            candidates.append((max(x.residual, floor), order, make(), predicted))
        candidates.sort(key=lambda c: (c[0], c[1]))
        if candidates:
            best_residual, _, best, best_prediction = candidates[0]
            if any(h.id != best.id and r <= 4 * best_residual for r, _, h, _ in candidates[1:]):
                return _where(x)
        # a running sum in the half dtype is a prediction too (on a sample of elements): it
        # competes with the best parameter-free idea there, and comes before fitted parameters,
        # which can absorb part of any error
        half = _half_accumulation(x)
        if half is not None:
            hint, residual, idx = half
            if not candidates or residual < 0.5 * _rss(x.got.ravel()[idx] - best_prediction.ravel()[idx]):
                return hint
        # ideas with fitted parameters (a factor, offsets): a fitted parameter always shrinks the
        # residual, so residuals cannot rank them against the rest; one that fits as well as the
        # best parameter-free idea, and is not of its family (log-softmax is an offset per row, a
        # sign flip a factor of -1), makes the case ambiguous too
        fitted: tuple[Hint, float] | None = None
        for idea in (_fitted_factor, _offsets):
            other = idea(x)
            if other is None:
                continue
            residual = max(x.residual, floor)
            if candidates:
                if other.id not in FAMILY.get(best.id, ()) and residual <= 4 * best_residual:
                    return _where(x)
            elif fitted is None:
                fitted = (other, residual)
            elif other.id != fitted[0].id and residual <= 4 * fitted[1]:
                return _where(x)
        if candidates:
            return best
        if fitted is not None:
            return fitted[0]
        return _where(x)
    return None


def value_hint(case: Case, got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None,
               allowed: np.ndarray) -> str | None:
    """The text of :func:`diagnose_values` (same arguments), or None."""
    hint = diagnose_values(case, got, ref, scale, allowed)
    return hint.text if hint else None


# ---------------------------------------------------------------------------------------------
# shapes, dtypes, types, non-finite values

def diagnose_shape(case: Case, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """The recognised mistake behind a wrong output shape, or None.

    Each shape idea is checked against the values too where it says where they went (the
    added axis, the flattened axes, the swapped axes): when the values then differ as well,
    the hint says so.

    Args:
        got: the submission's output (any dtype); ``ref``: the exact float64 reference output.
    """
    gs, rs = tuple(np.shape(got)), tuple(ref.shape)
    h = list(case.inputs.values())[0]
    lead = rs[:-1]

    def same_values(arranged: Callable[[], np.ndarray]) -> str:
        try:
            with np.errstate(all="ignore"):
                g = np.asarray(arranged(), dtype=np.float64)
        except (ValueError, TypeError):
            return ""
        if g.shape != rs:
            return ""
        from ..tolerance import sum_of_products_allowed as allowed_error
        x = _Ctx(case, g, ref, None, np.zeros_like(ref))
        ok = bool(np.all(np.abs(g - ref) <= allowed_error(case.dtype, ref, x.scale, x.n)))
        return "" if ok else "; the values differ as well"

    def vocab_dropped() -> str | None:
        if len(gs) == len(rs) and gs[:-1] == rs[:-1] and gs[-1] == rs[-1] - 1:
            for part, which in ((slice(None, -1), "last"), (slice(1, None), "first")):
                if _prefix_matches(case, got, ref, part):
                    return which
        return None

    if gs == tuple(h.shape) and np.array_equal(np.asarray(got, dtype=np.float64), np.asarray(h, dtype=np.float64)):
        if vocab_dropped() is not None:
            return None  # hidden itself, and the logits without one table row: the case cannot tell
        return Hint("returns_hidden", "the result is hidden itself: the projection onto the embedding matrix "
                                      "was not applied (hidden @ embedding_matrix.T)")
    if len(rs) >= 1 and ref.size == 0 and got is not None and np.size(got) == 0:
        if gs == (0,) and rs != (0,):  # what np.array(rows) gives for no rows
            return Hint("empty_batch", f"an empty batch must still give shape {rs} (leading axes, then vocab_size): "
                                       f"np.array of an empty list has shape (0,); a vectorised matmul keeps the "
                                       f"shape")
        return Hint("empty_batch", f"an empty batch must still give shape {rs} (leading axes, then vocab_size), "
                                   f"not {gs}")
    if gs == (1,) + rs:
        return Hint("added_axis", "a leading axis of size 1 was added (e.g. np.atleast_2d or a reshape to 2-D): "
                                  "a single vector of shape (d_model,) must give shape (vocab_size,)"
                    + same_values(lambda: np.asarray(got)[0]))
    if len(lead) >= 2 and gs == (int(np.prod(lead)), rs[-1]):
        return Hint("flattened", "the leading (batch) axes were flattened into one; reshape the result back "
                                 "to (..., vocab_size)" + same_values(lambda: np.asarray(got).reshape(rs)))
    if len(rs) >= 2 and gs == rs[:-2] + (rs[-1], rs[-2]) and rs[-1] != rs[-2]:
        return Hint("transposed", "the result is transposed: the vocabulary axis must be the last one "
                                  "(hidden @ embedding_matrix.T, not embedding_matrix @ hidden.T)"
                    + same_values(lambda: np.swapaxes(np.asarray(got), -1, -2)))
    squeezed = tuple(s for s in rs if s != 1)
    if gs == squeezed and gs != rs:
        return Hint("squeezed", f"the axes of size 1 are missing (shape {gs}, expected {rs}): keep every leading "
                                f"axis, and a vocab_size of 1 still gives a last axis of size 1"
                    + same_values(lambda: np.asarray(got).reshape(rs)))
    which = vocab_dropped()
    if which is not None:
        return Hint("vocab_dropped", f"the {which} row of the embedding matrix is missing from the "
                                     f"result ({gs[-1]} logits, vocab_size = {rs[-1]}): an "
                                     f"off-by-one in a slice or range?")
    if gs == tuple(h.shape) and gs != rs:
        return Hint("hidden_shape", "the result has the shape of hidden (..., d_model), not (..., vocab_size): "
                                    "was the projection onto the table applied?")
    if len(rs) >= 2 and gs == rs[1:] and rs[0] >= 2:
        which = _reduced(case, got, ref, {"the first": lambda r: r[0], "the last": lambda r: r[-1]})
        if which in ("the first", "the last"):
            return Hint("first_row_only", f"only {which} row of the batch was computed (the leading axis of size "
                                          f"{rs[0]} is missing); keep every leading axis")
    if len(gs) == len(rs) and gs[:-1] == rs[:-1] and gs[-1] != rs[-1]:
        return Hint("wrong_vocab", f"the last axis has {gs[-1]} entries, not vocab_size = {rs[-1]}: one logit per "
                                   f"row of the embedding matrix (hidden @ embedding_matrix.T)")
    if gs == () and rs != ():
        how = _reduced(case, got, ref, {"summed": np.sum, "averaged": np.mean, "the largest logit": np.max})
        if how is not None:
            what = how if how == "the largest logit" else f"all logits {how}"
            return Hint("scalar", f"a scalar came back, {what}: return every logit, shape (..., vocab_size)")
    return None


def _reduced(case: Case, got: np.ndarray, ref: np.ndarray,
             ways: dict[str, Callable[[np.ndarray], np.ndarray]]) -> str | None:
    """The name of the way in ``ways`` whose reduction of ``ref`` the output equals within the
    tolerance model's allowance (scaled the same way), when exactly one does; else None."""
    from ..tolerance import sum_of_products_allowed as allowed_error

    g = np.asarray(got, dtype=np.float64)
    x = _Ctx(case, ref, ref, None, np.zeros_like(ref))
    allowed = allowed_error(case.dtype, ref, x.scale, x.n)
    found = []
    for name, way in ways.items():
        want = np.asarray(way(ref), dtype=np.float64)
        if want.shape != g.shape:
            continue
        # sums, means, maxima and rows of the allowance bound the error of each reduction
        tol = 4 * np.abs(np.asarray(way(allowed))) + 4 * x.u * np.abs(want)
        if np.all(np.abs(g - want) <= tol):
            found.append(name)
    return found[0] if len(found) == 1 else None


def _prefix_matches(case: Case, got: np.ndarray, ref: np.ndarray, part: slice) -> bool:
    from ..tolerance import sum_of_products_allowed as allowed_error
    sub = ref[..., part]
    g = np.asarray(got, dtype=np.float64)
    if g.shape != sub.shape:
        return False
    x = _Ctx(case, ref, ref, None, np.zeros_like(ref))
    return bool(np.all(np.abs(g - sub) <= allowed_error(case.dtype, sub, x.scale[..., part], x.n)))


def shape_hint(case: Case, got: np.ndarray, ref: np.ndarray) -> str | None:
    """The text of :func:`diagnose_shape`, or None."""
    hint = diagnose_shape(case, got, ref)
    return hint.text if hint else None


def diagnose_dtype(case: Case, got: np.ndarray) -> Hint:
    """The mistake behind a wrong output dtype (always a hint: at least what to return)."""
    want, have = case.dtype, np.asarray(got).dtype.name
    if np.asarray(got).dtype.kind in "iub":
        how = ""
        arrays = [np.asarray(a, dtype=np.float64) for a in case.inputs.values()]
        if (len(arrays) >= 2 and arrays[1].ndim == 2 and arrays[0].ndim >= 1
                and arrays[0].shape[-1] == arrays[1].shape[1]):
            ref = arrays[0] @ arrays[1].T
            g = np.asarray(got, dtype=np.float64)
            frac = np.abs(ref - np.round(ref)) > 0.01  # elements where truncating and rounding differ
            if g.shape == ref.shape and frac.sum() >= 2:
                if np.mean(g[frac] == np.trunc(ref[frac])) >= 0.9:
                    how = ": the fractional parts were cut off (astype(int)?)"
                elif np.mean(g[frac] == np.round(ref[frac])) >= 0.9:
                    how = ": the logits were rounded to whole numbers"
        return Hint("integer", f"the result is an integer array ({have}){how}; return {want} logits, the "
                               f"inputs' dtype")
    order = {"bfloat16": 0, "float16": 0, "float32": 1, "float64": 2}
    if have in order and want in order:
        if order[have] > order[want]:
            return Hint("promoted", f"the result was promoted to {have}: compute as you like, but return "
                                    f"{want} (e.g. .astype(hidden.dtype))", {"got": have})
        if order[have] < order[want]:
            return Hint("demoted", f"the result was demoted to {have}: {want} inputs must give {want} logits "
                                   f"(no cast to {have})", {"got": have})
        return Hint("other_half", f"the result is {have}, not {want}: return the inputs' dtype", {"got": have})
    return Hint("dtype", f"return the inputs' dtype ({want})", {"got": have})


def dtype_hint(case: Case, got: np.ndarray) -> str | None:
    """The text of :func:`diagnose_dtype`."""
    return diagnose_dtype(case, got).text


def diagnose_type(type_name: str) -> Hint:
    """The hint for a non-array result (``type_name`` as the child reported it: a builtin's name,
    ``module.QualName`` for other types, or ``"array of dtype X"``).

    The hint says what came back and what is expected (the generic hint, except for an array
    of a non-numeric dtype, which is told to return logits). A JAX array is accepted from a JAX
    submission (the framework is detected from the file's imports), so a JAX array reported
    here came from a submission of another framework (NumPy, say, with jax loaded by importlib).
    """
    if type_name.startswith("array of dtype"):
        dtype = type_name[len("array of dtype"):].strip()
        return Hint("not_numeric", f"the result is an array of dtype {dtype}: return floating logits in the "
                                   f"inputs' dtype")
    return generic.type_hint(type_name, "")  # a list, None, a JAX array...: as for any problem


def type_hint(type_name: str) -> str | None:
    """The text of :func:`diagnose_type`."""
    return diagnose_type(type_name).text


def diagnose_non_finite(case: Case, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """The mistake behind NaN or infinity where the expected output is finite, or None."""
    h = np.asarray(list(case.inputs.values())[0], dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if h.ndim >= 1 and h.shape[-1] > 0 and g.shape == ref.shape and g.ndim >= 1:
        zero_rows = np.all(h == 0, axis=-1)
        bad_rows = np.any(np.isnan(g), axis=-1)
        if g.shape[:-1] == zero_rows.shape and np.any(bad_rows & zero_rows) and not np.any(bad_rows & ~zero_rows):
            return Hint("nan_zero_rows", "NaN exactly where a hidden vector is all zeros: a division by its norm? "
                                         "the head divides by nothing")
    if np.any(np.isinf(g)) and g.shape == ref.shape:
        # an overflow only when some intermediate of the computation really leaves the range there
        top = max_finite(case.dtype)
        inf = np.isinf(g) & np.isfinite(ref)
        arrays = [np.asarray(a, dtype=np.float64) for a in case.inputs.values()]
        if len(arrays) >= 2 and arrays[1].ndim == 2 and h.ndim >= 1 and h.shape[-1] == arrays[1].shape[1]:
            e = arrays[1]
            scale = np.abs(h) @ np.abs(e).T
            if scale.shape == g.shape and np.any(scale[inf] > top):
                return Hint("overflow", f"an overflow: where the result is infinite, the products sum to more than "
                                        f"{case.dtype} can hold in magnitude ({_fmt(top)}) along the way; "
                                        f"accumulate in float32 and cast back, as matmul does")
            squares = np.broadcast_to(np.square(h).sum(axis=-1, keepdims=True), g.shape)
            if np.any(squares[inf] > top) or np.any(np.square(e).sum(axis=1) > top):
                return Hint("overflow", f"an overflow: the sum of squares of a hidden vector or table row exceeds "
                                        f"{case.dtype}'s range ({_fmt(top)}): a norm computed in {case.dtype}? "
                                        f"the head needs no norms")
        if np.any(ref[inf] > math.log(top)):
            return Hint("overflow", f"an overflow: exp of the logits exceeds {case.dtype}'s range where the result "
                                    f"is infinite (exp without subtracting the row maximum?); the head returns "
                                    f"the raw logits")
    return None


def non_finite_hint(case: Case, got: np.ndarray, ref: np.ndarray) -> str | None:
    """The text of :func:`diagnose_non_finite`, or None."""
    hint = diagnose_non_finite(case, got, ref)
    return hint.text if hint else None


#: Messages of a contraction whose two sizes disagree, and which group is hidden's d_model and
#: which the table's first axis: NumPy's matmul (``@``), np.dot, JAX's dot_general (``jnp``),
#: PyTorch's matmul / ``@`` / ``F.linear`` (leading axes flattened: ``(rows x d_model and V x d)``).
_CONTRACTION = (
    (re.compile(r"matmul: Input operand 1 has a mismatch in its core dimension 0, .*\(size (\d+) is different "
                r"from (\d+)\)"), ("table", "hidden")),
    (re.compile(r"shapes \([\d, ]*\) and \([\d, ]*\) not aligned: (\d+) \(dim \d+\) != (\d+) \(dim 0\)"),
     ("hidden", "table")),
    (re.compile(r"dot_general requires contracting dimensions to have the same shape, got \((\d+),\) and "
                r"\((\d+),\)"), ("hidden", "table")),
    (re.compile(r"mat1 and mat2 shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)"), ("hidden", "table")),
)


def diagnose_exception(message: str, shapes: dict[str, list[int]] | None = None) -> Hint | None:
    """A hint for an exception the submission raised, from its message (never its source), or None.

    "The table needs a transpose" is said only when the message shows a contraction of hidden's
    last axis (``d_model``) against the table's *first* axis (``vocab_size``) with those two
    sizes, read from the message and confirmed by the case's input ``shapes``
    (``{"hidden": [..., d], "embedding_matrix": [V, d]}``, in call order) and ``V != d``. Any
    other shape error (a reshape that assumes a rank, a broadcast) names no cause.
    """
    m = message or ""
    if list(shapes or {})[:2] != ["hidden", "embedding_matrix"]:
        return None  # the hint speaks of hidden @ embedding_matrix.T: only for those inputs
    dims = list((shapes or {}).values())
    if len(dims[0]) < 1 or len(dims[1]) != 2:
        return None
    d, vocab = int(dims[0][-1]), int(dims[1][0])
    if d == vocab or int(dims[1][1]) != d:
        return None
    for pattern, roles in _CONTRACTION:
        found = pattern.search(m)
        if found is None:
            continue
        sizes = dict(zip(roles, (int(found.group(1)), int(found.group(2)))))
        if sizes == {"hidden": d, "table": vocab}:
            return Hint("shapes_do_not_line_up",
                        "the shapes do not line up: the table needs a transpose, hidden @ embedding_matrix.T "
                        "contracts the last axis of both (d_model) and gives (..., vocab_size)",
                        {"d_model": d, "vocab_size": vocab})
    return None


# ---------------------------------------------------------------------------------------------
# many cases (grader.diagnose.combine calls these for this module's ids)

#: The ids whose summary text this module reconciles across cases (:func:`combined_text`).
COMBINED_IDS = frozenset({"factor", "offset"})


def _range_text(values: list[int]) -> str:
    v = sorted(set(values))
    return ", ".join(str(d) for d in v) if len(v) <= 4 else f"from {v[0]} to {v[-1]}"


def combined_text(top: str, mine: list[dict[str, Any]]) -> str | None:
    """The summary text of this module's ``factor`` or ``offset`` hints shared by many cases
    (``mine``: their dicts, as :func:`grader.diagnose.combine` receives them), or None to keep the
    most common case text: factors that equal ``1/sqrt(d_model)`` of each case (d_model varying)
    are named so, equal factors and offsets are called constant."""
    params = [h.get("params") or {} for h in mine]
    if top == "factor" and all("factor" in p for p in params):
        facs = [(float(p["factor"]), int(p.get("d_model") or 1), int(p.get("vocab_size") or 1)) for p in params]
        for size, label in ((1, "d_model"), (2, "vocab_size")):
            sizes = [f[size] for f in facs]
            for fn, template in _SIZE_FACTORS:
                name = template.format(label)
                if len(set(sizes)) >= 2 and all(abs(f[0] - fn(f[size])) <= 1e-3 * fn(f[size]) for f in facs):
                    return (f"looks like the logits were multiplied by a factor of {name} (in every case, {label} "
                            f"{_range_text(sizes)})"
                            + ("; scaling belongs to attention scores, not to the output logits"
                               if name in ("1/sqrt(d_model)", "sqrt(d_model)") else "")
                            + "; leave them unscaled")
        values = [f[0] for f in facs]
        if len(values) >= 2 and max(values) - min(values) <= 1e-2 * max(abs(v) for v in values):
            return (f"looks like the logits were multiplied by a constant factor of {_fmt(float(np.median(values)))}; "
                    f"leave them unscaled")
        if len(values) >= 2:  # one case's factor is not the others': never state it for all of them
            return (f"looks like the logits were multiplied by a factor that differs from case to case (from "
                    f"{_fmt(min(values))} to {_fmt(max(values))}); leave them unscaled")
    elif top == "offset" and all("offset" in p for p in params):
        values = [float(p["offset"]) for p in params]
        if len(values) >= 2 and max(values) - min(values) <= 1e-2 * max(abs(v) for v in values):
            return (f"looks like a constant offset of {_fmt(float(np.median(values)))} was added to every logit "
                    f"(a bias?); the head has no bias")
        if len(values) >= 2:
            return (f"looks like an offset was added to every logit, a different one in each case (from "
                    f"{_fmt(min(values))} to {_fmt(max(values))}; a bias?); the head has no bias")
    return None
