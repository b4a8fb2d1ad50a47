"""Hint ideas of ``scaled_dot_product_attention(q, k, v, mask=None)``: ``softmax(q k^T /
sqrt(d), masked) v``, the softmax over the keys.

Each idea predicts the output of one mistake seen in learners' code (a newcomer's trial: no
hint for attention without its scale), named only when that prediction reproduces the output
(``grader.hints.generic.judge``):

* ``no_scale``: the scores ``q k^T`` not divided by ``sqrt(d)``; ``scale_by_d``: divided by
  ``d`` instead;
* ``mask_ignored``: the mask not applied (every key attended); ``mask_inverted``: the keys
  where it is False attended instead of those where it is True (a padding mask's convention);
* ``softmax_over_queries``: the softmax taken over the queries' axis instead of the keys'.
"""
from __future__ import annotations

import numpy as np

from . import Idea, Names, softmax_along


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, scale: float,
            axis: int = -1) -> np.ndarray:
    """``softmax(q k^T * scale)`` along ``axis``, masked where ``mask`` is False, times ``v``."""
    scores = np.einsum("...qd,...kd->...qk", q, k) * scale
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    return np.einsum("...qk,...kv->...qv", softmax_along(scores, axis), v)


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions of the output (``inputs`` float64 ``q``, ``k``, ``v``
    and a bool ``mask`` when the case has one; ``expected`` the exact output, float64)."""
    q, k, v = inputs.get("q"), inputs.get("k"), inputs.get("v")
    if q is None or k is None or v is None or q.ndim < 2 or q.size == 0 or k.size == 0:
        return []
    mask = inputs.get("mask")
    mask = None if mask is None or np.ndim(mask) == 0 else np.asarray(mask, dtype=bool)
    d = q.shape[-1]
    out = []
    if d > 1:
        out += [Idea(id="no_scale", text=None, predicted=_attend(q, k, v, mask, 1.0), params={"d": int(d)}),
                Idea(id="scale_by_d", text=None, predicted=_attend(q, k, v, mask, 1.0 / d), params={"d": int(d)})]
    if mask is not None and not mask.all():
        out.append(Idea(id="mask_ignored", text=None, predicted=_attend(q, k, v, None, 1.0 / np.sqrt(d))))
        if np.all((~mask).any(axis=-1)):   # every query keeps a key once inverted: a finite prediction
            out.append(Idea(id="mask_inverted", text=None, predicted=_attend(q, k, v, ~mask, 1.0 / np.sqrt(d))))
    if q.shape[-2] > 1 and mask is None:
        out.append(Idea(id="softmax_over_queries", text=None, predicted=_attend(q, k, v, None, 1.0 / np.sqrt(d), -2)))
    return out
