"""The output folder's gradebook and reports: the names of the files a ``grade`` run writes
into ``--out DIR``, the gradebook's rows (:class:`Row`, :func:`read_gradebook`,
:func:`write_gradebook`), and each learner's report (:func:`report_path`, :func:`load_report`,
:func:`report_from_json`, :func:`placeholder_report` for a check that wrote none).

``gradebook.csv``       one row per learner (:data:`COLUMNS`), appended and flushed as soon as
                        it is known, so a killed batch loses no finished row; sorted by learner
                        when the batch ends. ``passed`` is ``true``/``false``, ``kinds`` the
                        failure kinds joined by ``;``, ``seconds`` the wall time of the check,
                        ``message`` one line of feedback to hand back (counts, the commonest
                        failure pattern, the first hint; hidden cases as counts only).
                        Learner and submission cells that a spreadsheet would read as a
                        formula start with ``'`` (:func:`grader.reports.common.csv_cell`).
``reports/<name>.json`` the check report (``--format json``) of each learner; ``<name>`` is
                        :func:`report_name` of the learner id (a safe prefix and a hash).

The folder's other files are written from these: ``junit.xml``, ``summary.md``,
``summary.html`` and ``feedback/`` by :mod:`grader.batch.outputs`, ``settings.json`` by
:mod:`grader.batch.settings`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .._io import csv_line
from ..errors import GraderError
from ..results import Failure, GroupScore, Report


GRADEBOOK, REPORTS, JUNIT, SUMMARY = "gradebook.csv", "reports", "junit.xml", "summary.md"
SUMMARY_HTML, FEEDBACK = "summary.html", "feedback"
COLUMNS = ("learner", "submission", "passed", "score", "max_score", "kinds", "seconds", "message")
#: the header of gradebooks written before the message column (still read: --resume, merge)
OLD_COLUMNS = COLUMNS[:-1]
MESSAGE_LIMIT = 600         # characters of a gradebook message with a discovery note


@dataclass
class Row:
    """One gradebook row: a learner's verdict, points (floats) and check wall time (seconds)."""

    learner: str
    submission: str
    passed: bool
    score: float
    max_score: float
    kinds: list[str]
    seconds: float
    message: str = ""
    problems: dict[str, float] = field(default_factory=dict)

    def cells(self, problems: Iterable[str] = ()) -> list[str]:
        """The CSV cells, in :data:`COLUMNS` order, then the points of each of ``problems`` (an
        assignment's problem ids: the gradebook's per-problem columns; empty where the row has
        none). The learner and submission cells go through
        :func:`grader.reports.common.csv_cell` (no control characters; a leading ``'`` where a
        spreadsheet would read a formula), which :meth:`from_cells` undoes."""
        from ..reports.common import csv_cell, points
        return [csv_cell(self.learner), csv_cell(self.submission), "true" if self.passed else "false",
                points(self.score), points(self.max_score), ";".join(self.kinds), f"{self.seconds:.2f}",
                csv_cell(self.message)] + [points(self.problems[p]) if p in self.problems else "" for p in problems]

    @classmethod
    def from_cells(cls, cells: list[str]) -> "Row":
        """The row of CSV ``cells`` (as written by :meth:`cells`).

        Raises:
            ValueError: wrong number of cells, or a cell that does not parse.
        """
        from ..reports.common import from_csv_cell
        if len(cells) not in (len(COLUMNS), len(OLD_COLUMNS)) or cells[2] not in ("true", "false"):
            raise ValueError(f"not a gradebook row: {cells!r}")
        return cls(from_csv_cell(cells[0]), from_csv_cell(cells[1]), cells[2] == "true", float(cells[3]),
                   float(cells[4]), [k for k in cells[5].split(";") if k], float(cells[6]),
                   from_csv_cell(cells[7]) if len(cells) > 7 else "")

    @classmethod
    def of_report(cls, learner: str, report: Report, seconds: float, note: str | None = None) -> "Row":
        """The row of a learner's :class:`Report`, graded in ``seconds``; ``message`` is one line
        of feedback that may be handed to the learner (``grader.reports.view.feedback_line``:
        the counts, the commonest failure pattern and the first hint; hidden cases as counts;
        files named as the learner has them: ``grader grade`` names each check's file, so the
        learner view names it by its name, ``grader.reports.view.named_by_caller``),
        followed by ``; note: NOTE`` when the discovery left a note
        (:attr:`grader.batch.discovery.Submission.note`)."""
        from ..reports.common import printable
        from ..reports.view import feedback_line, learner_paths
        # what an LMS hands back (Moodle's and Canvas's feedback): files named relative to the
        # learner's folder, no path of the grading machine (the class folder under Slurm's absolute paths)
        message = feedback_line(report)
        if note:
            message = printable(f"{message}; note: {learner_paths(note, report.submission, by_name=True)}",
                                one_line=True)
            if len(message) > MESSAGE_LIMIT:
                message = message[:MESSAGE_LIMIT - 3] + "..."
        return cls(learner=learner, submission=report.submission, passed=report.passed, score=report.score,
                   max_score=report.max_score, kinds=report.failure_kinds, seconds=seconds, message=message,
                   problems=problem_points(report))


def problem_points(report: Report) -> dict[str, float]:
    """Problem id -> points earned, for an assignment's report (``environment.assignment``,
    :func:`grader.assignment.combine`); empty for one problem's."""
    assignment = report.environment.get("assignment")
    parts = assignment.get("problems") if isinstance(assignment, dict) else None
    out: dict[str, float] = {}
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and isinstance(part.get("problem"), str):
            try:
                out[part["problem"]] = float(part.get("score") or 0.0)
            except (TypeError, ValueError):
                continue
    return out


def problem_columns(header: Iterable[str], problems: Iterable[str]) -> list[str]:
    """The gradebook's per-problem column names: each problem id, or ``problem:<id>`` where the
    id is a column of :data:`COLUMNS` already."""
    taken = set(header)
    return [f"problem:{p}" if p in taken else p for p in problems]


def columns_of(rows: Iterable[Row]) -> list[str]:
    """The problem ids of ``rows``' per-problem points, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row.problems))
    return list(seen)


def read_gradebook(path: Path) -> list[Row]:
    """The rows of a gradebook file; malformed lines (a batch killed mid-write) are dropped.

    Raises:
        GraderError: the file cannot be read or does not start with the :data:`COLUMNS` header.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GraderError(f"cannot read gradebook {str(path)!r}: {exc}") from None
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        return []
    header = tuple(lines[0])
    if header != OLD_COLUMNS and header[:len(COLUMNS)] != COLUMNS:
        raise GraderError(f"{str(path)!r} is not a gradebook (its header is not {','.join(COLUMNS)})")
    extra = [name.removeprefix("problem:") for name in header[len(COLUMNS):]]  # an assignment's problems
    width = len(COLUMNS) if extra else None
    rows = []
    for cells in lines[1:]:
        try:
            if extra and len(cells) != len(header):
                raise ValueError("torn row")
            row = Row.from_cells(cells[:width] if width else cells)
            row.problems = {p: float(c) for p, c in zip(extra, cells[len(COLUMNS):]) if c != ""}
            rows.append(row)
        except ValueError:
            continue
    return rows


def write_gradebook(path: Path, rows: Iterable[Row], problems: Iterable[str] | None = None) -> None:
    """Write ``rows`` (sorted by learner) to ``path`` atomically, header first, with a column per
    problem of ``problems`` (an assignment's; default: those the rows have points of).

    Raises:
        GraderError: the file cannot be written.
    """
    from .._io import write_output
    rows = sorted(rows, key=lambda r: r.learner)
    problems = columns_of(rows) if problems is None else list(problems)
    write_output(csv_line(header(problems)) + "".join(csv_line(r.cells(problems)) for r in rows), str(path))


def header(problems: Iterable[str] = ()) -> list[str]:
    """The gradebook's header: :data:`COLUMNS`, then one column per problem of an assignment
    (:func:`problem_columns`), holding the points earned in it; the ``score`` column is the total."""
    return [*COLUMNS, *problem_columns(COLUMNS, problems)]


class Appender:
    """Appends rows to a gradebook, flushing each one, so that a killed batch keeps them.
    ``problems``: the per-problem columns of an assignment's gradebook (:func:`header`)."""

    def __init__(self, path: Path, problems: Iterable[str] = ()) -> None:
        self.problems = list(problems)
        new = not path.exists() or path.stat().st_size == 0
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self.fh = open(fd, "a", encoding="utf-8", newline="")
        if new:
            self.fh.write(csv_line(header(self.problems)))
            self.fh.flush()

    def append(self, row: Row) -> None:
        """Append ``row`` and flush it."""
        self.fh.write(csv_line(row.cells(self.problems)))
        self.fh.flush()

    def close(self) -> None:
        """Close the gradebook file."""
        self.fh.close()


REPORT_PREFIX = 40  # characters of the learner id kept in a report's file name


def report_name(learner: str) -> str:
    """The file name of a learner's report: the id's letters, digits, ``.``, ``_`` and ``-``
    (others as ``_``, at most :data:`REPORT_PREFIX`), ``-``, the first 16 hex digits of the
    SHA-256 of the id, ``.json``.

    Safe in any file system and shell (at most 62 characters, never hidden, no separator), and
    distinct for distinct ids: ``"alice"`` -> ``alice-2bd806c97f0e00af.json``.
    """
    prefix = re.sub(r"[^A-Za-z0-9._-]", "_", learner)[:REPORT_PREFIX].lstrip(".-") or "learner"
    digest = hashlib.sha256(learner.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{prefix}-{digest}.json"


def feedback_name(learner: str) -> str:
    """The file name of a learner's feedback file: :func:`report_name` with ``.txt``
    (``"alice"`` -> ``alice-2bd806c97f0e00af.txt``): no separator, never hidden nor starting
    with ``-``, at most 61 characters, distinct for distinct ids."""
    return report_name(learner).removesuffix(".json") + ".txt"


def feedback_html_name(learner: str) -> str:
    """The file name of a learner's HTML feedback page: :func:`report_name` with ``.html``."""
    return report_name(learner).removesuffix(".json") + ".html"


def report_path(out: Path, learner: str) -> Path:
    """Where the report of ``learner`` lives in the output folder ``out`` (:func:`report_name`)."""
    return out / REPORTS / report_name(learner)


def could_not_be_graded(report: Report) -> bool:
    """Whether nothing of ``report`` could be graded: it has a whole-submission failure
    (``report.failure``: the import failed, the check timed out or crashed before any case ran,
    or the check process died: :func:`placeholder_report`). The test of the gradebook message's
    ``could not be graded: ...`` (``grader.reports.view.feedback_line``) and of the counts in the
    run's tally line, summary.md and summary.html. A submission that crashed in its cases was
    graded (it failed them)."""
    return report.failure is not None


def report_from_json(data: dict[str, Any]) -> Report:
    """The :class:`Report` of a ``--format json`` report (either audience; redacted hidden
    cases come back with the fields they kept).

    Raises:
        KeyError, TypeError, ValueError: ``data`` is not a report.
    """
    return Report.from_json(data)


def load_report(path: Path) -> Report:
    """The report stored at ``path``.

    Raises:
        OSError: it cannot be read. ValueError, KeyError, TypeError: it is not a JSON report.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return report_from_json(data)


def placeholder_report(problem: Any, submission: str, failure: Failure, seconds: float) -> Report:
    """A report with no case for a submission that could not be checked (``failure`` says why).

    Its groups are the problem's, each with 0 points earned, so scores still add up; for an
    assignment (:class:`grader.assignment.Assignment`) ``environment.assignment`` lists its
    problems, so the gradebook's per-problem columns read 0.
    """
    from ..version import __version__
    groups = [GroupScore(group=name, points=g.points, earned=0.0, passed=0, total=0, visibility=g.visibility)
              for name, g in problem.groups.items()]
    environment: dict[str, Any] = {"grader": __version__, "graded_by": "grader grade"}
    if callable(getattr(problem, "environment", None)):  # an assignment: its problems, with no points
        environment["assignment"] = problem.environment()
    return Report(problem=problem.id, title=problem.title, submission=submission, passed=False, score=0.0,
                  max_score=problem.max_score, failure=failure, cases=[], groups=groups, summary=[],
                  environment=environment,
                  output={"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False},
                  seconds=seconds)


def write_report(path: Path, report: Report, audience: str) -> None:
    """Write ``report`` to ``path`` as the JSON report for ``audience`` (atomically).

    Raises:
        GraderError: it cannot be written.
    """
    from .._io import write_output
    from ..reports import json_report
    write_output(json_report.render(report, audience=audience), str(path))


def add_note(path: Path, note: str | None) -> Path:
    """Put a discovery note (:attr:`grader.batch.discovery.Submission.note`) into the JSON
    report at ``path``, in place: ``environment.discovery_note``, which the text report (and so
    the learner's feedback file) shows as ``note: ...``. ``path`` unchanged without a note. The
    report's other fields are kept as the check wrote them (it is not rendered again: a
    learner-audience report is redacted already).

    Raises:
        OSError, ValueError: the report cannot be read or is not a JSON object. GraderError: it
            cannot be written.
    """
    if not note:
        return path
    from .._io import write_output
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    env = data.get("environment")
    env = env if isinstance(env, dict) else {}
    env["discovery_note"] = note
    data["environment"] = env
    write_output(json.dumps(data, indent=2, allow_nan=False) + "\n", str(path))
    return path


