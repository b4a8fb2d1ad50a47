"""``grader export``: a gradebook (``grader grade``'s gradebook.csv) in a form an LMS imports
(Canvas, Moodle, Blackboard Learn, or a generic CSV).

``grader export canvas GRADEBOOK.csv --roster ROSTER.csv --assignment NAME [--assignment-id ID]``
    Canvas's gradebook import CSV: the columns ``Student``, ``ID``, ``SIS User ID``,
    ``SIS Login ID``, ``Section`` (the identity columns of a Canvas gradebook export, which Canvas
    matches students by), then one assignment column headed ``NAME (ID)`` (an existing
    assignment; ``NAME`` alone: one titled exactly that, else Canvas creates one). A ``Points Possible`` row comes first,
    as in Canvas's own export; then one row per roster student who has a row in the gradebook,
    in roster order, with the learner's score in points. A roster with none of ``Student``,
    ``ID``, ``SIS User ID``, ``SIS Login ID`` is bad input (Canvas could match no row). Students without a row are left out
    (so an import never blanks a grade given some other way) and counted in a note on stderr.
    Canvas's import reads a student name or ID or SIS User ID, the SIS Login ID, the Section,
    and assignment columns (a new name creates an assignment; an existing grade is overwritten):
    https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
    Canvas's importer (``GradebookImporter#parse_assignments``) takes the assignment by the id in
    ``NAME (ID)``, else by a title equal to the whole header, else creates one; and it sets the
    assignment's points possible from the ``Points Possible`` row (``process_pp``). So the column
    is given the id of the roster's column of that title when ``--assignment-id`` is not given
    (two such columns: bad input), and the scores are scaled to the points the roster's
    ``Points Possible`` row gives that column, or to ``--points N``; when both are known and differ,
    a warning says the import would change the assignment's points possible.

``grader export moodle GRADEBOOK.csv [--roster ROSTER.csv] --assignment NAME``
    A CSV for Moodle's "Import grades from CSV file" (Grades > Import > CSV file), whose form maps
    one column to a user field ("Identify user by": email address, username, ID number) and each
    other column to a grade item or its feedback: the roster's identity columns as Moodle's own
    "Export to plain text file" heads them (``First name``, ``Last name``, ``ID number``,
    ``Email address``, those the roster has; without a roster, ``Username`` = the learner id),
    then ``NAME`` (the score in points) and ``Feedback`` (the gradebook's one-line message).
    https://docs.moodle.org/en/Grade_import

``grader export blackboard GRADEBOOK.csv [--roster ROSTER.csv] --assignment NAME [--assignment-id ID]``
    Blackboard Learn's Grade Center upload (Work Offline > Upload), comma-delimited with every
    cell quoted as its upload requires: ``Last Name``, ``First Name``, ``Username`` (the key
    Blackboard matches students by), ``Student ID``, then ``NAME [Total Pts: N Score] |ID`` for an
    existing column (its Column ID, from a Grade Center download) or ``NAME`` for a new one (which
    Blackboard creates as a text column of 0 points possible).
    http://library.blackboard.com/ref/3ea64795-6ecc-4abd-b595-0a9a8dfdec94/Content/_instructor_grade_center/grade_center_upload_download.htm

Scores are in points out of the gradebook's ``max_score``, or scaled to ``--points N``
(``score / max_score * N``, 4 decimals) for an LMS assignment worth N points.

``grader export csv GRADEBOOK.csv [--roster ROSTER.csv]``
    A generic LMS CSV (``id``, ``name``, ``score``, ``max_score``, ``percent``, ``passed``, then
    for an assignment's gradebook each problem's points, then ``feedback``), one row per learner:
    ``id`` is the roster's key value (the learner id without a roster), ``name`` the roster's
    name of the student (its ``Student``, ``name``, ``Name`` or ``Full name`` column, else its
    first and last name columns; empty without a roster), ``feedback`` the gradebook's one-line
    message.

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
unreadable file, no key column, a key on two roster rows, no learner of the gradebook on the
roster: then nothing is written): one ``grader: error:`` line.
"""
from __future__ import annotations

import argparse
import codecs
import csv
import io
import math
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EXIT_FAILED, EXIT_PASSED, GraderError

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
KEYS = {"login": "SIS Login ID", "sis": "SIS User ID", "id": "ID", "name": "Student",
        "email": "Email address", "idnumber": "ID number", "username": "Username"}
#: the default --key of each target: the column its LMS matches students by
DEFAULT_KEY = {"canvas": "login", "csv": "login", "moodle": "email", "blackboard": "username"}
MOODLE_COLUMNS = ("First name", "Last name", "ID number", "Email address")
BLACKBOARD_COLUMNS = ("Last Name", "First Name", "Username", "Student ID")
_TITLE_AND_ID = re.compile(r"^(.*?)\s*\((\d+)\)\s*$")  # Canvas's "NAME (ID)" header
#: Blackboard's Grade Center column header: "NAME [Total Pts: N KIND] |ID"
_BB_COLUMN = re.compile(r"^(.*?)\s*\[Total Pts:\s*([0-9.]+)[^\]]*\]\s*\|\s*(\d+)\s*$")
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
    moodle = targets.add_parser("moodle", help="Moodle's grade import CSV (identity columns, the grade, Feedback)",
                                description="A CSV for Moodle's Import grades from CSV file: the roster's First "
                                            "name, Last name, ID number, Email address (or Username without a "
                                            "roster), the grade column NAME and Feedback.")
    blackboard = targets.add_parser("blackboard", help="Blackboard Learn's Grade Center upload CSV",
                                    description="Blackboard's Grade Center upload: Last Name, First Name, "
                                                "Username, Student ID and 'NAME [Total Pts: N Score] |ID'.")
    for p in (canvas, generic, moodle, blackboard):
        p.add_argument("gradebook", metavar="GRADEBOOK.csv", help="the gradebook.csv written by grader grade")
        p.add_argument("--roster", required=p is canvas, metavar="ROSTER.csv",
                       help="the class list, e.g. Canvas's gradebook export (a CSV with a header row)")
        target = {canvas: "canvas", generic: "csv", moodle: "moodle", blackboard: "blackboard"}[p]
        p.add_argument("--key", default=None, metavar="COLUMN",
                       help="the roster column holding the learner id (a folder or file name): login (SIS Login "
                            "ID), sis (SIS User ID), id (ID), name (Student), email (Email address), idnumber "
                            f"(ID number), username (Username), or a column's name; default: {DEFAULT_KEY[target]}, "
                            "else the first of the id columns grader grade --roster looks for")
        # --output as grader check names it (an instructor's export --output exited 2)
        p.add_argument("--out", "--output", dest="out", metavar="FILE", help="write to FILE instead of stdout")
        p.add_argument("--points", type=_positive, metavar="N",
                       help="scale each score to N points (score / max_score * N), for an LMS assignment worth N")
    for p in (canvas, moodle, blackboard):
        p.add_argument("--assignment", required=True, metavar="NAME", help="the LMS assignment's (grade item's) name")
    canvas.add_argument("--assignment-id", metavar="ID",
                        help="the Canvas assignment's id (in its URL); without it, the id of the roster's column "
                             "titled NAME, else Canvas matches an assignment titled NAME or creates one")
    blackboard.add_argument("--assignment-id", metavar="ID",
                            help="the Grade Center column's id (after '|' in a download's header); without it "
                                 "Blackboard creates a new column")


def _positive(text: str) -> float:
    """argparse type of ``--points``: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of points above 0")
    return value


@dataclass
class Roster:
    """A class list: its header, its rows (dicts by column), and the key column matched on."""

    columns: list[str]
    rows: list[dict[str, str]]
    key: str
    points_possible: dict[str, str] | None = None  # Canvas's "Points Possible" row, by column

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


#: the roster columns that hold learner ids, in the order a key is guessed when none is given
#: (``grader grade --roster`` and ``grader export`` guess alike)
ROSTER_KEYS = ("SIS Login ID", "Username", "Email address", "ID number", "ID", "id", "learner")


def guess_key(path: str, columns: list[str], preferred: str | None = None) -> str:
    """The id column of the roster at ``path`` (whose header is ``columns``) when ``--key`` is
    not given: ``preferred`` (a :data:`KEYS` name, the export format's own) when the header has
    it, else the first of :data:`ROSTER_KEYS` it has (so ``grade`` and every export match
    learners on the same column).

    Raises:
        GraderError: the header has none of those columns.
    """
    if preferred is not None and KEYS.get(preferred, preferred) in columns:
        return KEYS.get(preferred, preferred)
    key = next((c for c in ROSTER_KEYS if c in columns), None)
    if key is None:
        raise GraderError(f"--roster {path!r} has none of the id columns {', '.join(ROSTER_KEYS)} (its columns: "
                          f"{', '.join(columns[:8])}); pass --key with the one that holds the learner ids")
    return key


def _delimiter(header: str) -> str:
    """The delimiter of a roster whose first line is ``header``: of comma, tab and semicolon, the
    one that splits it (as :mod:`csv` reads it, quotes respected) into the most columns; a comma
    on a tie. ``csv.Sniffer`` chose the comma whenever one appeared, so a tab-separated Grade
    Center download with a column ``Lab 3, part 1`` was refused (a format consumer's read)."""
    def width(delimiter: str) -> int:
        try:
            return len(next(csv.reader([header], delimiter=delimiter), []))
        except csv.Error:
            return 0
    return max((",", "\t", ";"), key=width)   # max keeps the first of equals: the comma


def read_roster(path: str, key: str | None, preferred: str | None = None) -> Roster:
    """The roster at ``path``, keyed on ``key`` (a :data:`KEYS` name or a column's name; None:
    :func:`guess_key` with ``preferred``).

    Raises:
        GraderError: the file cannot be read, is not CSV (UTF-8, or UTF-16 with a byte-order
            mark; commas, tabs or semicolons) with a header, has no such column (or none to
            guess), or has a key value twice.
    """
    try:
        raw = Path(path).read_bytes()
        # Blackboard's Grade Center download is UTF-16 with a byte-order mark and tab-separated
        # (its default; a newcomer's roster was refused as "not UTF-8"); Canvas and Moodle write
        # UTF-8, perhaps with a BOM
        text = raw.decode("utf-16") if raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) \
            else raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise GraderError(f"cannot read --roster {path!r}: {getattr(exc, 'strerror', None) or exc}") from None
    delimiter = _delimiter(text.partition("\n")[0])
    try:
        lines = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error as exc:
        raise GraderError(f"--roster {path!r} is not CSV: {exc}") from None
    if not lines:
        raise GraderError(f"--roster {path!r} is empty; give a CSV with a header row (e.g. Canvas's gradebook export)")
    columns = [c.strip() for c in lines[0]]
    twice = sorted({c for c in columns if c and columns.count(c) > 1})
    if twice:  # which of two "Username" columns is the student's? refuse to guess
        raise GraderError(f"--roster {path!r} has the column {twice[0]!r} twice; keep one")
    if key is None:
        key = guess_key(path, columns, preferred)
    # a column named as given wins over the alias (a roster whose column is "username" or "id")
    column = key if key in columns else KEYS.get(key, key)
    if column not in columns:
        raise GraderError(f"--roster {path!r} has no column {column!r} (its columns: {', '.join(columns[:8])}); "
                          "pass --key with one of them")
    rows, possible = [], None
    for cells in lines[1:]:
        row = dict(zip(columns, (c.strip() for c in cells)))
        if row.get("Student", "").strip() == POINTS_POSSIBLE:
            possible = possible or row
            continue
        if row.get(column):
            rows.append(row)
    return Roster(columns, rows, column, possible)


def canvas_column(roster: Roster, name: str, ident: str | None) -> tuple[str | None, float | None]:
    """The id and points possible of the roster's assignment column for ``name`` (or of id
    ``ident``): the column headed ``NAME (ID)`` of that id, else the one whose title is ``name``
    (compared as Canvas does, exactly, and also ignoring case and spaces). (None, None) when the
    roster has no such column; points None when its Points Possible cell is not a number.

    Raises:
        GraderError: two columns have that title and no ``ident`` says which.
    """
    found = _columns(roster, _TITLE_AND_ID, name, ident, "assignments")
    if not found:
        return None, None
    col, m = found[0]
    return m[2], _possible((roster.points_possible or {}).get(col, ""))


def _columns(roster: Roster | None, pattern: re.Pattern[str], name: str, ident: str | None,
             what: str) -> list[tuple[str, re.Match[str]]]:
    """The roster's columns whose header ``pattern`` matches with title ``name`` (its group 1,
    compared as the LMSs do, ignoring case and spaces) or, given ``ident``, with that id (its
    last group): ``(header, match)``, at most one.

    Raises:
        GraderError: two columns match and no ``ident`` says which.
    """
    found = []
    for col in (roster.columns if roster is not None else ()):
        m = pattern.match(col)
        if m and ((ident is not None and m[m.re.groups] == ident) or (ident is None and _norm(m[1]) == _norm(name))):
            found.append((col, m))
    if len(found) > 1:
        raise GraderError(f"the roster has {len(found)} {what} titled {name!r} "
                          f"({', '.join(c for c, _ in found)}); say which with --assignment-id")
    return found


def _possible(text: str) -> float | None:
    """A points-possible cell as a positive finite number, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def blackboard_column(roster: Roster | None, name: str, ident: str | None) -> tuple[str | None, float | None]:
    """The id and points possible of the Grade Center download's column for ``name`` (or of id
    ``ident``): the column headed ``NAME [Total Pts: N Score] |ID``. (None, None) when there is
    no roster or no such column.

    Raises:
        GraderError: two columns have that title and no ``ident`` says which.
    """
    found = _columns(roster, _BB_COLUMN, name, ident, "Grade Center columns")
    if not found:
        return None, None
    _, m = found[0]
    return m[3], _possible(m[2])


def scaled(score: float, max_score: float, points: float | None) -> float:
    """``score`` out of ``max_score`` as points out of ``points`` (None: unscaled), to 4 decimals
    less one for each power of ten the scaling multiplies by: the gradebook's scores are rounded
    to 4 decimals, and a scaled digit beyond what they carry is noise (2/3 of a point, 0.6667 in
    the gradebook, scaled by 2 was 1.3334 in an export: now 1.333)."""
    if points is None:
        return score
    if not max_score:
        return 0.0
    factor = points / max_score
    lost = max(0, math.ceil(math.log10(factor))) if factor > 0 else 0
    return round(score * factor, max(0, 4 - lost))


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
    """Name each learner not on the roster on stderr; when another column of the roster holds at
    least half of their ids, say so, with the ``--key`` that matches on it (a newcomer's Moodle
    roster: its email column, the default, matched none of 8 learners named by ID number, and
    nothing pointed at ``--key idnumber``)."""
    from .reports.common import printable
    for learner in learners:
        sys.stderr.write(printable(f"grader: warning: learner {learner!r} is not on the roster (column "
                                   f"{roster.key!r}); left out of the export", one_line=True) + "\n")
    better = _better_key(learners, roster)
    if better is not None:
        column, count = better
        alias = next((k for k, v in KEYS.items() if v == column), column)
        sys.stderr.write(printable(f"grader: note: the roster's column {column!r} holds {count} of these "
                                   f"{len(learners)} ids: --key {shlex.quote(alias)} matches learners on it",
                                   one_line=True) + "\n")


def _better_key(learners: list[str], roster: Roster) -> tuple[str, int] | None:
    """The roster column other than its key that holds the most of ``learners`` (compared as
    :meth:`Roster.match` does) and how many, when that is at least half of them; else None. An
    id column (:data:`KEYS`, :data:`ROSTER_KEYS`) wins a tie: a first name may equal a login."""
    wanted = {_norm(name) for name in learners}
    ids = set(KEYS.values()) | set(ROSTER_KEYS)
    best: tuple[tuple[int, bool], str] | None = None
    for column in roster.columns:
        if not column or column == roster.key:
            continue
        count = len(wanted & {_norm(row.get(column) or "") for row in roster.rows})
        rank = (count, column in ids)
        if 2 * count >= len(wanted) > 0 and (best is None or rank > best[0]):
            best = (rank, column)
    return (best[1], best[0][0]) if best is not None else None


def _distinct(rows: list[Any]) -> None:
    """Refuse learner ids that an LMS may take for one student (equal after trimming spaces and
    case folding: ``alice`` and ``alice `` or ``ALICE``, a learner's own folder or file name).

    Raises:
        GraderError: two such ids, both named.
    """
    seen: dict[str, str] = {}
    for r in rows:
        other = seen.setdefault(_norm(r.learner), r.learner)
        if other != r.learner:
            raise GraderError(f"learners {other!r} and {r.learner!r} differ only in case or spaces, and an LMS may "
                              "take both for one student; rename one, or give --roster")


def _matched(rows: list[Any], roster: Roster) -> tuple[dict[int, Any], list[str]]:
    """Each roster student's gradebook row (by ``id`` of the roster row) and the learners not on
    the roster.

    Raises:
        GraderError: two learners match one student.
    """
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
    return by_student, unmatched


def canvas_csv(rows: list[Any], roster: Roster, assignment: str,
               points: float | None = None) -> tuple[str, list[str]]:
    """Canvas's gradebook import CSV of gradebook ``rows`` for the ``roster``; the assignment
    column is headed ``assignment``, scores scaled to ``points`` (None: the gradebook's points).
    Returns the text and the learners not on the roster."""
    from .reports.common import csv_cell, points as fmt
    by_student, unmatched = _matched(rows, roster)
    top = points if points is not None else max((r.max_score for r in rows), default=0.0)
    out = [_line([*CANVAS_COLUMNS, csv_cell(assignment)]),
           _line(["    " + POINTS_POSSIBLE, "", "", "", "", fmt(top)])]
    for student in roster.rows:
        if (r := by_student.get(id(student))) is not None:
            out.append(_line([csv_cell(student.get(c, "")) for c in CANVAS_COLUMNS]
                             + [fmt(scaled(r.score, r.max_score, points))]))
    return "".join(out), unmatched


def escaped_keys(text: str, roster: Roster | None) -> list[str]:
    """The roster key values the export had to write with a leading ``'`` (they start like a
    spreadsheet formula: ``=``, ``+``, ``-``, ``@``): the LMS will not match those students, so
    the instructor is told (:func:`cmd_export`)."""
    from .reports.common import csv_cell
    if roster is None:
        return []
    return [row[roster.key] for row in roster.rows if csv_cell(row[roster.key]) != row[roster.key]
            and csv_cell(row[roster.key]) in text]


def _identity(rows: list[Any], roster: Roster | None, columns: tuple[str, ...],
              bare: str, php: bool = False) -> tuple[list[str], list[tuple[list[str], Any]], list[str]]:
    """The identity columns an LMS matches by (those of ``columns`` the roster has, else one
    column ``bare`` holding the learner id) and, per learner in roster order (learner order
    without a roster), its identity cells and gradebook row; and the learners not on the roster.

    ``php``: the file is read by PHP's ``fgetcsv`` (Moodle), whose escape character is ``\\``:
    a cell ending in a backslash keeps its field open over the rows after it (round
    twenty-eight of issue 32: a learner's own last name ``Evil,\\`` in Moodle's participant
    export dropped every later learner's grade). A backslash in a cell that only names the
    learner is written as U+29F5 (:func:`_php_safe`, it looks the same); a learner whose
    matching id holds one cannot be written safely and is left out, named on stderr.
    """
    from .reports.common import csv_cell, printable
    if roster is None:
        _distinct(rows)
        head, key = [bare], bare
        students = [({bare: r.learner}, r) for r in sorted(rows, key=lambda r: r.learner)]
        unmatched: list[str] = []
    else:
        by_student, unmatched = _matched(rows, roster)
        head = [c for c in columns if c in roster.columns] or [roster.key]
        key = roster.key
        students = [(s, by_student[id(s)]) for s in roster.rows if id(s) in by_student]
    out = []
    for student, r in students:
        if php and "\\" in (student.get(key) or ""):
            sys.stderr.write(printable(f"grader: warning: learner {r.learner!r}'s {key} holds a backslash, which "
                                       "Moodle's importer reads as an escape: left out of the export (enter their "
                                       "grade by hand)", one_line=True) + "\n")
            continue
        out.append(([csv_cell(_php_safe(student.get(c, "")) if php and c != key else student.get(c, "") or "")
                     for c in head], r))
    return head, out, unmatched


def _php_safe(text: str) -> str:
    """``text`` with each backslash written as U+29F5 (it looks the same), for a cell that only
    names a learner in a file PHP's ``fgetcsv`` reads (:func:`_identity`, :func:`_feedback`)."""
    return text.replace("\\", "\u29f5")


def _feedback(row: Any) -> str:
    """A gradebook row's message as an LMS hands it to the learner: files named relative to
    their folder and no path of the grading machine (``grader.reports.view.learner_paths``;
    a gradebook written by an older grader, or merged from Slurm shards, may name the class
    folder). A backslash is written as U+29F5 (it looks the same): PHP's ``fgetcsv``, which
    Moodle's import uses, takes ``\\`` as an escape, so a message ending ``you \\`` kept the
    field open over every later row (round eighteen of issue 32: alice's feedback held the
    others' names, emails and grades, theirs were not imported)."""
    from .reports.view import learner_paths
    return _php_safe(learner_paths(row.message, row.submission, by_name=True))


def moodle_csv(rows: list[Any], roster: Roster | None, assignment: str,
               points: float | None = None) -> tuple[str, list[str]]:
    """Moodle's grade import CSV of gradebook ``rows``: identity columns (:data:`MOODLE_COLUMNS`
    the roster has and the roster's key column, else ``Username``), the grade column ``assignment`` (scores scaled to
    ``points``) and ``Feedback``. Returns the text and the learners not on the roster."""
    from .reports.common import csv_cell, points as fmt
    # the roster column the learners were matched by is a field Moodle can identify them by too
    # (an instructor's --key Username export had no Username column)
    columns = MOODLE_COLUMNS + ((roster.key,) if roster is not None and roster.key not in MOODLE_COLUMNS else ())
    head, learners, unmatched = _identity(rows, roster, columns, "Username", php=True)
    out = [_line([*head, csv_cell(assignment), "Feedback"])]
    out += [_line([*cells, fmt(scaled(r.score, r.max_score, points)), csv_cell(_feedback(r))]) for cells, r in learners]
    return "".join(out), unmatched


def blackboard_csv(rows: list[Any], roster: Roster | None, assignment: str, column_id: str | None,
                   points: float | None = None) -> tuple[str, list[str]]:
    """Blackboard's Grade Center upload CSV of gradebook ``rows`` (every cell quoted): identity
    columns (:data:`BLACKBOARD_COLUMNS` the roster has, else ``Username``) and the grade column,
    ``NAME [Total Pts: N Score] |ID`` for an existing column ``column_id``, else ``NAME``.
    Returns the text and the learners not on the roster."""
    from .reports.common import csv_cell, points as fmt
    head, learners, unmatched = _identity(rows, roster, BLACKBOARD_COLUMNS, "Username")
    if roster is not None and "Username" not in head:
        raise GraderError("Blackboard matches students by Username: give a roster with a Username column "
                          "(a Grade Center download) or none (the learner ids are then the usernames)")
    top = points if points is not None else max((r.max_score for r in rows), default=0.0)
    title = f"{assignment} [Total Pts: {fmt(top)} Score] |{column_id}" if column_id else assignment
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    w.writerow([*head, csv_cell(title)])
    for cells, r in learners:
        w.writerow([*cells, fmt(scaled(r.score, r.max_score, points))])
    return buf.getvalue(), unmatched


def generic_csv(rows: list[Any], roster: Roster | None, scale: float | None = None) -> tuple[str, list[str]]:
    """The generic LMS CSV (:data:`GENERIC_COLUMNS`) of gradebook ``rows``, with ids from the
    ``roster`` when given, scores scaled to ``scale`` points. Returns the text and the learners not on
    the roster."""
    from .batch.gradebook import columns_of
    from .reports.common import csv_cell, points
    problems = columns_of(rows)  # an assignment's per-problem points, before feedback (as scaled)
    head = [*GENERIC_COLUMNS[:-1], *(csv_cell(p) if p not in GENERIC_COLUMNS else f"problem:{p}" for p in problems),
            GENERIC_COLUMNS[-1]]
    out = [_line(head)]
    unmatched = []
    if roster is None:
        _distinct(rows)
    else:   # two learners matching one student (``alice`` and ``alice ``) is refused, as for Canvas
        by_student, unmatched = _matched(rows, roster)
        rows = list(by_student.values())
    for r in sorted(rows, key=lambda r: r.learner):
        ident, name = r.learner, ""
        if roster is not None:
            student = roster.match(r.learner)
            ident, name = student[roster.key], roster_name(student)
        percent = 100 * r.score / r.max_score if r.max_score else 0.0
        # the name only names the learner: a backslash there as U+29F5, as in Moodle's file
        out.append(_line([csv_cell(ident), csv_cell(_php_safe(name)), points(scaled(r.score, r.max_score, scale)),
                          points(scale if scale is not None else r.max_score), f"{percent:.1f}",
                          "true" if r.passed else "false",
                          *(points(scaled(r.problems[p], r.max_score, scale)) if p in r.problems else ""
                            for p in problems),
                          csv_cell(_feedback(r))]))
    return "".join(out), unmatched


#: the roster columns that hold a student's whole name (Canvas's ``Student`` first), and the
#: pairs of first and last name columns (Moodle's and Blackboard's exports), in the order they
#: are looked for
NAME_COLUMNS = ("Student", "name", "Name", "Full name", "full_name", "Student name")
NAME_PAIRS = (("First name", "Last name"), ("First Name", "Last Name"), ("First name", "Surname"),
              ("first_name", "last_name"))


def roster_name(student: dict[str, str]) -> str:
    """The name of the roster row ``student`` for the generic CSV's ``name`` column: its first
    non-empty :data:`NAME_COLUMNS` cell, else its first and last name (:data:`NAME_PAIRS`), else
    "". Only ``Student`` was read, so an ``id,name,email`` class list gave every row an empty
    name (a newcomer's trial)."""
    for column in NAME_COLUMNS:
        if (student.get(column) or "").strip():
            return student[column].strip()
    for first, last in NAME_PAIRS:
        both = " ".join(p for p in ((student.get(first) or "").strip(), (student.get(last) or "").strip()) if p)
        if both:
            return both
    return ""


def _name(args: argparse.Namespace) -> str:
    from .reports.common import printable
    name = printable(args.assignment, one_line=True).strip()
    if not name:
        raise GraderError("--assignment is empty; give the assignment's name in the LMS")
    return name


def _canvas(args: argparse.Namespace, rows: list[Any], roster: Roster,
            notes: list[str]) -> tuple[str, list[str]]:
    """Canvas's export for ``args``: the column's id and points from the roster where it has
    them; what was chosen for the instructor is appended to ``notes``."""
    name = _name(args)
    if not any(c in roster.columns for c in CANVAS_COLUMNS[:4]):
        # every row's identity cells would be empty, and Canvas matches a row to a student by
        # them: a newcomer's ``id,name,email`` class list gave such a file, with exit 0
        raise GraderError(f"--roster {args.roster!r} has none of the columns Canvas matches a student by "
                          f"({', '.join(CANVAS_COLUMNS[:4])}; its columns: {', '.join(roster.columns[:8])}); give "
                          "Canvas's gradebook export (Grades > Export) as the roster")
    _note = notes.append
    ident = args.assignment_id.strip() if args.assignment_id else None
    number, possible = canvas_column(roster, name, ident)
    if ident is None and number is not None:
        ident = number
        _note(f"note: the roster's column {name} ({number}) is the assignment; its scores are exported to it")
    elif ident is None:
        _note(f"note: the roster has no assignment titled {name!r}: Canvas gives the scores to an assignment "
              "titled exactly that, or creates one (give --assignment-id to choose one)")
    points = _roster_points(args.points, possible, rows, f"the roster's Points Possible of {name}", notes)
    if args.points is not None and possible is not None and possible != points:
        _note(f"warning: the roster says {name} is worth {common_points(possible)} points; importing this file "
              f"changes its Points Possible to {common_points(points)} (Canvas reads the Points Possible row)")
    return canvas_csv(rows, roster, f"{name} ({ident})" if ident else name, points)


def _roster_points(points: float | None, possible: float | None, rows: list[Any], source: str,
                   notes: list[str]) -> float | None:
    """The points to scale scores to: ``--points`` if given, else the roster column's
    ``possible`` (named ``source`` in the note appended to ``notes``) where it differs from the
    gradebook's maximum, else None (unscaled)."""
    top = max((r.max_score for r in rows), default=0.0)
    if points is None and possible is not None and possible != top:
        notes.append(f"note: scores scaled to {common_points(possible)} points, {source} (the gradebook's are out "
                     f"of {common_points(top)}; --points N to choose)")
        return possible
    return points


def _blackboard(args: argparse.Namespace, rows: list[Any], roster: Roster | None,
                notes: list[str]) -> tuple[str, list[str]]:
    """Blackboard's export for ``args``: the Grade Center column's id and points from the roster
    where it has them (issue 37: a bare name made Blackboard add a 0-point text column); what
    was chosen for the instructor is appended to ``notes``."""
    name = _name(args)
    column = (args.assignment_id.strip() if args.assignment_id else None) or None
    found, possible = blackboard_column(roster, name, column)
    if found is not None and column is None:
        column = found
        notes.append(f"note: the roster's Grade Center column {name} (id {found}) is the assignment; its scores "
                     "are exported to it")
    elif column is None:
        notes.append(f"warning: no Grade Center column titled {name!r} in the roster: Blackboard makes a new text "
                     "column of 0 points possible for these scores; give --assignment-id (or a roster downloaded "
                     "after making the column)")
    points = _roster_points(args.points, possible, rows, "the column's Total Pts", notes)
    return blackboard_csv(rows, roster, name, column, points)


def common_points(value: float) -> str:
    """A number of points as the reports write it (``7.5``, ``10``)."""
    from .reports.common import points
    return points(value)


def cmd_export(args: argparse.Namespace) -> int:
    """``grader export canvas|csv|moodle|blackboard``: write the export; 0 if every learner
    matched, else 1.

    Raises:
        GraderError: bad input (see the module docstring).
    """
    from ._io import write_output

    from .reports.common import printable

    rows = _rows(args.gradebook)
    roster = read_roster(args.roster, args.key, DEFAULT_KEY[args.target]) if args.roster else None
    notes: list[str] = []
    if args.target == "canvas":
        assert roster is not None  # argparse requires --roster
        text, unmatched = _canvas(args, rows, roster, notes)
    elif args.target == "moodle":
        top = max((r.max_score for r in rows), default=0.0)
        if args.points is None:
            notes.append(f"note: grades are points out of {common_points(top)} (the gradebook's); Moodle does not "
                         "scale on import: give --points N for a grade item worth another maximum")
        if roster is None:
            notes.append("note: no --roster: every learner id is taken for a Moodle username, and one that Moodle "
                         "does not know stops its whole import; give the course's participants export as --roster")
        text, unmatched = moodle_csv(rows, roster, _name(args), args.points)
    elif args.target == "blackboard":
        text, unmatched = _blackboard(args, rows, roster, notes)
    else:
        text, unmatched = generic_csv(rows, roster, args.points)
    if roster is not None and rows and len(unmatched) == len(rows):
        # no learner on the roster: a file that imports nothing is not written (a newcomer's Moodle
        # export without --key: a header-only file, 13 warnings, exit 1); the likely key is said
        better = _better_key(unmatched, roster)
        hint = ""
        if better is not None:
            alias = next((k for k, v in KEYS.items() if v == better[0]), better[0])
            hint = f": its column {better[0]!r} holds {better[1]} of them, --key {shlex.quote(alias)} matches on it"
        raise GraderError(f"none of the gradebook's {len(rows)} learners is on the roster (column {roster.key!r})"
                          f"{hint or ': give --key with the roster column that holds their ids'}; nothing written")
    write_output(text, args.out)
    for value in escaped_keys(text, roster):
        notes.append(f"warning: the roster's {roster.key} {value!r} starts like a spreadsheet formula, so it "  # type: ignore[union-attr]
                     f"is written as {chr(39) + value!r}: the LMS will not match that student; enter the grade "
                     "by hand, or edit that cell of the file")
    for note in notes:
        sys.stderr.write(printable(f"grader: {note}", one_line=True) + "\n")
    if roster is not None:
        _unmatched(unmatched, roster)
        missing = len(roster.rows) - (len(rows) - len(unmatched))
        if missing > 0:
            who = f"{missing} roster student{'s have' if missing != 1 else ' has'}"
            why = "not in this file" if args.target == "csv" else \
                "left out of the export, so their grades in the LMS stay as they are"
            sys.stderr.write(f"grader: note: {who} no row in the gradebook ({why})\n")
    return EXIT_FAILED if unmatched else EXIT_PASSED


HANDLERS = {"export": cmd_export}
