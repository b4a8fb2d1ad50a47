"""The numbers tied_lm_head's hint ideas share (``grader/hints/tied_lm_head.py``): :class:`Ctx`,
computed once per failure (the tolerance model's allowance, what flushing subnormals to zero can
move, the failing elements, samples), and the small numerics the ideas use. No idea and no
wording lives here.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..cases import Case
from ..dtypes import dtype_of, smallest_normal, smallest_subnormal, unit_roundoff

MIN_FITTED = 8  # informative elements a fitted factor or offset needs unless its value is plain
SAMPLE = 256  # elements simulated by ideas that cost d_model operations per element
SAMPLE_TERMS = 1 << 21  # ... and at most this many terms in all (256 elements up to d_model = 8192)
TREND_SAMPLE = 4096  # elements binned by the trend test of fitted ideas


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


def rss(a: np.ndarray) -> float:
    """Root sum of squares of all elements (``np.linalg.norm`` of the flattened array, without
    BLAS: under load, waking BLAS threads costs more than the sum)."""
    return math.sqrt(float(np.square(a).sum()))


class Ctx:
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
        self.base_residual = rss(self.got - self.ref)  # the right answer's
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
        residual = rss(self.got - predicted)
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
            if residual > 0.25 * rss(np.broadcast_to(carried, self.got.shape)) + rss(rounding):
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
        floor = 0.5 * rss(self.model)
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


#: the factors tied to a size s that a mistake may multiply logits by, and their names ({} is the size's)
