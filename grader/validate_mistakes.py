"""Checks 4 and 5 of ``grader validate``: the mistakes and alternatives graded, and the mutation score.

The records of a validation's findings (:class:`Finding`, :class:`MistakeResult`,
:class:`AlternativeResult`), how each file of ``mistakes.dir`` and ``alternatives.dir`` is
graded (sandboxed, or through the executor ``validate_problem`` is given), and the findings
drawn from them: mistakes not caught or caught with the wrong kind, slim margins, a mistake
caught by a single case, and per case group the share of mistakes caught (the mutation score).
:mod:`grader.validate` runs them after checks 1-3 and re-exports these names.
"""
from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import GraderError
from .results import json_ratio

ERROR, WARNING = "error", "warning"
#: statuses of a case that did not pass and was run (a ``skipped`` case was never called)
_CAUGHT = ("failed", "error", "timeout")


@dataclass
class Finding:
    """One error or warning of a validation.

    Attributes:
        level: ``"error"`` (the problem is invalid) or ``"warning"``.
        check: which check found it: ``spec``, ``reference``, ``literal``, ``oracle``,
            ``mistakes`` or ``coverage``.
        message: one line for a person.
        data: the facts behind the message (JSON-serialisable).
    """

    level: str
    check: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON-ready mapping."""
        return {"level": self.level, "check": self.check, "message": self.message, "data": self.data}


@dataclass
class MistakeResult:
    """How one file of the mistakes folder was graded.

    Attributes:
        file: the file name (within ``mistakes.dir``).
        expected: the kind ``mistakes.expect`` states for it (several as ``"tolerance or
            non_finite"``, :attr:`accepted`), or None.
        kind: the kind it failed with (most failing cases' kind, or the whole run's), or None
            when it passed or could not be graded.
        kinds: failure kind -> number of failing cases (the whole run's kind counts 1).
        groups: the case groups with a failing case (the groups that catch it).
        failed, total: failing and graded cases.
        passed: the check passed (no case catches the mistake).
        error: why the grader could not grade it, or None.
        seconds: wall-clock seconds of its check.
        margins: case group -> the largest error / allowance of its cases (``CaseResult.margin``,
            at the full allowance): how far beyond the tolerance the mistake lands there.
        caught_by: the distinct cases that catch it, by name without the dtype
            (``late_step`` for ``late_step[float32]`` and ``late_step[float64]``), in report order.
        score, max_score: the points it earns, of the problem's (None: not graded).
    """

    file: str
    expected: str | None
    kind: str | None = None
    kinds: dict[str, int] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    failed: int = 0
    total: int = 0
    passed: bool = False
    error: str | None = None
    seconds: float = 0.0
    margins: dict[str, float] = field(default_factory=dict)
    caught_by: list[str] = field(default_factory=list)
    score: float | None = None
    max_score: float | None = None

    @property
    def ok(self) -> bool:
        """It failed, with the stated kind."""
        return self.error is None and not self.passed and self.kind in self.accepted

    @property
    def accepted(self) -> tuple[str, ...]:
        """The kinds it may fail with: one, or several where the spec lists them (a mistake that
        fails on values and, on a case the seed may or may not draw, with NaN)."""
        return tuple(self.expected.split(" or ")) if self.expected else ()

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-ready mapping."""
        return {"file": self.file, "expected": self.expected, "kind": self.kind, "ok": self.ok,
                "passed": self.passed, "kinds": self.kinds, "groups": self.groups, "failed": self.failed,
                "total": self.total, "error": self.error, "seconds": round(self.seconds, 3),
                "margins": {g: rounded_margin(m) for g, m in self.margins.items()}, "caught_by": self.caught_by,
                "score": self.score, "max_score": self.max_score}

    @property
    def margin(self) -> float | None:
        """How far beyond the tolerance the mistake lands at most (its caught-by margin), or None."""
        return max(self.margins.values()) if self.margins else None


def rounded_margin(x: float) -> float | str:
    """A margin for validate's JSON: 3 significant digits (``grader.results.json_ratio``)."""
    return json_ratio(x, 3)


def group_margins(cases: list[Any]) -> dict[str, float]:
    """Case group -> the largest ``margin`` (worst error / allowance) among ``cases``, for the
    groups with a case that has one."""
    out: dict[str, float] = {}
    for c in cases:
        m = getattr(c, "margin", None)
        if m is not None and not getattr(c, "shrunk", False):
            out[c.group] = max(out.get(c.group, 0.0), m)
    return out


# -- check 4: mistakes -----------------------------------------------------------------------

def mistake_files(problem: Any) -> tuple[Path | None, list[Path], dict[str, str], list[Finding]]:
    """The mistakes folder, its ``.py`` files, the stated kinds, and findings about the config.

    Errors: a missing folder, a stated file that does not exist, a file with no stated kind, a
    kind that is not a failure kind of the grader.
    """
    from .results import KINDS

    cfg = problem.raw.get("mistakes")
    if not cfg:
        return None, [], {}, []
    folder = Path(problem.path).resolve().parent / str(cfg["dir"])
    expect = {str(k): " or ".join(map(str, v)) if isinstance(v, list) else str(v)
              for k, v in (cfg.get("expect") or {}).items()}
    findings: list[Finding] = []
    if not folder.is_dir():
        return folder, [], expect, [Finding(ERROR, "mistakes", f"mistakes.dir: no folder at {folder}",
                                            {"dir": str(folder)})]
    files = sorted(p for p in folder.glob("*.py") if p.is_file())
    names = {p.name for p in files}
    for name, kind in expect.items():
        if name not in names:
            findings.append(Finding(ERROR, "mistakes", f"mistakes.expect: {name} is not in {cfg['dir']}",
                                    {"file": name}))
        for one in kind.split(" or "):
            if one not in KINDS:
                findings.append(Finding(ERROR, "mistakes", f"mistakes.expect: {name}: {one!r} is not a failure kind; "
                                                           f"kinds: {', '.join(KINDS)}", {"file": name, "kind": one}))
    for p in files:
        if p.name not in expect:
            findings.append(Finding(ERROR, "mistakes", f"mistake {p.name} has no stated kind in mistakes.expect",
                                    {"file": p.name}))
    if not files:
        findings.append(Finding(WARNING, "mistakes", f"the mistakes folder {cfg['dir']} holds no .py file",
                                {"dir": str(folder)}))
    return folder, files, expect, findings


def _dominant(kinds: Counter, stated: tuple[str, ...] = ()) -> str | None:
    """The commonest kind; of kinds tied for it, a ``stated`` one (the spec's expectation: a
    helper's half-float sum failed one case as non_finite and one as tolerance, and validate
    called it non_finite, not the tolerance it stated), else the first in ``results.KINDS``."""
    if not kinds:
        return None
    from .results import KINDS

    top = max(kinds.values())
    tied = [k for k in kinds if kinds[k] == top]
    return min(tied, key=lambda k: (k not in stated, KINDS.index(k) if k in KINDS else len(KINDS)))


#: ``executor_for(path, problem, plan) -> Executor``: how the files of a validation are run when
#: not in their sandboxed process (``grader.run.inprocess.for_file`` in the project's tests)
ExecutorFor = Callable[[Path, Any, Any], Any]


def _check(path: Path, problem: Any, opts: Any, executor_for: ExecutorFor | None) -> Any:
    """The report of ``path``: ``check_submission`` (its own sandboxed process), or with
    ``executor_for`` the same plan graded through the executor it gives (nothing is started)."""
    from .check import check_submission, grade_plan
    from .plan import make_plan

    if executor_for is None:
        return check_submission(path, problem, opts)
    plan = make_plan(path, problem, opts, lambda request: ("none", None))
    return grade_plan(plan, executor_for(path, problem, plan))


def grade_mistake(path: Path, problem: Any, expected: str | None, sandbox: str = "auto",
                  executor_for: ExecutorFor | None = None, seed: int = 0) -> MistakeResult:
    """Grade one mistake with :func:`grader.check.check_submission` (default cases of ``seed``,
    sandboxed, no shrinking, every case shown) and summarise how it failed."""
    from .options import CheckOptions

    started = time.monotonic()
    result = MistakeResult(path.name, expected)
    opts = CheckOptions(shrink=False, sandbox=sandbox, audience="instructor", submission_shown=path.name, seed=seed)
    try:
        report = _check(path, problem, opts, executor_for)
    except GraderError as exc:
        result.error = str(exc)
        result.seconds = time.monotonic() - started
        return result
    kinds: Counter = Counter()
    groups: list[str] = []
    graded = [c for c in report.cases if not getattr(c, "shrunk", False)]
    # a case failed only as ``unearned`` (a case a stub passes, not credited beside a run that
    # fails most others: ``grading.unearned``) did not catch the mistake: the others did
    every = graded
    graded = [c for c in graded if not (c.failure is not None and c.failure.kind == "unearned")]
    for c in graded:
        if c.status in _CAUGHT:
            kinds[c.failure.kind if c.failure else c.status] += 1
            if c.group not in groups:
                groups.append(c.group)
            base = c.name.split("[", 1)[0]
            if base not in result.caught_by:
                result.caught_by.append(base)
    if report.failure is not None:
        kinds[report.failure.kind] += 1
    result.kinds = dict(kinds)
    result.kind = _dominant(kinds, result.accepted) if not report.passed else None
    result.groups = groups
    result.failed = sum(c.status in _CAUGHT for c in graded)
    result.total = len(every)
    result.passed = bool(report.passed)
    result.margins = group_margins(graded)
    result.score, result.max_score = report.score, report.max_score
    result.seconds = time.monotonic() - started
    return result


@dataclass
class AlternativeResult:
    """How one correct implementation of ``alternatives.dir`` was graded (at ``share`` of each
    allowance): ``passed``, else the commonest failure ``kind``, ``failed`` of ``total`` cases and
    the first failing case's ``case`` name and ``message``; ``error`` if it could not be graded;
    ``margins``: case group -> its cases' worst error / allowance at the full allowance (a correct
    file passes at ``share`` exactly when every margin is at most ``share``)."""

    file: str
    share: float
    passed: bool = False
    kind: str | None = None
    failed: int = 0
    total: int = 0
    case: str = ""
    message: str = ""
    framework: str = ""
    error: str | None = None
    seconds: float = 0.0
    margins: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready mapping."""
        return {"file": self.file, "share": self.share, "passed": self.passed, "kind": self.kind,
                "failed": self.failed, "total": self.total, "case": self.case, "message": self.message,
                "framework": self.framework, "error": self.error, "seconds": round(self.seconds, 3),
                "margins": {g: rounded_margin(m) for g, m in self.margins.items()}}


def alternative_files(problem: Any) -> tuple[list[Path], float, list[Finding]]:
    """The ``.py`` files of ``alternatives.dir``, the share of the allowance they may use, and
    findings about the config."""
    cfg = problem.alternatives
    if not cfg:
        return [], 0.5, []
    folder = (problem.path.resolve().parent / cfg["dir"]).resolve()
    share = float(cfg.get("margin", 0.5))
    if not folder.is_dir():
        return [], share, [Finding(ERROR, "alternatives", f"alternatives.dir: no folder at {folder}")]
    files = sorted(p for p in folder.glob("*.py") if p.is_file() and not p.is_symlink())
    if not files:
        return [], share, [Finding(WARNING, "alternatives", f"the alternatives folder {cfg['dir']} holds no .py file")]
    return files, share, []


def grade_alternative(path: Path, problem: Any, share: float, sandbox: str = "auto",
                      executor_for: ExecutorFor | None = None, seed: int = 0) -> AlternativeResult:
    """Grade one correct implementation with every allowance cut to ``share`` (no shrinking) on
    the cases of ``seed``: it must pass every case of every dtype of its framework."""
    from .options import CheckOptions

    started = time.monotonic()
    out = AlternativeResult(path.name, share)
    opts = CheckOptions(shrink=False, sandbox=sandbox, audience="instructor", submission_shown=path.name,
                        allowance_share=share, seed=seed)
    try:
        report = _check(path, problem, opts, executor_for)
    except GraderError as exc:
        out.error, out.seconds = str(exc), time.monotonic() - started
        return out
    out.framework = str(report.environment.get("framework", "")) if isinstance(report.environment, dict) else ""
    bad = [c for c in report.cases if c.status in _CAUGHT]
    out.passed, out.failed, out.total = bool(report.passed), len(bad), len(report.cases)
    out.margins = group_margins(report.cases)
    kinds: Counter = Counter(c.failure.kind if c.failure else c.status for c in bad)
    if report.failure is not None:
        kinds[report.failure.kind] += 1
        out.message = report.failure.message
    out.kind = _dominant(kinds) if kinds else None
    if bad:
        first = bad[0]
        out.case = first.name
        out.message = (first.failure.message + ("; " + first.failure.details[0] if first.failure.details else "")
                       if first.failure else first.status)
    out.seconds = time.monotonic() - started
    return out


def alternative_findings(results: list[AlternativeResult]) -> list[Finding]:
    """Errors for alternatives that fail (at their share of the allowance) or could not be graded."""
    findings = []
    for a in results:
        if a.error is not None:
            findings.append(Finding(ERROR, "alternatives", f"alternative {a.file} could not be graded: {a.error}"))
        elif not a.passed:
            worst = max(a.margins.values(), default=None)
            # within the whole allowance, beyond the share: the allowance is tight for this correct
            # file (an instructor's torch mean in float64 reached 0.62): say by how much to widen it
            advice = (f" (it passes the whole allowance, at most {worst:.2g} of it: if the file is right, widen the "
                      f"allowance by at least {worst / a.share:.2g}x: tolerance.factor, or tolerance.factors for the "
                      f"dtype of {a.case})") if a.kind == "tolerance" and worst is not None and 0 < worst <= 1 else ""
            if a.kind == "tolerance" and not advice and (worst is None or worst == 0):
                # its failures are exact comparisons (an integer output): no allowance to widen (a
                # newcomer's tie-order alternatives read "widen the allowance by at least 0x")
                advice = (" (those values are compared exactly, as an integer output is: if the file is right, "
                          "the expected values are one of several right answers, any order among ties say: a "
                          "checker judges such an output, which takes a function of one output)")
            findings.append(Finding(ERROR, "alternatives",
                                    f"alternative {a.file} fails at {a.share:g} of the allowance: {a.kind} in "
                                    f"{a.failed} of {a.total} cases; first {a.case}: {a.message}{advice}"))
    return findings


def grade_mistakes(problem: Any, files: list[Path], expect: dict[str, str], jobs: int,
                   sandbox: str = "auto", executor_for: ExecutorFor | None = None,
                   seed: int = 0) -> list[MistakeResult]:
    """Grade ``files`` ``jobs`` at a time (threads; each check runs its mistake in its own
    sandboxed process, or through ``executor_for``) on the cases of ``seed``; results in the
    order of ``files``."""
    with ThreadPoolExecutor(max(1, jobs), thread_name_prefix="mistake") as pool:
        futures = [pool.submit(grade_mistake, p, problem, expect.get(p.name), sandbox, executor_for, seed)
                   for p in files]
        return [f.result() for f in futures]


def mistake_findings(results: list[MistakeResult]) -> list[Finding]:
    """Errors for mistakes that pass, fail with another kind, or could not be graded."""
    findings = []
    for m in results:
        shown = ", ".join(f"{k} {n}" for k, n in sorted(m.kinds.items(), key=lambda kv: -kv[1]))
        if m.error is not None:
            findings.append(Finding(ERROR, "mistakes", f"mistake {m.file} could not be graded: {m.error}",
                                    {"file": m.file}))
        elif m.passed:
            findings.append(Finding(ERROR, "mistakes", f"mistake {m.file} passes: no case catches it",
                                    {"file": m.file, "expected": m.expected}))
        elif m.expected is not None and m.kind not in m.accepted:
            findings.append(Finding(ERROR, "mistakes", f"mistake {m.file} fails with {m.kind}, not {m.expected} "
                                                       f"(failing cases by kind: {shown})",
                                    {"file": m.file, "expected": m.expected, "kind": m.kind, "kinds": m.kinds}))
    return findings


#: a mistake that fails on values must land at least this many allowances away somewhere, or a
#: slightly looser tolerance (another dtype, another factor) would pass it (docs/tolerance.md)
WIDE_MARGIN = 10.0


def margin_findings(results: list[MistakeResult]) -> list[Finding]:
    """A warning for each mistake caught by value (kind ``tolerance``) whose worst case is off by
    less than :data:`WIDE_MARGIN` times the allowance: it is caught, but narrowly."""
    findings = []
    for m in results:
        if m.ok and m.kind == "tolerance" and m.margin is not None and m.margin < WIDE_MARGIN:
            findings.append(Finding(WARNING, "margin",
                                    f"mistake {m.file} is caught by only {m.margin:.3g}x the allowance at most "
                                    f"(under {WIDE_MARGIN:g}x): a slightly looser tolerance would pass it",
                                    {"file": m.file, "margin": rounded_margin(m.margin)}))
    return findings


#: a mistake that keeps this share of the points or more is worth a word to the instructor
LENIENT = 0.75


def score_findings(results: list[MistakeResult]) -> list[Finding]:
    """A warning for each mistake caught that still earns :data:`LENIENT` of the points or more
    (a helper's trial: a softmax without the max shift, which the statement forbids, scored
    8.4 of 10): the groups that catch it carry few points. A warning, not an error: a mistake
    that matters only at the edges may rightly cost little."""
    from .reports.common import points
    findings = []
    for m in results:
        if m.ok and m.score is not None and m.max_score and m.score >= LENIENT * m.max_score:
            findings.append(Finding(WARNING, "lenient",
                                    f"mistake {m.file} still scores {points(m.score)} of {points(m.max_score)}: "
                                    f"the groups that catch it ({', '.join(m.groups)}) carry few of the points; "
                                    "give them more if the statement makes this a requirement",
                                    {"file": m.file, "score": m.score, "max_score": m.max_score}))
    return findings


def single_case_findings(results: list[MistakeResult]) -> list[Finding]:
    """A warning for each mistake caught (with its stated kind) by one case only, whatever its
    dtypes: a change to that one case would let it pass."""
    findings = []
    for m in results:
        if m.ok and len(m.caught_by) == 1:
            findings.append(Finding(WARNING, "single_case",
                                    f"mistake {m.file} is caught by one case only ({m.caught_by[0]}): a change to "
                                    f"that case would let it pass; add another case that catches it",
                                    {"file": m.file, "case": m.caught_by[0]}))
    return findings


def mutation_scores(problem: Any, results: list[MistakeResult]) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Check 5: per group, how many of the mistakes graded on cases it catches; a warning for a
    group that catches none."""
    graded = [m for m in results if m.error is None and m.total > 0]
    rows, findings = [], []
    for name in problem.groups:
        caught = [m.file for m in graded if name in m.groups]
        missed = [m.file for m in graded if name not in m.groups]
        share = len(caught) / len(graded) if graded else None
        # the mistakes caught here by value: the least of their margins in this group
        by_value = [m.margins[name] for m in graded if m.kind == "tolerance" and name in m.margins
                    and m.margins[name] > 1]
        rows.append({"group": name, "caught": len(caught), "of": len(graded),
                     "share": round(share, 4) if share is not None else None, "missed": missed,
                     "least_mistake_margin": rounded_margin(min(by_value)) if by_value else None})
        if graded and not caught:
            findings.append(Finding(WARNING, "coverage", f"group {name} catches none of the {len(graded)} mistakes",
                                    {"group": name}))
    return rows, findings
