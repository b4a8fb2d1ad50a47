"""Hint ideas of ``masked_mean_pool(embeddings, mask)``: the mean of a padded sequence's valid
token vectors, ``(..., seq_len, d_model)`` and a bool ``(..., seq_len)`` mask to ``(..., d_model)``.

Each idea predicts the output of one mistake seen in learners' code, and is named only when
that prediction reproduces the output (``grader.hints.generic.judge``):

* ``divide_by_seq_len``: the masked sum divided by ``seq_len`` (every position) instead of the
  number of valid tokens, ``mask.sum(-1)``: the output is the right mean times count / seq_len,
  a factor that differs per sequence (the generic "constant factor" idea named one number per
  case, seven different ones in one report);
* ``divide_by_count_plus_one``: the masked sum divided by the count of valid tokens plus one
  ("to avoid 0/0", a newcomer's); where every sequence has exactly one padding position the two
  divisions are the same number, and ``divide_by_seq_len_or_count_plus_one`` names both (that
  case's "divided by seq_len" was the only hint such a learner read);
* ``mask_ignored``: the mean over every position, padding included;
* ``half_running_sum``: the running sum kept in float16 or bfloat16 (the statement says to sum
  in float32): its rounding error grows with seq_len, and past 65504 float16 overflows, which
  :func:`diagnose_non_finite` names;
* ``half_sum_rounded``: the masked sum accumulated in float32 but returned in the half dtype
  before the division (``jnp.sum`` and ``torch.sum`` of a float16 or bfloat16 array accumulate
  in float32 and round the total to the input dtype; a newcomer's JAX file got no hint on its 14
  failing cases): two roundings where the statement asks for one, which a long sequence's large
  sum makes larger than the allowance.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import dtype_of
from . import Hint, Idea, Names, generic

HALF = ("float16", "bfloat16")


def _count(mask: np.ndarray) -> np.ndarray:
    """Valid tokens per sequence, ``(..., 1)`` float64."""
    return np.asarray(mask, dtype=bool).sum(axis=-1, keepdims=True).astype(np.float64)


def _half_running_sum(embeddings: np.ndarray, mask: np.ndarray, dtype: str) -> np.ndarray:
    """The masked sum over seq_len accumulated in ``dtype`` one position at a time (float64)."""
    low = dtype_of(dtype)
    e = embeddings.astype(low)
    m = np.asarray(mask, dtype=bool)[..., None].astype(low)
    total = np.zeros(e.shape[:-2] + e.shape[-1:], dtype=low)
    with np.errstate(all="ignore"):
        for t in range(e.shape[-2]):
            total = (total + e[..., t, :] * m[..., t, :]).astype(low)
    return total.astype(np.float64)


def _half_rounded_sum(embeddings: np.ndarray, mask: np.ndarray, dtype: str) -> list[np.ndarray]:
    """The masked sum over seq_len accumulated in float32 and rounded to ``dtype``, divided by
    the count (also rounded to ``dtype``) in ``dtype``: float64, once correctly rounded and once
    through the rounded reciprocal of the count (XLA's float16 division on the CPU)."""
    low = dtype_of(dtype)
    e = embeddings.astype(low).astype(np.float32)
    m = np.asarray(mask, dtype=bool)[..., None]
    with np.errstate(all="ignore"):
        total = (e * m).sum(axis=-2, dtype=np.float32).astype(low)
        count = np.maximum(m.sum(axis=-2, dtype=np.float32), 1).astype(low)
        return [(total / count).astype(low).astype(np.float64),
                (total * (np.ones_like(count) / count).astype(low)).astype(low).astype(np.float64)]


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions of the output (``expected``: the exact output, float64;
    ``inputs`` float64 for floating inputs; ``names.dtype``: the case's dtype)."""
    emb, mask = inputs.get("embeddings"), inputs.get("mask")
    if emb is None or mask is None or emb.ndim < 2 or emb.shape[-2] == 0:
        return []
    seq_len = emb.shape[-2]
    count = _count(mask)
    # no sentences: grader/words/masked_mean_pool.py words each idea (text=None)
    if np.all(count + 1 == seq_len):   # one padding position each: the two divisions agree here
        out = [Idea(id="divide_by_seq_len_or_count_plus_one", text=None, predicted=expected * count / seq_len,
                    params={"seq_len": int(seq_len)})]
    else:
        out = [Idea(id="divide_by_seq_len", text=None, predicted=expected * count / seq_len,
                    params={"seq_len": int(seq_len)}),
               Idea(id="divide_by_count_plus_one", text=None, predicted=expected * count / (count + 1))]
    out.append(Idea(id="mask_ignored", text=None, predicted=emb.mean(axis=-2)))
    if names.dtype in HALF:
        with np.errstate(all="ignore"):
            # divided in that dtype too, as such code divides: where another idea's prediction is
            # the same number (a short sequence), the two are ambiguous and neither is named
            low = dtype_of(names.dtype)
            mean = (_half_running_sum(emb, mask, names.dtype).astype(low)
                    / np.maximum(count, 1).astype(low)).astype(low).astype(np.float64)
        if np.all(np.isfinite(mean)):
            out.append(Idea(id="half_running_sum", text=None, predicted=np.where(count > 0, mean, 0.0),
                            params={"computed_in": names.dtype}))
        for rounded in _half_rounded_sum(emb, mask, names.dtype):
            if np.all(np.isfinite(rounded)):
                out.append(Idea(id="half_sum_rounded", text=None, predicted=np.where(count > 0, rounded, 0.0),
                                params={"computed_in": names.dtype}))
    return out


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """Infinity where the mean is finite, in a half dtype, where a running masked sum can pass the
    dtype's largest number (the sum of the valid values' magnitudes does: a sum of large values of
    both signs overflowed on the way to a total in range, and large_padding_values' -inf got no
    hint, an instructor's trial): the sum was kept in that dtype; else the generic idea (a 0/0)."""
    emb, mask = case.inputs.get("embeddings"), case.inputs.get("mask")
    if case.dtype in HALF and emb is not None and mask is not None and got.shape == ref.shape:
        from ..dtypes import max_finite
        largest = max_finite(case.dtype)
        with np.errstate(all="ignore"):
            e = np.asarray(emb, dtype=np.float64)
            total = (np.abs(e) * np.asarray(mask, dtype=bool)[..., None]).sum(axis=-2)
        inf = np.isinf(got) & np.isfinite(ref)
        if inf.any() and np.all(total[inf] > largest):
            # NaN too, only where a sequence has no valid token: a 0/0 besides (a newcomer's file
            # had both; the case's first element shown was the NaN, the hint the overflow's)
            nan = np.isnan(got)
            empty = np.broadcast_to(~np.asarray(mask, dtype=bool).any(axis=-1)[..., None], got.shape)
            both = bool(nan.any() and np.all(empty[nan]))
            return Hint(idea="half_sum_overflow", facts={"computed_in": case.dtype, **({"and_empty": True} if both else {})})
    return generic.non_finite_hint(got, ref)
