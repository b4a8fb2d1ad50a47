"""The wording of gelu's hint ideas (``grader/hints/gelu.py``).

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "tanh_approximation": lambda f, c: ("looks like the tanh approximation of GELU (0.5 x (1 + tanh(sqrt(2/pi) (x + "
                                        "0.044715 x**3)))): the exercise asks for the exact one, "
                                        "0.5 * x * (1 + erf(x / sqrt(2)))"),
    "sigmoid_approximation": lambda f, c: ("looks like the sigmoid approximation of GELU (x * sigmoid(1.702 x)): the "
                                           "exercise asks for the exact one, 0.5 * x * (1 + erf(x / sqrt(2)))"),
    "erf_without_sqrt2": lambda f, c: "looks like erf(x) was used where the formula has erf(x / sqrt(2))",
}
