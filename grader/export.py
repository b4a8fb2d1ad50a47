"""``grader export``: a gradebook (``grader grade``'s gradebook.csv) in a form an LMS imports.

``grader export canvas GRADEBOOK.csv --roster ROSTER.csv --assignment NAME [--assignment-id ID]``
    Canvas's gradebook import CSV: the columns ``Student``, ``ID``, ``SIS User ID``,
    ``SIS Login ID``, ``Section`` (the identity columns of a Canvas gradebook export, which Canvas
    matches students by), then one assignment column headed ``NAME (ID)`` (an existing
    assignment; ``NAME`` alone makes Canvas create one). A ``Points Possible`` row comes first,
    as in Canvas's own export; then one row per roster student who has a row in the gradebook,
    in roster order, with the learner's score in points. Students without a row are left out
    (so an import never blanks a grade given some other way) and counted in a note on stderr.
    Canvas's import reads a student name or ID or SIS User ID, the SIS Login ID, the Section,
    and assignment columns (a new name creates an assignment; an existing grade is overwritten):
    https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades

``grader export csv GRADEBOOK.csv [--roster ROSTER.csv]``
    A generic LMS CSV (``id``, ``name``, ``score``, ``max_score``, ``percent``, ``passed``,
    ``feedback``), one row per learner: ``id`` is the roster's key value (the learner id
    without a roster), ``feedback`` the gradebook's one-line message.

The roster is a CSV with a header row, e.g. Canvas's gradebook export (``Gradebook > Export``);
its ``Points Possible`` row and rows without the key are skipped. A learner (the gradebook's
``learner``: the submission's file stem or folder name) is matched to the roster row whose
``--key`` column holds the same text, compared without surrounding spaces and ignoring case:
``login`` (the default: ``SIS Login ID``), ``sis`` (``SIS User ID``), ``id`` (``ID``,
Canvas's user id), ``name`` (``Student``) or any other column named exactly. Name the learners'
folders after their SIS login and the default just works.

Every text cell is :func:`grader.reports.common.csv_cell` (one line, no control character,
a ``'`` before a leading ``=``, ``+``, ``-``, ``@``: never a spreadsheet formula).

Exit codes: 0 written and every learner matched; 1 written, but some learners of the
gradebook are not on the roster (each named on stderr, left out); 2 bad input (a missing or
unreadable file, no key column, a key on two roster rows): one ``grader: error:`` line.
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EXIT_FAILED, EXIT_PASSED, GraderError

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
KEYS = {"login": "SIS Login ID", "sis": "SIS User ID", "id": "ID", "name": "Student"}
GENERIC_COLUMNS = ("id", "name", "score", "max_score", "percent", "passed", "feedback")
POINTS_POSSIBLE = "Points Possible"


def add_parser(sub: Any) -> None:
    """Add the ``export`` subcommand (``canvas`` and ``csv``) to the CLI's subparsers ``sub``."""
    export = sub.add_parser(
        "export", help="turn a gradebook.csv into a CSV an LMS imports (Canvas, or a generic one)",
        description="Write a gradebook written by grader grade as a CSV an LMS imports. Exit 0 when every "
                    "learner was matched to the roster, 1 when some were not (named on stderr, left out), "
                    "2 on bad input.")
    targets = export.add_subparsers(dest="target", metavar="FORMAT", required=True)
    canvas = targets.add_parser("canvas", help="Canvas's gradebook import CSV (needs a roster)",
                                description="Canvas's gradebook import CSV: Student, ID, SIS User ID, SIS Login ID, "
                                            "Section, and the assignment column 'NAME (ID)'.")
    generic = targets.add_parser("csv", help="a generic LMS CSV: id, name, score, max_score, percent, passed, "
                                             "feedback")
    for p in (canvas, generic):
        p.add_argument("gradebook", metavar="GRADEBOOK.csv", help="the gradebook.csv written by grader grade")
        p.add_argument("--roster", required=p is canvas, metavar="ROSTER.csv",
                       help="the class list, e.g. Canvas's gradebook export (a CSV with a header row)")
        p.add_argument("--key", default="login", metavar="COLUMN",
                       help="the roster column holding the learner id (a folder or file name): login (SIS Login "
                            "ID, the default), sis (SIS User ID), id (ID), name (Student), or a column's name")
        p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    canvas.add_argument("--assignment", required=True, metavar="NAME", help="the Canvas assignment's name")
    canvas.add_argument("--assignment-id", metavar="ID",
                        help="the Canvas assignment's id (in its URL); without it Canvas creates a new assignment")


@dataclass
class Roster:
    """A class list: its header, its rows (dicts by column), and the key column matched on."""

    columns: list[str]
    rows: list[dict[str, str]]
    key: str

    def match(self, learner: str) -> dict[str, str] | None:
        """The roster row of ``learner``, or None."""
        return self._index.get(_norm(learner))

    def __post_init__(self) -> None:
        self._index: dict[str, dict[str, str]] = {}
        for row in self.rows:
            value = _norm(row.get(self.key) or "")
            if value in self._index:
                raise GraderError(f"the roster has {row.get(self.key)!r} twice in column {self.key!r}; "
                                  "give a key that is unique per student (--key)")
            self._index[value] = row


def _norm(text: str) -> str:
    return text.strip().casefold()


def read_roster(path: str, key: str) -> Roster:
    """The roster at ``path``, keyed on ``key`` (a :data:`KEYS` name or a column's name).

    Raises:
        GraderError: the file cannot be read, is not UTF-8 CSV with a header, has no such column,
            or has a key value twice.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise GraderError(f"cannot read --roster {path!r}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        lines = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise GraderError(f"--roster {path!r} is not CSV: {exc}") from None
    if not lines:
        raise GraderError(f"--roster {path!r} is empty; give a CSV with a header row (e.g. Canvas's gradebook export)")
    columns = [c.strip() for c in lines[0]]
    column = KEYS.get(key, key)
    if column not in columns:
        raise GraderError(f"--roster {path!r} has no column {column!r} (its columns: {', '.join(columns[:8])}); "
                          "pass --key with one of them")
    rows = []
    for cells in lines[1:]:
        row = dict(zip(columns, (c.strip() for c in cells)))
        if not row.get(column) or row.get("Student", "").strip() == POINTS_POSSIBLE:
            continue
        rows.append(row)
    return Roster(columns, rows, column)


def _rows(path: str) -> list[Any]:
    from .batch.gradebook import read_gradebook
    book = Path(path)
    if not book.is_file():
        raise GraderError(f"{path!r} is not a file; give the gradebook.csv written by grader grade")
    return read_gradebook(book)


def _line(cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow(cells)
    return buf.getvalue()


def _unmatched(learners: list[str], roster: Roster) -> None:
    from .reports.common import printable
    for learner in learners:
        sys.stderr.write(printable(f"grader: warning: learner {learner!r} is not on the roster (column "
                                   f"{roster.key!r}); left out of the export", one_line=True) + "\n")


def canvas_csv(rows: list[Any], roster: Roster, assignment: str) -> tuple[str, list[str]]:
    """Canvas's gradebook import CSV of gradebook ``rows`` for the ``roster``; the assignment
    column is headed ``assignment``. Returns the text and the learners not on the roster."""
    from .reports.common import csv_cell, points
    by_student: dict[int, Any] = {}
    unmatched = []
    for r in rows:
        student = roster.match(r.learner)
        if student is None:
            unmatched.append(r.learner)
        elif id(student) in by_student:
            raise GraderError(f"learners {by_student[id(student)].learner!r} and {r.learner!r} both match the "
                              f"roster's {student[roster.key]!r} ({roster.key}); rename one or fix the roster")
        else:
            by_student[id(student)] = r
    top = max((r.max_score for r in rows), default=0.0)
    out = [_line([*CANVAS_COLUMNS, csv_cell(assignment)]),
           _line(["    " + POINTS_POSSIBLE, "", "", "", "", points(top)])]
    for student in roster.rows:
        if (r := by_student.get(id(student))) is not None:
            out.append(_line([csv_cell(student.get(c, "")) for c in CANVAS_COLUMNS] + [points(r.score)]))
    return "".join(out), unmatched


def generic_csv(rows: list[Any], roster: Roster | None) -> tuple[str, list[str]]:
    """The generic LMS CSV (:data:`GENERIC_COLUMNS`) of gradebook ``rows``, with ids from the
    ``roster`` when given. Returns the text and the learners not on the roster."""
    from .reports.common import csv_cell, points
    out = [_line(list(GENERIC_COLUMNS))]
    unmatched = []
    for r in sorted(rows, key=lambda r: r.learner):
        ident, name = r.learner, ""
        if roster is not None:
            student = roster.match(r.learner)
            if student is None:
                unmatched.append(r.learner)
                continue
            ident, name = student[roster.key], student.get("Student", "")
        percent = 100 * r.score / r.max_score if r.max_score else 0.0
        out.append(_line([csv_cell(ident), csv_cell(name), points(r.score), points(r.max_score), f"{percent:.1f}",
                          "true" if r.passed else "false", csv_cell(r.message)]))
    return "".join(out), unmatched


def cmd_export(args: argparse.Namespace) -> int:
    """``grader export canvas|csv``: write the export; 0 if every learner matched, else 1.

    Raises:
        GraderError: bad input (see the module docstring).
    """
    from ._io import write_output
    from .reports.common import printable

    rows = _rows(args.gradebook)
    roster = read_roster(args.roster, args.key) if args.roster else None
    if args.target == "canvas":
        assert roster is not None  # argparse requires --roster
        name = printable(args.assignment, one_line=True).strip()
        if not name:
            raise GraderError("--assignment is empty; give the Canvas assignment's name")
        header = f"{name} ({args.assignment_id.strip()})" if args.assignment_id else name
        text, unmatched = canvas_csv(rows, roster, header)
    else:
        text, unmatched = generic_csv(rows, roster)
    write_output(text, args.out)
    if roster is not None:
        _unmatched(unmatched, roster)
        missing = len(roster.rows) - (len(rows) - len(unmatched))
        if missing > 0 and args.target == "canvas":
            who = f"{missing} roster student{'s have' if missing != 1 else ' has'}"
            sys.stderr.write(f"grader: note: {who} no row in the gradebook "
                             "(left out of the export, so their grades in Canvas stay as they are)\n")
    return EXIT_FAILED if unmatched else EXIT_PASSED


HANDLERS = {"export": cmd_export}
