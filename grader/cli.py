"""The command line: ``grader check``, ``grader grade``, ``grader merge``, ``grader problems``,
``grader validate``, ``grader serve``.

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
import os
import sys
from typing import Callable, Sequence

from .version import __version__
from .errors import EXIT_USAGE, GraderError

from ._args import add_check_options, add_verbosity_options, int_at_least, scope_token
from .commands import cmd_check, cmd_problems, cmd_validate
from .reports import FORMATS  # the format names: defined once, with their modules


class _Parser(argparse.ArgumentParser):
    """argparse with the grader's one-line error format and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"grader: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser(*, only_check: bool = False) -> argparse.ArgumentParser:
    """The ``grader`` argument parser with every subcommand, or (``only_check``) with ``check``
    alone: what ``grader check ARGS`` parses with, its messages and exit codes the same, without
    importing the batch, export and web modules that the other subcommands' parsers need (30-60
    ms of a cold check)."""
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
    check.add_argument("--jax-cache-scope", metavar="TOKEN", type=scope_token,
                       help="keep a JAX submission's compilations for TOKEN instead of for its exact source, so "
                            "that an edited function compiles only what changed; for one learner's own checks "
                            "(check(fn) gives one per notebook kernel), never for several people's files "
                            "(docs/security.md, class 3)")
    check.add_argument("--progress", action="store_true",
                       help="write a line to stderr as the check goes, 'grader: progress: PHASE DONE TOTAL "
                            "SECONDS' (import 0 0; cases K N after each visible case; shrink 0 0; hidden 0 N "
                            "once; SECONDS: the system's monotonic clock); the exercise page shows them")

    if only_check:
        return parser
    # "list" and "show": what a newcomer typed first (argparse's "invalid choice" named no way on)
    probs = sub.add_parser("problems", aliases=["list", "show"],
                           help="list the problems the grader knows, or print one's statement",
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
    validate.add_argument("--seed", type=int_at_least(0), default=0, metavar="S",
                          help="case generation seed, as grader check --seed (default 0): the generated cases and "
                               "filled values the oracle, the mistakes and the alternatives are checked on")

    serve = sub.add_parser(
        "serve", help="keep a warm grader for this user's checks: grader check answers in a fraction of its time",
        description="Run until interrupted: a fork server with the grader imported, the problem specs and case sets "
                    "in memory and the sandbox probed once, listening on a Unix socket only this user can open. "
                    "grader check (and check(fn) in a notebook) then forks a fresh grader from it for each check "
                    "instead of starting one: the same check, the same sandbox, the same report "
                    "(environment.served: pool). GRADER_SERVE=0 makes a check ignore it. It also serves the exercise "
                    "page (write and run a problem's function in a browser) on 127.0.0.1; its URL, with its "
                    "token, is the first line printed.")
    serve.add_argument("--socket", metavar="PATH",
                       help="where to listen (default $GRADER_SERVE_SOCKET, else grader/serve.sock in "
                            "$XDG_RUNTIME_DIR, else /tmp/grader-UID/serve.sock); its folder must be this user's, mode 0700")
    serve.add_argument("--problem", metavar="ID", help="warm this problem's specs and case sets (default: every problem)")
    serve.add_argument("--problems-dir", metavar="DIR", help="a folder of problem specs to warm, as check's")
    serve.add_argument("--spares", metavar="LIST", default="auto",
                       help="frameworks to keep a sandboxed child started ahead for, with the framework imported, "
                            "each used by one check only (comma-separated among numpy, jax, torch; those not installed "
                            "are left out; 'none': no spares; default auto: numpy and jax, and PyTorch from its "
                            "first check on)")
    from .web.launch import add_arguments as add_web_arguments   # --port, --open, --no-web (issue 36)
    add_web_arguments(serve)

    try:
        from .batch import merge, pool
    except ImportError:  # pragma: no cover - batch grading not installed in this build
        pool = merge = None
    if pool is not None:
        pool.add_parser(sub)
        merge.add_parser(sub)
        # not a check option: grade's own output (its checks write JSON reports, whatever -q/-v)
        add_verbosity_options(sub.choices["grade"])
    from . import export
    export.add_parser(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    """An exception's message on one printable line: it may hold learner text (a file name, a
    codec's complaint about the file's bytes), which must not put a raw escape on a terminal."""
    from .reports.common import printable
    return printable(str(exc), one_line=True)


def _handler(command: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs ``command``, importing only that command's modules: a check
    imported the batch, gradebook, summary, export and serve modules too (30-60 ms of a cold
    ``grader check``; docs/performance.md).

    Raises:
        KeyError: no such command (argparse has refused it before).
    """
    command = {"list": "problems", "show": "problems"}.get(command, command)
    if command in ("check", "problems", "validate"):
        return {"check": cmd_check, "problems": cmd_problems, "validate": cmd_validate}[command]
    if command == "serve":
        from .forkserver import cmd_serve
        return lambda a: cmd_serve(a, main, build_parser)
    if command == "export":
        from .export import HANDLERS as export_handlers
        return export_handlers[command]
    from .batch import merge, pool
    if command == "grade":
        grade = pool.HANDLERS["grade"]
        return lambda a: pool.cmd_grade_for_terminal(a, grade)
    return merge.HANDLERS[command]


def _lenient_streams() -> None:
    """Write what an output stream's encoding cannot hold as escapes (``s\\xf6lution.py``), not
    as an error: under ``PYTHONIOENCODING=ascii`` or the C locale a learner's non-ASCII file name
    in a report ended the check with exit 2 (attack round 41). JSON output is ASCII already."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            with contextlib.suppress(Exception):
                stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None, *, serve: bool = True) -> int:
    """Run the CLI; returns the exit code (see the module docstring).

    ``grader check`` is first offered to this user's ``grader serve``, if one is running
    (:func:`grader.forkserver_client.run_served`): it forks the same check from a warm grader, with
    this process's streams, folder and environment. When none answers, or ``serve`` is false,
    the check runs here."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _lenient_streams()
    from .processes import trusted_tempdir
    trusted_tempdir()   # before anything makes a temporary folder (a served check's too: the client's TMPDIR)
    # one BLAS thread in the grader's own process, set before NumPy is imported (as the child has
    # it): where another learner's threads had spent the user's processes, OpenBLAS could not
    # start its threads at import and sent the grader SIGINT: exit 130, "interrupted" (round 58)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if serve and argv[:1] == ["check"]:
        from .forkserver_client import run_served   # not the zygote's module: 30 ms of a check
        served = run_served(argv)
        if served is not None:
            return served
    parser = build_parser(only_check=argv[:1] == ["check"])
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return _handler(args.command)(args)
    except GraderError as exc:
        sys.stderr.write(f"grader: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("grader: interrupted\n")
        return 130
    except BrokenPipeError:
        # the reader went away (`grader problems ID | head`): stop quietly, as other tools do; the
        # rest of the output goes nowhere, so the exit's flush cannot fail again
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        return 141
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback, unless debugging
        if os.environ.get("GRADER_DEBUG"):
            raise
        sys.stderr.write(f"grader: internal error: {type(exc).__name__}: {_one_line(exc)} "
                         "(GRADER_DEBUG=1 shows the traceback)\n")
        return EXIT_USAGE
