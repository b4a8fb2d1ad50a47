"""The id of a case group's row in a learner's feedback page, which summary.html's grid links to
(a module of its own: the feedback page must not import the class view's charts)."""
from __future__ import annotations

import re


def anchor(name: str) -> str:
    """``group-`` and the group's (or problem's) name, other characters than letters, digits,
    ``_`` and ``-`` as ``-``: ``"tied_lm_head/examples"`` -> ``group-tied_lm_head-examples``."""
    return "group-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)
