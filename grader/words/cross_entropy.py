"""The wording of cross_entropy's hint ideas (``grader/hints/cross_entropy.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

from .generic import EXP_OVERFLOW

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "no_max_shift": lambda f, c: (f"{EXP_OVERFLOW}; use the max-shifted logsumexp: subtract each row's maximum before exp "
                                  f"({c('minus_max', x='logits', axis=-1)}) and add it back after the log"),
    "log_of_softmax": lambda f, c: ("the loss is infinite: the target's probability underflowed to 0 before its log, "
                                    "and -log(0) is infinite; never take the log "
                                    "of a softmax: the loss of a row is logsumexp(logits) - logits[target], with "
                                    f"the maximum subtracted inside ({c('minus_max', x='logits', axis=-1)})"),
    "probability_not_log": lambda f, c: ("looks like the probability of the target was used where the loss takes "
                                         "its negative log: -log(softmax(logits)[target]), averaged over the rows"),
}
