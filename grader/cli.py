"""The command line: ``grader check``, ``grader grade``, ``grader merge``, ``grader problems``,
``grader validate``.

Exit codes (every command):

* 0: the submission passed (``check``), every submission passed (``grade``, and ``merge`` of the
  merged class), the problem is valid (``validate``);
* 1: the submission failed (``check``), or some submissions failed (``grade``, ``merge``), the problem is
  invalid (``validate``: its spec, a stale literal, the oracle, a mistake; ``grader.validate``);
* 2: the grader could not run: bad flags, a missing or unreadable file, an unknown problem,
  an invalid spec (for ``check``). The error is one line on stderr, ``grader: error: ...``; never a traceback
  (set ``GRADER_DEBUG=1`` to see one for an internal error).

Machine-readable output goes only where asked: to stdout for ``--format json`` (and nothing
else goes to stdout then), or to the ``--output`` file. Only the text report on a terminal is
coloured and fitted to its width (``NO_COLOR`` turns colour off, ``FORCE_COLOR`` on even into a
pipe; never into ``--output``); ``-q`` and ``-v`` change how much ``check`` and ``grade`` say
(:mod:`grader.reports.text`). The submission's own prints are
captured in its process and never reach the grader's stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from .version import __version__
from .errors import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, GraderError

from ._args import add_check_options, add_verbosity_options, int_at_least
from ._io import write_output
from .reports import FORMATS  # the format names: defined once, with their modules


class _Parser(argparse.ArgumentParser):
    """argparse with the grader's one-line error format and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"grader: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    """The ``grader`` argument parser with every subcommand."""
    parser = _Parser(prog="grader", description="Grade numeric coding exercises against a reference solution.")
    parser.add_argument("--version", action="version", version=f"grader {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = sub.add_parser("check", help="grade one submission and explain what is wrong",
                           description="Grade one submission file. Exit 0 passed, 1 failed, 2 could not run.")
    check.add_argument("submission", metavar="SUBMISSION", help="the learner's .py file")
    add_check_options(check)
    add_verbosity_options(check)
    check.add_argument("--format", choices=FORMATS, default="text", help="report format (default text)")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--case", action="append", metavar="NAME", dest="cases",
                       help="run only this case (repeatable); names are in the report")
    check.add_argument("--replay", metavar="JSON",
                       help="run one case given as JSON {\"dtype\": ..., \"<param>\": [...]} (from a report)")
    # grader grade's own: it starts each check in a neutral folder with the file's absolute path,
    # and the report names the file as it was found (relative if it was given so)
    check.add_argument("--shown", metavar="PATH", help=argparse.SUPPRESS)

    probs = sub.add_parser("problems", help="list the problems the grader knows, or print one's statement",
                           description="List the problems (id and title), or with ID print that problem's "
                                       "statement. A spec that fails to load is named with its error; the others "
                                       "are listed.")
    probs.add_argument("problem", nargs="?", metavar="ID", help="print this problem's statement")
    probs.add_argument("--problems-dir", metavar="DIR",
                       help="a folder of problem specs added to the bundled ones (a problem of the same id there wins)")

    validate = sub.add_parser(
        "validate", help="check a problem for authors: spec, literals, oracle, mistakes, mutation score",
        description="Validate a problem: the spec loads, the reference reproduces the literal expected values, "
                    "an independent oracle agrees with the reference on every case, each file of the mistakes "
                    "folder fails with its stated kind, and per case group the share of mistakes caught. "
                    "Exit 0 valid, 1 invalid, 2 could not run.")
    validate.add_argument("target", metavar="PROBLEM|SPEC", help="a problem id or the path of a spec YAML file")
    validate.add_argument("--problems-dir", metavar="DIR", help="folder of problem specs (ids are looked up there too)")
    validate.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    validate.add_argument("--jobs", type=int_at_least(1), metavar="N",
                          help="mistakes graded at a time (default: the number of cores)")
    validate.add_argument("--sandbox", choices=("auto", "strict", "none"), default="auto",
                          help="isolation of the mistakes' runs (as for check)")

    try:
        from . import batch
    except ImportError:  # pragma: no cover - batch grading not installed in this build
        batch = None
    if batch is not None:
        batch.add_parsers(sub)
        # not a check option: grade's own output (its checks write JSON reports, whatever -q/-v)
        add_verbosity_options(sub.choices["grade"])
    from . import export
    export.add_parser(sub)
    return parser


def resolve_problem(args: argparse.Namespace, tree: Any, source: str | None = None,
                    syntax_error: SyntaxError | None = None) -> Any:
    """The :class:`grader.spec.Problem` for ``--problem``, or the one the submission defines.

    A file that does not parse (``tree`` None, ``syntax_error`` given) is matched by the
    functions a tolerant scan of ``source`` finds, so its SyntaxError is graded as the
    submission's failure (exit 1) when the scan names one problem.

    Raises:
        GraderError: unknown problem, or the submission defines the function of none or several
            (the message lists the known problems' functions, and says when the file does not parse).
    """
    from .check import functions_of
    from .spec import available_problems, find_problem, load_all, load_problem

    note_replaced(args.problems_dir)
    if args.problem:
        return load_problem(find_problem(args.problem, args.problems_dir))
    if not available_problems(args.problems_dir):
        raise GraderError("no problem specs found; pass --problems-dir DIR")
    # a broken spec makes only its own problem unusable: the others are still matched
    loaded, broken = load_all(args.problems_dir)
    defined = functions_of(tree, source)
    matches = [p for p in loaded.values() if p.function in defined]
    if len(matches) == 1:
        return matches[0]
    if not matches and len(loaded) == 1 and not broken:
        # the only problem there is: a missing function or a syntax error is then the
        # submission's failure (exit 1, kind import), not a usage error
        return next(iter(loaded.values()))
    if not matches:
        unusable = f"; unusable: {'; '.join(str(e) for e in broken.values())}" if broken else ""
        known = ", ".join(p.function if p.function == p.id else f"{p.function} (problem {p.id})"
                          for p in loaded.values()) or "none"
        elsewhere = "" if args.problems_dir else " (or --problems-dir DIR if the problem is an instructor's own)"
        if tree is None and syntax_error is not None:
            where = f" (line {syntax_error.lineno})" if syntax_error.lineno else ""
            raise GraderError(f"the submission does not parse: {syntax_error.msg}{where}, and no known problem's "
                              f"function is defined in it (known: {known}); pass --problem ID{elsewhere}"
                              f"{unusable}")
        raise GraderError(f"the submission defines no function of a known problem (known: {known}); "
                          f"pass --problem ID{elsewhere}{unusable}")
    raise GraderError(f"the submission matches several problems ({', '.join(p.id for p in matches)}); "
                      "pass --problem ID")


def seed_secret_of(args: argparse.Namespace) -> tuple[bytes | None, str]:
    """The seed secret of parsed ``check``/``grade`` flags and where it came from:
    ``--seed-secret FILE`` if given (it wins over the environment), else
    ``$GRADER_SEED_SECRET`` if set and not empty, else ``(None, "")``. When both are set, a
    note on stderr says that the variable is ignored (never both silently).

    Raises:
        GraderError: the file is missing, unreadable or empty, or ``--seed`` was given too.
    """
    from .check import SEED_SECRET_ENV, read_seed_secret

    secret, source = read_seed_secret(args.seed_secret)
    if secret is not None and args.seed is not None:
        raise GraderError(f"--seed cannot be used with a seed secret ({source}): the seed is derived from the "
                          f"secret and each submission; leave out --seed, or unset {SEED_SECRET_ENV} for a "
                          "practice run")
    if args.seed_secret is not None and os.environ.get(SEED_SECRET_ENV, "").strip():
        sys.stderr.write(f"grader: note: the seed secret comes from --seed-secret; {SEED_SECRET_ENV} is ignored\n")
    return secret, source


def options_from_args(args: argparse.Namespace) -> Any:
    """:class:`grader.check.CheckOptions` from parsed ``check``/``grade`` flags.

    ``--no-siblings`` turns the taking along of sibling modules off; without it the default
    stands (on unless ``GRADER_SIBLINGS=0``, which ``grade`` sets for a file among others').

    Raises:
        GraderError: a bad seed secret (see :func:`seed_secret_of`).
    """
    from .check import CheckOptions
    from .runner import Limits

    secret, source = seed_secret_of(args)
    limits = Limits(call_timeout=args.timeout, memory_bytes=args.memory_mb << 20)
    return CheckOptions(seed=args.seed or 0, max_examples=args.max_examples, framework=args.framework,
                        limits=limits, total_timeout=args.total_timeout, shrink=not args.no_shrink,
                        sandbox=args.sandbox, problems_dir=args.problems_dir, seed_secret=secret,
                        seed_secret_source=source, audience=args.audience,
                        **({"siblings": False} if getattr(args, "no_siblings", False) else {}))


def cmd_check(args: argparse.Namespace) -> int:
    """``grader check``: grade one file, write the report, return 0/1."""
    from .check import SEED_SECRET_ENV, check_submission, read_submission
    from .reports import reporter
    from .runner import harden_grader_process, reap_orphans

    opts = options_from_args(args)  # a bad seed secret is bad input: exit 2 before anything runs
    os.environ.pop(SEED_SECRET_ENV, None)  # read once; nothing started from here on inherits it
    shown = args.shown or args.submission  # how the report names the file (grade: as it was found)
    try:
        source, tree, syntax_error = read_submission(args.submission, shown)
    except GraderError as exc:  # missing, a folder, unreadable: the learner sees it in the format asked (exit 2)
        from .reports.fault import report_input_fault
        report_input_fault(args, str(exc), write_output)
        raise
    problem = resolve_problem(args, tree, source, syntax_error)
    opts.only_cases = args.cases
    opts.submission_shown = shown
    if args.replay:
        try:
            opts.replay = json.loads(args.replay)
        except ValueError as exc:
            raise GraderError(f"--replay is not JSON: {exc}") from None
        if not isinstance(opts.replay, dict):
            raise GraderError("--replay must be a JSON object like {\"dtype\": \"float32\", ...}")
    harden_grader_process()
    try:
        report = check_submission(args.submission, problem, opts)
    finally:
        reap_orphans()
    module = reporter(args.format)
    if args.format == "text":  # for a person: colour and width of the terminal, if it is one
        stream = None if args.output else sys.stdout
        rendered = module.render(report, audience=args.audience, color=module.color_wanted(stream),
                                 width=module.terminal_width(stream), verbosity=args.verbosity)
    else:  # machine-readable: never colour, wrapping or verbosity
        rendered = module.render(report, audience=args.audience)
    write_output(rendered, args.output)
    if args.format == "github":
        module.write_github_files(report, audience=args.audience)
    return EXIT_PASSED if report.passed else EXIT_FAILED


class _GraderLinesOnly(io.TextIOBase):
    """A stderr for ``grade -q``: whole lines that start with ``grader: `` (notes, warnings,
    errors) go through to ``target``; progress lines and the opening line do not."""

    def __init__(self, target: Any) -> None:
        self.target, self.pending = target, ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:  # no progress bar either
        return False

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.startswith("grader: ") and not line.startswith("grader: grading "):
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.target.flush()


def cmd_grade_for_terminal(args: argparse.Namespace, grade: Callable[[argparse.Namespace], int]) -> int:
    """``grader grade`` with ``-q``/``-v``: ``grade`` (``grader.batch.cmd_grade``) run with only
    ``grader:`` lines on stderr for ``-q``, and followed for ``-v`` by each learner's verdict line and
    failing cases (the text report's ``-q`` form of ``reports/<name>.json``), coloured on a TTY."""
    from .reports import text

    if args.verbosity < 0:
        with contextlib.redirect_stderr(_GraderLinesOnly(sys.stderr)):
            return grade(args)
    code = grade(args)
    if args.verbosity > 0:
        from .batch import GRADEBOOK, load_report, read_gradebook, report_path

        out = Path(args.out)
        color, width = text.color_wanted(sys.stdout), text.terminal_width(sys.stdout)
        for row in read_gradebook(out / GRADEBOOK):
            report = load_report(report_path(out, row.learner))
            sys.stdout.write(text.render(report, audience=args.audience, color=color, width=width,
                                         verbosity=text.QUIET))
        sys.stdout.flush()
    return code


_said_replaced: set[str] = set()


def note_replaced(problems_dir: str | None) -> None:
    """Say once per process on stderr which bundled problems a ``--problems-dir`` spec replaces."""
    from .spec import problem_catalog

    for pid, bundled in problem_catalog(problems_dir).replaced.items():
        if pid not in _said_replaced:
            _said_replaced.add(pid)
            sys.stderr.write(f"grader: note: problem {pid!r} from {problems_dir or os.environ.get('GRADER_PROBLEMS_DIR')} "
                             f"replaces the bundled one ({bundled})\n")


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
    from .runner import harden_grader_process, reap_orphans
    from .validate import render_json, render_text, resolve_spec, validate_problem

    path = resolve_spec(args.target, args.problems_dir)
    harden_grader_process()
    try:
        result = validate_problem(path, jobs=args.jobs, sandbox=args.sandbox)
    finally:
        reap_orphans()
    write_output((render_json if args.format == "json" else render_text)(result), None)
    return EXIT_PASSED if result.valid else EXIT_FAILED


def _one_line(exc: BaseException) -> str:
    """An exception's message on one printable line: it may hold learner text (a file name, a
    codec's complaint about the file's bytes), which must not put a raw escape on a terminal."""
    from .reports.common import printable
    return printable(str(exc), one_line=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    handlers = {"check": cmd_check, "problems": cmd_problems}
    handlers["validate"] = cmd_validate
    from .export import HANDLERS as export_handlers
    handlers.update(export_handlers)
    try:
        from . import batch
        handlers.update(batch.HANDLERS)
        grade = handlers["grade"]
        handlers["grade"] = lambda a: cmd_grade_for_terminal(a, grade)
    except ImportError:
        pass
    try:
        return handlers[args.command](args)
    except GraderError as exc:
        sys.stderr.write(f"grader: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("grader: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback, unless debugging
        if os.environ.get("GRADER_DEBUG"):
            raise
        sys.stderr.write(f"grader: internal error: {type(exc).__name__}: {_one_line(exc)} "
                         "(GRADER_DEBUG=1 shows the traceback)\n")
        return EXIT_USAGE
