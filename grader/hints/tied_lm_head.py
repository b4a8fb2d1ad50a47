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
(:meth:`Ctx.fits`) only when

1. the prediction explains the output at least twice as well as the right answer does (root
   sum of squares of the residuals; four times for ideas with fitted parameters), so a near
   miss is never pinned on a loose match;
2. the output equals the prediction within a loose band at every element (:meth:`Ctx.band`:
   four times the tolerance model's allowance carried through the mistake, plus rounding in
   the case dtype and what flushing subnormals to zero can move), so that the mistaken code's
   own rounding does not hide it;
3. the prediction would itself fail (it differs from the right answer by more than the model's
   allowance and the flush bound somewhere), so an idea that changes nothing explains nothing;
4. for fitted parameters (a factor, offsets), which absorb the mean of any error, the residual
   also looks like rounding: no larger than half the allowance (root sum of squares) plus the
   prediction's own rounding, and following no trend in the logits (:meth:`Ctx.systematic`).

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

Every hint is a :class:`Hint`: an ``idea`` for machines and for combining the hints of many
cases (``grader.diagnose.combine``) and its ``facts`` (the fitted factor...); its sentence, per
framework, is in ``grader/words/tied_lm_head.py``.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np

from . import Hint, generic, logsumexp, softmax_along as softmax_of

from ..cases import Case
from ..dtypes import HALF_DTYPES, dtype_of, max_finite, smallest_normal
from .tied_lm_head_context import MIN_FITTED, SAMPLE, Ctx, rss  # noqa: F401 - SAMPLE, re-exported

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

#: For a result in each dtype, the formats of lower precision it may have been computed in.
#: (float16 inputs computed in bfloat16 are left out: float16's allowance, about 2**-9 S, hides
#: bfloat16's grid.)
LOWER = {"float64": ("float32", "bfloat16", "float16"), "float32": ("bfloat16", "float16")}


SIZE_FACTORS = ((lambda s: 1 / math.sqrt(s), "1/sqrt({})"), (lambda s: math.sqrt(s), "sqrt({})"),
                 (lambda s: 1 / s, "1/{}"), (lambda s: float(s), "{}"))


def _named_factor(c: float, n: int, v: int | None = None) -> str | None:
    """The name of ``c`` when it is one of the factors tied to d_model ``n`` (``"1/sqrt(d_model)"``,
    ``"sqrt(d_model)"``, ``"1/d_model"``, ``"d_model"``) or to vocab_size ``v`` (the same four), for
    sizes > 1; None otherwise. When d_model equals vocab_size the value cannot tell which, and
    the name says both (``"1/d_model or 1/vocab_size"``) rather than guess."""
    def match(size: int | None, label: str) -> str | None:
        if not size or size <= 1:
            return None
        for fn, name in SIZE_FACTORS:
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


def _fit_plain(x: Ctx, fitted: float, predict: Callable[[float], np.ndarray],
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


def _lower_precision(x: Ctx) -> Hint | None:
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
        residuals = [rss(x.got - p) for p in preds
                     if np.all(np.isfinite(p)) and np.all(np.abs(x.got - p) <= band)]
        if residuals:
            fitting.append((min(residuals), low))
    if not fitting or not np.any(x.bad):
        return None
    fitting.sort()
    if len(fitting) >= 2 and fitting[0][0] >= 0.5 * fitting[1][0]:
        return None  # two formats explain it about as well (both exactly, too): name neither
    low = fitting[0][1]
    return Hint(idea="lower_precision", facts={"computed_in": low, "dtype": x.dt, "first": next(iter(x.case.inputs), "")})


def _factor_or_offset_ambiguous(x: Ctx) -> bool:
    """True when one informative number fits a plain factor and a plain offset alike
    (0.0495 -> 0.0595 is x1.2 or +0.01): then neither hint is given for this case."""
    informative = np.abs(x.ref) > x.model
    if int(informative.sum()) >= 2 or not np.any(informative):
        return False
    got, ref = float(x.got[informative][0]), float(x.ref[informative][0])
    factor, offset = _round_param(got / ref, x.u), _round_param(got - ref, x.u)
    return _is_simple(factor) and _is_simple(offset)


def _fitted_factor(x: Ctx) -> Hint | None:
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


def _few_and_plain(x: Ctx, c: float, predicted: np.ndarray) -> bool:
    """For outputs with fewer than :data:`MIN_FITTED` informative elements: the fitted value is a
    plain one (0.5, 1/8) and its prediction matches the output as correct code would (half the
    allowance plus rounding at every element), not just within the band."""
    rounding = 0.5 * x.model + x.u * (np.abs(predicted) + np.abs(x.ref)) + x.flush
    return _is_simple(c) and bool(np.all(np.abs(x.got - predicted) <= rounding))


def _factor_hint(c: float, n: int, v: int | None = None) -> Hint:
    """The ``factor`` hint for logits multiplied by ``c`` (d_model ``n``, vocab_size ``v``)."""
    return Hint(idea="factor", facts={"factor": c, "d_model": n, "vocab_size": v, "named": _named_factor(c, n, v)})


def _offsets(x: Ctx) -> Hint | None:
    if _factor_or_offset_ambiguous(x):
        return None
    diff = x.got - x.ref

    def hopeless(centred: np.ndarray) -> bool:
        # the mean minimises the residual of an offset: if even it leaves more than FITTED of
        # the right answer's residual, no median-based offset fits (skips the costly medians)
        return rss(centred) > FITTED * x.base_residual

    # one constant for every element
    median = float(np.median(diff))
    fitted = _round_param(median, x.u) if not hopeless(diff - diff.mean()) else 0.0
    if fitted != 0:
        # one number fits any offset (exp, softmax of one logit and a bias of 1 all turn 0 into 1);
        # several zeros that all became the same plain constant are evidence
        single = x.ref.size < 2 or (int(np.count_nonzero(np.abs(x.ref) > x.model)) < 2 and not np.all(x.ref == 0))
        c = None if single else _fit_plain(x, fitted, lambda c: x.ref + c, lambda c: x.model)
        if c is not None and (x.ref.size >= MIN_FITTED or _few_and_plain(x, c, x.ref + c)):
            return Hint(idea="offset", facts={"offset": c})
    if x.few:
        return None  # an offset per row or per vocabulary entry needs many more elements
    # an offset per row or per entry must explain far more than one constant does (else the
    # constant was rejected for a reason: rounding at the dtype's resolution, say)
    constant = rss(diff - median)
    # one offset per row (per hidden vector)
    if (x.vocab >= 2 and x.ref.ndim >= 1 and x.rows >= 2 and x.rows * (x.vocab - 1) >= MIN_FITTED
            and not hopeless(diff - diff.mean(axis=-1, keepdims=True))):
        row = np.median(diff, axis=-1, keepdims=True)
        if (np.any(row != 0) and rss(diff - row) <= 0.5 * constant
                and x.fits(x.ref + row, 2 * x.model, FITTED, trend_axis=-1)):
            return Hint(idea="row_offset", facts={"by": "own"})
    # one offset per vocabulary entry: a bias vector
    distinct_rows = x.rows >= 2 and np.ptp(x.ref.reshape(-1, x.vocab), axis=0).max() > 0
    flat = diff.reshape(-1, x.vocab)
    if (distinct_rows and x.vocab * (x.rows - 1) >= MIN_FITTED and x.ref.ndim >= 1
            and not hopeless(flat - flat.mean(axis=0, keepdims=True))):
        col = np.median(flat, axis=0)
        shifted = x.ref + col.reshape((1,) * (x.ref.ndim - 1) + (-1,))
        if (np.ptp(col) > 0 and rss(x.got - shifted) <= 0.5 * constant
                and x.fits(shifted, 2 * x.model, FITTED, trend_axis=0)):
            return Hint(idea="column_offset")
    return None


#: For each parameter-free idea, the fitted ideas it is a special case of: when one of those also
#: fits, the parameter-free idea is the more specific explanation, not a rival.
FAMILY = {"log_softmax": {"row_offset"}, "row_offset": {"row_offset"},
          "factor": {"factor"}, "sign_flip": {"factor"}}  # not "offset": one row shifted by its
# mean, or by a plain constant, are two explanations the case cannot tell apart

#: A parameter-free idea: its hint, its prediction (None: it cannot apply), the allowance it carries.
Candidate = tuple[Callable[[], Hint], Callable[[], np.ndarray | None], Callable[[], np.ndarray]]


def _parameter_free(x: Ctx) -> list[Candidate]:
    """Every parameter-free idea as (hint, prediction, allowance carried through the mistake),
    in the order of :data:`VALUE_IDEAS`; a prediction of None means the idea cannot apply."""
    from ..tolerance import sum_of_products_allowed as allowed_error

    def const(hid: str, facts: dict[str, Any] | None = None) -> Callable[[], Hint]:
        return lambda: Hint(idea=hid, facts=facts or {})

    def through(p: np.ndarray | None, s: np.ndarray | None) -> np.ndarray:
        """The model allowance of a mistaken sum of products ``p`` with scale ``s``."""
        return allowed_error(x.dt, p, s, x.n) if p is not None and s is not None else x.model

    row_max = x.model.max(axis=-1, keepdims=True)
    all_zero = bool(np.all(x.got == 0))
    out: list[Candidate] = [
        (const("zeros"),
         lambda: np.zeros_like(x.ref) if all_zero else None, lambda: x.model),
        (const("softmax"),
         lambda: softmax_of(x.ref) if x.vocab >= 2 else None,  # one logit: softmax is all ones, no evidence
         lambda: 2 * softmax_of(x.ref) * row_max),
        (const("log_softmax"),
         lambda: x.ref - logsumexp(x.ref), lambda: 2 * row_max),
        (const("sign_flip"),
         lambda: -x.ref, lambda: x.model),
        (const("abs"), lambda: np.abs(x.ref), lambda: x.model),
        (const("relu"),
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
            (const("normalised_hidden"),
             lambda: x.ref / hn if h_ok else None, lambda: x.model / hn),
            (const("cosine"),
             lambda: x.ref / hn / en if h_ok and e_ok else None, lambda: x.model / hn / en),
            (const("normalised_table"),
             lambda: x.ref / en if e_ok else None, lambda: x.model / en),
        ]
        sd = h.std(axis=-1, keepdims=True)
        if x.n >= 2 and np.all(sd > 0):
            # z = (h - mean) / sd, so z @ E.T = (ref - mean * E.sum(1)) / sd: no second matmul; the
            # scale |z| @ |E|.T is bounded by (S + |mean| |E|.sum(1)) / sd
            mean = h.mean(axis=-1, keepdims=True)
            out.append((const("standardised_hidden"),
                        lambda: (x.ref - mean * e.sum(axis=1)) / sd,
                        lambda: through((x.ref - mean * e.sum(axis=1)) / sd,
                                        (x.scale + np.abs(mean) * np.abs(e).sum(axis=1)) / sd)))
    if x.ref.ndim >= 1:  # with one logit per row these predict zeros, as log-softmax does: a tie
        out += [
            (const("row_offset", {"by": "mean"}),
             lambda: x.ref - x.ref.mean(axis=-1, keepdims=True), lambda: 2 * x.model),
            (const("row_offset", {"by": "max"}),
             lambda: x.ref - x.ref.max(axis=-1, keepdims=True), lambda: 2 * x.model),
        ]
    if x.h is not None and x.e.shape[0] == x.e.shape[1]:
        out.append((const("no_transpose"),
                    lambda: x.h @ x.e, lambda: through(x.h @ x.e, np.abs(x.h) @ np.abs(x.e))))
    if x.h is not None and x.h.shape == x.ref.shape:
        out.append((const("returns_hidden"),
                    lambda: x.h, lambda: x.model))
    if x.ref.ndim >= 2 and x.ref.shape[-1] == x.ref.shape[-2]:
        out.append((const("swapped_axes"),
                    lambda: np.swapaxes(x.ref, -1, -2), lambda: np.swapaxes(x.model, -1, -2)))
    if x.rows >= 2 and x.vocab >= 2:  # rows of one logit: a repeated number is no evidence
        def first(a: np.ndarray) -> np.ndarray:
            return np.broadcast_to(a.reshape(-1, x.vocab)[0], (x.rows, x.vocab)).reshape(x.ref.shape)
        out.append((const("first_row"),
                    lambda: first(x.ref), lambda: first(x.model)))
    if x.h is not None and x.n >= 1:  # with d_model = 1 this predicts zeros: a tie with "zeros"
        for k, which in ((-1, "last"), (0, "first")):
            # the sum without term k: ref minus an outer product, no matmul
            out.append((const("feature_dropped", {"which": which, "d_model": x.n}),
                        lambda k=k: x.ref - x.h[..., k:k + 1 if k != -1 else None] * x.e[:, k],
                        lambda k=k: through(x.ref - x.h[..., k:k + 1 if k != -1 else None] * x.e[:, k],
                                            np.maximum(x.scale - np.abs(x.h[..., k:k + 1 if k != -1 else None])
                                                       * np.abs(x.e[:, k]), 0.0))))
    return out


def _half_accumulation(x: Ctx) -> tuple[Hint, float, np.ndarray] | None:
    """A running sum kept in the half dtype, tested as a prediction on a sample of elements.

    The prediction simulates ``acc = 0; for k in range(d_model): acc = acc + h[k] * E[j, k]``
    with ``acc`` and each product in the case's half dtype (``np.add.accumulate`` in that dtype:
    one rounding per step, in a fixed order) for the elements of :meth:`Ctx.sample`. It fits
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
    residual = rss(got - pred)
    if residual > 0.5 * rss(got - ref):
        return None
    hint = Hint(idea="half_accumulation", facts={"dtype": x.dt})
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


def _where(x: Ctx) -> Hint | None:
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
    zeros = bool(np.all(x.got[bad] == 0))  # they came back as 0: never computed?
    params: dict[str, Any] = {}
    for idx, total_, key in ((rows, x.rows, "rows"), (cols, x.vocab, "columns")):
        if total_ < 2 or len(idx) == total_:
            continue
        where = _block(idx, total_)
        if where is None:
            return None
        dense = flat[idx, :] if key == "rows" else flat[:, idx]
        if dense.mean() < 0.5:
            return None  # most elements there are right: no clean part
        params.update({key: [int(i) for i in idx], f"{key}_at": where, f"{key}_of": int(total_)})
    if params:
        return Hint(idea="where", facts={**params, "zeros": zeros})
    if np.all(x.ref[bad] < 0) and np.any(~bad & (x.ref > 0)):
        return Hint(idea="where", facts={"sign": "negative", "wrong": n_bad, "of": total, "zeros": zeros})
    if np.all(x.ref[bad] > 0) and np.any(~bad & (x.ref < 0)):
        return Hint(idea="where", facts={"sign": "positive", "wrong": n_bad, "of": total, "zeros": zeros})
    return None


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
        x = Ctx(case, got, ref, scale, allowed)
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
            if any(h.idea != best.idea and r <= 4 * best_residual for r, _, h, _ in candidates[1:]):
                return _where(x)
        # a running sum in the half dtype is a prediction too (on a sample of elements): it
        # competes with the best parameter-free idea there, and comes before fitted parameters,
        # which can absorb part of any error
        half = _half_accumulation(x)
        if half is not None:
            hint, residual, idx = half
            if not candidates or residual < 0.5 * rss(x.got.ravel()[idx] - best_prediction.ravel()[idx]):
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
                if other.idea not in FAMILY.get(best.idea, ()) and residual <= 4 * best_residual:
                    return _where(x)
            elif fitted is None:
                fitted = (other, residual)
            elif other.idea != fitted[0].idea and residual <= 4 * fitted[1]:
                return _where(x)
        if candidates:
            return best
        if fitted is not None:
            return fitted[0]
        return _where(x)
    return None


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

    def same_values(arranged: Callable[[], np.ndarray]) -> dict[str, Any]:
        """``{"values_differ": True}`` when the output, so arranged, is wrong in value too."""
        try:
            with np.errstate(all="ignore"):
                g = np.asarray(arranged(), dtype=np.float64)
        except (ValueError, TypeError):
            return {}
        if g.shape != rs:
            return {}
        from ..tolerance import sum_of_products_allowed as allowed_error
        x = Ctx(case, g, ref, None, np.zeros_like(ref))
        ok = bool(np.all(np.abs(g - ref) <= allowed_error(case.dtype, ref, x.scale, x.n)))
        return {} if ok else {"values_differ": True}

    def vocab_dropped() -> str | None:
        if len(gs) == len(rs) and gs[:-1] == rs[:-1] and gs[-1] == rs[-1] - 1:
            for part, which in ((slice(None, -1), "last"), (slice(1, None), "first")):
                if _prefix_matches(case, got, ref, part):
                    return which
        return None

    if gs == tuple(h.shape) and np.array_equal(np.asarray(got, dtype=np.float64), np.asarray(h, dtype=np.float64)):
        if vocab_dropped() is not None:
            return None  # hidden itself, and the logits without one table row: the case cannot tell
        return Hint(idea="returns_hidden")
    if len(rs) >= 1 and ref.size == 0 and got is not None and np.size(got) == 0:
        if gs == (0,) and rs != (0,):  # what np.array(rows) gives for no rows
            return Hint(idea="empty_batch", facts={"shape": list(rs), "got_shape": list(gs), "from_list": True})
        return Hint(idea="empty_batch", facts={"shape": list(rs), "got_shape": list(gs)})
    if gs == (1,) + rs:
        return Hint(idea="added_axis", facts=same_values(lambda: np.asarray(got)[0]))
    if len(lead) >= 2 and gs == (int(np.prod(lead)), rs[-1]):
        return Hint(idea="flattened", facts=same_values(lambda: np.asarray(got).reshape(rs)))
    if len(rs) >= 2 and gs == rs[:-2] + (rs[-1], rs[-2]) and rs[-1] != rs[-2]:
        return Hint(idea="transposed", facts=same_values(lambda: np.swapaxes(np.asarray(got), -1, -2)))
    squeezed = tuple(s for s in rs if s != 1)
    if gs == squeezed and gs != rs:
        return Hint(idea="squeezed", facts={"shape": list(rs), "got_shape": list(gs),
                                            **same_values(lambda: np.asarray(got).reshape(rs))})
    which = vocab_dropped()
    if which is not None:
        return Hint(idea="vocab_dropped", facts={"which": which, "logits": int(gs[-1]), "vocab_size": int(rs[-1])})
    if gs == tuple(h.shape) and gs != rs:
        return Hint(idea="hidden_shape")
    if len(rs) >= 2 and gs == rs[1:] and rs[0] >= 2:
        which = _reduced(case, got, ref, {"the first": lambda r: r[0], "the last": lambda r: r[-1]})
        if which in ("the first", "the last"):
            return Hint(idea="first_row_only", facts={"which": which, "lead": int(rs[0])})
    if len(gs) == len(rs) and gs[:-1] == rs[:-1] and gs[-1] != rs[-1]:
        return Hint(idea="wrong_vocab", facts={"logits": int(gs[-1]), "vocab_size": int(rs[-1])})
    if gs == () and rs != ():
        how = _reduced(case, got, ref, {"summed": np.sum, "averaged": np.mean, "the largest logit": np.max})
        if how is not None:
            return Hint(idea="scalar", facts={"how": how})
    return None


def _reduced(case: Case, got: np.ndarray, ref: np.ndarray,
             ways: dict[str, Callable[[np.ndarray], np.ndarray]]) -> str | None:
    """The name of the way in ``ways`` whose reduction of ``ref`` the output equals within the
    tolerance model's allowance (scaled the same way), when exactly one does; else None."""
    from ..tolerance import sum_of_products_allowed as allowed_error

    g = np.asarray(got, dtype=np.float64)
    x = Ctx(case, ref, ref, None, np.zeros_like(ref))
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
    x = Ctx(case, ref, ref, None, np.zeros_like(ref))
    return bool(np.all(np.abs(g - sub) <= allowed_error(case.dtype, sub, x.scale[..., part], x.n)))


def diagnose_dtype(case: Case, got: np.ndarray) -> Hint:
    """The mistake behind a wrong output dtype (always a hint: at least what to return)."""
    want, have = case.dtype, np.asarray(got).dtype.name
    if np.asarray(got).dtype.kind in "iub":
        how = ""  # "truncated" or "rounded" when the values show it
        arrays = [np.asarray(a, dtype=np.float64) for a in case.inputs.values()]
        if (len(arrays) >= 2 and arrays[1].ndim == 2 and arrays[0].ndim >= 1
                and arrays[0].shape[-1] == arrays[1].shape[1]):
            ref = arrays[0] @ arrays[1].T
            g = np.asarray(got, dtype=np.float64)
            frac = np.abs(ref - np.round(ref)) > 0.01  # elements where truncating and rounding differ
            if g.shape == ref.shape and frac.sum() >= 2:
                if np.mean(g[frac] == np.trunc(ref[frac])) >= 0.9:
                    how = "truncated"
                elif np.mean(g[frac] == np.round(ref[frac])) >= 0.9:
                    how = "rounded"
        return Hint(idea="integer", facts={"got": have, "want": want, "how": how, "first": next(iter(case.inputs), "")})
    order = {"bfloat16": 0, "float16": 0, "float32": 1, "float64": 2}
    if have in order and want in order:
        if order[have] > order[want]:
            return Hint(idea="promoted", facts={"got": have, "want": want, "like": next(iter(case.inputs), "")})
        if order[have] < order[want]:
            return Hint(idea="demoted", facts={"got": have, "want": want})
        return Hint(idea="other_half", facts={"got": have, "want": want})
    return Hint(idea="dtype", facts={"got": have, "want": want})


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
        return Hint(idea="not_numeric", facts={"dtype": dtype})
    return generic.type_hint(type_name, "")  # a list, None, a JAX array...: as for any problem


def diagnose_non_finite(case: Case, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """The mistake behind NaN or infinity where the expected output is finite, or None."""
    h = np.asarray(list(case.inputs.values())[0], dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if h.ndim >= 1 and h.shape[-1] > 0 and g.shape == ref.shape and g.ndim >= 1:
        zero_rows = np.all(h == 0, axis=-1)
        bad_rows = np.any(np.isnan(g), axis=-1)
        if g.shape[:-1] == zero_rows.shape and np.any(bad_rows & zero_rows) and not np.any(bad_rows & ~zero_rows):
            return Hint(idea="nan_zero_rows")
    if np.any(np.isinf(g)) and g.shape == ref.shape:
        # an overflow only when some intermediate of the computation really leaves the range there
        top = max_finite(case.dtype)
        inf = np.isinf(g) & np.isfinite(ref)
        arrays = [np.asarray(a, dtype=np.float64) for a in case.inputs.values()]
        if len(arrays) >= 2 and arrays[1].ndim == 2 and h.ndim >= 1 and h.shape[-1] == arrays[1].shape[1]:
            e = arrays[1]
            scale = np.abs(h) @ np.abs(e).T
            if scale.shape == g.shape and np.any(scale[inf] > top):
                return Hint(idea="overflow", facts={"where": "sum", "dtype": case.dtype})
            squares = np.broadcast_to(np.square(h).sum(axis=-1, keepdims=True), g.shape)
            if np.any(squares[inf] > top) or np.any(np.square(e).sum(axis=1) > top):
                return Hint(idea="overflow", facts={"where": "norm", "dtype": case.dtype})
        if np.any(ref[inf] > math.log(top)):
            return Hint(idea="overflow", facts={"where": "exp", "dtype": case.dtype})
    return None


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
            return Hint(idea="shapes_do_not_line_up", facts={"d_model": d, "vocab_size": vocab})
    return None
