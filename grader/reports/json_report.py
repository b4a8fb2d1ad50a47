"""The JSON report (``--format json``): the report contract of ``grader check``.

Top level: ``problem``, ``title``, ``submission``, ``passed``, ``score``, ``max_score``,
``failure`` (only when nothing could be graded), ``cases`` (each with ``name``, ``group``,
``status``, ``inputs`` shapes and dtypes, ``failure`` with ``kind``, ``message``, ``hint``),
``groups`` (points), ``summary`` (failures by kind, dtype and rank), ``environment`` and
``output`` (the submission's captured stdout/stderr heads). For the learner audience hidden cases
are left out of ``cases``; ``hidden`` gives, per group, how many passed of how many (nothing else).
"""
from __future__ import annotations

import json
import math
from typing import Any

from ..results import Report
from . import view


def to_dict(report: Report, *, audience: str = "learner") -> dict[str, Any]:
    """The report as a JSON-ready dict, hidden cases (and a secret seed) redacted for ``audience="learner"``."""
    v = view.build(report, audience)
    report = v.report
    data = report.to_json()
    data["counts"] = {"passed": v.passed, "failed": v.failed, "errors": v.errors, "skipped": v.skipped,
                      "total": v.total}
    data["hints"] = v.hints
    if audience != "instructor":
        # a hidden case is a count per group and nothing else: no entry, status, kind, timing or
        # order (round four, class 3: eight outcomes a call carried 3 bits of a hidden input)
        data["cases"] = [case for case in data["cases"] if case["visibility"] != "hidden"]
        if v.tallies:   # (its seconds are the shown cases' already: view.build)
            data["hidden"] = [{"group": t.group, "passed": t.passed, "total": t.total} for t in v.tallies]
        data["summary"] = v.summary  # the pattern of the cases a learner may see
        if not v.show_output:
            # the capture spans every case: a submission printing its arguments would reveal
            # the hidden inputs
            data["output"] = {"stdout": "", "stderr": "", "withheld": "the report has hidden cases",
                              "truncated": False}
    return data


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by the string "nan", "inf" or "-inf"
    (JSON has no NaN or infinity; RFC 8259 section 6)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def render(report: Report, *, audience: str = "learner") -> str:
    """The report as indented JSON text (ends with a newline)."""
    return json.dumps(finite(to_dict(report, audience=audience)), indent=2, allow_nan=False) + "\n"
