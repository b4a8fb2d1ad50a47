"""Result records: what flows between the stages after a plan, and what every reporter receives.

Records flow one way (docs/architecture.md): an executor gives an :class:`ImportOutcome` and
one :class:`CallOutcome` per case; the judge (``grader.grading.judge``) turns an outcome into a
:class:`Verdict`; grading wraps verdicts into :class:`CaseResult` records and one
:class:`Report`, which the reporters (``grader.reports``) only *read*. No record holds grading
policy or knows an output format. Each record is built with keywords and has ``to_json`` and,
beside it, ``from_json`` (``Report.from_json(report.to_json())`` gives the same report).

Failure kinds (the ``kind`` field), in the order the per-case checks run:

``type``        the output is not an array (a list, None, another object)
``shape``       the output's shape differs from the expected one (exact; no broadcasting)
``dtype``       the output's dtype differs from the expected one (the spec's ``returns.dtype``)
``non_finite``  NaN or infinity where the expected output is finite
``tolerance``   values outside the dtype-aware tolerance (``grader.compare``)
``mutation``    an input array was changed in place
``raises``      a case that must raise (spec ``raises: [...]``) returned, or raised a type not listed
``unearned``    a case a function computing nothing also passes (it must raise; its expected
                result is empty, zeros, a constant or an input; under a secret seed, its
                inputs are the same under every seed) that passed, in a run that got the
                values of fewer than half of the other cases right (``grading.free_cases``,
                ``grading.unearned``: a stub earns nothing); listed last in a summary

and, for the run rather than the values:

``exception``   the submission raised (its traceback, trimmed to its own file)
``timeout``     a call or the whole run exceeded its wall-clock limit
``crash``       the submission's process died or broke the protocol
``memory``      the submission exceeded its memory limit
``import``      the submission could not be loaded (syntax error, missing function,
                exception or exit at import time)
``missing``     nothing was submitted: a roster learner of whom nothing was found, or a
                learner's folder with no .py file or notebook (``grader grade``); counted
                apart from a file that could not be graded
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # records only name the array type: importing NumPy here cost every CLI start 0.07 s
    import numpy as np

CASE_KINDS = ("type", "shape", "dtype", "non_finite", "tolerance", "mutation", "raises", "unearned")
#: failure kinds a report lists after the others: a case that must raise (a NotImplementedError
#: stub's invalid-input cases led its list, before any case that said "write the body") and a
#: case not credited (``unearned``) say little beside a function whose values are wrong
LATE_KINDS = ("raises", "unearned")
#: how the note of a learner's folder with no .py file begins (``grader.batch.discovery``): a
#: learner with nothing submitted, counted with the roster's learners of whom nothing was found
EMPTY_FOLDER = "no submission: the learner's folder"
RUN_KINDS = ("exception", "timeout", "crash", "memory", "import", "missing")
KINDS = CASE_KINDS + RUN_KINDS

#: the name of a shrunk case is this and the name of the case it was shrunk from (grader.shrink)
SHRUNK_PREFIX = "shrunk:"

STATUSES = ("passed", "failed", "error", "timeout", "skipped")

#: a learner's case from the instructor's secret seed too large for a ``--replay`` literal gets
#: this instead of a replay command (``CaseResult.replay_note``)
SECRET_REPLAY_NOTE = "this case's inputs come from the instructor's secret seed and are too large to print as a replay, so it cannot be replayed alone: fix what its failure says and submit again"


def json_ratio(x: float, digits: int = 4) -> float | str:
    """An error / allowance ratio for JSON: finite ones to ``digits`` significant digits,
    ``"inf"`` (or ``"nan"``) otherwise (strict JSON has no infinity; ``float("inf")`` reads it back)."""
    return float(f"{x:.{digits}g}") if x == x and abs(x) != float("inf") else ("inf" if x > 0 else str(x))

@dataclass(kw_only=True, frozen=True)
class Frame:
    """One frame of a traceback the submission raised, as facts: no sentence, no path of the
    grading machine (``grader.words.places`` names the file as the reader has it).

    Attributes:
        ref: ``"submission"`` (the graded file), ``"sibling"`` (a file beside it, ``file`` its
            name relative to the submission's folder) or ``"outside"`` (a library's file,
            ``<string>``: ``file`` as Python named it).
        file: as above; for ``"submission"`` the name of the file the executor ran.
        line: the line (1-based) in that file, or None.
        function: the function's name ("" for a ``SyntaxError``'s place).
        code: the line's source, stripped ("" when unknown).
        cell, cell_line: for a notebook's own frames, the code cell (1-based, as the notebook
            counts them) and the line in it; None otherwise (``grading.finish`` sets them).
        file_line: for a notebook's own frames, the line of the ``.ipynb`` file (its JSON text)
            that holds it, which a GitHub annotation or a JUnit ``line`` names; else None.
        cell_label: for a function ``check(fn)`` sent from a kernel cell, that cell as IPython
            names it (``"In[5]"``), with ``cell_line`` its line there; else None.
        marks: where on the code line the failing operation is, as Python 3.11 marks it under
            the line (spaces, ``~`` and ``^`` only, aligned with ``code``), or "".
    """

    ref: str
    file: str
    line: int | None = None
    function: str = ""
    code: str = ""
    cell: int | None = None
    cell_line: int | None = None
    file_line: int | None = None
    cell_label: str | None = None
    marks: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Frame":
        """The frame of its ``to_json`` form.

        Raises:
            KeyError, TypeError: ``data`` is not a frame's JSON form.
        """
        label = data.get("cell_label")
        return cls(ref=str(data["ref"]), file=str(data["file"]), line=_count(data.get("line")),
                   function=str(data.get("function") or ""), code=str(data.get("code") or ""),
                   cell=_count(data.get("cell")), cell_line=_count(data.get("cell_line")),
                   file_line=_count(data.get("file_line")),
                   # as IPython names a cell, In[5], and nothing else (a report is read back from disk)
                   cell_label=label if isinstance(label, str) and re.fullmatch(r"In\[\d{1,9}\]", label) else None,
                   marks=_marks_of(data.get("marks")))


def _count(value: Any) -> int | None:
    """A line, cell or count of a report read back: a positive int below 10**9, else None (a
    hand-edited ``Infinity`` or ``"12"`` is no number of ours)."""
    return value if type(value) is int and 0 < value < 10**9 else None


def _marks_of(value: Any) -> str:
    """A frame's ``marks`` as read from a reply or a report: only spaces, ``~`` and ``^`` (what
    Python writes there), at most 300 characters; anything else is dropped."""
    if not isinstance(value, str) or len(value) > 300 or value.strip(" ~^"):
        return ""
    return value.rstrip()


def frames_of(raw: Any, submission_name: str) -> list[Frame]:
    """The :class:`Frame` records of an ``exception_facts`` reply's ``frames`` (``grader.protocol``),
    each field checked (the reply is the submission's to forge: anything else is dropped), the
    file named ``submission_name`` in the submission's folder as ``ref="submission"``."""
    out: list[Frame] = []
    for item in raw[-64:] if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            continue
        file, line = item["file"][:1000], item.get("line")
        relative = not (file.startswith(("/", "<")) or file == "?")
        ref = ("submission" if file == submission_name else "sibling") if relative else "outside"
        out.append(Frame(ref=ref, file=file, line=_count(line),
                         function=item["function"][:300] if isinstance(item.get("function"), str) else "",
                         code=item["code"][:300] if isinstance(item.get("code"), str) else "",
                         marks=_marks_of(item.get("marks"))))
    return out


@dataclass(kw_only=True)
class Failure:
    """What went wrong in one case (or with the whole submission).

    Attributes:
        kind: one of :data:`KINDS`.
        message: one line for a person, e.g. ``"shape (1, 3) != expected (3,)"``.
        hint: the recognised mistake in one sentence (``"looks like softmax was applied"``),
            found by testing the idea against the actual output, or None.
        details: further lines (worst element, values of small arrays, a traceback); each
            reporter decides how many to show.
        data: structured facts behind the message (counts, indices, got/expected/allowed),
            JSON-serialisable, for machine consumers.
        frames: where the submission raised (``exception``, ``memory``, ``import``,
            ``raises``), deepest last: facts, worded only when a report is built.
        exception: the raised exception's type and message (``"ValueError: ..."``), or "".
        traceback: the words of ``frames`` and ``exception`` for one reader: set by
            ``grader.reports.view.build`` alone (files named as that reader has them), "" in
            the records grading makes; never read back by :meth:`from_json`.
    """

    kind: str
    message: str
    hint: str | None = None
    details: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    frames: list[Frame] = field(default_factory=list)
    exception: str = ""
    traceback: str = ""

    @property
    def same_raise(self) -> str:
        """What makes two tracebacks "the same" for a report that shows one of them once: the same
        places (each frame's file, line and function) and the same exception but for the numbers
        it names (the same error with other sizes). Facts, never the worded text."""
        import re
        return repr(([(f.ref, f.file, f.line, f.function) for f in self.frames], re.sub(r"\d+", "N", self.exception)))

    @property
    def shown_details(self) -> list[str]:
        """The detail lines and then the traceback's words (:attr:`traceback`, once a view has
        worded it): what a report shows below the message."""
        return [*self.details, self.traceback] if self.traceback else list(self.details)

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "message": self.message, "hint": self.hint,
               "details": list(self.details), "data": self.data}
        if self.frames or self.exception:
            out.update(frames=[f.to_json() for f in self.frames], exception=self.exception)
        if self.traceback:
            out["traceback"] = self.traceback
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "Failure | None":
        """The failure of its ``to_json`` form (None for None or an empty dict).

        Raises:
            KeyError, TypeError: ``data`` is not a failure's JSON form.
        """
        if not data:
            return None
        return cls(kind=data["kind"], message=data.get("message", ""), hint=data.get("hint"),
                   details=list(data.get("details") or []), data=dict(data.get("data") or {}),
                   frames=[Frame.from_json(f) for f in data.get("frames") or []],
                   exception=str(data.get("exception") or ""))


@dataclass(kw_only=True)
class ArrayInfo:
    """Shape and dtype name of one array (no values), e.g. ``ArrayInfo(shape=(2, 3), dtype="float32")``;
    for a scalar parameter (``stride``, ``eps``, ``patch``) its ``value`` too, a Python number,
    whatever the case's size (an instructor's learner saw ``{"shape": [], "dtype": "int64"}``
    of a large case's patch length and could not tell it)."""

    shape: tuple[int, ...]
    dtype: str
    value: int | float | bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": list(self.shape), "dtype": self.dtype}
        if self.value is not None:
            out["value"] = self.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ArrayInfo":
        """The record of its ``to_json`` form."""
        value = data.get("value")
        return cls(shape=tuple(data["shape"]), dtype=data["dtype"],
                   value=value if isinstance(value, (int, float, bool)) else None)

    @classmethod
    def of_inputs(cls, inputs: dict[str, Any], scalars: tuple[str, ...] = ()) -> dict[str, "ArrayInfo"]:
        """The records of a case's ``inputs`` (name -> array): each array's shape and dtype, and
        the value of each of ``scalars`` (0-d arrays) that is a finite number."""
        def value(name: str, a: Any) -> int | float | bool | None:
            if name not in scalars or getattr(a, "ndim", 1) != 0:
                return None
            v = a.item()
            return v if isinstance(v, (bool, int)) or (isinstance(v, float) and math.isfinite(v)) else None

        return {k: cls(shape=tuple(v.shape), dtype=v.dtype.name, value=value(k, v)) for k, v in inputs.items()}


@dataclass(kw_only=True, frozen=True)
class Replay:
    """The command that re-runs exactly one case, as facts (``grader.plan.replay_of`` makes it;
    :meth:`words` writes it, once, for the reader: ``grader.reports.view.build``).

    Attributes:
        submission: the graded file as the check was given it.
        problem: the problem's id.
        case: the case's name (``--case``), or None when the case is a literal.
        literal: the case as ``--replay`` JSON (a shrunk or replayed case, or a learner's case
            of a secret seed small enough to write out), or None.
        seed: ``--seed`` (None: the default seed 0, not written).
        problems_dir, framework, max_examples: ``--problems-dir``, ``--framework`` and
            ``--max-examples`` as the check had them, or None.
        seeded: the case's inputs come from the seed (a learner told no seed cannot replay it
            by name: :meth:`without_seed`).
        small: for a seeded case small enough to write out, its ``--replay`` literal, which a
            reader not told the seed gets instead (:meth:`without_seed`); else None.
    """

    submission: str
    problem: str
    case: str | None = None
    literal: str | None = None
    seed: int | None = None
    problems_dir: str | None = None
    framework: str | None = None
    max_examples: int | None = None
    seeded: bool = False
    small: str | None = None

    def words(self) -> str:
        """The shell command (``shlex.join``), naming the file and the problems folder as these
        facts do (a learner's view has named them as the learner has them already)."""
        import os
        import shlex

        words = ["grader", "check", self.submission, "--problem", self.problem]
        if self.problems_dir:
            words += ["--problems-dir", os.path.normpath(self.problems_dir)]
        if self.framework:
            words += ["--framework", self.framework]
        if self.literal is not None:
            return shlex.join(words + ["--replay", self.literal])
        if self.seed:
            words += ["--seed", str(self.seed)]
        if self.max_examples is not None:
            words += ["--max-examples", str(self.max_examples)]
        return shlex.join(words + ["--case", str(self.case)])

    def without_seed(self) -> "Replay | None":
        """The command for a reader not told the seed: the same without ``--seed`` when the
        seed does not choose the case's inputs (a literal, or a spec's fixed case), the case as
        its literal when it is small enough (:attr:`small`), else None."""
        if self.literal is not None or not self.seed:
            return dataclasses.replace(self, small=None)
        if not self.seeded:
            return dataclasses.replace(self, seed=None, small=None)
        if self.small is not None:
            return dataclasses.replace(self, case=None, seed=None, max_examples=None, literal=self.small, small=None)
        return None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v is not False}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "Replay | None":
        """The facts of a :meth:`to_json` form (None for none).

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not a replay's JSON form.
        """
        if not data:
            return None
        def number(v: Any) -> int | None:   # an int as JSON gives it; a hand-edited Infinity is none
            return v if type(v) is int else None

        def text(v: Any) -> str | None:
            return v if isinstance(v, str) else None

        return cls(submission=str(data["submission"]), problem=str(data["problem"]), case=text(data.get("case")),
                   literal=text(data.get("literal")), seed=number(data.get("seed")),
                   problems_dir=text(data.get("problems_dir")), framework=text(data.get("framework")),
                   max_examples=number(data.get("max_examples")), seeded=bool(data.get("seeded", False)),
                   small=text(data.get("small")))


@dataclass(kw_only=True)
class CaseResult:
    """The outcome of one test case.

    Attributes:
        name: unique within a report, e.g. ``"worked_example[float32]"``.
        group: the spec's case group (``"examples"``, ``"edge"``, ``"exact"``, ``"generated"``...),
            which carries points and visibility.
        status: one of :data:`STATUSES`: ``passed``; ``failed`` (the output was wrong);
            ``error`` (the call raised, crashed or could not be read); ``timeout``; ``skipped``
            (not run, e.g. after the submission timed out).
        dtype: the case's floating dtype name (``"float16"``, ``"bfloat16"``...).
        rank: number of axes of the first parameter (hidden), for grouping.
        inputs: parameter name -> :class:`ArrayInfo`.
        visibility: ``"visible"`` or ``"hidden"`` (hidden cases are shown to learners as counts).
        failure: why it did not pass, or None.
        seconds: wall time of the call in the submission's process (seconds).
        values: for small cases (64 elements or fewer per array), the inputs, expected and
            got values as nested lists, for display; else None.
        replay_facts: how to re-run exactly this case (:class:`Replay`), or None.
        replay: that command in words for one reader: set by ``grader.reports.view.build`` alone
            (from :attr:`replay_facts`), None in the records grading makes; read back by
            :meth:`from_json` only from a report that has no facts (an older one).
        replay_note: why there is no replay command, or None (a learner's case from the
            instructor's secret seed too large for a ``--replay`` literal).
        shrunk: True when this case is the smallest failing input found by shrinking.
        margin: the worst ``|got - expected| / allowance`` of the output at the full allowance
            (``grader.compare.assess``): below 1 within the tolerance; None where no tolerance
            applies (exact, integer, checked or not comparable outputs, calls that raised).
        seeded: the case's inputs come from a secret seed (``grader.plan.seed_dependent``): a
            learner is shown its inputs and what the submission returned, not the expected values.
    """

    name: str
    group: str
    status: str
    dtype: str
    rank: int
    inputs: dict[str, ArrayInfo]
    visibility: str = "visible"
    failure: Failure | None = None
    seconds: float = 0.0
    values: dict[str, Any] | None = None
    replay: str | None = None
    replay_facts: Replay | None = None
    shrunk: bool = False
    replay_note: str | None = None
    margin: float | None = None
    seeded: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "group": self.group, "status": self.status,
            "dtype": self.dtype, "rank": self.rank,
            "inputs": {k: v.to_json() for k, v in self.inputs.items()},
            "visibility": self.visibility,
            "failure": self.failure.to_json() if self.failure else None,
            "seconds": round(self.seconds, 6),
            "values": self.values, "replay": self.replay, "shrunk": self.shrunk,
            **({"replay_facts": self.replay_facts.to_json()} if self.replay_facts else {}),
            **({"replay_note": self.replay_note} if self.replay_note else {}),
            **({"margin": json_ratio(self.margin)} if self.margin is not None else {}),
            **({"seeded": True} if self.seeded else {}),
        }

    @classmethod
    def from_json(cls, c: dict[str, Any]) -> "CaseResult":
        """The record of its ``to_json`` form (a learner's redacted hidden case comes back with
        the fields it kept; the others take their defaults).

        Raises:
            KeyError, TypeError, ValueError: ``c`` is not a case's JSON form.
        """
        return cls(name=c["name"], group=c["group"], status=c["status"], dtype=c.get("dtype", ""),
                   rank=int(c.get("rank", 0)),
                   inputs={k: ArrayInfo.from_json(v) for k, v in (c.get("inputs") or {}).items()},
                   visibility=c.get("visibility", "visible"), failure=Failure.from_json(c.get("failure")),
                   seconds=float(c.get("seconds", 0.0)), values=c.get("values"),
                   replay=None if c.get("replay_facts") else c.get("replay"),
                   replay_facts=Replay.from_json(c.get("replay_facts")),
                   shrunk=bool(c.get("shrunk", False)), replay_note=c.get("replay_note"),
                   margin=float(c["margin"]) if c.get("margin") is not None else None,
                   seeded=bool(c.get("seeded", False)))


@dataclass(kw_only=True)
class GroupScore:
    """Points of one case group: ``earned`` of ``points`` with ``passed`` of ``total`` cases."""

    group: str
    points: float
    earned: float
    passed: int
    total: int
    visibility: str = "visible"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, g: dict[str, Any]) -> "GroupScore":
        """The record of its ``to_json`` form."""
        return cls(group=g["group"], points=float(g["points"]), earned=float(g["earned"]), passed=int(g["passed"]),
                   total=int(g["total"]), visibility=g.get("visibility", "visible"))


@dataclass(kw_only=True)
class Report:
    """The whole result of checking one submission against one problem.

    Attributes:
        problem: the problem id (``"tied_lm_head"``).
        title: the problem's title.
        submission: the path graded, as given.
        passed: True only when every case ran and passed.
        score, max_score: points earned and available (from the spec's groups).
        failure: set when nothing could be graded (``import``, or a crash before any case).
        cases: every case, in run order.
        groups: points per case group.
        summary: failures grouped by kind, dtype and rank (see ``grader.summary.summarise``).
        environment: seed, framework, dtypes graded, versions, sandbox tier, x64 flag.
        output: the submission's captured ``stdout``/``stderr`` heads and whether they were cut.
        seconds: wall time of the whole check (seconds).
    """

    problem: str
    title: str
    submission: str
    passed: bool
    score: float
    max_score: float
    failure: Failure | None
    cases: list[CaseResult]
    groups: list[GroupScore]
    summary: list[dict[str, Any]]
    environment: dict[str, Any]
    output: dict[str, Any]
    seconds: float = 0.0

    @property
    def failure_kinds(self) -> list[str]:
        """Distinct failure kinds in the report, the whole-run failure first."""
        kinds: list[str] = []
        if self.failure:
            kinds.append(self.failure.kind)
        for case in self.cases:
            if case.failure and case.failure.kind not in kinds:
                kinds.append(case.failure.kind)
        return kinds

    def to_json(self) -> dict[str, Any]:
        return {
            "problem": self.problem, "title": self.title, "submission": self.submission,
            "passed": self.passed, "score": self.score, "max_score": self.max_score,
            "failure": self.failure.to_json() if self.failure else None,
            "cases": [c.to_json() for c in self.cases],
            "groups": [g.to_json() for g in self.groups],
            "summary": self.summary,
            "environment": self.environment,
            "output": self.output,
            "seconds": round(self.seconds, 3),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Report":
        """The report of a ``--format json`` report (either audience; a learner's redacted hidden
        cases come back with the fields they kept).

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not a report.
        """
        return cls(problem=data["problem"], title=data["title"], submission=data["submission"],
                   passed=bool(data["passed"]), score=float(data["score"]), max_score=float(data["max_score"]),
                   failure=Failure.from_json(data.get("failure")),
                   cases=[CaseResult.from_json(c) for c in data["cases"]] + _hidden_placeholders(data.get("hidden")),
                   groups=[GroupScore.from_json(g) for g in data["groups"]],
                   summary=list(data.get("summary") or []), environment=dict(data.get("environment") or {}),
                   output=dict(data.get("output") or {}), seconds=float(data.get("seconds", 0.0)))


def _hidden_placeholders(tallies: Any) -> list[CaseResult]:
    """Stand-ins for the hidden cases of a learner's JSON report (its ``hidden`` list: per
    group, ``passed`` of ``total``): that many passed and failed cases of the group, so that a
    report read back counts and renders as the learner's did. They hold nothing else."""
    out: list[CaseResult] = []
    for t in tallies or []:
        passed, total = int(t["passed"]), int(t["total"])
        out += [CaseResult(name=f"{t['group']}-hidden-{k}", group=str(t["group"]),
                           status="passed" if k < passed else "failed", dtype="", rank=0, inputs={},
                           visibility="hidden") for k in range(total)]
    return out


@dataclass(kw_only=True)
class ImportOutcome:
    """What starting the submission gave (an executor's ``start``).

    Attributes:
        status: ``ok``, ``import_error`` (it raised or exited while importing, or lacks the
            function), ``timeout`` (the import passed its CPU or wall-clock limit), ``crash``
            (its process died) or ``unconfined`` (the sandbox failed before the submission's
            code ran: the machine's fault, never graded; ``grader.run.sandboxed`` raises).
        message: one line saying what happened ("" for ``ok``).
        frames, exception: where and what it raised while importing (:class:`Frame`), or empty.
        versions: framework name -> version string the child imported (``{"jax": "0.7.1"}``).
        seconds: how long the import took (wall clock, seconds).
        hint: what the executor knows of why it failed (e.g. a memory limit below what the
            framework's import needs), or None.
    """

    status: str
    message: str = ""
    frames: list[Frame] = field(default_factory=list)
    exception: str = ""
    versions: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    hint: str | None = None


@dataclass(kw_only=True)
class CallOutcome:
    """What one call of the submission's function gave (an executor's ``call``).

    ``status`` is one of ``ok`` (``result`` holds the array as NumPy), ``type`` (not an array;
    ``message`` names the type, ``result_type`` its name), ``exception`` / ``memory``
    (``message``, ``frames`` and ``exception``; ``error_types`` the exception's type and base names),
    ``timeout`` (the call passed a limit, named by ``limit``: ``cpu`` its CPU time, ``wall``
    its wall-clock backstop, ``total`` the run's ``--total-timeout``) or ``crash`` (the process
    died or broke the protocol; ``message`` says how). ``mutated`` lists the inputs changed in
    place (values, shape, strides or dtype). ``seconds`` is the call's wall-clock duration in
    seconds and ``cpu_seconds`` its CPU time (None: unknown), both as measured by the grader.
    A tuple, list or dict of arrays comes back as ``ok`` with ``result`` None, ``results`` (item
    key, ``"0"``, ``"1"``... or the dict's keys, -> array), ``result_types`` (key -> the item's
    type name) and ``result_type`` ``"tuple"``, ``"list"`` or ``"dict"``; a spec with one output
    judges it a ``type`` failure, one with several outputs judges each item. A ``type`` outcome
    of such a container with an item that is no array names that item in ``result_types``
    (its key -> what it is: ``{"0": "list"}`` for ``[y.tolist(), ...]``).
    """

    status: str
    result: np.ndarray | None = None
    message: str = ""
    frames: list[Frame] = field(default_factory=list)
    exception: str = ""
    mutated: list[str] = field(default_factory=list)
    seconds: float = 0.0
    result_type: str = ""
    error_types: list[str] = field(default_factory=list)
    limit: str = ""
    cpu_seconds: float | None = None
    results: dict[str, np.ndarray] | None = None
    result_types: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class Verdict:
    """The judge's word on one case (``grader.grading.judge``).

    Attributes:
        status: one of :data:`STATUSES` but ``skipped``: ``passed``, ``failed`` (a value was
            compared and is wrong, or a case that must raise did not), ``error`` (the call
            raised, crashed or ran out of memory) or ``timeout``.
        failure: why it did not pass (None exactly when ``status`` is ``passed``).
        margin: the output's worst error / allowance (``grader.compare.assess``), or None.
    """

    status: str
    failure: Failure | None = None
    margin: float | None = None

    @property
    def passed(self) -> bool:
        """Whether the case passed."""
        return self.status == "passed"


def no_submission(report: "Report") -> bool:
    """Whether ``report`` stands for a learner with nothing submitted (a roster learner of whom
    nothing was found, ``grader.batch.roster.NO_SUBMISSION``, or an empty folder,
    :data:`EMPTY_FOLDER`: its failure's kind is ``missing``): counted and shown apart from a file
    that could not be graded."""
    return report.failure is not None and report.failure.kind == "missing"
