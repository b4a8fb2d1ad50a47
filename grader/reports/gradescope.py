"""Gradescope autograder ``results.json`` (written to /autograder/results/results.json).

Source of the format: Gradescope's "Autograder Specifications" page
(https://gradescope-autograders.readthedocs.io/en/latest/specs/), section "Output format";
its JSON Schema is ``grader/schemas/gradescope_results.schema.json`` (:data:`SCHEMA`).

Mapping: one Gradescope test per case *group* (groups carry the points), in the order of
``report.groups``: ``name`` = group, ``score``/``max_score`` = earned/points, ``status``
``passed`` only when every case of the group passed, ``output`` = counts and the failing cases,
each with its hint. Hidden groups get ``visibility`` ``after_published`` for learners (counts
only; or ``after_due_date``: :data:`HIDDEN_VISIBILITY_ENV`) and ``hidden`` for instructors
(details, never shown to students). A whole-submission failure is an extra first test worth
0 points. Top-level ``score`` is ``report.score``, ``visibility`` ``visible`` and
``stdout_visibility`` ``hidden`` (the autograder's own log is for the instructor);
``extra_data`` holds the problem id, seed and versions (the ``python``/``numpy``/``jax``/
``grader`` keys of ``report.environment``). Outputs are Markdown (``output_format`` ``md``):
every text from a report is escaped (:func:`grader.reports.github.md`) or inside a fenced code
block longer than any run of backticks in it, so nothing from a submission renders as markup;
test names stay ``text``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from grader.reports import common, view
from grader.reports.github import md
from grader.results import Failure, Report

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "gradescope_results.schema.json"
HIDDEN_VISIBILITY = {common.LEARNER: "after_published", common.INSTRUCTOR: "hidden"}
#: the visibilities a hidden group's test may get for learners (Gradescope's own words)
LEARNER_HIDDEN_VISIBILITIES = ("after_published", "after_due_date", "hidden")
#: environment variable that :func:`render` reads for a learner's hidden groups' visibility
#: (``after_due_date`` shows their counts once the due date has passed, without publishing)
HIDDEN_VISIBILITY_ENV = "GRADER_GRADESCOPE_HIDDEN_VISIBILITY"
MAX_LISTED = 20  # failing cases listed per test output
VERSION_KEYS = ("python", "numpy", "jax", "grader")  # report.environment keys holding versions


def fenced(text: str, info: str = "text") -> list[str]:
    """``text`` as the lines of a Markdown fenced code block, the fence longer than any run of
    backticks in ``text`` (so no text can close it)."""
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
    return [f"{fence}{info}", text, fence]


def _case_md(v: view.ReportView, case: Any) -> list[str]:
    lines = [f"**{md(case.name)}** ({md(case.dtype)}): {md(common.kind(case))}", ""]
    text = v.case_text(case, 5)
    if (hint := v.hint_of(case)) and f"hint: {hint}" not in text:  # said once: in the block when it is there
        lines += [f"hint: {md(hint)}", ""]
    return lines + fenced(text) + [""]


def _group_test(v: view.ReportView, group: common.GroupView, number: int, hidden_as: str) -> dict[str, Any]:
    out = [f"{group.passed} of {group.total} cases passed "
           f"({common.points(group.earned)} of {common.points(group.points)} points)", ""]
    out += [f"hint: {md(h)}\n" for h in v.hints_for(group.failing)[:3]]
    for case in group.failing[:MAX_LISTED]:
        out += _case_md(v, case)
    if len(group.failing) > MAX_LISTED:
        out += [f"... and {len(group.failing) - MAX_LISTED} more failing cases", ""]
    out += [f"- {md(t.text)}" for t in group.tallies]
    return {
        "name": group.group, "number": str(number),
        "score": round(group.earned, 6), "max_score": round(group.points, 6),
        "status": "passed" if group.ok else "failed",
        "output": "\n".join(out).rstrip("\n"), "output_format": "md",
        "tags": sorted({common.kind(c) for c in group.failing}),
        "visibility": hidden_as if group.hidden else "visible",
        "extra_data": {"group": group.group, "passed": group.passed, "total": group.total},
    }


def _failure_md(f: Failure) -> str:
    lines = [f"**The submission could not be graded** ({md(f.kind)}): {md(f.message)}", ""]
    if f.hint:
        lines += [f"hint: {md(f.hint)}", ""]
    if f.shown_details:
        lines += fenced("\n".join(f.shown_details[:40]))
    return "\n".join(lines).rstrip("\n")


def _summary(v: view.ReportView, hidden_as: str) -> str:
    """The top-level output, shown to the learner at once (``visibility`` ``visible``). For a
    learner, a hidden group's test waits (``hidden_as``), so this says nothing of it but its
    points: no count, no kind, no tally (it once said "real_size: hidden cases: 0 of 6 passed"
    beside a test Gradescope kept back)."""
    report = v.report
    held = [g for g in v.groups if g.hidden] if v.audience == common.LEARNER else []
    if held:
        seen = [g for g in v.groups if not g.hidden]
        earned, points = sum(g.earned for g in seen), sum(g.points for g in seen)
        passed, total = sum(g.passed for g in seen), sum(g.total for g in seen)
        later = sum(g.points for g in held)
        when = {"after_due_date": "after the due date", "after_published": "once grades are published"}.get(
            hidden_as, "never")
        head = (f"score of the tests shown now: {common.points(earned)} of {common.points(points)} points; "
                f"{passed} of {total} cases passed; {common.points(later)} more points in tests shown {when}")
        names = {g.group for g in held}
        shown = [c for c in v.shown if c.group not in names]
        tallies = [t for t in v.tallies if t.group not in names]
        hints = v.hints_for([c for c in v.failing if c.group not in names])
    else:
        head, shown, tallies, hints = f"score: {v.score_text}; {v.counts_text}", v.shown, v.tallies, v.hints
    lines = [f"**{md(report.title)}** ({md(report.problem)})", "", head, ""]
    if report.failure:
        lines += [f"the submission could not be graded: {md(report.failure.kind)}: {md(report.failure.message)}", ""]
    if kinds := common.kind_counts(shown):
        lines += ["failures: " + ", ".join(f"{md(k)} {n}" for k, n in kinds.most_common()), ""]
    lines += [f"- hint: {md(h)}" for h in hints]
    lines += [f"- {md(t.group)}: {md(t.text)}" for t in tallies]
    return "\n".join(lines).rstrip("\n")


def results(report: Report, *, audience: str = "learner", hidden_visibility: str | None = None) -> dict[str, Any]:
    """The ``results.json`` object for ``report`` (see the module docstring for the mapping).

    Scores are points (floats, rounded to 6 decimals); ``execution_time`` is whole seconds.

    Args:
        hidden_visibility: for learners, the visibility of a hidden group's test, one of
            :data:`LEARNER_HIDDEN_VISIBILITIES` (default ``after_published``). Instructors'
            hidden groups are always ``hidden`` (they list the cases).

    Raises:
        ValueError: unknown ``audience`` or ``hidden_visibility``.
    """
    v = view.build(report, audience)  # a learner never sees a secret seed nor a hidden case
    hidden_as = HIDDEN_VISIBILITY[audience]
    if hidden_visibility is not None and audience == common.LEARNER:
        if hidden_visibility not in LEARNER_HIDDEN_VISIBILITIES:
            raise ValueError(f"hidden_visibility must be one of {LEARNER_HIDDEN_VISIBILITIES}, "
                             f"not {hidden_visibility!r}")
        hidden_as = hidden_visibility
    report = v.report
    tests = []
    if f := report.failure:
        tests.append({"name": f"submission: {f.kind}", "number": "0", "score": 0.0, "max_score": 0.0,
                      "status": "failed", "output": _failure_md(f),
                      "output_format": "md", "tags": [f.kind], "visibility": "visible"})
    tests += [_group_test(v, g, i, hidden_as) for i, g in enumerate(v.groups, 1)]
    env = report.environment
    versions = {**env.get("versions", {}), **{k: env[k] for k in VERSION_KEYS if env.get(k) is not None}}
    return common.printable_tree({  # shown to learners: no raw control, escape or bidi character
        "score": round(report.score, 6),
        "execution_time": round(report.seconds),
        "output": _summary(v, hidden_as),
        "output_format": "md", "test_output_format": "md", "test_name_format": "text",
        "visibility": "visible", "stdout_visibility": "hidden",
        "extra_data": {"problem": report.problem, "seed": env.get("seed"), "versions": versions,
                       "environment": {k: x for k, x in env.items()
                                       if k not in ("seed", "versions", *VERSION_KEYS)}},
        "tests": tests,
    })


def render(report: Report, *, audience: str = "learner") -> str:
    """``results.json`` text (indented, ASCII-only JSON) for ``report``; a learner's hidden
    groups get the visibility named by ``$GRADER_GRADESCOPE_HIDDEN_VISIBILITY`` when it is set
    (:data:`HIDDEN_VISIBILITY_ENV`; the Gradescope template's ``run_autograder`` passes it on).

    Raises:
        ValueError: unknown ``audience`` or visibility, or a value JSON cannot carry (NaN, infinity).
    """
    hidden = os.environ.get(HIDDEN_VISIBILITY_ENV) or None
    return json.dumps(results(report, audience=audience, hidden_visibility=hidden), indent=2, allow_nan=False) + "\n"
