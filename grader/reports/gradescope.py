"""Gradescope autograder ``results.json`` (written to /autograder/results/results.json).

Source of the format: Gradescope's "Autograder Specifications" page
(https://gradescope-autograders.readthedocs.io/en/latest/specs/), section "Output format";
its JSON Schema is ``grader/schemas/gradescope_results.schema.json`` (:data:`SCHEMA`).

Mapping: one Gradescope test per case *group* (groups carry the points), in the order of
``report.groups``: ``name`` = group, ``score``/``max_score`` = earned/points, ``status``
``passed`` only when every case of the group passed, ``output`` = counts and the failing cases.
Hidden groups get ``visibility`` ``after_published`` for learners (counts only) and ``hidden``
for instructors (details, never shown to students). A whole-submission failure is an extra
first test worth 0 points. Top-level ``score`` is ``report.score``; ``extra_data`` holds the
problem id, seed and versions (the ``python``/``numpy``/``jax``/``grader`` keys of
``report.environment``). Every text field uses ``output_format`` ``"text"``, so messages from
submissions are never rendered as HTML or Markdown.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.reports import common, view
from grader.results import Report

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "gradescope_results.schema.json"
HIDDEN_VISIBILITY = {common.LEARNER: "after_published", common.INSTRUCTOR: "hidden"}
MAX_LISTED = 20  # failing cases listed per test output
VERSION_KEYS = ("python", "numpy", "jax", "grader")  # report.environment keys holding versions


def _group_test(v: view.ReportView, group: common.GroupView, number: int) -> dict[str, Any]:
    return {
        "name": group.group, "number": str(number),
        "score": round(group.earned, 6), "max_score": round(group.points, 6),
        "status": "passed" if group.ok else "failed",
        "output": "\n".join(v.group_lines(group, MAX_LISTED)), "output_format": "text",
        "tags": sorted({common.kind(c) for c in group.failing}),
        "visibility": HIDDEN_VISIBILITY[v.audience] if group.hidden else "visible",
        "extra_data": {"group": group.group, "passed": group.passed, "total": group.total},
    }


def _summary(v: view.ReportView) -> str:
    report = v.report
    lines = [f"{report.title} ({report.problem})", f"score: {v.score_text}; {v.counts_text}"]
    if report.failure:
        lines.append(f"the submission could not be graded: {report.failure.kind}: {report.failure.message}")
    if kinds := common.kind_counts(v.shown):
        lines.append("failures: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    lines += [f"hint: {h}" for h in v.hints]
    return "\n".join(lines + [t.text for t in v.tallies])


def results(report: Report, *, audience: str = "learner") -> dict[str, Any]:
    """The ``results.json`` object for ``report`` (see the module docstring for the mapping).

    Scores are points (floats, rounded to 6 decimals); ``execution_time`` is whole seconds.

    Raises:
        ValueError: unknown ``audience``.
    """
    v = view.build(report, audience)  # a learner never sees a secret seed nor a hidden case
    report = v.report
    tests = []
    if report.failure:
        f = report.failure
        tests.append({"name": f"submission: {f.kind}", "number": "0", "score": 0.0, "max_score": 0.0,
                      "status": "failed", "output": "\n".join(common.failure_lines(f, 40)),
                      "output_format": "text", "tags": [f.kind], "visibility": "visible"})
    tests += [_group_test(v, g, i) for i, g in enumerate(v.groups, 1)]
    env = report.environment
    versions = {**env.get("versions", {}), **{k: env[k] for k in VERSION_KEYS if env.get(k) is not None}}
    return common.printable_tree({  # shown to learners: no raw control, escape or bidi character
        "score": round(report.score, 6),
        "execution_time": round(report.seconds),
        "output": _summary(v),
        "output_format": "text", "test_output_format": "text", "test_name_format": "text",
        "extra_data": {"problem": report.problem, "seed": env.get("seed"), "versions": versions,
                       "environment": {k: v for k, v in env.items()
                                       if k not in ("seed", "versions", *VERSION_KEYS)}},
        "tests": tests,
    })


def render(report: Report, *, audience: str = "learner") -> str:
    """``results.json`` text (indented, ASCII-only JSON) for ``report``.

    Raises:
        ValueError: unknown ``audience``, or a value JSON cannot carry (NaN, infinity).
    """
    return json.dumps(results(report, audience=audience), indent=2, allow_nan=False) + "\n"
