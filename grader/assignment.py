"""Assignments: several problems graded from one learner file or notebook, with points per problem.

An assignment is a YAML file validated against ``grader/schemas/assignment.schema.json``::

    id: lesson1
    title: "Lesson 1: embeddings and the tied LM head"
    problems:
      - {problem: embedding_lookup, points: 3}
      - {problem: masked_mean_pool, points: 3}
      - {problem: tied_lm_head, points: 4, visibility: hidden}

``--assignment A`` names the file (a path), or ``A.yaml`` in an ``assignments/`` folder of the
problems folders (:func:`grader.spec.problem_dirs`: the bundled one, then ``--problems-dir``,
which wins). Each problem is checked on its own (:func:`grader.check.check_submission`), so a
function the learner did not write is that problem's failure (kind ``import``), not the run's;
:func:`combine` then makes the per-problem reports one :class:`grader.results.Report` whose
groups and cases are named ``<problem>/<group>`` and ``<problem>/<case>`` and whose points are
the assignment's. Every format renders that report as it renders a problem's, so each groups
its tests by problem without knowing of assignments; ``environment.assignment`` keeps the
per-problem scores, which the gradebook's per-problem columns read.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import GraderError, SpecError
from .results import SHRUNK_PREFIX, CaseResult, GroupScore, Report

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "assignment.schema.json"
FOLDER = "assignments"      # the sub-folder of a problems folder holding assignment files
SEPARATOR = "/"             # between a problem id and its group or case name


@dataclass(frozen=True)
class Part:
    """One problem of an assignment: the loaded :class:`grader.spec.Problem`, the ``points`` it
    is worth in the assignment (its groups' points are scaled to them) and its ``visibility``
    (``hidden``: every case concealed from learners, as a hidden group's)."""

    problem: Any
    points: float
    visibility: str = "visible"


@dataclass(frozen=True)
class Assignment:
    """A loaded assignment: ``id``, ``title``, the YAML file's ``path`` and its ``parts`` in
    file order. Quacks like a :class:`grader.spec.Problem` where ``grader grade`` needs one
    (``id``, ``title``, ``functions``, ``groups``, ``max_score``)."""

    id: str
    title: str
    path: Path
    parts: tuple[Part, ...]

    @property
    def functions(self) -> list[str]:
        """The function names a learner's file defines for the assignment, in part order."""
        return [p.problem.function for p in self.parts]

    @property
    def max_score(self) -> float:
        """The points of every part."""
        return float(sum(p.points for p in self.parts))

    @property
    def groups(self) -> dict[str, Any]:
        """``<problem>/<group>`` -> a group record with the assignment's points (for a report of
        a learner nothing could be graded of: :func:`grader.batch.gradebook.placeholder_report`)."""
        from .spec import Group

        out: dict[str, Any] = {}
        for part in self.parts:
            factor = _factor(part.points, part.problem.max_score)
            for name, g in part.problem.groups.items():
                full = f"{part.problem.id}{SEPARATOR}{name}"
                out[full] = Group(name=full, points=round(g.points * factor, 10),
                                  visibility=_stricter(g.visibility, part.visibility),
                                  description=g.description)
        return out


    def environment(self) -> dict[str, Any]:
        """``environment.assignment`` of a report nothing could be graded of: the id, title and
        each problem with its points and a score of 0 (:func:`combine` fills in the real ones)."""
        return {"id": self.id, "title": self.title,
                "problems": [{"problem": p.problem.id, "title": p.problem.title, "points": p.points, "score": 0.0,
                              "passed": False, "failure": None, "visibility": p.visibility} for p in self.parts]}

    def digest(self) -> str:
        """SHA-256 (hex) of the assignment file and of each problem's spec and reference: what
        ``grader grade``'s settings record stands for.

        Raises:
            GraderError: a file cannot be read.
        """
        import hashlib

        from .spec import problem_digest

        h = hashlib.sha256()
        try:
            h.update(self.path.read_bytes())
        except OSError as exc:
            raise GraderError(f"cannot read the assignment {str(self.path)!r}: {exc.strerror or exc}") from None
        for part in self.parts:
            h.update(b"\0" + problem_digest(part.problem).encode())
        return h.hexdigest()


def _factor(points: float, max_score: float) -> float:
    return points / max_score if max_score else 0.0


def _stricter(a: str, b: str) -> str:
    return "hidden" if "hidden" in (a, b) else "visible"


def find_assignment(ref: str, problems_dir: str | os.PathLike[str] | None = None) -> Path:
    """The file of ``--assignment ref``: ``ref`` itself when it names a file, else
    ``assignments/<ref>.yaml`` in the problems folders (the last, ``--problems-dir``, wins).

    Raises:
        GraderError: neither exists; the message lists the assignments found.
    """
    from .spec import problem_dirs

    given = Path(ref)
    if given.suffix in (".yaml", ".yml") or os.sep in ref or "/" in ref:
        if given.is_file():
            return given
        raise GraderError(f"--assignment {ref!r}: no such file")
    found: dict[str, Path] = {}
    for folder in problem_dirs(problems_dir):
        for p in sorted((folder / FOLDER).glob("*.yaml")):
            found[p.stem] = p
    if ref in found:
        return found[ref]
    names = ", ".join(found) or "none found"
    raise GraderError(f"unknown assignment {ref!r} (known: {names}); give the path of an assignment file")


def load_assignment(ref: str, problems_dir: str | os.PathLike[str] | None = None) -> Assignment:
    """Read, validate and load the assignment ``ref`` (:func:`find_assignment`) and its problems.

    Raises:
        SpecError: the file is unreadable, not YAML, does not fit the schema (the message names
            the field and line), names a problem twice, or names an unknown problem.
        GraderError: no such assignment.
    """
    from .spec import field_error, find_problem, load_problem, read_yaml, schema_error

    path = find_assignment(ref, problems_dir)
    shown = str(path)
    text, data = read_yaml(path, "assignment")
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    errors = list(validator.iter_errors(data))
    if errors:
        raise schema_error(shown, text, errors)
    parts: list[Part] = []
    for i, entry in enumerate(data["problems"]):
        where = ["problems", i, "problem"]
        if any(p.problem.id == entry["problem"] for p in parts):
            raise field_error(shown, text, where, f"problem {entry['problem']!r} is named twice")
        try:
            problem = load_problem(find_problem(entry["problem"], problems_dir))
        except SpecError:
            raise
        except GraderError as exc:
            raise field_error(shown, text, where, str(exc)) from None
        points = float(entry["points"])
        if not math.isfinite(points):  # YAML's .nan and .inf are numbers the schema lets through
            raise field_error(shown, text, ["problems", i, "points"], f"points must be a finite number, not {points}")
        parts.append(Part(problem=problem, points=points, visibility=entry.get("visibility", "visible")))
    if not sum(p.points for p in parts) > 0:
        raise SpecError(shown, "problems: every problem is worth 0 points; give at least one problem points")
    functions = [p.problem.function for p in parts]
    twice = sorted({f for f in functions if functions.count(f) > 1})
    if twice:
        raise SpecError(shown, f"problems: two problems ask for a function named {twice[0]!r}; one file "
                        "cannot define both")
    return Assignment(id=data["id"], title=data["title"], path=path, parts=tuple(parts))


def _part_report(part: Part, report: Report) -> tuple[list[GroupScore], list[CaseResult], list[float]]:
    """The groups (with the assignment's points, unrounded earned points beside them) and cases of
    one part's report, named ``<problem>/...``. A report nothing could be graded of (its
    ``failure``: the function is missing, the file does not import) becomes one failed case in
    one group worth the part's points, so the failure shows in every format beside the others."""
    pid = part.problem.id
    factor = _factor(part.points, report.max_score)
    if report.failure is not None:
        case = CaseResult(name=pid, group=pid, status="error", dtype="", rank=0, inputs={},
                          visibility=part.visibility, failure=report.failure, seconds=report.seconds)
        return ([GroupScore(group=pid, points=part.points, earned=0.0, passed=0, total=1,
                            visibility=part.visibility)], [case], [0.0])
    groups, exact = [], []
    for g in report.groups:
        # rounded to 10 decimals: 0.3 x 4 was 1.2000000000000002 points, of which 1.2 earned
        # read as a lost point (Gradescope showed a full group as failed)
        groups.append(GroupScore(group=f"{pid}{SEPARATOR}{g.group}", points=round(g.points * factor, 10), earned=0.0,
                                 passed=g.passed, total=g.total, visibility=_stricter(g.visibility, part.visibility)))
        exact.append(g.points * factor * g.passed / g.total if g.total and g.earned else 0.0)
    cases = [_renamed(c, pid, part.visibility) for c in report.cases]
    return groups, cases, exact


def _renamed(case: CaseResult, pid: str, visibility: str) -> CaseResult:
    """``case`` named ``<pid>/<name>`` in group ``<pid>/<group>``; a shrunk case keeps its
    ``shrunk:`` prefix first and its group ``shrunk`` (extra feedback, in no group)."""
    name = case.name
    if case.shrunk and name.startswith(SHRUNK_PREFIX):
        name = f"{SHRUNK_PREFIX}{pid}{SEPARATOR}{name[len(SHRUNK_PREFIX):]}"
    else:
        name = f"{pid}{SEPARATOR}{name}"
    group = case.group if case.shrunk else f"{pid}{SEPARATOR}{case.group}"
    return dataclasses.replace(case, name=name, group=group, visibility=_stricter(case.visibility, visibility))


def problem_of(case: CaseResult) -> str:
    """The problem id of a case of an assignment's report (the part of its name before ``/``,
    after a shrunk case's ``shrunk:``)."""
    return case.name.removeprefix(SHRUNK_PREFIX).split(SEPARATOR, 1)[0]


def combine(assignment: Assignment, submission: str, reports: list[Report]) -> Report:
    """One report of ``submission`` for the whole ``assignment`` from its parts' ``reports`` (in
    part order).

    Points: each part's groups are scaled to the part's points; the score is the exact shares
    summed and rounded once, and the groups' points are apportioned to add up to it
    (:func:`grader.grading.apportion`). ``passed`` when every part passed. A failure of the
    whole file (every part failed with one message: a syntax error, an import that raised) is
    the report's ``failure``; a part's own failure is a failed case of that part. The summary
    holds each part's patterns with ``problem`` added; ``environment`` is the first part's that
    ran a case (else the first's) with ``assignment``: the id, title and each part's problem,
    points, score, passed, failure kind, message and hint, ``cases_digest`` and ``function_line``. ``output`` joins the parts'.

    Raises:
        ValueError: ``reports`` does not match ``assignment.parts``.
    """
    from .grading import apportion

    if len(reports) != len(assignment.parts):
        raise ValueError(f"{len(reports)} reports for {len(assignment.parts)} problems")
    failures = {(r.failure.kind, r.failure.message) for r in reports if r.failure}
    whole = reports[0].failure if len(failures) == 1 and all(r.failure for r in reports) else None
    groups: list[GroupScore] = []
    cases: list[CaseResult] = []
    exact: list[float] = []
    summary: list[dict[str, Any]] = []
    parts_env: list[dict[str, Any]] = []
    for part, report in zip(assignment.parts, reports):
        if whole is not None:
            g, c, e = _part_report(part, dataclasses.replace(report, failure=None, cases=[]))
        else:
            g, c, e = _part_report(part, report)
        groups += g
        cases += c
        exact += e
        start = len(exact) - len(e)
        part_score = round(sum(exact[start:]), 4)
        summary += labelled(part.problem.id, report.summary)
        parts_env.append({"problem": part.problem.id, "title": part.problem.title, "points": part.points,
                          "score": part_score, "passed": report.passed,
                          "failure": report.failure.kind if report.failure else None,
                          # a failure of the whole file is the report's own, said once
                          "message": report.failure.message if report.failure and whole is None else None,
                          "hint": report.failure.hint if report.failure and whole is None else None,
                          "cases_digest": report.environment.get("cases_digest"),
                          "function_line": report.environment.get("function_line"),
                          "visibility": part.visibility})
    for group, earned in zip(groups, apportion(exact)):
        group.earned = earned
    ran = next((r for r in reports if r.cases), reports[0])
    environment = {**ran.environment, "assignment": {"id": assignment.id, "title": assignment.title,
                                                      "problems": parts_env}}
    environment.pop("cases_digest", None)
    output = _joined_output(assignment, reports)
    return Report(problem=assignment.id, title=assignment.title, submission=submission,
                  passed=all(r.passed for r in reports), score=round(sum(exact), 4), max_score=assignment.max_score,
                  failure=whole, cases=[] if whole else cases, groups=groups, summary=summary,
                  environment=environment, output=output, seconds=sum(r.seconds for r in reports))


def labelled(pid: str, summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A part's failure patterns (``grader.summary.summarise``) with ``problem`` and the
    problem's id before each ``text``, so the assignment's summary says which problem failed."""
    return [{**entry, "problem": pid, **({"text": f"{pid}: {entry['text']}"} if "text" in entry else {})}
            for entry in summary]


def summarise_parts(cases: list[CaseResult], dtypes: tuple[str, ...], framework: str = "numpy") -> list[dict[str, Any]]:
    """:func:`grader.summary.summarise` of an assignment's cases, problem by problem, labelled
    (:func:`labelled`): what a reporter recomputes for the cases an audience may see, worded
    for ``framework`` (a bundled problem's own summary wording chosen by its id)."""
    from .summary import summarise

    by_problem: dict[str, list[CaseResult]] = {}
    for case in cases:
        by_problem.setdefault(problem_of(case), []).append(case)
    out: list[dict[str, Any]] = []
    for pid, mine in by_problem.items():
        out += labelled(pid, summarise([c for c in mine if c.inputs or c.shrunk], dtypes, framework, pid))
    return out


def _joined_output(assignment: Assignment, reports: list[Report]) -> dict[str, Any]:
    """The parts' captured output, each part's under a ``== problem ==`` line (only parts that
    printed), and whether any was cut."""
    out: dict[str, Any] = {"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}
    for part, report in zip(assignment.parts, reports):
        o = report.output or {}
        for stream in ("stdout", "stderr"):
            if o.get(stream):
                out[stream] += f"== {part.problem.id} ==\n{o[stream]}"
                if not out[stream].endswith("\n"):
                    out[stream] += "\n"
            out[f"{stream}_bytes"] += int(o.get(f"{stream}_bytes") or 0)
        out["truncated"] = out["truncated"] or bool(o.get("truncated"))
    return out


def _one_line(progress: Any) -> Any:
    """A progress callback for a wholly hidden part: one ``hidden`` line when the part starts,
    nothing of its cases, shrinking or phases after (as a problem's hidden phase gets one line
    for all its cases, ``grading._run``)."""
    said = [False]

    def report(phase: str, done: int, total: int) -> None:
        if not said[0]:
            said[0] = True
            progress("hidden", 0, 0)
    return report


def check_assignment(submission: str | Path, assignment: Assignment, opts: Any) -> Report:
    """Check ``submission`` against every problem of ``assignment`` (one
    :func:`grader.check.check_steps` each, with its own copy of ``opts``) and
    :func:`combine` the reports.

    Every part's visible cases (and shrink searches) run before any part's hidden ones: each
    part's check pauses before its first hidden case, and the hidden phases run after the last
    visible one, so no visible case of any part is made after a hidden call (a visible case that
    read a clock after another part's hidden calls could time them; round four, class 3). Each
    part keeps its own child meanwhile; the time a part waits is not counted against its
    ``--total-timeout``.

    Raises:
        GraderError: as :func:`grader.check.check_submission` (faults of the grader's inputs).
    """
    import copy

    from .check import check_steps
    from .grading import drive

    def hiding(part: Any) -> int:
        """0: nothing of the part is hidden; 1: a group of its problem is; 2: the whole part."""
        if part.visibility == "hidden":
            return 2
        return int(any(g.visibility == "hidden" for g in part.problem.groups.values()))

    # parts with nothing hidden run first and hidden parts last, so that a part whose cases are
    # all hidden starts no child before the last visible case has run. The report keeps the
    # assignment's order.
    order = sorted(range(len(assignment.parts)), key=lambda i: hiding(assignment.parts[i]))
    reports: list[Any] = [None] * len(assignment.parts)
    paused: dict[int, Any] = {}
    try:
        for i in order:
            part = assignment.parts[i]
            part_opts = copy.deepcopy(opts)
            if part.visibility == "hidden":
                # its cases are concealed only in combine(), after the run: so that its child hands
                # back no JAX compilation (which can carry the inputs it saw, and which a later run
                # could read), it keeps none, as a run that saw a hidden case keeps none
                # (docs/security.md, class 7)
                part_opts.jax_cache = ""
                # nor a progress line per case: within its own check its cases are visible, and a
                # line after each call timed each hidden input (round seventeen of issue 32)
                if part_opts.progress is not None:
                    part_opts.progress = _one_line(opts.progress)
            steps = check_steps(submission, part.problem, part_opts)
            if hiding(part) == 2:   # nothing visible: run it whole, after every visible phase
                paused[i] = steps
                continue
            try:
                next(steps)          # its visible phase; paused before its first hidden case
                paused[i] = steps
            except StopIteration as stop:
                reports[i] = stop.value
        for i in order:
            if i in paused:
                steps = paused.pop(i)
                reports[i] = drive(steps)
    finally:
        for steps in paused.values():   # a fault of the grader's inputs in one part: stop the others' children
            steps.close()
    return combine(assignment, opts.submission_shown or str(submission), reports)
