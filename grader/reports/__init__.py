"""Reporters: each module renders a :class:`grader.results.Report` and holds no grading policy.

Every reporter module has ``render(report, *, audience="learner") -> str``. Adding a format is
adding a module here and a line to :data:`FORMATS`; nothing else changes.
"""
from __future__ import annotations

import importlib
from types import ModuleType

FORMATS = {
    "text": "grader.reports.text",
    "json": "grader.reports.json_report",
    "junit": "grader.reports.junit",
    "gradescope": "grader.reports.gradescope",
    "github": "grader.reports.github",
    "prairielearn": "grader.reports.prairielearn",
}


def reporter(name: str) -> ModuleType:
    """The reporter module for a format name (a key of :data:`FORMATS`).

    Raises:
        KeyError: unknown format.
    """
    return importlib.import_module(FORMATS[name])
