"""Running the submission: the executor seam between a plan and its grading.

An executor runs one submission for one check. ``grader.grading.grade`` asks it to
:meth:`Executor.start` (import the submission), :meth:`Executor.call` it once per case and
:meth:`Executor.close` it (its captured output); nothing else about how or where the code runs
reaches the verdict. Two executors:

- :class:`grader.run.sandboxed.SubprocessExecutor`: the real one. The submission runs in a
  sandboxed child process (``grader.runner.Worker``, ``grader.sandbox``, ``grader._child``,
  ``grader.protocol``), restarted after a crash, and replaced by a fresh one before a visible
  case once it has seen a hidden one.
- :class:`grader.run.inprocess.InProcessExecutor`: calls a Python function in this process,
  with the child's checks on what comes back (an array, its inputs unchanged). No isolation:
  for tests of judging, scoring, shrinking, hints and every report format, in milliseconds.

Records: :class:`grader.results.ImportOutcome` and :class:`grader.results.CallOutcome`.
"""
from __future__ import annotations

from typing import Any, Protocol

from ..cases import Case
from ..results import CallOutcome, ImportOutcome

#: restarts after a crash before the run stops calling the submission
MAX_RESTARTS = 3


class Executor(Protocol):
    """What runs the submission for one check.

    Attributes:
        restarts: how many times the submission's process was restarted after a crash.
        max_restarts: after this many restarts a further crash ends the run.
    """

    restarts: int
    max_restarts: int

    def start(self) -> ImportOutcome:
        """Import the submission (blocking until it is imported or failed)."""

    def facts(self) -> dict[str, Any]:
        """What the run adds to the report's environment once started: ``jax`` and ``torch``
        versions the submission's process imported (None: not imported), ``memory_limit`` and
        ``sandbox_layers`` (a list, left out when empty)."""

    def call(self, case: Case, timeout: float | None = None) -> CallOutcome:
        """Call the submission's function on ``case.inputs``; ``timeout`` is the call's CPU
        seconds (None: the executor's default). Never raises for a fault of the submission."""

    def close(self) -> dict[str, Any]:
        """End the run; the captured output: ``stdout``, ``stderr`` (heads, str),
        ``stdout_bytes``, ``stderr_bytes`` (totals) and ``truncated``."""

    def unprivate(self, text: str | None) -> str | None:
        """``text`` with any private path of the run written as the learner knows it."""


def empty_output() -> dict[str, Any]:
    """The captured output of a run that wrote nothing."""
    return {"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}
