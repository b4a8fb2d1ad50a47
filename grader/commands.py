"""The commands of one submission or problem: ``grader check`` (:func:`cmd_check`), ``grader
problems`` (:func:`cmd_problems`) and ``grader validate`` (:func:`cmd_validate`). Each takes
the parsed flags and returns the exit code (``grader.cli``'s docstring); ``grader.cli`` parses
and dispatches, ``grader.batch`` holds ``grade`` and ``merge``, ``grader.export`` ``export``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from ._io import reaches_output, write_output
from .errors import EXIT_FAILED, EXIT_PASSED, GraderError
from .flags import note_replaced, options_from_args, resolve_problem


def cmd_check(args: argparse.Namespace) -> int:
    """``grader check``: grade one file, write the report, return 0/1."""
    from .check import check_submission
    from .options import SEED_SECRET_ENV
    from .submission import read_submission
    from .reports import reporter
    from .cleanup import remove_own_folders
    from .processes import harden_grader_process, reap_orphans

    opts = options_from_args(args)  # a bad seed secret is bad input: exit 2 before anything runs
    os.environ.pop(SEED_SECRET_ENV, None)  # read once; nothing started from here on inherits it
    shown = args.shown or args.submission  # how the report names the file (grade: as it was found)
    try:
        source, tree, syntax_error = read_submission(args.submission, shown)
    except GraderError as exc:  # missing, a folder, unreadable: the learner sees it in the format asked (exit 2)
        from .reports.fault import report_input_fault
        report_input_fault(args, str(exc), write_output)
        raise
    assignment = None
    if getattr(args, "assignment", None):
        from .assignment import load_assignment
        if args.problem:
            raise GraderError("give --problem or --assignment, not both")
        if args.cases or args.replay:
            raise GraderError("--case and --replay run one problem's cases: give --problem with them, "
                              "not --assignment")
        assignment = load_assignment(args.assignment, args.problems_dir)
    else:
        problem = resolve_problem(args, tree, source, syntax_error)
    if getattr(args, "progress", False):
        opts.progress = progress_line
    opts.only_cases = args.cases
    opts.submission_shown = shown
    opts.submission_named = bool(args.shown)
    opts.jax_scope = getattr(args, "jax_cache_scope", None)
    if args.replay:
        try:
            opts.replay = json.loads(args.replay)
        except ValueError as exc:
            raise GraderError(f"--replay is not JSON: {exc}") from None
        if not isinstance(opts.replay, dict):
            raise GraderError("--replay must be a JSON object like {\"dtype\": \"float32\", ...}")
    harden_grader_process()
    try:
        if assignment is not None:
            from .assignment import check_assignment
            report = check_assignment(args.submission, assignment, opts)
        else:
            report = check_submission(args.submission, problem, opts)
    finally:
        reap_orphans()
        remove_own_folders()
    module = reporter(args.format)
    if args.format == "text":  # for a person: colour and width of the terminal, if it is one
        stream = None if args.output else sys.stdout
        rendered = module.render(report, audience=args.audience, color=module.color_wanted(stream),
                                 width=module.terminal_width(stream), verbosity=args.verbosity)
    else:  # machine-readable: never colour, wrapping or verbosity
        rendered = module.render(report, audience=args.audience)
    if args.format == "text" and reaches_output(args.output):
        from .reports.text import actions_safe   # a learner's line is no workflow command in the log
        rendered = actions_safe(rendered)
    write_output(rendered, args.output)
    if args.format == "github":
        module.write_github_files(report, audience=args.audience)
    return EXIT_PASSED if report.passed else EXIT_FAILED


#: how a progress line of ``grader check --progress`` starts (``grader.web.checks`` reads them)
PROGRESS_PREFIX = "grader: progress: "


def progress_line(phase: str, done: int, total: int) -> None:
    """``--progress``: one line on stderr, ``grader: progress: PHASE DONE TOTAL SECONDS``, written
    at once (SECONDS: ``time.monotonic()``, the system's clock since boot on Linux, which the
    exercise page's server compares with its own to split a check's time)."""
    import time
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{PROGRESS_PREFIX}{phase} {done} {total} {time.monotonic():.6f}\n")
        sys.stderr.flush()


def cmd_problems(args: argparse.Namespace) -> int:
    """``grader problems [ID]``: list problem ids and titles, or print one problem's statement.

    Listing: one ``id<TAB>title`` line per usable problem, then one ``id<TAB>unusable: <error>``
    line per spec that fails to load (exit 0 all the same: the others are usable). With ``ID``:
    the title and statement (exit 2 if the id is unknown or its spec broken).
    """
    from .spec import find_problem, load_all, load_problem

    note_replaced(args.problems_dir)
    if args.problem:
        problem = load_problem(find_problem(args.problem, args.problems_dir))
        print(f"{problem.id}: {problem.title}\n")
        print(problem.statement.rstrip("\n"))
        return EXIT_PASSED
    loaded, broken = load_all(args.problems_dir)
    for pid in sorted(set(loaded) | set(broken)):
        if pid in loaded:
            print(f"{pid}\t{loaded[pid].title}")
        else:
            print(f"{pid}\tunusable: {broken[pid]}")
    return EXIT_PASSED


def cmd_validate(args: argparse.Namespace) -> int:
    """``grader validate``: check a problem (``grader.validate``); 0 valid, 1 invalid."""
    from .cleanup import remove_own_folders
    from .processes import harden_grader_process, reap_orphans
    from .validate import render_json, render_text, resolve_spec, validate_problem

    path = resolve_spec(args.target, args.problems_dir)
    harden_grader_process()
    try:
        result = validate_problem(path, jobs=args.jobs, sandbox=args.sandbox, seed=args.seed)
    finally:
        reap_orphans()
        remove_own_folders()
    write_output((render_json if args.format == "json" else render_text)(result), None)
    return EXIT_PASSED if result.valid else EXIT_FAILED
