"""Errors that mean the grader itself could not run (exit code 2).

A submission that fails is never an error of this kind: it becomes a report with exit code 1.
"""
from __future__ import annotations

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class GraderError(Exception):
    """The grader cannot run: bad flags, a missing file, an unknown problem.

    The message is one line for a person, worded ``what: why; fix``; the CLI prints it as
    ``grader: error: <message>`` and exits with :data:`EXIT_USAGE` (2).
    """


class SpecError(GraderError):
    """A problem spec is missing, unreadable, not YAML, or does not fit the schema.

    Attributes:
        path: the spec file.
        line: the 1-based line of the offending field where YAML gives one, else None.
        field: the dotted path of the offending field (``tolerance.model``), or None.
    """

    def __init__(self, path: str, message: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = path
        self.line = line
        self.field = field
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")
