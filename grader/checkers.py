"""Checkers: judges of an output's values for problems where "close to the reference" is not the
question (any order among equal scores, any valid permutation, a set).

A spec names one with ``checker: {module: ..., function: ..., options: {...}}``: a built-in
checker by name (:data:`BUILTIN`), or a ``.py`` file inside the spec's folder (trusted
instructor code, run in the grader's process as the reference is). The type, shape, dtype and
mutation checks run first, as for every problem; the checker then replaces the tolerance.

The contract (docs/authoring.md, "Checkers")::

    def check(inputs, got, expected, dtype, **options) -> None | str

- ``inputs``: parameter name -> the case's input as NumPy (arrays in their dtype, scalar
  parameters as 0-d arrays; an optional parameter the case left out is absent);
- ``got``: the submission's output as a NumPy array (already of the expected shape);
- ``expected``: the reference's output (float64 for floats, the reference's dtype otherwise);
- ``dtype``: the case's graded dtype name;
- ``options``: the spec's ``checker.options``.

It returns None when the output is right, else one line saying what is wrong (the report's
failure message, kind ``tolerance``). A checker that raises is a fault of the spec: the case is
reported as such, never passed.
"""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .errors import GraderError


class CheckerError(GraderError):
    """A spec's ``checker`` cannot be used (unknown name, a file outside the spec's folder)."""


def indices_of_largest(inputs: dict[str, Any], got: np.ndarray, expected: np.ndarray, dtype: str, *,
                       scores: str = "scores", axis: int = -1) -> str | None:
    """The tie-aware check of a top-k index output.

    ``got`` (..., k) must hold, for each row of ``inputs[scores]`` (..., n) along ``axis``, k
    distinct indices in ``[0, n)`` whose scores are the k largest in descending order; among
    equal scores any order is right (the scores at ``got`` must equal the scores at
    ``expected``, element by element, NaN never being among the inputs).

    Returns:
        None, or the first problem found as one line (with the row and the values).
    """
    s = np.moveaxis(np.asarray(inputs[scores], dtype=np.float64), axis, -1)
    g = np.moveaxis(np.asarray(got), axis, -1)
    e = np.moveaxis(np.asarray(expected), axis, -1).astype(np.int64)
    n = s.shape[-1]
    if g.size == 0:
        return None
    if g.dtype.kind not in "iu":
        return f"the indices are {g.dtype.name} values, not integers"
    rows_g = g.reshape(-1, g.shape[-1]).astype(np.int64)
    rows_s = s.reshape(-1, n)
    rows_e = e.reshape(-1, e.shape[-1])
    out_of_range = (rows_g < 0) | (rows_g >= n)
    if out_of_range.any():
        r, c = (int(x) for x in np.argwhere(out_of_range)[0])
        return f"row {r}: index {int(rows_g[r, c])} at position {c} is outside [0, {n})"
    srt = np.sort(rows_g, axis=1)
    dup = srt[:, 1:] == srt[:, :-1]
    if dup.any():
        r = int(np.argwhere(dup)[0][0])
        return f"row {r}: index {int(srt[r][1:][dup[r]][0])} appears twice in {rows_g[r].tolist()}"
    got_scores = np.take_along_axis(rows_s, rows_g, axis=1)
    want = np.take_along_axis(rows_s, rows_e, axis=1)
    bad = got_scores != want
    if bad.any():
        r, c = (int(x) for x in np.argwhere(bad)[0])
        descending = bool(np.all(got_scores[r][:-1] >= got_scores[r][1:]))
        why = ("not the largest scores" if descending else "not in descending order of score")
        return (f"row {r}: position {c} holds index {int(rows_g[r, c])} (score {got_scores[r, c]:.6g}) where the "
                f"{c + 1}-th largest score is {want[r, c]:.6g}: {why}")
    return None


#: the built-in checkers, by the name a spec gives
BUILTIN: dict[str, Callable[..., str | None]] = {"indices_of_largest": indices_of_largest}


def resolve(value: str, spec_path: Path) -> str:
    """The ``checker.module`` value a problem keeps: a built-in name as is, a file as its absolute path.

    Raises:
        CheckerError: an unknown name, a path outside the spec's folder, a missing file.
    """
    if not value.endswith(".py"):
        if value in BUILTIN:
            return value
        raise CheckerError(f"{value!r} is neither a built-in checker ({', '.join(BUILTIN)}) nor a .py file beside "
                           f"the spec")
    here = spec_path.resolve().parent
    path = (here / value).resolve()
    if here not in path.parents:
        raise CheckerError(f"{value!r}: a checker module must be inside the spec's folder {here}")
    if not path.is_file():
        raise CheckerError(f"no checker module at {path}")
    return str(path)


_LOADED: dict[tuple[str, str], Callable[..., Any]] = {}
_LOCK = threading.Lock()


def load(checker: dict[str, Any]) -> Callable[..., Any]:
    """The function a problem's ``checker`` names (imported once per process).

    Raises:
        CheckerError: the module fails to import or lacks the function.
    """
    module, function = checker["module"], checker.get("function", "check")
    if module in BUILTIN:
        return BUILTIN[module]
    with _LOCK:
        key = (module, function)
        if key not in _LOADED:
            spec = importlib.util.spec_from_file_location(f"grader_checker_{len(_LOADED)}", module)
            if spec is None or spec.loader is None:
                raise CheckerError(f"cannot import the checker {module}")
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except Exception as exc:  # noqa: BLE001 - the instructor's file: a spec fault
                raise CheckerError(f"the checker {module} failed to import: {type(exc).__name__}: {exc}") from None
            fn = getattr(mod, function, None)
            if not callable(fn):
                raise CheckerError(f"the checker {module} defines no function {function!r}")
            _LOADED[key] = fn
        return _LOADED[key]


def run(checker: dict[str, Any], inputs: dict[str, Any], got: np.ndarray, expected: np.ndarray,
        dtype: str) -> str | None:
    """The checker's word on one output: None (right) or a one-line message.

    Raises:
        CheckerError: the checker cannot be loaded, raised, or returned something else than
            None or a string (a spec fault, never a pass).
    """
    fn = load(checker)
    try:
        out = fn(inputs, got, expected, dtype, **dict(checker.get("options") or {}))
    except Exception as exc:  # noqa: BLE001
        raise CheckerError(f"the checker {checker['module']} raised {type(exc).__name__}: {exc}") from None
    if out is not None and not isinstance(out, str):
        raise CheckerError(f"the checker {checker['module']} returned {type(out).__name__}, not None or a message")
    return out
