"""From parsed ``check``/``grade`` flags to what grading takes: the seed secret
(:func:`seed_secret_of`), the :class:`grader.check.CheckOptions` (:func:`options_from_args`) and
the problem of one submission (:func:`resolve_problem`, with :func:`note_replaced`'s note on
stderr when a ``--problems-dir`` spec replaces a bundled one).

``grader check`` (:mod:`grader.commands`) and ``grader grade`` (:mod:`grader.batch.pool`) both
read their flags through here; it imports neither of them nor the CLI (``grader.check``,
``grader.spec`` and ``grader.runner`` only when called).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .errors import GraderError


_said_replaced: set[str] = set()


def note_replaced(problems_dir: str | None) -> None:
    """Say once per process on stderr which bundled problems a ``--problems-dir`` spec replaces."""
    from .spec import problem_catalog

    for pid, bundled in problem_catalog(problems_dir).replaced.items():
        if pid not in _said_replaced:
            _said_replaced.add(pid)
            sys.stderr.write(f"grader: note: problem {pid!r} from {problems_dir or os.environ.get('GRADER_PROBLEMS_DIR')} "
                             f"replaces the bundled one ({bundled})\n")


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
    from .submission import functions_of
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
        if tree is not None and not tree.body:
            raise GraderError(f"the submission is empty (it holds no code), so no problem's function is defined "
                              f"in it (known: {known}); write the function, or pass --problem ID{elsewhere}")
        import ast
        import difflib
        names = sorted({n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                       if tree is not None else defined)
        close = sorted({m for d in names for m in difflib.get_close_matches(d, [p.function for p in loaded.values()],
                                                                                n=1, cutoff=0.7)})
        # what the file does define, and the likeliest meant (a newcomer's lm_head got only the list)
        said = (f" (it defines {', '.join(names[:6])}{'...' if len(names) > 6 else ''}"
                + (f"; did you mean {' or '.join(close)}?" if close else "") + ")") if names else ""
        raise GraderError(f"the submission defines no function of a known problem{said} (known: {known}); "
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
    from .options import SEED_SECRET_ENV, read_seed_secret

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
    from .options import CheckOptions
    from .options import Limits

    secret, source = seed_secret_of(args)
    limits = Limits(call_timeout=args.timeout, memory_bytes=args.memory_mb << 20)
    return CheckOptions(seed=args.seed or 0, max_examples=args.max_examples, framework=args.framework,
                        limits=limits, total_timeout=args.total_timeout, shrink=not args.no_shrink,
                        sandbox=args.sandbox, problems_dir=args.problems_dir, seed_secret=secret,
                        seed_secret_source=source, audience=args.audience,
                        **({"siblings": False} if getattr(args, "no_siblings", False) else {}))
