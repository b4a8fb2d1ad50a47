"""The wording of embedding_lookup's hint ideas (``grader/hints/embedding_lookup.py``): what is
wrong with the inputs of a case that must raise and did not (bool or float IDs, a negative ID, an
ID past the table), in the learner's framework's code (:class:`grader.words.Code`).
"""
from __future__ import annotations

from typing import Any, Callable

Facts = dict[str, Any]

WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "bool_ids": lambda f, c: (f"the IDs are bools ({f['dtype']}): indexing reads a bool array as a mask and returns "
                              f"the rows where it is True; check that the IDs have an integer dtype and raise "
                              f"{f['raise']}" + (f", not {f['raised']}" if f.get("raised") else "")),
    "float_ids": lambda f, c: (f"the IDs are {f['dtype']} numbers, not integers, even when they are whole "
                               f"(converting them with {c('to_int')} would accept them); check that the IDs have an "
                               f"integer dtype and raise {f['raise']}" + (f", not {f['raised']}" if f.get("raised") else "")),
    "negative_id": lambda f, c: (f"an ID is negative ({f['id']}), which must be refused: raise {f['raise']}, not "
                                 f"{f['raised']}" if f.get("raised") else
                                 f"an ID is negative ({f['id']}): indexing counts it from the end, so it returns row "
                                 f"{f['vocab_size'] + f['id']} instead of failing; check 0 <= id < vocab_size "
                                 f"({f['vocab_size']} here) and raise {f['raise']}"),
    "id_out_of_range": lambda f, c: (f"an ID is {f['id']}, past the table's {f['vocab_size']} rows, which must be "
                                     f"refused: raise {f['raise']}, not {f['raised']}" if f.get("raised") else
                                     f"an ID is {f['id']}, but the table has {f['vocab_size']} rows (IDs 0 to "
                                     f"{f['vocab_size'] - 1}); some indexing clamps it to the last row without an "
                                     f"error: check 0 <= id < vocab_size and raise {f['raise']}"),
}
