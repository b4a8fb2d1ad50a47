"""Hint ideas of ``kl_divergence(p_logits, q_logits)``: the mean over the N rows of
``KL(p || q)`` with ``p``, ``q`` the softmaxes of the logits along the last axis.

Each idea predicts the output of one mistake (a helper's trial: the reversed divergence, which
the statement warns of, got no hint), named only when that prediction reproduces the output
(``grader.hints.generic.judge``; a mean over N * C or a sum over rows is the generic
``axis_factor``):

* ``reversed``: ``KL(q || p)`` instead of ``KL(p || q)``;
* ``logits_as_log_probs``: the logits used as log-probabilities without the log-softmax of one
  or both (``sum p * (log p - q_logits)``, or ``sum p * (p_logits - q_logits)``).
"""
from __future__ import annotations

import numpy as np

from . import Idea, Names, logsumexp


def _kl(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """The batch mean of sum_c p (log p - log q), 0 where p = 0."""
    p = np.exp(log_p)
    terms = np.where(p > 0, p * (log_p - log_q), 0.0)
    return np.asarray(np.sum(terms) / log_p.shape[0])


def ideas(inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray, names: Names) -> list[Idea]:
    """The mistakes above as predictions (``inputs`` float64: ``p_logits``, ``q_logits``)."""
    p, q = inputs.get("p_logits"), inputs.get("q_logits")
    if p is None or q is None or p.ndim != 2 or p.shape != q.shape or p.shape[0] == 0 or expected.shape != ():
        return []
    with np.errstate(all="ignore"):
        lp, lq = p - logsumexp(p), q - logsumexp(q)
        return [Idea(id="reversed", text=None, predicted=_kl(lq, lp)),
                Idea(id="logits_as_log_probs", text=None, predicted=_kl(lp, q)),
                Idea(id="logits_as_log_probs", text=None, predicted=np.asarray(np.sum(np.exp(lp) * (p - q)) / p.shape[0]))]
