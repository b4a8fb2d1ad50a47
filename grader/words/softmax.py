"""The wording of softmax's hint ideas (``grader/hints/softmax.py``): the wrong axis, the whole
array, and exp without the max shift.

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

from .generic import EXP_OVERFLOW

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "wrong_axis": lambda f, c: (f"looks like the softmax was taken along axis {f['axis_used']} instead of "
                                f"axis={f['axis']}: normalise along the axis the call gives "
                                f"(every reduction with {c('reduce_axis', axis='axis')})"),
    "whole_array": lambda f, c: ("looks like the softmax was taken over the whole array (every entry sums to 1 "
                                 "together) instead of along the axis: reduce along it "
                                 f"({c('reduce_axis', axis='axis')}, keeping that axis)"),
    "no_max_shift": lambda f, c: (f"{EXP_OVERFLOW}, and inf / inf is NaN; subtract each slice's maximum first "
                                  f"({c('minus_max', x='logits', axis='axis')}), which leaves the softmax unchanged"),
}
