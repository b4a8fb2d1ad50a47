"""The wording of embedding_lookup's hint ideas (``grader/hints/embedding_lookup.py``): what is
wrong with the inputs of a case that must raise and did not (bool or float IDs, a negative ID, an
ID past the table), in the learner's framework's code (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]


def _own(f: Facts, c: Any) -> str:
    """For a PyTorch learner whose code raised RuntimeError on bool or float IDs: where it came
    from (a newcomer's ``F.embedding`` lost a point for torch's own refusal and was not told)."""
    if f.get("raised") == "RuntimeError" and getattr(c, "framework", None) == "torch":
        return (" (torch's own indexing and F.embedding refuse such IDs with RuntimeError, which the "
                "statement does not accept: check token_ids.dtype before the lookup)")
    return ""

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    # what the learner's code did with them is not known here: both common readings are named (a
    # newcomer who cast them with .astype(np.int64) was told indexing had read them as a mask)
    "bool_ids": lambda f, c: (f"the IDs are bools ({f['dtype']}), not token IDs: check that the IDs have an integer "
                              f"dtype and raise {f['raise']}, not {f['raised']}{_own(f, c)}" if f.get("raised") else
                              f"the IDs are bools ({f['dtype']}), not token IDs: indexing with them selects the rows "
                              f"where they are True, and converting them with {c('to_int')} reads True as ID 1; "
                              f"check that the IDs have an integer dtype and raise {f['raise']}"),
    "float_ids": lambda f, c: (f"the IDs are {f['dtype']} numbers, not integers: check that the IDs have an integer "
                               f"dtype and raise {f['raise']}, not {f['raised']}{_own(f, c)}" if f.get("raised") else
                               f"the IDs are {f['dtype']} numbers, not integers, even when they are whole "
                               f"(converting them with {c('to_int')} would accept them); check that the IDs have an "
                               f"integer dtype and raise {f['raise']}"),
    "computed_not_copied": lambda f, c: ("NaN where the expected row is finite, and the table holds an infinity: the "
                                         "rows were computed from the whole table (a product with one-hot rows, where "
                                         "0 * inf is NaN), not copied: select the rows by indexing the table with "
                                         "the IDs"),
    "negative_id": lambda f, c: (f"an ID is negative ({f['id']}), which must be refused: raise {f['raise']}, not "
                                 f"{f['raised']}" if f.get("raised") else
                                 f"an ID is negative ({f['id']}): indexing counts it from the end, so it returns row "
                                 f"{f['vocab_size'] + f['id']} instead of failing; check 0 <= id < vocab_size "
                                 f"({f['vocab_size']} here) and raise {f['raise']}"),
    "id_out_of_range": lambda f, c: (f"an ID is {f['id']}, past the table's {f['vocab_size']} rows, which must be "
                                     f"refused: raise {f['raise']}, not {f['raised']}" if f.get("raised") else
                                     f"an ID is {f['id']}, but the table has {f['vocab_size']} rows (IDs 0 to "
                                     f"{f['vocab_size'] - 1}); some indexing returns something for it instead of an "
                                     f"error (clamped to the last row, or filled with NaN): check 0 <= id < "
                                     f"vocab_size and raise {f['raise']}"),
}
