"""Hint ideas of ``layer_norm(x, gamma, beta, eps=1e-5)``: ``(x - mean) / sqrt(var + eps) *
gamma + beta`` over the last axis, the variance the biased one (divided by d).

Each idea predicts the output of one mistake seen in learners' code (a newcomer's trial: the
course pack's layer_norm gave no hint for any of them), named only when that prediction
reproduces the output (``grader.hints.generic.judge``):

* ``unbiased_variance``: the variance divided by d - 1 (``ddof=1``, torch's ``var`` default);
* ``eps_outside_sqrt``: ``sqrt(var) + eps`` instead of ``sqrt(var + eps)``;
* ``gamma_ignored`` / ``beta_ignored``: the scale or the shift left out;
* ``no_centring``: the root mean square of ``x`` instead of its standard deviation (RMS norm);
* ``no_eps``: eps left out (``sqrt(var)``): a few units in float32's and float64's last places
  where the variance is about 1, and NaN or infinity for a constant row (a newcomer's trial:
  neither got a hint), named by :func:`diagnose_non_finite` there;
* ``eps_ignored``: a constant eps of the learner's own instead of the argument;
* ``wrong_axis``: the mean and variance taken along another axis than the last (``dim=0``, a
  newcomer's torch file: its only feedback was the pattern "only from rank 2 on");
* ``zero_variance_rows``: NaN on rows of one value (d = 1), which either mistake gives (no eps,
  or ``ddof=1``: a division by d - 1 = 0).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import Hint, Idea, Names, generic

#: eps constants learners write instead of the argument (PyTorch's 1e-5, 1e-6, 1e-8, 1e-12)
FIXED_EPS = (1e-5, 1e-6, 1e-8, 1e-12)


def _norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, *, ddof: int = 0,
          eps_outside: bool = False, centre: bool = True, axis: int = -1) -> np.ndarray:
    """Layer norm of ``x`` (float64) over ``axis`` (the last), with one of the mistakes above
    (``eps=0`` for ``no_eps``)."""
    d = x.shape[axis]
    with np.errstate(all="ignore"):
        mean = x.mean(axis=axis, keepdims=True) if centre else 0.0
        centred = x - mean
        var = (centred * centred).sum(axis=axis, keepdims=True) / max(d - ddof, 1)
        std = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
        return centred / std * gamma + beta


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions of the output (``inputs`` float64: ``x``, ``gamma``,
    ``beta`` and ``eps``; ``expected`` the exact output, float64)."""
    x, gamma, beta = inputs.get("x"), inputs.get("gamma"), inputs.get("beta")
    if x is None or gamma is None or beta is None or x.ndim < 1 or x.size == 0 or x.shape != expected.shape:
        return []
    eps = float(np.asarray(inputs.get("eps", 1e-5)))
    zero, one = np.zeros_like(beta), np.ones_like(gamma)
    out = [Idea(id="eps_outside_sqrt", text=None, predicted=_norm(x, gamma, beta, eps, eps_outside=True)),
           Idea(id="no_centring", text=None, predicted=_norm(x, gamma, beta, eps, centre=False))]
    if eps > 0:
        out.append(Idea(id="no_eps", text=None, predicted=_norm(x, gamma, beta, 0.0)))
        # eps ignored for a constant of the learner's own: where the case's eps is another, it is
        # told from a missing one (a helper's trial read "eps was left out" beside its + 1e-5)
        out += [Idea(id="eps_ignored", text=None, predicted=_norm(x, gamma, beta, fixed), params={"eps": fixed})
                for fixed in FIXED_EPS if not np.isclose(fixed, eps, rtol=1e-3, atol=0)]
    if x.shape[-1] > 1:
        out.insert(0, Idea(id="unbiased_variance", text=None, predicted=_norm(x, gamma, beta, eps, ddof=1),
                           params={"d": int(x.shape[-1])}))
    out += [Idea(id="wrong_axis", text=None, predicted=_norm(x, gamma, beta, eps, axis=a),
                 params={"axis_used": a if a == 0 else a - x.ndim})   # dim=0 as written, whatever the rank
            for a in range(x.ndim - 1) if x.shape[a] > 1]
    if not np.allclose(gamma, 1.0):
        out.append(Idea(id="gamma_ignored", text=None, predicted=_norm(x, one, beta, eps)))
    if np.any(beta != 0):
        out.append(Idea(id="beta_ignored", text=None, predicted=_norm(x, gamma, zero, eps)))
    return out


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """NaN or infinity only in rows (along the last axis, of two values or more) whose variance is
    0 while the expected output is finite there: a division by ``sqrt(var)`` without eps
    (``no_eps``; a newcomer's trial: with d = 1, ``ddof=1`` gives the same NaN). Otherwise
    the generic non-finite hint (:func:`grader.hints.generic.non_finite_hint`).

    Args:
        case: the ``grader.cases.Case`` (its ``x``); got: the output, float64; ref: the exact
            output, float64.
    """
    x = np.asarray(case.inputs.get("x"), dtype=np.float64) if "x" in case.inputs else None
    eps = float(np.asarray(case.inputs.get("eps", 1e-5), dtype=np.float64))
    if x is not None and x.ndim >= 1 and x.shape[-1] > 0 and got.shape == ref.shape == x.shape and eps > 0:
        if generic.non_finite_only_in(np.ptp(x, axis=-1) == 0, got, ref):
            # rows of one value (d = 1): ddof=1 divides their variance by d - 1 = 0, eps or not, so
            # both causes are named (a helper's trial read "eps was left out" with eps there)
            return Hint(idea="zero_variance_rows" if x.shape[-1] == 1 else "no_eps", facts={"where": "constant_rows"})
    return generic.non_finite_hint(got, ref)
