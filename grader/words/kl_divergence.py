"""The wording of kl_divergence's hint ideas (``grader/hints/kl_divergence.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "reversed": lambda f, c: ("looks like KL(q || p) instead of KL(p || q): weight by p, the softmax of p_logits, "
                              "sum p * (log p - log q)"),
    "logits_as_log_probs": lambda f, c: ("looks like logits were used as log-probabilities: take the log-softmax of "
                                         "both along the last axis first"),
}
