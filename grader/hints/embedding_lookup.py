"""Hint ideas of ``embedding_lookup(token_ids, embedding_matrix)``: the row of each ID, where
IDs outside ``[0, vocab_size)`` and IDs that are not integers (floats, bools) must raise.

:func:`diagnose_raises` says what is wrong with the inputs of a case that must raise and did not
(a newcomer was told only "these inputs break the function's contract", twice, for four
different reasons): the IDs' dtype, or which ID is out of range and what plain indexing does
with it, as facts; ``grader/words/embedding_lookup.py`` words them in the learner's framework.
:func:`diagnose_non_finite` names rows computed from the whole table rather than copied (a
one-hot product's ``0 * inf``), which the case ``special_rows`` shows.
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
    facts = {"dtype": ids.dtype.name, "raise": raise_what}
    if ids.dtype == np.bool_:
        return Hint(idea="bool_ids", facts=facts)
    if ids.dtype.kind in "fc" or ids.dtype.name == "bfloat16":   # ml_dtypes' bfloat16 is of kind "V"
        return Hint(idea="float_ids", facts=facts)
    if ids.dtype.kind in "iu" and ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0:
            return Hint(idea="negative_id", facts={"id": low, "vocab_size": vocab, "raise": raise_what})
        if high >= vocab:
            return Hint(idea="id_out_of_range", facts={"id": high, "vocab_size": vocab, "raise": raise_what})
    return None


def diagnose_non_finite(case: Any, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """``computed_not_copied`` where the output has NaN at a finite expected element while the
    table holds an infinity: the rows were computed from the whole table (a one-hot product, whose
    ``0 * inf`` is NaN), not copied (a newcomer's one-hot lookup passed until a table held one)."""
    table = case.inputs.get("embedding_matrix")
    if table is None:
        return None
    with np.errstate(invalid="ignore"):
        wide = np.asarray(table).astype(np.float64)
        if not np.isinf(wide).any():
            return None
        if got.shape != ref.shape or not np.any(np.isnan(got) & np.isfinite(ref)):
            return None
    return Hint(idea="computed_not_copied")
