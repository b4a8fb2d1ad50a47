"""The wording of masked_mean_pool's hint ideas (``grader/hints/masked_mean_pool.py``):
dividing by seq_len, the mask ignored, a running sum in a half dtype and its overflow.

``WORDS[idea](facts, code)``: one sentence for the learner's framework (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

from ..dtypes import max_finite

Facts = dict[str, Any]


def _sum_in_float32(code: Any, dtype: str) -> str:
    return (f"sum in float32 ({code('cast', x='embeddings', dtype='float32')}), divide, and round to the input dtype "
            f"once at the end, as the statement says")


WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "divide_by_seq_len": lambda f, c: ("looks like the masked sum was divided by seq_len (every position, padding "
                                       "included) instead of the number of valid tokens of each sequence (the mask's "
                                       "True count)"),
    "divide_by_count_plus_one": lambda f, c: ("looks like the masked sum was divided by the number of valid tokens "
                                              "plus one: divide by the number itself (the mask's True count), and "
                                              "give a sequence with none the zeros the statement asks for instead "
                                              "of adding 1"),
    "divide_by_seq_len_or_count_plus_one": lambda f, c: (
        "looks like the masked sum was divided by seq_len (padding included) or by the number of valid tokens plus "
        "one, which are the same here (one padding position in each sequence): divide by the number of valid "
        "tokens of each sequence (the mask's True count)"),
    "mask_ignored": lambda f, c: "looks like the mask was ignored: the mean is over every position, padding included",
    "half_running_sum": lambda f, c: (f"looks like the sum over seq_len was kept in {f['computed_in']}: its rounding "
                                      f"error grows with the sequence; {_sum_in_float32(c, f['computed_in'])}"),
    "half_sum_rounded": lambda f, c: (f"looks like the sum over seq_len was rounded to {f['computed_in']} before "
                                      f"the division (a sum of {f['computed_in']} values returns {f['computed_in']}): "
                                      f"two roundings where one is allowed; {_sum_in_float32(c, f['computed_in'])}"),
    "half_sum_overflow": lambda f, c: (f"the sum over seq_len passed {f['computed_in']}'s largest number "
                                       f"({max_finite(f['computed_in']):g}) and overflowed to infinity, although the "
                                       f"mean is within its range: {_sum_in_float32(c, f['computed_in'])}"
                                       + ("; and NaN where a sequence has no valid token: a 0/0, where the statement "
                                          "asks for zeros" if f.get("and_empty") else "")),
}
