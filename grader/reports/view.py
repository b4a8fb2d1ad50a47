"""One view of a report per audience, built once; every format renders from it.

:func:`build` applies the policy that used to be re-derived by each reporter: which cases the
audience may see (``common.split_cases``), the per-group counts of concealed ones
(``common.HiddenTally``), the secret-seed replay policy (``common.for_audience``), the failure
pattern for the cases shown (``grader.summary.summarise``), the hints, and whether the
submission's output may be shown.

Shrunk cases (``CaseResult.shrunk``, group ``"shrunk"``) are extra feedback: a smaller input
that fails like a graded case. They are never counted as graded cases nor listed as a group;
each is attached to the graded case it was shrunk from (:attr:`ReportView.shrunk_of`), and
formats show it beside that case.
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

from grader.reports import common
from grader.results import RUN_KINDS, SHRUNK_PREFIX, CaseResult, Failure, Report  # SHRUNK_PREFIX: re-exported


@dataclass
class ReportView:
    """What one audience may see of a :class:`~grader.results.Report`, with the counts every
    format states.

    Attributes:
        report: the report as the audience may see it (``common.for_audience`` applied).
        audience: ``"learner"`` or ``"instructor"``.
        graded: every graded case (shrunk ones excluded), hidden ones included.
        shown: the graded cases the audience may see, in run order.
        failing: the shown graded cases that did not pass and were not skipped.
        shrunk: the shrunk cases the audience may see (extra feedback, never counted).
        shrunk_of: graded case name -> the shown shrunk case found from it.
        tallies: per-group counts of the concealed graded cases (learners only).
        groups: one ``common.GroupView`` per graded group (no ``"shrunk"`` group).
        passed, failed, errors, skipped, total: counts of the graded cases (hidden included):
            ``failed`` the wrong outputs (status ``failed``), ``errors`` the calls that raised,
            crashed or timed out (status ``error`` / ``timeout``); a concealed case that did not
            pass counts as ``failed`` whatever its status.
        summary: the failure pattern by kind, dtype and rank, of the cases the audience may see.
        hints: one hint per idea (hint id), most useful first: the whole-submission failure's,
            then those the summary found shared by failing cases, then those of the failing
            shown cases (the first worded of each idea: :func:`_hints`).
        show_output: whether the submission's captured stdout/stderr may be shown.
        line: the line of the graded function's ``def`` in the submission (``environment.function_line``),
            else the line of a syntax error, else 1: where annotations and JUnit testcases point.
        file: the submission's path where annotations and JUnit testcases point:
            :func:`workspace_path` of ``report.submission`` (relative to the repository root
            under GitHub Actions, else as the grader was given it).
    """

    report: Report
    audience: str
    graded: list[CaseResult]
    shown: list[CaseResult]
    failing: list[CaseResult]
    shrunk: list[CaseResult]
    shrunk_of: dict[str, CaseResult]
    tallies: list[common.HiddenTally]
    groups: list[common.GroupView]
    passed: int
    failed: int
    errors: int
    skipped: int
    total: int
    summary: list[dict[str, Any]]
    hints: list[str]
    show_output: bool
    line: int = 1
    file: str = ""

    # -- shortcuts -------------------------------------------------------------------------
    @property
    def failure(self) -> Failure | None:
        """The whole-submission failure (nothing could be graded), or None."""
        return self.report.failure

    @property
    def environment(self) -> dict[str, Any]:
        """``report.environment`` as the audience may see it (a secret seed hidden from learners)."""
        return self.report.environment

    @property
    def not_passed(self) -> int:
        """Graded cases that failed or errored (skipped ones excluded)."""
        return self.failed + self.errors

    @property
    def counts_text(self) -> str:
        """``"P of N cases passed"``: the one count line every format states; for an assignment,
        then the problems that could not be graded (issue 37: a learner missing a 3-point
        problem read "171 of 172 cases passed"): ``"; not graded: masked_mean_pool (import)"``."""
        text = f"{self.passed} of {self.total} cases passed"
        assignment = self.report.environment.get("assignment")
        parts = assignment.get("problems") if isinstance(assignment, dict) else None
        missing = [f"{p.get('problem')} ({p.get('failure')})" for p in parts if isinstance(p, dict)
                   and p.get("failure")] if isinstance(parts, list) and self.report.failure is None else []
        return text + (f"; not graded: {', '.join(missing)}" if missing else "")

    @property
    def score_text(self) -> str:
        """``"S of M points"``."""
        return f"{common.points(self.report.score)} of {common.points(self.report.max_score)} points"

    def hint_of(self, case: CaseResult) -> str | None:
        """The hint of ``case``, or of the shrunk case found from it; for a shrunk case without
        one of its own (too few elements to tell a mistake), the hint of the case it was shrunk
        from, said to be that case's, as the feedback page shows it (an instructor's trial: the .html gave the first
        case a hint the .txt did not)."""
        if case.failure and case.failure.hint:
            return case.failure.hint
        if case.shrunk:
            original = case.name.removeprefix(SHRUNK_PREFIX)
            big = next((c for c in self.failing if c.name == original), None)
            if big is None or not big.failure or not big.failure.hint:
                return None
            # its numbers are the big case's (a newcomer read "d_model = 57" beside a (1, 9) input)
            return f"{big.failure.hint} (found on {original}, which this case was shrunk from)"
        small = self.shrunk_of.get(case.name)
        return small.failure.hint if small is not None and small.failure else None

    def line_of(self, case: CaseResult) -> int:
        """The line an annotation or JUnit testcase of ``case`` points at: for a case whose call
        raised (its failure's frames), the line of the deepest frame in the submission's file,
        the line that raised or called into what raised; else :attr:`line`, the ``def``."""
        return raising_line(case.failure) or self.part_line(case) or self.line

    def problem_of(self, case: CaseResult) -> str:
        """The problem of ``case`` in an assignment's report (``environment.assignment``), else
        ``""``: the part of its name before ``/``."""
        if not isinstance(self.environment.get("assignment"), dict):
            return ""
        return case.name.removeprefix(SHRUNK_PREFIX).split("/", 1)[0]

    def part_line(self, case: CaseResult) -> int | None:
        """In an assignment's report, the ``def`` line of the function of ``case``'s problem
        (each part's ``function_line``), else None."""
        return self._def_line(self.problem_of(case))

    def _def_line(self, pid: str) -> int | None:
        """The ``function_line`` of problem ``pid``'s part in ``environment.assignment``, or None."""
        for part in (self.environment.get("assignment") or {}).get("problems") or [] if pid else []:
            if isinstance(part, dict) and part.get("problem") == pid and isinstance(part.get("function_line"), int):
                return part["function_line"]
        return None

    def group_line(self, group: str) -> int:
        """The line an annotation or JUnit testcase of a whole ``group`` (a hidden group's counts)
        points at: in an assignment's report, the ``def`` of that group's problem (``<problem>/
        <group>``), else :attr:`line`."""
        if isinstance(self.environment.get("assignment"), dict) and "/" in group:
            return self._def_line(group.split("/", 1)[0]) or self.line
        return self.line

    def failure_line(self) -> int:
        """The line of the whole-submission failure: the deepest frame of the submission's file in
        its traceback (the ``import`` that raised, not the ``def`` after it), else :attr:`line`."""
        return raising_line(self.failure) or self.line

    def one_line_message(self, case: CaseResult) -> str:
        """The case's message and its hint on one line, ``"3 / 10 elements are outside the
        tolerance — hint: ..."``: what CI test reporters show as a failure's title (they show
        only JUnit's ``message`` attribute). The hint is the case's own, its shrunk case's, or
        the one found for its failure pattern (:meth:`hints_for`)."""
        message = case.failure.message if case.failure else case.status
        hint = self.best_hint(case)
        return common.printable(message + (f" — hint: {hint}" if hint else ""), one_line=True)

    def best_hint(self, case: CaseResult) -> str | None:
        """The hint shown with ``case``: its own, its shrunk case's, else its failure pattern's."""
        return self.hint_of(case) or next(iter(self.hints_for([case])), None)

    def case_text(self, case: CaseResult, max_details: int | None = 20) -> str:
        """``common.case_text`` of ``case``, followed by its shrunk case (when one was found)."""
        text = common.case_text(case, max_details)
        small = self.shrunk_of.get(case.name)
        if small is not None:
            inner = common.case_text(small, max_details).splitlines()
            text += "\n" + "\n".join([f"smaller failing input ({small.name}):"] + ["    " + x for x in inner])
        return text

    def hints_for(self, cases: list[CaseResult]) -> list[str]:
        """The hints that explain ``cases``: their own (or their shrunk cases'), then those the
        summary found shared by failing cases of their kinds (a hint found for a failure pattern
        may be on none of the cases themselves)."""
        kinds = {common.kind(c) for c in cases}
        own = [h for c in cases if (h := self.hint_of(c))]
        shared = [h.get("text") for e in self.summary if e.get("kind") in kinds
                  for h in (e.get("hints") or ([e["hint"]] if e.get("hint") else []))]
        return list(dict.fromkeys(h for h in own + shared if h))

    def group_lines(self, group: common.GroupView, max_cases: int, max_details: int | None = 5) -> list[str]:
        """Counts line of ``group``, the hints of its failing cases (:meth:`hints_for`), up to
        ``max_cases`` failing shown cases (a name line and the indented :meth:`case_text`), then
        the counts of its concealed cases."""
        out = [f"{group.passed} of {group.total} cases passed "
               f"({common.points(group.earned)} of {common.points(group.points)} points)"]
        out += [f"hint: {h}" for h in self.hints_for(group.failing)[:3]]
        for case in group.failing[:max_cases]:
            out.append(f"- {case.name}" if case.name.endswith(f"[{case.dtype}]") else f"- {case.name} [{case.dtype}]")
            out += ["    " + line for line in self.case_text(case, max_details).splitlines()]
        if len(group.failing) > max_cases:
            out.append(f"... and {len(group.failing) - max_cases} more failing cases")
        return out + [t.text for t in group.tallies]


def _hints(report: Report, summary: list[dict[str, Any]], failing: list[CaseResult],
           shrunk: list[CaseResult]) -> list[str]:
    """One hint per idea (the first worded: the whole-submission failure's, the summary's shared
    sentence, then the cases' own, shrunk first): a factor of 1/sqrt(d_model) found in 14 cases
    of 14 sizes is one line to fix, not 14 (a newcomer read 14 near-identical bullets)."""
    out: dict[Any, str] = {}
    if report.failure and report.failure.hint:
        out.setdefault(report.failure.data.get("hint_id") or report.failure.hint, report.failure.hint)
    for entry in summary:
        for h in entry.get("hints") or ([entry["hint"]] if entry.get("hint") else []):
            if h.get("text"):
                out.setdefault(h.get("id") or h["text"], h["text"])
    # an uncredited case's hint ("make the other cases right first") after every other: it is
    # about the others (an instructor's grid led with it beside a learner's wrong-axis failures)
    cases = [c for c in (*shrunk, *failing) if c.failure and c.failure.hint]
    for c in sorted(cases, key=lambda c: c.failure.kind == "unearned"):
        out.setdefault(c.failure.data.get("hint_id") or c.failure.hint, c.failure.hint)
    return list(dict.fromkeys(out.values()))


def raising_line(failure: Failure | None) -> int | None:
    """The line of the graded file that holds the deepest frame of ``failure``'s traceback in
    that file (a notebook's: the ``.ipynb`` file's line, ``Frame.file_line``), or None (no
    traceback, or none of its frames in that file)."""
    own = [(f.file_line if f.cell is not None else f.line) for f in (failure.frames if failure else [])
           if f.ref == "submission" and f.line]
    own = [n for n in own if n]
    return own[-1] if own else None


def worded(report: Report) -> Report:
    """``report`` with its facts in words, for the reader its paths now name (``build`` calls it
    after :func:`learner_paths` has named a learner's files as the learner has them): every
    failure's :attr:`~grader.results.Failure.traceback` from its frames
    (``grader.words.places.traceback_text``) and every case's ``replay`` command from its
    :class:`~grader.results.Replay` facts. A report with neither is returned as it is."""
    from ..words.places import traceback_text

    def failure(f: Failure | None) -> Failure | None:
        if f is None or not (f.frames or f.exception):
            return f
        return dataclasses.replace(f, traceback=traceback_text(f, report.submission))

    def case(c: CaseResult) -> CaseResult:
        if c.failure is None and c.replay_facts is None:
            return c
        return dataclasses.replace(c, failure=failure(c.failure),
                                   replay=c.replay_facts.words() if c.replay_facts is not None else c.replay)

    return dataclasses.replace(report, failure=failure(report.failure), cases=[case(c) for c in report.cases])


def workspace_path(path: str, environ: Mapping[str, str] | None = None) -> str:
    """``path`` as CI annotations and JUnit ``file=`` must name it: relative to the repository
    root ``$GITHUB_WORKSPACE`` when that is set and the file lies under it (a relative ``path``
    is taken from the working folder), so that GitHub and the JUnit test-report actions
    (dorny/test-reporter, mikepenz/action-junit-report, EnricoMi's publisher) find the file;
    otherwise ``path`` as given (outside Actions, or a file outside the workspace)."""
    env = os.environ if environ is None else environ
    workspace = env.get("GITHUB_WORKSPACE")
    if not workspace or not path:
        return path
    absolute = os.path.abspath(path)
    for root, target in ((os.path.abspath(workspace), absolute),
                         (os.path.realpath(workspace), os.path.realpath(absolute))):
        try:
            rel = os.path.relpath(target, root)
        except ValueError:  # pragma: no cover - another drive (Windows)
            continue
        if rel != os.curdir and rel != os.pardir and not rel.startswith(os.pardir + os.sep) and not os.path.isabs(rel):
            return rel.replace(os.sep, "/")
    return path


def build(report: Report, audience: str = common.LEARNER) -> ReportView:
    """The :class:`ReportView` of ``report`` for ``audience``; for a learner, with no path of
    the grading machine in it (:func:`learner_paths`).

    Raises:
        ValueError: unknown ``audience``.
    """
    file = workspace_path(report.submission)
    report = common.for_audience(report, common.check_audience(audience))
    if audience == common.LEARNER:  # no path of the grading machine, in any format (facts included)
        report = learner_paths(report, report.submission, by_name=named_by_caller(report))
        if os.path.isabs(file):  # outside a CI workspace: as the learner has it
            file = report.submission
    report = worded(report)   # the frames and replays in words, files as this reader now has them
    graded = [c for c in report.cases if not c.shrunk]
    shown, concealed = common.split_cases(graded, audience)
    shrunk = [c for c in report.cases if c.shrunk and not common.conceals(c, audience)]
    names = {c.name for c in graded}
    shrunk_of: dict[str, CaseResult] = {}
    for s in shrunk:
        original = s.name[len(SHRUNK_PREFIX):] if s.name.startswith(SHRUNK_PREFIX) else s.name
        if original in names:
            shrunk_of.setdefault(original, s)
    groups = common.group_views(_without_shrunk(report), audience)
    # concealed cases count as passed or not, never which way they failed (common.HiddenTally)
    tallies = common.hidden_tallies(concealed)
    statuses = Counter(c.status for c in shown)
    statuses["passed"] += sum(t.passed for t in tallies)
    statuses["failed"] += sum(t.total - t.passed for t in tallies)
    redacted = audience == common.LEARNER and any(c.seeded for c in report.cases) \
        and report.environment.get("seed_source") == "secret"      # common.without_expected
    if concealed:
        # the run's time would time the hidden calls, which run last: the shown cases' only
        # (round four: a passing file slept on a hidden input and Gradescope's execution_time told)
        report = dataclasses.replace(report, seconds=round(sum(c.seconds for c in shown), 3))
    if (concealed or redacted) and report.summary and report.environment.get("assignment"):
        from grader.assignment import summarise_parts  # problem by problem
        summary = summarise_parts(shown + shrunk, tuple(report.environment.get("dtypes", ())),
                                  report.environment.get("framework") or "numpy")
    elif (concealed or redacted) and report.summary:
        from grader.summary import summarise  # the pattern of the cases the audience may see
        # worded for the report's framework; a bundled problem's own summary wording by its id
        summary = summarise(shown + shrunk, tuple(report.environment.get("dtypes", ())),
                            report.environment.get("framework") or "numpy", report.problem)
    else:
        summary = list(report.summary)
    failing = [c for c in shown if c.status not in ("passed", "skipped")]
    env = report.environment
    line = env.get("function_line") or env.get("syntax_error_line") or 1
    return ReportView(
        report=report, audience=audience, graded=graded, shown=shown, failing=failing, shrunk=shrunk,
        shrunk_of=shrunk_of, tallies=tallies, groups=groups,
        passed=statuses["passed"], failed=statuses["failed"], errors=statuses["error"] + statuses["timeout"],
        skipped=statuses["skipped"], total=len(graded), summary=summary,
        hints=_hints(report, summary, failing, shrunk), show_output=common.may_show_output(report, audience),
        line=int(line) if isinstance(line, int) and line > 0 else 1, file=file)


def feedback_line(report: Report, limit: int = 500) -> str:
    """One line of feedback a learner may be given (learner audience: nothing of a hidden case
    but its counts), e.g. ``"0 of 93 cases passed; tolerance: 93 cases, in every dtype (...);
    hint: looks like the table was not transposed ..."``, at most ``limit`` characters."""
    v = build(report, common.LEARNER)
    if f := v.failure:
        # a learner with nothing submitted is no grading fault ("could not be graded: import: no
        # submission" read as a broken file to a newcomer): the note alone
        from ..results import no_submission
        said = f.message if no_submission(report) else f"could not be graded: {f.kind}: {f.message}"
        parts = [said] + ([f"hint: {f.hint}"] if f.hint else [])
    elif report.passed:
        parts = [f"passed all {v.total} cases"]
    else:
        parts = [v.counts_text]
        # an assignment: each problem that lost points, with why when it could not be graded
        # (a missing function is the learner's own fact, never a hidden case's)
        for part in (v.environment.get("assignment") or {}).get("problems") or []:
            if isinstance(part, dict) and not part.get("passed"):
                why = f": {part['failure']}: {part.get('message') or ''}".rstrip(": ") if part.get("failure") else ""
                parts.append(f"{part.get('problem')} {common.points(part.get('score') or 0)}/"
                             f"{common.points(part.get('points') or 0)}{why}")
        if v.summary:
            parts.append(v.summary[0]["text"])
            # an error of the run says what it raised: "exception: 75 cases, in every dtype" told a
            # gradebook's reader nothing of the NameError (an instructor's trial)
            kind = v.summary[0].get("kind")
            raised = next((c.failure.message for c in v.failing if c.failure is not None and c.failure.kind == kind
                           and c.failure.message), None) if kind in RUN_KINDS else None
            if raised:
                parts.append(raised)
        elif v.failing:
            parts.append(common.one_line(v.failing[0]))
        parts += [t.text for t in v.tallies if t.passed < t.total][:1]
        # the first hint that says something: the withheld notice alone told a gradebook's and an
        # LMS's feedback nothing (a newcomer's instructor run under --seed-secret); a shared one
        # with how many cases it fits, which the one line dropped ("a constant factor of 4" fit 3
        # of 15 failing cases: a newcomer's trial)
        # the first entry's own hint; else another entry's, named by its kind (the line names
        # the first entry: "exception: 48 cases...; hint: a constant offset" read as the
        # exception's hint, which was the tolerance entry's: a format consumer's read)
        shared = [(i, e.get("kind"), h) for i, e in enumerate(v.summary) for h in (e.get("hints") or [])
                  if h.get("text") and h["text"] != common.WITHHELD_HINT]
        found: list[tuple[Any, Any, str]] = []
        if shared:
            at, kind, h = shared[0]
            # and the same entry's other hints: a float32 result for float16 and float64 inputs
            # has one hint per dtype, and the gradebook's line gave only the float16 one (an
            # instructor's trial): each, with its count
            for i, _, other in shared:
                if i == at:
                    found.append((other.get("count"), other.get("of"),
                                  f"for the {kind} cases: {other['text']}" if at else other["text"]))
        else:   # no summary (an older report): the first case hint, counted over the failing cases
            text = next((h for h in v.hints if h != common.WITHHELD_HINT), None)
            failed = [c for c in v.failing if c.failure is not None]
            if text:
                found.append((sum(c.failure.hint == text for c in failed), len(failed), text))
        for count, of, text in found:
            parts.append(f"hint: {text}" if count == of or not count else f"hint ({count} of {of} cases): {text}")
    text = common.printable("; ".join(parts), one_line=True)
    if len(text) <= limit:
        return text
    cut = text[: limit - 3]
    # at a word's end (an instructor's trial read "...once at th..."), unless that loses much
    word = cut.rsplit(" ", 1)[0]
    return (word if len(word) >= limit // 2 else cut) + "..."


#: paths that name nothing of one machine: never rewritten
_SYSTEM_PATHS = frozenset({"/", "/usr", "/usr/local"})
_T = TypeVar("_T")


def named_by_caller(report: Report) -> bool:
    """Whether the check's caller named the submission (``--shown``: ``grader grade``, the
    platform templates; or a placeholder of ``grader grade``): learners then get its files by
    their names (:func:`learner_paths` ``by_name``), else the path as given to ``grader check``."""
    env = report.environment
    return bool(env.get("named_by")) or env.get("graded_by") == "grader grade"


def learner_paths(value: _T, submission: str, by_name: bool = False) -> _T:
    """``value`` (a string, a record such as a :class:`Report`, or lists, tuples and dicts of
    them) with every path of the grading machine in its strings written as a learner may see it.
    Applied to every learner-audience text and to nothing an instructor reads, whose reports
    keep full paths: :func:`build` for the learner audience (so every format, the gradebook's
    message through :func:`feedback_line`), ``grader export``.

    What the learner's code printed, raised and crashed with comes back naming what its process
    could see (the executor's ``unprivate`` has already written the private copy as the
    submission's path): its folder, the Python install in a traceback, ``sys.path``, the mount
    table, faulthandler's frames in the grader's ``_child.py``. Rewritten, longest first, whole
    path components only, in each form given, absolute and real:

    - the submission's folder (the folder of ``submission``): kept as given (whoever ran
      ``grader check`` typed it; the platform templates give ``--shown``, the name submitted),
      unless ``by_name`` (feedback of ``grader grade``, where ``class/bob/`` is the instructor's
      layout): then files in it are named relative to it (``helper.py``) and the folder is ``.``;
    - with ``by_name``, a ``--problems-dir`` folder of a case's replay facts (and
      ``$GRADER_PROBLEMS_DIR``): by its last part (a course that hands out its problems gives
      the folder that name);
    - the grader's package folder (``<grader>``), the checkout holding it (an editable
      install, ``<grader-source>``), the site-packages folders (``<site-packages>``), the
      virtual environment (``<venv>``) and the Python install (``<python>``), the home folder
      (``~``), a temporary folder other than ``/tmp`` (``$TMPDIR``: ``<tmp>``) and this
      process's working folder (``.``).

    ``/``, ``/usr`` and ``/usr/local`` are left alone: they name nothing of this machine.
    Idempotent. A path the grader cannot know (a folder above the learner's that a submission
    in the ``rlimits`` or ``none`` tier reads from ``/proc``) is not rewritten.
    """
    import dataclasses
    import site
    import sys

    problems = [os.environ.get("GRADER_PROBLEMS_DIR") or ""]
    if by_name:   # the folders are rewritten only by name: those of the replay facts
        cases = value.cases if isinstance(value, Report) else []
        problems += [c.replay_facts.problems_dir for c in cases if c.replay_facts and c.replay_facts.problems_dir]
    swaps: dict[str, str] = {}        # the text of a path (a folder, or a folder and "/") -> its neutral name

    def add(path: str, name: str, sub: str | None = None) -> None:
        """``path`` (absolute forms only; ``sub``: what ``path/`` becomes, else ``name/``)."""
        if not path or not os.path.isabs(path):
            return
        for form in dict.fromkeys((os.path.normpath(path), os.path.realpath(path))):
            if form not in _SYSTEM_PATHS and form not in swaps:
                swaps[form] = name
                swaps[form + os.sep] = name + os.sep if sub is None else sub

    given = os.path.dirname(submission)
    # the folder as the learner names it: as given to grader check (whoever typed the path has
    # it; the platform templates give --shown, the name submitted), by name in grader grade's
    # feedback (class/bob/ is the instructor's layout)
    mine = "" if by_name else given
    add(given if os.path.isabs(given) else os.path.abspath(given), mine or os.curdir, mine + os.sep if mine else "")
    if by_name and not os.path.isabs(given) and os.path.normpath(given) not in (os.curdir, os.pardir):
        swaps.setdefault(os.path.normpath(given) + os.sep, "")   # the instructor's class/bob/ as found
    for folder in problems if by_name else ():   # grader check's own caller typed it: kept as given
        if folder:
            add(os.path.abspath(folder), os.path.basename(os.path.normpath(folder)) or folder)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    add(package, "<grader>")
    prefixes = {os.path.normpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)}
    for folder in [*site.getsitepackages(), site.getusersitepackages()]:
        add(folder, "<site-packages>")
    if os.path.basename(os.path.dirname(package)) not in ("site-packages", "dist-packages"):
        add(os.path.dirname(package), "<grader-source>")
    add(sys.prefix, "<venv>" if os.path.normpath(sys.prefix) != os.path.normpath(sys.base_prefix) else "<python>")
    for prefix in sorted(prefixes):
        add(prefix, "<python>")
    add(os.path.expanduser("~"), "~")
    import tempfile
    tmp = tempfile.gettempdir()     # the grader's temporary folder ($TMPDIR: the rlimits tier's
    if os.path.normpath(tmp) not in ("/tmp", "/var/tmp"):   # working folders lie in it)
        add(tmp, "<tmp>")
    try:
        add(os.getcwd(), os.curdir, "")
    except OSError:   # the working folder was removed
        pass
    # the grader's own folders of this run, whatever the run: the private copy's
    # (grader-sub-PID-XXXX, whose submission/ folder is the learner's, written back already) and
    # the child's working folder (grader-run-PID-XXXX): a frame of code compiled under a made-up
    # name beside the copy, or a function renamed to os.getcwd(), named them (attack round 31)
    own = re.compile(r"(?<![\w.~/-])(?:" + "|".join(re.escape(t) for t in {tmp, os.path.realpath(tmp)})
                     + r")/grader-(sub|run)-[\w-]+(?![\w-])")
    # a folder ends where a path component ends: never inside /work/main2 or /work/main.bak
    pattern = re.compile(r"(?<![\w.~/-])(?:" + "|".join(
        re.escape(k) + ("" if k.endswith(os.sep) else r"(?![\w-]|\.[\w-])")
        for k in sorted(swaps, key=len, reverse=True)) + ")") if swaps else None

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            if os.sep not in v:
                return v
            if "grader-" in v:
                v = own.sub(lambda m: "<private>" if m.group(1) == "sub" else "<workdir>", v)
            return pattern.sub(lambda m: swaps[m.group(0)], v) if pattern is not None else v
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            if _numbers_only(v):
                return v
            items = [walk(x) for x in v]
            return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return dataclasses.replace(v, **{f.name: walk(getattr(v, f.name)) for f in dataclasses.fields(v)
                                             if f.init})
        return v

    return walk(value)


#: the types of a JSON array's numbers (and its missing values), which hold no path
_NUMBER_TYPES = frozenset((int, float, bool, type(None)))


def _numbers_only(v: list[Any] | tuple[Any, ...]) -> bool:
    """Whether every item of ``v`` is a number (or None): a report's array, thousands of values
    that :func:`learner_paths` need not visit one by one (they were half its time in a class's
    feedback)."""
    return set(map(type, v)) <= _NUMBER_TYPES


def _without_shrunk(report: Report) -> Report:
    import dataclasses
    return dataclasses.replace(report, cases=[c for c in report.cases if not c.shrunk])
