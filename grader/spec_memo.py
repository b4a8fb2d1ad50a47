"""A fork server's memo of a problem spec (:func:`grader.spec.load_problem` with
:data:`grader.memo.ENABLED`): what a remembered spec stands on.

The spec file itself (its stamp), the two ``reference/`` folders its reference module is chosen
from (:func:`grader.spec._reference_file`: inside the problems folder, else beside it), and the
modules it names or was chosen among: its reference, the one inside that would win over one
beside it, and its hints and checker module files (links followed, a missing file as such).
Each was found stale by an attacker's pass on ``grader serve`` (rounds 39 and 40): a reference
added inside later, one reached through a link whose target appeared later, and an edited hints
module all stayed the server's while a cold check read them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import memo


def remembered_problem(path: Path, load: Callable[[Path], Any]) -> Any:
    """``load(path)`` (a :class:`grader.spec.Problem`), or the one remembered while the spec
    and what it stands on (module docstring) are unchanged.

    Raises:
        SpecError: from ``load``.
    """
    mark = problem_mark(path)
    made = memo.remembered("problem", str(path), mark, lambda: _with_modules(load(path)))
    if made[1] != modules_mark(made[0]):   # a module it names changed, or one it chose among appeared
        memo.forget("problem", str(path))
        made = memo.remembered("problem", str(path), mark, lambda: _with_modules(load(path)))
    return made[0]


def problem_mark(path: Path) -> tuple[Any, ...] | None:
    """The spec file's stamp and those of the two ``reference/`` folders, a missing one as such;
    None (nothing remembered) when the spec cannot be stat'ed."""
    spec = memo.stamp(path)
    if spec is None:
        return None
    here = path.resolve().parent
    return spec, *((memo.stamp(folder) or "missing") for folder in (here / "reference", here.parent / "reference"))


def _with_modules(problem: Any) -> tuple[Any, tuple[Any, ...]]:
    return problem, modules_mark(problem)


def modules_mark(problem: Any) -> tuple[Any, ...]:
    """The stamps of the modules ``problem`` names or was chosen among (module docstring)."""
    inside = problem.path.resolve().parent / "reference" / problem.reference_path.name
    files = [problem.reference_path, inside]
    files += [Path(m) for m in (problem.hints, (problem.checker or {}).get("module"))
              if isinstance(m, str) and m.endswith(".py")]
    return tuple(memo.stamp(f) or "missing" for f in files)
