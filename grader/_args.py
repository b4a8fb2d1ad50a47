"""The argparse pieces the commands share: value types (:func:`positive_float`,
:func:`int_at_least`, :func:`parse_shard`) and option groups (:func:`add_check_options`, the
options of ``check`` and ``grade``; :func:`add_verbosity_options`, their ``-q``/``-v``).

It imports nothing of the grader: ``grader.cli`` builds the parser from these, ``grader.batch``
adds ``grade`` and ``merge`` with them and forwards the check options to each check
(``grader.batch.pool.check_flags``), without either importing the other.
"""
from __future__ import annotations

import argparse
from typing import Callable


def positive_float(text: str) -> float:
    """argparse type: a number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def scope_token(text: str) -> str:
    """argparse type: a ``--jax-cache-scope`` token, 8 to 128 letters, digits, ``-`` or ``_``
    (``check(fn)`` makes one with ``secrets.token_hex``)."""
    if not 8 <= len(text) <= 128 or not all(c.isascii() and (c.isalnum() or c in "-_") for c in text):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a token of 8 to 128 letters, digits, - or _")
    return text


def int_at_least(minimum: int) -> Callable[[str], int]:
    """argparse type: a whole number >= ``minimum`` (``"-1"`` -> "'-1' must be 0 or more")."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be {minimum} or more")
        return value
    return parse


_nonneg_int = int_at_least(0)


def add_check_options(p: argparse.ArgumentParser, *, audience: str = "learner",
                      problem_help: str = "problem id (default: the one whose function the submission defines)") -> None:
    """The options shared by ``check`` and ``grade`` (problem, cases, limits, sandbox).

    ``audience`` is the default of ``--audience`` (``grade`` writes reports for the instructor);
    ``problem_help`` is the help text of ``--problem``.
    """
    p.add_argument("--problem", metavar="ID", help=problem_help)
    p.add_argument("--assignment", metavar="A",
                   help="grade every problem of an assignment (a YAML file, or a name in the problems folders' "
                        "assignments/): a column per problem in the gradebook; not with --problem")
    p.add_argument("--problems-dir", metavar="DIR",
                   help="a folder of problem specs added to the bundled ones (a problem of the same id there wins)")
    p.add_argument("--seed", type=_nonneg_int, default=None,
                   help="case generation seed (default 0); not with a seed secret")
    p.add_argument("--seed-secret", metavar="FILE",
                   help="the instructor's secret (a file; else $GRADER_SEED_SECRET if set): each submission's "
                        "cases come from a seed derived from it and the file's bytes, which the learner's "
                        "report never shows (docs/security.md, class 6)")
    p.add_argument("--max-examples", type=_nonneg_int, metavar="N",
                   help="number of generated cases (default: the spec's generated.count)")
    p.add_argument("--framework", choices=("numpy", "jax", "torch"),
                   help="override the framework detected from imports")
    p.add_argument("--timeout", type=positive_float, default=10.0, metavar="SECONDS",
                   help="CPU-time limit of one call of the submission, in seconds (default 10); a call "
                        "also ends at a wall-clock backstop of 5x this plus 5 s (one that sleeps or blocks)")
    p.add_argument("--total-timeout", type=positive_float, default=300.0, metavar="SECONDS",
                   help="wall-clock limit of the whole check (default 300)")
    p.add_argument("--memory-mb", type=_nonneg_int, default=4096, metavar="MB",
                   help="address-space limit of the submission's process (default 4096)")
    p.add_argument("--sandbox", choices=("auto", "strict", "none"), default="auto",
                   help="isolation: auto (strongest available), strict (refuse without a namespace sandbox), "
                        "none (trusted local runs)")
    p.add_argument("--audience", choices=("learner", "instructor"), default=audience,
                   help=f"who the report is for: learner (hidden cases as counts only) or instructor "
                        f"(every case shown); default {audience}")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink failing generated cases")
    p.add_argument("--no-siblings", action="store_true",
                   help="grade the main file alone: take none of the .py files beside it that it imports "
                        "(as GRADER_SIBLINGS=0; docs/security.md, multi-file submissions)")


def add_verbosity_options(p: argparse.ArgumentParser) -> None:
    """``-q``/``-v`` (``args.verbosity``: -1, 0 or 1), for what ``check`` and ``grade`` print for a
    person; the machine-readable formats and files are the same whatever the verbosity."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                       help="text report: only the verdict and score and the failing cases' names; grade: no "
                            "progress lines")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1,
                       help="text report: every failing case, whole tracebacks, values and output; grade: each "
                            "learner's verdict and failing cases at the end")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``.

    Raises:
        argparse.ArgumentTypeError: not of the form I/N, or I outside 1..N.
    """
    parts = text.split("/")
    try:
        index, count = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N, e.g. 2/4 for the second of four shards") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"{text!r}: I must be between 1 and N, e.g. 1/{max(count, 1)}")
    return index, count
