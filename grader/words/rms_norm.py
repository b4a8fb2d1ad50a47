"""The wording of rms_norm's hint ideas (``grader/hints/rms_norm.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

from . import layer_norm as _layer_norm

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "no_eps": lambda f, c: ("looks like eps was left out: divide by sqrt(mean(x**2) + eps), not sqrt(mean(x**2))"
                            + (" (a row of zeros has mean(x**2) = 0: without eps it gives 0/0)"
                               if f.get("where") == "zero_rows" else "")),
    "eps_outside_sqrt": lambda f, c: "looks like eps was added after the square root: divide by sqrt(mean(x**2) + eps)",
    "weight_ignored": lambda f, c: "looks like weight was left out: multiply the normalised values by weight",
    "centred": lambda f, c: ("looks like the mean was subtracted first (a layer norm): RMS norm divides x itself by "
                             "the root mean square, without centring"),
    "wrong_axis": lambda f, c: (f"looks like the mean of the squares was taken along axis {f['axis_used']} instead "
                                f"of the last axis ({c('reduce_axis', axis=-1)})"),
    "whole_array": lambda f, c: ("looks like the mean of the squares was taken over the whole array instead of "
                                 f"along the last axis ({c('reduce_axis', axis=-1)})"),
    "eps_ignored": _layer_norm.WORDS["eps_ignored"],
    "square_overflow": lambda f, c: ("x**2 overflowed in float16 (above about 256 it passes 65504, float16's largest "
                                     "number) and the row became 0: square in float32 "
                                     f"({c('cast', x='x', dtype='float32')}) and round once at the end"),
}
