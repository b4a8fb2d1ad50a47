"""A report for a fault of the grader's input: the submission file is missing, a folder or not
readable. (A file that is not UTF-8 text is the submission's own fault, a report of kind
``import`` with exit 1; :func:`fix_for` words its hint too.)

``grader check`` still exits 2 for these (the grader could not run), but a learner in CI or on
Gradescope sees only the format's output, never the grader's stderr: so the format asked for
(``json``, ``junit``, ``gradescope``, ``github``, with its step summary and Classroom result) is
written too, as a report with no case whose failure (kind ``import``) says what to fix.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from grader.results import Failure, GroupScore, Report
from grader.submission import fix_for  # noqa: F401 - re-exported


def input_fault_report(submission: str, problem: Any | None, message: str) -> Report:
    """A report with no case for a submission the grader could not read (``message`` says why).

    ``problem`` (a :class:`grader.spec.Problem`, or None when it cannot be told) gives the id,
    title and groups (each 0 of its points), so scores add up in every format.
    """
    from ..version import __version__
    function = getattr(problem, "function", None)
    failure = Failure(kind="import", message=f"the grader could not read the submission: {message}",
                      hint=fix_for(message, function), data={"input_fault": True})
    groups = [GroupScore(group=name, points=g.points, earned=0.0, passed=0, total=0, visibility=g.visibility)
              for name, g in problem.groups.items()] if problem is not None else []
    return Report(problem=getattr(problem, "id", "unknown"), title=getattr(problem, "title", "unknown problem"),
                  submission=submission, passed=False, score=0.0,
                  max_score=float(getattr(problem, "max_score", 0.0)), failure=failure, cases=[], groups=groups,
                  summary=[], environment={"grader": __version__, "input_fault": True},
                  output={"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False},
                  seconds=0.0)


def report_input_fault(args: argparse.Namespace, message: str, write: Callable[[str, str | None], None]) -> None:
    """Write the ``--format`` output of :func:`input_fault_report` for ``grader check`` flags
    ``args`` with ``write(text, args.output)`` (and GitHub's files for ``--format github``).

    Nothing for ``--format text``: the ``grader: error:`` line on stderr is the text report.
    Best effort: a failure here (an unknown problem, an unwritable file) is noted on stderr
    and the caller's error stands.
    """
    if args.format == "text":
        return
    try:
        from grader.reports import reporter
        problem = None
        try:
            if args.problem:
                from grader.spec import find_problem, load_problem
                problem = load_problem(find_problem(args.problem, args.problems_dir))
            else:
                from grader.spec import load_all
                loaded, _ = load_all(args.problems_dir)
                problem = next(iter(loaded.values())) if len(loaded) == 1 else None
        except Exception:  # noqa: BLE001 - the report is still written, without the groups
            problem = None
        report = input_fault_report(getattr(args, "shown", None) or args.submission, problem, message)
        module = reporter(args.format)
        write(module.render(report, audience=args.audience), args.output)
        if args.format == "github":
            module.write_github_files(report, audience=args.audience)
    except Exception as exc:  # noqa: BLE001 - the grader's own error is what matters here
        sys.stderr.write(f"grader: note: no {args.format} report of the error could be written: {exc}\n")
