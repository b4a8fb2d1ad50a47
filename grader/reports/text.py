"""The text report for a person at a terminal (the default of ``grader check``).

Layout: a verdict line; what ran (framework, dtypes, seed, sandbox) and with which sibling
modules (those not taken, and why, under it; not with ``-q``); the failure pattern by
kind, dtype and rank (``grader.summary.summarise``), each with the hints its failing cases share
and how many share them; the failing cases, smallest first (shrunk ones lead), each with shapes,
the mismatch, the hint, small values and a replay command; the points per group; the head of
the submission's own output. Hidden cases appear as counts only unless the audience is the
instructor.

At a terminal (``grader check`` without ``--output``), :func:`render` is given what the
terminal can show: ``color`` (:func:`color_wanted`: a TTY, ``NO_COLOR`` and ``FORCE_COLOR``
honoured) and ``width`` (:func:`terminal_width`), and the ``-q``/``-v`` ``verbosity``. Prose
(messages, hints, the failure pattern) is wrapped to the width with :mod:`textwrap`; replay
commands, tracebacks and values are never broken (a terminal folds them; a copied replay command
still runs). Colour is added last, after every learner-controlled character was made visible
(:func:`grader.reports.common.printable`), so the only escape sequences on the terminal are the
report's own.
"""
from __future__ import annotations

import os
import re
import shutil
import textwrap
from typing import IO, Mapping

from ..results import CaseResult, Report
from . import common, view
from .common import printable, scalar_text

MAX_CASES = 5
MAX_DETAIL_LINES = 12
#: longest replay command printed whole without -v: a shrunk case's ``--replay`` literal of a
#: (3, 3, 52) and an (11, 52) input was about 3,000 characters of JSON in the default report (a
#: newcomer's finding); longer ones are named, with where to find them
MAX_REPLAY_CHARS = 600
MIN_WIDTH = 40          # narrower terminals get lines of this width (and fold them)

QUIET, NORMAL, VERBOSE = -1, 0, 1

# SGR sequences of the report's own styles (ECMA-48); never applied to unescaped learner text
_SGR = {"pass": "1;32", "fail": "1;31", "incomplete": "1;33", "heading": "1", "case": "1;31",
        "kind": "31", "hint": "36", "note": "33", "dim": "2", "replay": "2"}


def color_wanted(stream: IO[str] | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether a report written to ``stream`` gets colour.

    ``NO_COLOR`` set to any non-empty value turns colour off (https://no-color.org); else
    ``FORCE_COLOR`` set to a non-empty value turns it on, even into a pipe or a CI log; else
    colour is on only when ``stream`` is a terminal and ``TERM`` is not ``dumb``. A report
    written to a file (``--output``) gets none: pass ``stream=None``.
    """
    env = os.environ if env is None else env
    if stream is None or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # a closed or odd stream
        return False


def terminal_width(stream: IO[str] | None) -> int | None:
    """The width to fit lines to when writing to ``stream``: the terminal's columns
    (:func:`shutil.get_terminal_size`, which honours ``COLUMNS``), at least ``MIN_WIDTH``; None
    (lines as they are) when ``stream`` is not a terminal, a file or a pipe."""
    try:
        if stream is None or not stream.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    return max(MIN_WIDTH, shutil.get_terminal_size().columns)


def _shapes(case: CaseResult) -> str:
    """The inputs' shapes and dtypes, e.g. ``hidden (4, 8) float32, axis = -1``: a scalar input
    by its value when the report has it (a newcomer read ``axis () int64`` as an empty array)."""
    return ", ".join(scalar_text(name, info, case.values) if tuple(info.shape) == ()
                     else f"{name} {tuple(info.shape)} {info.dtype}" for name, info in case.inputs.items())


class _Lines(list):
    """The report's lines, each ``(text, style, wrap)``: ``style`` names what gets colour (a key
    of ``_SGR``, or ``""``), ``wrap`` whether it is prose that may be wrapped to the width."""

    def add(self, text: str, style: str = "", wrap: bool = False) -> None:
        self.append((text, style, wrap))

    def blank(self) -> None:
        self.append(("", "", False))


def _case_lines(case: CaseResult, seen: dict[str, str] | None = None, verbosity: int = NORMAL,
                hint: str | None = None) -> _Lines:
    """The lines of one failing case; a traceback or a tolerance explanation already shown (in
    ``seen``) is referred to, not repeated; ``verbosity`` VERBOSE shows every detail line and
    whole values. ``hint``: the hint to show when the case has none of its own (a shrunk case:
    its original's, ``ReportView.hint_of``)."""
    f = case.failure
    lines = _Lines()
    lines.add(f"x {case.name}  ({case.group})", "case")
    lines.add(f"    inputs: {_shapes(case)}", "", True)
    if f is None:
        lines.add(f"    {case.status}", "kind")
        return lines
    lines.add(f"    {f.kind}: {f.message}", "kind", True)
    budget = MAX_DETAIL_LINES if verbosity < VERBOSE else None
    for detail in f.shown_details:
        if seen is not None and detail is f.traceback:
            key = f.same_raise
            if key in seen:
                lines.add(f"    (the same traceback as {seen[key]} above)", "dim")
                continue
            seen[key] = case.name
        if seen is not None and detail.startswith("tolerance: "):
            # how the allowance is made, said once per wording (a helper read the same long
            # derivation in every failing case)
            key = "tolerance:" + detail
            if key in seen:
                lines.add(f"    (tolerance: as for {seen[key]} above)", "dim")
                continue
            seen[key] = case.name
        prose = detail is not f.traceback  # "worst at index ...": wrapped; a traceback: never
        for line in detail.rstrip().splitlines():
            if budget is not None and budget <= 0:
                break
            lines.add(f"    {line}", "", prose)
            if budget is not None:
                budget -= 1
    if f.hint or hint:
        lines.add(f"    hint: {f.hint or hint}", "hint", True)
    if case.values:
        for key, value in case.values.items():
            lines.add(f"    {key} = {common.compact_value(value, None if verbosity >= VERBOSE else 200)}")
    if case.replay and (len(case.replay) <= MAX_REPLAY_CHARS or verbosity >= VERBOSE):
        lines.add(f"    replay: {case.replay}", "replay")
    elif case.replay:
        lines.add(f"    replay: not printed here: with its inputs written out it is {len(case.replay):,} characters "
                  "long (the HTML feedback page and the JSON report show it; grader check -v prints it)", "replay", True)
    elif case.replay_note:
        lines.add(f"    replay: none ({case.replay_note})", "replay", True)
    return lines


def _verdict(v: view.ReportView) -> tuple[str, str]:
    """The verdict line and its style."""
    report, env = v.report, v.environment
    verdict = "PASS" if report.passed else "FAIL"
    style = "pass" if report.passed else "fail"
    if env.get("unrun_groups"):  # e.g. --max-examples 0: a group with points ran no case
        return (f"INCOMPLETE {report.problem}: {v.counts_text}, but group"
                f"{'s' if len(env['unrun_groups']) != 1 else ''} {', '.join(env['unrun_groups'])} ran no case "
                f"(--max-examples 0?): no score  {report.submission}", "incomplete")
    if env.get("partial"):  # --case / --replay: a few cases, no grade
        return (f"{verdict} {report.problem}: {v.passed} of {v.total} selected case"
                f"{'s' if v.total != 1 else ''} passed (a partial run: no score)  {report.submission}", style)
    # a roster learner with nothing submitted has no file to name (an instructor read the bare
    # "FAIL log_softmax: score 0 / 10  " as a header that lost its name)
    shown = report.submission or "(no submission)"
    return (f"{verdict} {report.problem}: score {report.score:g} / {report.max_score:g}"
            + (f" ({v.counts_text})" if v.total else "") + f"  {shown}", style)


def _sibling_lines(siblings: object) -> _Lines:
    """The lines of ``environment.siblings`` (``grader.siblings.Siblings.report``): which modules
    beside the main file were taken along (``with helper.py, utils.py (sibling modules)``) and,
    one line each, which were not and why (``not taken: helper2.py: a symbolic link (not
    followed)``). The names are the learner's: each goes through
    :func:`grader.reports.common.printable` on one line. Nothing for a report without siblings."""
    lines = _Lines()
    if not isinstance(siblings, Mapping):
        return lines
    taken = [printable(str(name), one_line=True) for name in siblings.get("taken") or []]
    if taken:
        lines.add(f"with {', '.join(taken)} (sibling module{'s' if len(taken) != 1 else ''})", "", True)
    for line in siblings.get("skipped") or []:
        lines.add(f"not taken: {printable(str(line), one_line=True)}", "note", True)
    return lines


def _assignment_lines(assignment: object) -> _Lines:
    """An assignment's problems, one line each: verdict, problem, points, and a part's own
    failure (``grader.assignment.combine``'s ``environment.assignment``)."""
    lines = _Lines()
    if not isinstance(assignment, dict) or not isinstance(assignment.get("problems"), list):
        return lines
    lines.blank()
    lines.add("Problems:", "heading")
    for part in assignment["problems"]:
        if not isinstance(part, dict):
            continue
        verdict = "PASS" if part.get("passed") else "FAIL"
        text = f"  {verdict} {part.get('problem')}: {part.get('score', 0):g} / {part.get('points', 0):g}"
        if part.get("failure") and part.get("message"):
            text += f"  {part['failure']}: {part['message']}"
        lines.add(text, "pass" if part.get("passed") else "fail", True)
        if part.get("hint"):
            lines.add(f"    hint: {part['hint']}", "hint", True)
    return lines


def _quiet(v: view.ReportView) -> _Lines:
    """``-q``: the verdict line, the run's failure if any, the failing cases' names (one entry per
    case, its failing dtypes in brackets) and the hidden groups' counts."""
    lines = _Lines()
    lines.add(*_verdict(v), True)
    f = v.report.failure
    if f is not None:
        lines.add(f"{f.kind}: {f.message}", "kind", True)
    names: dict[str, list[str]] = {}
    for c in v.failing:
        base, _, rest = c.name.partition("[")
        names.setdefault(base, []).append(rest.rstrip("]") if rest else "")
    if names:
        shown = [f"{base}[{', '.join(d for d in dts if d)}]" if any(dts) else base for base, dts in names.items()]
        lines.add("failing: " + ", ".join(shown), "kind", True)
    for tally in v.tallies:
        lines.add(f"{tally.group}: {tally.text}", "", True)
    return lines


def _lines(report: Report, audience: str, verbosity: int) -> _Lines:
    v = view.build(report, audience)  # a learner never sees a secret seed nor a hidden case
    if verbosity <= QUIET:
        return _quiet(v)
    report, env = v.report, v.environment
    lines = _Lines()
    lines.add(*_verdict(v), True)
    dtypes = ", ".join(env.get("dtypes", []))
    if env.get("seed") == "secret":
        seed = "seed: secret (set by your instructor)"
    else:
        seed = f"seed {env.get('seed')}" + (" (from the instructor's secret)" if env.get("seed_source") == "secret" else "")
    if env.get("framework"):   # a report of a run (not the placeholder of a learner with nothing to run)
        ran = f"{env.get('framework')} submission, graded in {dtypes}; {seed}; sandbox {env.get('sandbox')}"
        if env.get("framework") == "jax" and "jax_enable_x64" not in (env.get("framework_note") or ""):
            ran += "; jax_enable_x64 on"   # said once: here, unless the problem's note below says it
        lines.add(ran, "", True)
    if env.get("framework_note"):
        lines.add(f"note: {env['framework_note']}", "note", True)
    if env.get("parameters_note"):
        lines.add(f"note: {env['parameters_note']}", "note", True)
    if env.get("discovery_note"):  # grader grade: which of the learner's files was graded, and why
        lines.add(f"note: {env['discovery_note']}", "note", True)
    lines += _sibling_lines(env.get("siblings"))
    lines += _assignment_lines(env.get("assignment"))

    if report.failure is not None:
        f = report.failure
        lines.blank()
        lines.add(f"{f.kind}: {f.message}", "kind", True)
        for detail in f.shown_details:
            detail_lines = detail.rstrip().splitlines()
            for line in detail_lines if verbosity >= VERBOSE else detail_lines[-MAX_DETAIL_LINES:]:
                lines.add(f"    {line}")
        if f.hint:
            lines.add(f"hint: {f.hint}", "hint", True)
    summary = v.summary  # learners: the pattern of the cases they may see, only
    if summary:
        lines.blank()
        lines.add("What failed (by kind, dtype and rank):", "heading")
        for entry in summary:
            lines.add(f"  {entry['text']}", "", True)
            for hint in entry.get("hints") or ([entry["hint"]] if entry.get("hint") else []):
                lines.add(f"    hint ({hint['count']} of {hint['of']} cases): {hint['text']}", "hint", True)

    failing = v.failing + v.shrunk  # a shrunk case (extra feedback) leads its kind when smallest
    failing.sort(key=lambda c: common.example_order(c.failure.kind if c.failure else c.status, c.shrunk,
                                                    [i.shape for i in c.inputs.values()], common.all_zero(c.values, c.inputs),
                                                    c.name, c.group or ""))
    # one entry per case and failure kind (common.entry_key, as the feedback page): the same case
    # failing in several dtypes is listed once, a shrunk case with its original, an error of the
    # run with the same message once
    distinct: dict[tuple[str, str], list[CaseResult]] = {}
    for c in failing:
        kind = c.failure.kind if c.failure else c.status
        distinct.setdefault(common.entry_key(c.name, kind, c.failure.message if c.failure else ""), []).append(c)
    for same in distinct.values():   # a shrunk case leads its entry: the smallest input that fails so
        same.sort(key=lambda c: not c.shrunk)
    if distinct:
        most = len(distinct) if verbosity >= VERBOSE else MAX_CASES
        shown, every_hint = _shown_cases(v, list(distinct.values()), most)
        lines.blank()
        graded = len(v.failing)  # the graded runs: a shrunk case is extra feedback, never counted
        runs = "run" if graded == 1 else "runs"
        lines.add(f"Failing cases (smallest first{', each hint and kind at least once' if every_hint else ''}; "
                  f"{len(shown)} of {len(distinct)} shown, each once "
                  f"for all the dtypes it fails in; {graded} failing graded {runs} in all, one per case and dtype):",
                  "heading", True)
        seen: dict[str, str] | None = {} if verbosity < VERBOSE else None  # traceback text -> the case that showed it
        for same in shown:
            hint, hint_id = v.hint_of(same[0]), _hint_id(v, same[0])
            lines += _case_lines(same[0], seen, verbosity, hint if same[0].shrunk else None)
            base = _base(same[0])
            # the case it was shrunk from (its line says so) and other cases with the same error
            # of the run are not "the same case in another dtype"
            others = [c for c in same[1:] if _base(c) != base]
            same = [same[0]] + [c for c in same[1:] if _base(c) == base and not c.shrunk
                                and c.name != same[0].name.removeprefix("shrunk:")]
            # the same hint, or the same hint idea with other numbers (a factor of 0.2001 in one
            # dtype, 0.2 in the others: a trial read three lines that said one thing)
            alike = [c for c in same[1:] if v.hint_of(c) == hint or (hint_id is not None and _hint_id(v, c) == hint_id)]
            if alike:
                lines.add(f"    (the same case fails the same way in {', '.join(c.dtype for c in alike)})", "", True)
            for c in same[1:]:   # the same kind with another hint (a learner's trial: "the same way" was not)
                if c not in alike:
                    kind = c.failure.kind if c.failure else c.status
                    other = v.hint_of(c)
                    if hint and other and other.startswith(hint + "; "):   # the same, with a second mistake
                        lines.add(f"    (in {c.dtype} it fails the same way, and {other[len(hint) + 2:]})", "hint", True)
                        continue
                    lines.add(f"    (in {c.dtype} it fails as {kind} too, "
                              + (f"with another hint: {other})" if other else "with no hint)"), "hint", True)
            if others:   # one error of the run, in other cases: named once each, without dtypes
                names = list(dict.fromkeys(_base(c) for c in others))
                lines.add(f"    ({len(names)} more {'case fails' if len(names) == 1 else 'cases fail'} with the same "
                          f"message, in {len(others)} graded {'run' if len(others) == 1 else 'runs'}: "
                          + ", ".join(names[:6]) + (", ..." if len(names) > 6 else "") + ")", "", True)
    if v.skipped:
        lines.add(f"{v.skipped} cases were not run (after a timeout or repeated crashes)", "note", True)
    for tally in v.tallies:
        lines.add(f"{tally.group}: {tally.text}", "", True)
    if report.groups and not env.get("partial"):
        lines.blank()
        lines.add("Points: " + ", ".join(f"{g.group} {g.earned:g}/{g.points:g}" for g in report.groups), "", True)
    out = (report.output or {}) if v.show_output else {}
    for stream in ("stdout", "stderr"):
        text = (out.get(stream) or "").rstrip()
        if text:
            head = text.splitlines() if verbosity >= VERBOSE else text.splitlines()[:5]
            total = out.get(f"{stream}_bytes") or len(text)
            more = (f" (first lines of {total:,} bytes)"
                    if out.get("truncated") or len(text.splitlines()) > len(head) else "")
            lines.blank()
            lines.add(f"The submission's {stream}{more}:", "heading")
            for line in head:
                lines.add(f"  | {line if verbosity >= VERBOSE else line[:200]}", "output")
    return lines


def _fit(text: str, style: str, wrap: bool, width: int | None) -> list[str]:
    """``text`` (already printable) fitted to ``width``: prose wrapped at spaces with a hanging
    indent, the submission's output cut with ``...``, anything else (commands, tracebacks,
    values) left whole."""
    if width is None or len(text) <= width:
        return [text]
    if style == "output":
        return [text[: width - 3] + "..."]
    if not wrap:
        return [text]
    indent = text[: len(text) - len(text.lstrip(" "))]
    label = re.match(r"[^:]{1,30}: ", text[len(indent):])  # "hint: ", "tolerance: ": continue under the text
    hang = indent + (" " * len(label.group()) if label and len(indent) + len(label.group()) < width // 2 else "  ")
    return textwrap.wrap(text[len(indent):], width, initial_indent=indent, subsequent_indent=hang,
                         break_long_words=False, break_on_hyphens=False) or [text]


def _paint(line: str, style: str, first: bool = True) -> str:
    """``line`` with the report's colour for ``style``: the verdict word, the case marker, the
    label before ``:`` (a kind, ``hint``, ``note``, ``replay``), or the whole line (headings).
    A continuation line (``first`` False) of a wrapped entry has no label to colour."""
    sgr = _SGR.get(style)
    if not sgr or not line.strip():
        return line
    if not first and style not in ("heading", "dim"):
        return line

    def on(part: str) -> str:
        return f"\x1b[{sgr}m{part}\x1b[0m"

    indent = line[: len(line) - len(line.lstrip(" "))]
    body = line[len(indent):]
    if style in ("pass", "fail", "incomplete"):
        word, _, rest = body.partition(" ")
        return indent + on(word) + " " + rest
    if style == "case" and body.startswith("x "):
        return indent + on("x") + " " + f"\x1b[1m{body[2:]}\x1b[0m"
    if style in ("kind", "hint", "note", "replay"):
        head, sep, rest = body.partition(":")
        return indent + on(head) + sep + rest if sep else indent + on(body)
    return indent + on(body)


def render(report: Report, *, audience: str = "learner", color: bool = False, width: int | None = None,
           verbosity: int = NORMAL) -> str:
    """The report as plain text lines (ends with a newline).

    Every line is passed through :func:`grader.reports.common.printable`: escape sequences,
    controls, bidi characters and line breaks from the submission's output, messages or file
    name appear as visible escapes (``\\x1b``, ``\\n``), never raw on the terminal.

    Args:
        report: the check's report.
        audience: ``"learner"`` (hidden cases as counts) or ``"instructor"``.
        color: add the report's own SGR colours (verdict, kinds, hints); see :func:`color_wanted`.
        width: fit lines to this many columns (prose wrapped, never a replay command, a
            traceback or values); None leaves lines as they are.
        verbosity: ``QUIET`` (``-q``: the verdict and score, the failing cases' names),
            ``NORMAL``, or ``VERBOSE`` (``-v``: every failing case, whole tracebacks, values and
            output).
    """
    width = None if width is None else max(MIN_WIDTH, width)
    out: list[str] = []
    for text, style, wrap in _lines(report, audience, verbosity):
        # one line per entry: a newline in a file name or message cannot start a line of its own
        for i, line in enumerate(_fit(printable(text, one_line=True), style, wrap, width)):
            out.append(_paint(line, style, i == 0) if color else line)
    return "\n".join(out) + "\n"


#: a line GitHub's runner takes as a workflow command: ``::name ...::`` after leading blanks
#: (actions/runner ``ActionCommand.TryParseV2`` trims them first), or the older ``##[name]``
_WORKFLOW_COMMAND = re.compile(r"^\s*::|##\[", re.MULTILINE)


def actions_safe(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` for a GitHub Actions log: where the runner would read one of its lines as a
    workflow command (a learner's print, exception message or file name that starts a line with
    ``::error file=...::``, ``::add-mask::``, ``::stop-commands::``...), the whole text between
    ``::stop-commands::TOKEN`` and ``::TOKEN::`` with an unguessable token, the runner's own way
    to print untrusted text (GitHub's "Stopping and starting workflow commands"); unchanged
    elsewhere (``GITHUB_ACTIONS`` not ``true``) and where no line looks like a command.
    For the text report, which a person reads in the log; never JSON or XML, whose readers
    parse the whole output, nor the github format, whose commands are meant."""
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") != "true" or not _WORKFLOW_COMMAND.search(text):
        return text
    import secrets
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}\n{text}{'' if text.endswith(chr(10)) else chr(10)}::{token}::\n"


def _hint_id(v: view.ReportView, case: CaseResult) -> str | None:
    """The hint id of ``case``'s failure, or of the shrunk case found from it (None: no hint)."""
    small = v.shrunk_of.get(case.name)
    for failure in (case.failure, small.failure if small is not None else None):
        if failure is not None and failure.hint and (failure.data or {}).get("hint_id"):
            also = ((failure.data or {}).get("hint_params") or {}).get("also_computed_in")
            # the same idea with a second mistake (part of it in float32) is not "the same way"
            return str(failure.data["hint_id"]) + (f"+{also}" if also else "")
    return None


def _base(case: CaseResult) -> str:
    """A case's name without its dtype and without ``shrunk:``."""
    return case.name.split("[")[0].removeprefix("shrunk:")


def _shown_cases(v: view.ReportView, entries: list[list[CaseResult]], most: int) -> tuple[list[list[CaseResult]], bool]:
    """The ``most`` failing-case entries the text report shows (``entries`` in
    ``common.example_order``) and whether any was chosen out of that order
    (``common.pick_examples``: each hint id, then each failure kind, at least once)."""
    return common.pick_examples(entries, most, lambda same: _hint_id(v, same[0]),
                                lambda same: same[0].failure.kind if same[0].failure else same[0].status)


