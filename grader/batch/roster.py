"""``grader grade --roster`` (issue 37): every learner of the class list gets a row.

:func:`with_roster` adds a row for each learner of the roster of whom nothing was found
(:data:`NO_SUBMISSION`) and names those graded who are not on it.
"""
from __future__ import annotations

import sys

from .discovery import Submission


#: the note of a learner on the roster of whom nothing was found
# (an instructor read the old wording, "nothing was found for this learner on the roster", as
# "this learner is not on the roster"; it reaches the learner's feedback and Moodle's column)
NO_SUBMISSION = "no submission: nothing was found in the class folder for this learner"


def with_roster(subs: list[Submission], path: str, key: str | None) -> tuple[list[Submission], list[str]]:
    """``subs`` with a row for every learner of the roster at ``path``: each roster learner
    nothing was found for is added (no file, :data:`NO_SUBMISSION`); each submission of a learner
    not on the roster is kept and named in one warning line on stderr (issue 37: a learner who
    submitted nothing vanished from the gradebook and every export). Also returns the learners
    not on the roster, in ``subs``' order (``submitted.json`` records them for summary.html).

    Raises:
        GraderError: the roster cannot be read, or has no id column (``key``, else one of
            :data:`grader.export.ROSTER_KEYS`, as every export guesses).
    """
    from ..export import read_roster
    from ..reports.common import printable
    roster = read_roster(path, key)
    found = {}
    strangers = []
    for sub in subs:
        row = roster.match(sub.learner)
        if row is None:
            strangers.append(sub.learner)
        else:
            found[id(row)] = sub
    if strangers:
        shown = ", ".join(strangers[:10]) + (f" and {len(strangers) - 10} more" if len(strangers) > 10 else "")
        sys.stderr.write(printable(f"grader: warning: {len(strangers)} submission{'s are' if len(strangers) != 1 else ' is'} "
                                   f"of learners not on the roster (column {roster.key!r}), graded all the same: "
                                   f"{shown}", one_line=True) + "\n")
    missing = [Submission(learner=row[roster.key], path=None, note=NO_SUBMISSION, missing=True)
               for row in roster.rows if id(row) not in found]
    return subs + missing, strangers
