"""GitHub Actions output: workflow-command annotations, a step summary, a Classroom result.

* :func:`render` — ``::error``/``::notice`` workflow commands for the log and the Checks view,
  escaped as ``actions/toolkit`` ``packages/core/src/command.ts`` does.
* :func:`step_summary` — Markdown for ``$GITHUB_STEP_SUMMARY`` (the CLI appends it when set).
* :func:`write_github_files` — appends both of the next two to the files Actions names.
* :func:`classroom_result` / :func:`classroom_output_line` — the result object of GitHub
  Classroom's autograding runners (``classroom-resources/autograding-io-grader``), read back by
  ``classroom-resources/autograding-grading-reporter`` from ``<RUNNER>_RESULTS``, base64-encoded.

See docs/formats.md for the field mapping and the sources.
"""
from __future__ import annotations

import base64
import html
import json
import os
import re
from typing import Any, Mapping

from grader.reports import common, view
from grader.results import Report

MAX_ANNOTATIONS = 10   # GitHub shows at most 10 error annotations per step
MAX_NAMES = 5          # case names listed in one annotation
MAX_ROWS = 20          # failing cases in the step summary table
MAX_HINTS = 5          # hints listed in the step summary
#: budget of the Classroom result's compact JSON: it travels base64-encoded (4/3 larger) in one
#: environment variable of the reporter's step, and Linux caps one variable at 128 KiB
#: (MAX_ARG_STRLEN); other runners' results share the step's environment
MAX_CLASSROOM_BYTES = 16 * 1024


def escape_data(text: Any) -> str:
    """Escape a workflow command's message: ``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: Any) -> str:
    """Escape a workflow command property value: as :func:`escape_data`, and ``:`` -> ``%3A``, ``,`` -> ``%2C``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: Any) -> str:
    """One workflow command line, ``::name k=v,k=v::message``, escaped; None/empty properties dropped."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items() if v not in (None, ""))
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


#: numbers in a message (counts, shares, values, indices, sizes): two messages that differ only
#: there have one shape ("299 / 300 elements (99.7%) are outside ..." and "12 / 48 ...")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def pattern_of(v: view.ReportView, case: Any) -> tuple[str, str | None, str]:
    """The failure pattern of ``case``: its kind, its hint (its own, its shrunk case's, else the
    one found for its kind's pattern: ``ReportView.hints_for``) and the shape of its message
    (every number as ``#``), after its problem in an assignment's report (two problems failing
    alike are two annotations, each at its own function). Cases of one pattern are one annotation."""
    message = case.failure.message if case.failure else case.status
    shape = _NUMBER.sub("#", message)
    if problem := v.problem_of(case):
        shape = f"{problem}: {shape}"
    return common.kind(case), next(iter(v.hints_for([case])), None), shape




def _detail_line(detail: str) -> str:
    """The one line of a failure's first detail worth a line of its own: its first line, or for
    a traceback (whose first line is a bare "Traceback (most recent call last):") its last, the
    exception raised. At most 300 characters."""
    lines = [line for line in detail.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return (lines[-1] if lines[0].startswith("Traceback (most recent call last)") else lines[0]).strip()[:300]

def _annotations(v: view.ReportView) -> list[tuple[str, str, int]]:
    """(title, message, line) of each error annotation, most important first: the
    whole-submission failure, then one per failure pattern (:func:`pattern_of`) of the shown
    cases, the commonest first, then the hidden groups with failures."""
    out = []
    if f := v.failure:
        out.append((f"{f.kind}: the submission could not be graded", "\n".join(common.failure_lines(f, 10)),
                    v.failure_line()))
    by_pattern: dict[tuple[str, str | None, str], list] = {}
    for case in v.failing:
        by_pattern.setdefault(pattern_of(v, case), []).append(case)
    for (kind, _, _), cases in sorted(by_pattern.items(), key=lambda kv: -len(kv[1])):  # stable: ties in run order
        first = next((c for c in cases if c.name in v.shrunk_of), cases[0])
        cases = [first] + [c for c in cases if c is not first]
        hint = v.hint_of(first) or next(iter(v.hints_for(cases)), None)  # or the pattern's
        lines = [common.one_line(first)] + ([f"hint: {hint}"] if hint else [])
        if first.failure and first.failure.details:  # e.g. the worst element: got, expected, allowed
            lines.append(_detail_line(first.failure.details[0]))
        if small := v.shrunk_of.get(first.name):
            lines.append(f"smaller failing input: {common.one_line(small)}")
        if first.replay:
            lines.append(f"replay: {first.replay}")
        if len(cases) > 1:
            names = ", ".join(c.name for c in cases[1:1 + MAX_NAMES])
            more = len(cases) - 1 - MAX_NAMES
            lines.append(f"(and {len(cases) - 1} more case{'s' if len(cases) > 2 else ''} like it: "
                         f"{names}{', ...' if more > 0 else ''})")
        problem = v.problem_of(first)  # an assignment's: the title says which problem
        out.append((f"{problem + ': ' if problem else ''}{kind}: {len(cases)} case{'s' if len(cases) > 1 else ''} "
                    "failed", "\n".join(lines), v.line_of(first)))
    out += [(f"{t.group}: hidden cases failed", t.text, v.group_line(t.group))
            for t in v.tallies if t.status in ("failed", "error")]
    return out


def render(report: Report, *, audience: str = "learner") -> str:
    """Workflow-command lines (str, one command per line) annotating ``report.submission``.

    One ``::error`` per failure pattern of the shown cases (kind, hint and message shape:
    :func:`pattern_of`; its first case, hint, and how many more cases are like it, up to 5
    names), one per hidden group with failures (counts only, for learners), one for a
    whole-submission failure; at most :data:`MAX_ANNOTATIONS`, then one ``::notice`` with the
    score and totals (and how many annotations were left out). Control, escape and bidi
    characters appear as visible escapes (:func:`grader.reports.common.printable`).

    Raises:
        ValueError: unknown ``audience``.
    """
    v = view.build(report, audience)
    found = _annotations(v)
    lines = [command("error", msg, file=v.file, line=line, title=title) for title, msg, line in found[:MAX_ANNOTATIONS]]
    text = (f"{v.counts_text}, {v.not_passed} failed" + (f", {v.skipped} skipped" if v.skipped else "")) \
        if v.total else "no case was run: the submission could not be graded"
    if len(found) > MAX_ANNOTATIONS:
        text += f"; {len(found) - MAX_ANNOTATIONS} more annotations left out"
    title = f"{report.problem}: {common.points(report.score)} of {common.points(report.max_score)} points"
    lines.append(command("notice", text, file=v.file, line=v.line, title=title))
    return common.printable("\n".join(lines)) + "\n"  # no raw escape or bidi character in the log


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~$])")  # $ starts GitHub math ($...$)


def md(text: Any) -> str:
    """Text safe inside Markdown (and a table cell): HTML-escaped, specials backslashed, one line."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False)).replace("\r", " ").replace("\n", " ")


def step_summary(report: Report, *, audience: str = "learner") -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: score line, a table of groups and points, failures.

    At most :data:`MAX_ROWS` failing cases are listed; hidden cases appear as counts to learners.

    Raises:
        ValueError: unknown ``audience``.
    """
    v = view.build(report, audience)
    report, views = v.report, v.groups
    mark = "✅" if report.passed else "❌"
    out = [f"## {mark} {md(report.title)} ({md(report.problem)})", "",
           f"**{v.score_text}**; {v.counts_text}", ""]
    if v.hints:  # the most useful lines first: what the mistake looks like
        out += ["### Hints", ""] + [f"- {md(h)}" for h in v.hints[:MAX_HINTS]] + [""]
    if f := report.failure:
        out += [f"**The submission could not be graded** ({md(f.kind)}): {md(f.message)}", ""]
        if body := "\n".join(common.failure_lines(f, 40)[1:]):
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", body)), default=0))
            out += [f"{fence}text", body, fence, ""]
    if views:
        out += ["| Group | Cases passed | Points |", "| --- | --- | --- |"]
        out += [f"| {md(g.group)}{' (hidden)' if g.hidden else ''} | {g.passed} of {g.total} "
                f"| {common.points(g.earned)} of {common.points(g.points)} |" for g in views]
        out.append("")
    failing = [c for g in views for c in g.failing]
    tallies = [t for g in views for t in g.tallies if t.passed < t.total]
    if failing or tallies:
        out += ["### Failures", ""]
    if failing:
        out += ["| Case | Group | dtype | Kind | Message |", "| --- | --- | --- | --- | --- |"]
        for c in failing[:MAX_ROWS]:
            msg = c.failure.message if c.failure else c.status
            hint = f" (hint: {c.failure.hint})" if c.failure and c.failure.hint else ""
            worst = f"; {_detail_line(c.failure.details[0])}" if c.failure and c.failure.details else ""
            out.append(f"| {md(c.name)} | {md(c.group)} | {md(c.dtype)} | {md(common.kind(c))} "
                       f"| {md(msg + worst + hint)} |")
        if len(failing) > MAX_ROWS:
            out.append(f"\n... and {len(failing) - MAX_ROWS} more failing cases")
        out.append("")
    out += [f"- {md(t.group)}: {md(t.text)}" for t in tallies]
    return common.printable("\n".join(out).rstrip("\n")) + "\n"


def classroom_result(report: Report, *, audience: str = "learner") -> dict[str, Any]:
    """The GitHub Classroom runner result for ``report`` (a dict ready for JSON).

    Shape (as emitted by ``classroom-resources/autograding-io-grader`` ``src/main.js``)::

        {"version": 1, "status": "pass"|"fail"|"error", "max_score": N,
         "tests": [{"name", "status", "message", "test_code", "filename", "line_no",
                    "execution_time", "score"}]}

    One test per case group (``score`` = points earned, ``message`` = counts and failing cases,
    None when the group passed, ``test_code`` = the message too (each case with its replay
    command), since the reporter prints only "Test code:" for a failing test;
    ``line_no`` = the function's line), plus a first ``status: "error"`` test for a
    whole-submission failure. The compact JSON stays within :data:`MAX_CLASSROOM_BYTES`
    (fewer cases and detail lines per group until it fits). The reporter sends
    ``sum(tests[].score)`` of ``max_score`` to Classroom. Top-level ``status`` is ``error``
    when nothing could be graded, else ``pass`` only when ``report.passed``.

    Raises:
        ValueError: unknown ``audience``.
    """
    v = view.build(report, audience)
    for cases, details in ((10, 3), (5, 3), (3, 2), (1, 2), (1, 0), (0, 0)):
        result = _classroom(v, cases, details)
        if len(json.dumps(result, separators=(",", ":"))) <= MAX_CLASSROOM_BYTES:
            return result
    for test in result["tests"]:  # still too large (very long names or messages): cut the text
        for key in ("message", "test_code"):
            if test[key] and len(test[key]) > 1000:
                test[key] = test[key][:1000] + "\n... (cut: see the step summary)"
    return result


def _classroom(v: view.ReportView, max_cases: int, max_details: int) -> dict[str, Any]:
    """The Classroom result listing up to ``max_cases`` failing cases per group, each with up
    to ``max_details`` detail lines."""
    report = v.report
    tests = []
    if f := report.failure:
        text = "\n".join(common.failure_lines(f, 10))
        tests.append({"name": f"submission: {f.kind}", "status": "error", "message": text, "test_code": text,
                      "filename": report.submission, "line_no": v.line,
                      "execution_time": f"{report.seconds:.3f}s", "score": 0})
    for g in v.groups:
        seconds = sum(c.seconds for c in v.shown if c.group == g.group)   # a hidden group's calls are not timed
        message = None if g.ok else "\n".join(v.group_lines(g, max_cases, max_details=max_details))
        tests.append({
            "name": g.group, "status": "pass" if g.ok else "fail", "message": message,
            # the reporter prints only "Test code:" for a failing test, never its message; the
            # message holds each case's replay command
            "test_code": message or "",
            "filename": report.submission, "line_no": v.line,
            "execution_time": f"{seconds:.3f}s", "score": round(g.earned, 6)})
    status = "error" if report.failure else "pass" if report.passed else "fail"
    return {"version": 1, "status": status, "max_score": round(report.max_score, 6),
            "tests": common.printable_tree(tests)}  # the reporter prints them to the log


def classroom_output_line(report: Report, *, audience: str = "learner") -> str:
    """``result=<base64 of the compact JSON of classroom_result>``, one line (no newline).

    The CLI appends it to ``$GITHUB_OUTPUT`` so that the step output ``result`` can be passed
    to ``autograding-grading-reporter`` as ``<RUNNER-ID>_RESULTS`` (standard base64, as the
    runners' ``Buffer.from(...).toString('base64')`` and the reporter's decoding use).

    Raises:
        ValueError: unknown ``audience``.
    """
    data = json.dumps(classroom_result(report, audience=audience), separators=(",", ":"), allow_nan=False)
    return "result=" + base64.b64encode(data.encode("utf-8")).decode("ascii")


def write_github_files(report: Report, *, audience: str = "learner",
                       environ: Mapping[str, str] | None = None) -> list[str]:
    """Append to the files GitHub Actions names in the environment, when it names them.

    ``$GITHUB_STEP_SUMMARY`` gets :func:`step_summary`; ``$GITHUB_OUTPUT`` gets
    :func:`classroom_output_line` and a newline (the step output ``result``). Outside Actions
    (neither variable set) nothing is written.

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        The paths written, in that order.

    Raises:
        ValueError: unknown ``audience``. OSError: a named file cannot be appended to.
    """
    env = os.environ if environ is None else environ
    written = []
    for var, text in (("GITHUB_STEP_SUMMARY", lambda: step_summary(report, audience=audience)),
                      ("GITHUB_OUTPUT", lambda: classroom_output_line(report, audience=audience) + "\n")):
        if path := env.get(var):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text())
            written.append(path)
    return written
