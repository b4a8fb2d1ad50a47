"""PrairieLearn external-grader ``results.json`` (written to /grade/results/results.json).

Source of the format: PrairieLearn's "External Grading" page, section "Grading results"
(https://prairielearn.readthedocs.io/en/latest/externalGrading/; docs/externalGrading.md of
PrairieLearn/PrairieLearn): ``score`` is a float in [0, 1] and the only required field of a
gradable result; ``gradable: false`` marks input that could not be graded ("invalid, not
gradable": no points given or taken and no attempt used), with ``format_errors`` (a string or
a list of strings); ``message``, ``output`` and ``tests`` (each ``name``, ``description``,
``points``, ``max_points``, ``message``, ``output``) are what the ``<pl-external-grader-results>``
element shows; the file is limited to 1 MB. The schema transcribed from that page is
``grader/schemas/prairielearn_results.schema.json`` (:data:`SCHEMA`).

Mapping: one test per case *group* (groups carry the points), in the order of
``report.groups``: ``points``/``max_points`` are the group's earned and possible points,
``message`` its counts and first hint, ``output`` its failing cases as the text report writes
them. ``message`` at the top is the verdict line, the failure pattern and the hints; ``output``
is the whole text report. PrairieLearn shows everything at once and has no per-test visibility,
so the learner audience (the default) is what a student may see: a hidden group's cases only as
counts. A file the grader cannot load at all (kind ``import``: a syntax error, no such function)
is ``gradable: false`` with the reason in ``format_errors``, so a typo costs no attempt; any
other failure of the submission (a timeout, a crash) is a gradable score of 0.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.reports import common, view
from grader.results import Report

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "prairielearn_results.schema.json"
MAX_LISTED = 10          # failing cases listed per test output
MAX_BYTES = 1_000_000    # PrairieLearn's limit on results.json
NOT_GRADABLE = ("import", "missing")  # failure kinds of a file that could not be loaded at all, or of none


def _group_test(v: view.ReportView, group: common.GroupView) -> dict[str, Any]:
    lines = v.group_lines(group, MAX_LISTED)
    hints = v.hints_for(group.failing)[:1]
    message = lines[0] + (f"; hint: {hints[0]}" if hints else "")
    return {"name": group.group, "description": f"{group.total} cases of the group {group.group!r}",
            "points": round(group.earned, 6), "max_points": round(group.points, 6),
            "message": message, "output": "\n".join(lines[1:])}


def results(report: Report, *, audience: str = "learner") -> dict[str, Any]:
    """The ``results.json`` object for ``report`` (see the module docstring for the mapping).

    ``score`` is ``report.score / report.max_score`` rounded to 6 decimals (0 when the maximum
    is 0); test points are the groups' points, rounded to 6 decimals.

    Raises:
        ValueError: unknown ``audience``.
    """
    from grader.reports import text

    v = view.build(report, audience)
    report = v.report
    full = text.render(report, audience=audience, width=100)
    if (f := v.failure) is not None and f.kind in NOT_GRADABLE:
        # one entry: PrairieLearn shows each as a red "Error" of its own, and a hint is none
        errors = [f"{f.kind}: {f.message}" + (f"\nhint: {f.hint}" if f.hint else "")]
        return common.printable_tree({"gradable": False, "format_errors": errors,
                                      "message": f"The submission could not be graded: {f.message}",
                                      "output": full})
    score = report.score / report.max_score if report.max_score else 0.0
    head = f"{'PASS' if report.passed else 'FAIL'}: score {v.score_text}; {v.counts_text}"
    message = [head]
    if f is not None:
        message.append(f"the submission could not be graded: {f.kind}: {f.message}")
    message += [s["text"] for s in v.summary[:3]]
    message += [f"hint: {h}" for h in v.hints[:3]]
    message += [t.text for t in v.tallies]
    return common.printable_tree({
        "gradable": True,
        "score": round(min(1.0, max(0.0, score)), 6),
        "message": "\n".join(message),
        "output": full,
        "tests": [_group_test(v, g) for g in v.groups],
    })


def render(report: Report, *, audience: str = "learner") -> str:
    """``results.json`` text (indented, ASCII-only JSON) for ``report``, at most
    :data:`MAX_BYTES`: past it the whole text report in ``output`` is cut to what fits, with a
    note (the tests keep their own output).

    Raises:
        ValueError: unknown ``audience``, or a value JSON cannot carry (NaN, infinity).
    """
    data = results(report, audience=audience)
    out = json.dumps(data, indent=2, allow_nan=False) + "\n"
    if len(out) > MAX_BYTES:
        data["output"] = data["output"][: max(0, len(data["output"]) - (len(out) - MAX_BYTES) - 200)] \
            + "\n... (cut to fit PrairieLearn's 1 MB limit; the tests below list the failing cases)"
        out = json.dumps(data, indent=2, allow_nan=False) + "\n"
    return out
