"""Hints: name the mistake behind a failure by testing each idea against the actual output.

Never by reading the learner's source: each hypothesis ("softmax was applied", "a constant was
added") is turned into a predicted output from the exact reference values, and the hint is
given only when the submission's output matches that prediction within a loose band
(:func:`_matches`). The ideas are tried from the most specific to the most general.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .cases import Case
from .dtypes import unit_roundoff


def _matches(got: np.ndarray, predicted: np.ndarray, allowed: np.ndarray, dtype: str) -> bool:
    """True when ``got`` equals ``predicted`` up to a few times the tolerance (and rounding)."""
    if got.shape != predicted.shape or not np.all(np.isfinite(predicted)):
        return False
    u = unit_roundoff(dtype)
    band = 4 * allowed + 4 * u * np.abs(predicted) + 1e-300
    return bool(np.all(np.abs(got - predicted) <= band))


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _rows(case: Case, index: int) -> np.ndarray | None:
    arrays = list(case.inputs.values())
    return np.asarray(arrays[index], dtype=np.float64) if len(arrays) > index else None


def _factor_name(c: float, n: int) -> str:
    named = {1 / math.sqrt(n): "1/sqrt(d_model)", math.sqrt(n): "sqrt(d_model)", 1 / n: "1/d_model",
             float(n): "d_model"} if n > 1 else {}
    for value, name in named.items():
        if abs(c - value) <= 1e-3 * abs(value):
            return f"a factor of {name} = {c:.4g} (scaling belongs to attention, not to the output logits)"
    return f"a constant factor of {c:.4g}"


def value_hint(case: Case, got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None,
               allowed: np.ndarray) -> str | None:
    """The recognised mistake behind a value mismatch, or None.

    Args:
        got: the submission's output as float64, shaped like ``ref``.
        ref: the exact float64 reference output; ``scale``: the condition scale S (or None).
        allowed: the per-element allowed error used for the verdict.
    """
    dt = case.dtype
    if ref.size == 0:
        return None
    tries: list[tuple[str, Any]] = [
        ("softmax was applied to the logits: return the raw logits (softmax belongs to the loss or to sampling)",
         lambda: _softmax(ref)),
        ("log-softmax was applied to the logits: return the raw logits",
         lambda: ref - np.log(np.exp(ref - ref.max(-1, keepdims=True)).sum(-1, keepdims=True)) - ref.max(-1, keepdims=True)),
        ("the sign is flipped: the logits are the dot products themselves, not their negatives", lambda: -ref),
        ("abs() was applied: logits can be negative", lambda: np.abs(ref)),
        ("a ReLU (max with 0) was applied: logits can be negative", lambda: np.maximum(ref, 0.0)),
    ]
    for text, predict in tries:
        with np.errstate(all="ignore"):
            if _matches(got, predict(), allowed, dt):
                return "looks like " + text
    with np.errstate(all="ignore"):
        denom = float(np.sum(ref * ref))
        if denom > 0:
            c = float(np.sum(got * ref) / denom)
            if abs(c - 1) > 1e-2 and _matches(got, c * ref, allowed, dt):
                n = int(list(case.inputs.values())[0].shape[-1]) if list(case.inputs.values())[0].ndim else 1
                return f"looks like the logits were multiplied by {_factor_name(c, n)}; leave them unscaled"
        diff = got - ref
        c = float(np.mean(diff))
        if abs(c) > 0 and _matches(got, ref + c, allowed, dt):
            return f"looks like a constant offset of {c:.4g} was added (a bias?); the head has no bias"
        if ref.ndim >= 1 and ref.shape[-1] > 1:
            row = diff.mean(axis=-1, keepdims=True)
            if np.any(np.abs(row) > 0) and _matches(got, ref + row, allowed, dt):
                return ("looks like each row was shifted by its own offset (e.g. the row mean subtracted); "
                        "return the logits unshifted")
        h, e = _rows(case, 0), _rows(case, 1)
        if h is not None and e is not None and h.ndim >= 1 and e.ndim == 2:
            hn = np.linalg.norm(h, axis=-1, keepdims=True)
            en = np.linalg.norm(e, axis=-1)
            if np.all(hn > 0) and _matches(got, ref / hn, allowed, dt):
                return "looks like the hidden vectors were normalised to unit length first; use them as they are"
            if np.all(hn > 0) and np.all(en > 0) and _matches(got, ref / hn / en, allowed, dt):
                return "looks like cosine similarity (both vectors normalised); the logits are plain dot products"
            if e.shape[0] == e.shape[1] and _matches(got, h @ e, allowed, dt):
                return ("looks like the table was not transposed: use embedding_matrix.T "
                        "(hidden @ embedding_matrix.T); this passes only when the table is symmetric")
        if dt == "float64" and scale is not None:
            n = int(h.shape[-1]) if h is not None and h.ndim else 1
            f32 = unit_roundoff("float32") * (np.abs(ref) + 2 * (n + 1) * scale)
            if np.all(np.abs(got - ref) <= 4 * f32 + 1e-300):
                return ("the errors are those of float32 arithmetic: the float64 inputs were computed in float32 "
                        "precision (a cast to float32, or JAX without jax_enable_x64)")
        if dt in ("float16", "bfloat16") and scale is not None and np.all(np.abs(diff) <= 0.02 * scale + 1e-30):
            return (f"the result is close but less accurate than {dt} allows: were the products "
                    f"summed in {dt}? accumulate in float32 and cast back")
    return None


def shape_hint(case: Case, got: np.ndarray, ref: np.ndarray) -> str | None:
    """The recognised mistake behind a wrong output shape, or None."""
    gs, rs = tuple(got.shape), tuple(ref.shape)
    h = list(case.inputs.values())[0]
    lead = rs[:-1]
    if gs == (1,) + rs:
        return ("a leading axis of size 1 was added (e.g. np.atleast_2d or a reshape to 2-D): "
                "a single vector of shape (d_model,) must give shape (vocab_size,)")
    if len(lead) >= 2 and gs == (int(np.prod(lead)), rs[-1]):
        return "the leading (batch) axes were flattened into one; reshape the result back to (..., vocab_size)"
    if len(rs) >= 2 and gs == rs[:-2] + (rs[-1], rs[-2]):
        return "the result is transposed: the vocabulary axis must be the last one"
    if gs == tuple(h.shape):
        return "the result has the shape of hidden (..., d_model), not (..., vocab_size): was the table used?"
    if len(rs) >= 2 and gs == rs[1:]:
        return "only the first row of the batch was computed; keep every leading axis"
    if len(gs) == len(rs) and gs[:-1] == rs[:-1] and gs[-1] != rs[-1]:
        return (f"the last axis has {gs[-1]} entries, not vocab_size = {rs[-1]}: one logit per row of "
                f"the embedding matrix (and the table needs a transpose: hidden @ embedding_matrix.T)")
    if gs == () and rs != ():
        return "a scalar came back: was the result reduced (summed) over an axis?"
    return None


def dtype_hint(case: Case, got: np.ndarray) -> str | None:
    """The recognised mistake behind a wrong output dtype, or None."""
    want, have = case.dtype, got.dtype.name
    if got.dtype.kind in "iub":
        return "the result is an integer array: a cast (astype(int)?) truncated the logits"
    order = {"bfloat16": 0, "float16": 0, "float32": 1, "float64": 2}
    if have in order and want in order:
        if order[have] > order[want]:
            return (f"the result was promoted to {have}: compute as you like, but return "
                    f"{want} (e.g. .astype(hidden.dtype))")
        if order[have] < order[want]:
            return f"the result was demoted to {have}: {want} inputs must give {want} logits (no cast to {have})"
    return f"return the inputs' dtype ({want})"


def type_hint(type_name: str) -> str | None:
    """A hint for a non-array result (``type_name`` as the child reported it)."""
    if type_name in ("list", "tuple"):
        return f"return an array, not a {type_name} (drop .tolist() or wrap with np.asarray)"
    if type_name == "NoneType":
        return "the function returned None: is a return statement missing?"
    if type_name.startswith("array of dtype"):
        return "return a numeric array"
    return "return a NumPy or JAX array"


def non_finite_hint(case: Case, got: np.ndarray, ref: np.ndarray) -> str | None:
    """A hint for NaN or infinity in the output, or None."""
    h = _rows(case, 0)
    if h is not None and h.ndim >= 1 and np.any(np.all(h == 0, axis=-1)):
        return "NaN where a hidden row is all zeros: a division by its norm? the head divides by nothing"
    if np.any(np.isinf(got)):
        return "an overflow: are intermediate values larger than the dtype's range?"
    return None
