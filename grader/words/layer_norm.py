"""The wording of layer_norm's hint ideas (``grader/hints/layer_norm.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "unbiased_variance": lambda f, c: ("looks like the variance was divided by d - 1 (the unbiased estimate, "
                                       f"{c('ddof1')}) instead of by d: layer norm uses the mean of the squared "
                                       "deviations over the last axis"),
    "eps_outside_sqrt": lambda f, c: "looks like eps was added after the square root: divide by sqrt(var + eps)",
    "gamma_ignored": lambda f, c: "looks like gamma was left out: multiply the normalised values by gamma",
    "beta_ignored": lambda f, c: "looks like beta was left out: add beta after scaling by gamma",
    "no_eps": lambda f, c: ("looks like eps was left out: divide by sqrt(var + eps), not sqrt(var)"
                            + (" (a row whose values are all equal has variance 0: without eps it gives 0/0)"
                               if f.get("where") == "constant_rows" else "")),
    "zero_variance_rows": lambda f, c: ("NaN on rows of one value (d = 1): their variance is 0, and dividing by "
                                        f"sqrt(var) without eps, or by d - 1 = 0 ({c('ddof1')}), gives 0/0; divide "
                                        "the squared deviations by d, and add eps inside the square root"),
    "eps_ignored": lambda f, c: (f"looks like a fixed eps of {f['eps']:g} was used instead of the eps argument: "
                                 "use the eps the call gives"),
    "wrong_axis": lambda f, c: (f"looks like the mean and variance were taken along axis {f['axis_used']} instead "
                                f"of the last axis ({c('reduce_axis', axis=-1)})"),
    "no_centring": lambda f, c: ("looks like the mean was not subtracted: normalise x - mean(x) by the standard "
                                 "deviation, not x by its root mean square"),
}
