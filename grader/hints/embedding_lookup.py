"""Hint ideas of ``embedding_lookup(token_ids, embedding_matrix)``: the row of each ID, where
IDs outside ``[0, vocab_size)`` and IDs that are not integers (floats, bools) must raise.

:func:`diagnose_raises` says what is wrong with the inputs of a case that must raise and did not
(a newcomer was told only "these inputs break the function's contract", twice, for four
different reasons): the IDs' dtype, or which ID is out of range and what plain indexing does
with it. Worded without naming a framework: the same mistake is made in each.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import Hint


def diagnose_raises(case: Any, accepted: list[str]) -> Hint | None:
    """The reason the case's inputs must raise (``case.inputs``: ``token_ids`` and
    ``embedding_matrix``; ``accepted``: the exception types that would pass), or None."""
    ids, table = case.inputs.get("token_ids"), case.inputs.get("embedding_matrix")
    if ids is None or table is None or np.ndim(table) != 2:
        return None
    ids = np.asarray(ids)
    vocab = int(np.shape(table)[0])
    raise_what = " or ".join(accepted)
    if ids.dtype == np.bool_:
        return Hint("bool_ids", f"the IDs are bools ({ids.dtype.name}): indexing reads a bool array as a mask and "
                                f"returns the rows where it is True; check that the IDs have an integer dtype and "
                                f"raise {raise_what}", {"dtype": ids.dtype.name})
    if ids.dtype.kind in "fc":
        return Hint("float_ids", f"the IDs are {ids.dtype.name} numbers, not integers, even when they are whole "
                                 f"(converting them with astype would accept them); check that the IDs have an "
                                 f"integer dtype and raise {raise_what}", {"dtype": ids.dtype.name})
    if ids.dtype.kind in "iu" and ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0:
            return Hint("negative_id", f"an ID is negative ({low}): indexing counts it from the end, so it returns "
                                       f"row {vocab + low} instead of failing; check 0 <= id < vocab_size "
                                       f"({vocab} here) and raise {raise_what}", {"id": low, "vocab_size": vocab})
        if high >= vocab:
            return Hint("id_out_of_range", f"an ID is {high}, but the table has {vocab} rows (IDs 0 to {vocab - 1}); "
                                           f"some indexing clamps it to the last row without an error: check "
                                           f"0 <= id < vocab_size and raise {raise_what}",
                        {"id": high, "vocab_size": vocab})
    return None
