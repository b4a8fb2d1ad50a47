"""The wording of scaled_dot_product_attention's hint ideas
(``grader/hints/scaled_dot_product_attention.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "no_scale": lambda f, c: ("looks like the scores q k^T were not divided by sqrt(d) (d, the last axis of q and k): "
                              "scale them before the softmax"),
    "scale_by_d": lambda f, c: "looks like the scores were divided by d instead of sqrt(d)",
    "mask_ignored": lambda f, c: ("looks like the mask was ignored: where it is False the score must be -inf before "
                                  "the softmax, so that key gets weight 0"),
    "mask_inverted": lambda f, c: ("looks like the mask was inverted: True means the key may be attended (keep its "
                                   "score), False means it may not (-inf)"),
    "softmax_over_queries": lambda f, c: ("looks like the softmax was taken over the queries (axis -2) instead of the "
                                          "keys (the last axis of the scores)"),
}
