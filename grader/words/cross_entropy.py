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
    "negative_target": lambda f, c: (f"a target is negative ({f['target']}), which must be refused: raise {f['raise']}"
                                     + (f", not {f['raised']}" if f.get("raised") else
                                        f"; indexing counts it from the end (class {f['classes'] + f['target']} of "
                                        f"{f['classes']}) instead of failing: check 0 <= target < C")),
    "target_out_of_range": lambda f, c: (f"a target is {f['target']}, but there are {f['classes']} classes (0 to "
                                         f"{f['classes'] - 1}): raise {f['raise']}"
                                         + (f", not {f['raised']}" if f.get("raised") else
                                            "; check 0 <= target < C before indexing (some indexing clamps it or "
                                            "fills NaN instead of failing)")),
    "float_targets": lambda f, c: (f"the targets are {f['dtype']} numbers, not class indices: check that they have an "
                                   f"integer dtype and raise {f['raise']}"
                                   + (f", not {f['raised']}" if f.get("raised") else
                                      f" (converting them with {c('to_int')} would accept them)")),
    "no_max_shift_and_underflow": lambda f, c: (f"the loss is infinite: two things go wrong on these logits in "
                                                f"{f['dtype']}: exp overflows unless each row's maximum is subtracted "
                                                "first, and even then a target's probability underflows to 0, whose "
                                                "log is -inf: compute a row's loss as logsumexp(logits) - "
                                                "logits[target], with "
                                                f"the maximum subtracted inside ({c('minus_max', x='logits', axis=-1)}) "
                                                "and added back after the log"),
    "targets_not_int64": lambda f, c: ("the function you called takes class indices only as int64, and these "
                                       "targets are int32: convert them first ("
                                       + {"torch": "targets.long()", "jax": "targets.astype(jnp.int64)"}.get(
                                           c.framework, "targets.astype(np.int64)") + ")"),
    "probability_not_log": lambda f, c: ("looks like the probability of the target was used where the loss takes "
                                         "its negative log: -log(softmax(logits)[target]), averaged over the rows"),
}
