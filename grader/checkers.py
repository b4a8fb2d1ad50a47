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
    rows_s = s.reshape(-1, n)
    rows_e = e.reshape(-1, e.shape[-1])
    largest = np.take_along_axis(rows_s, rows_e, axis=1)     # the k largest scores, descending
    with np.errstate(invalid="ignore"):
        values = g.reshape(largest.shape).astype(np.float64) if g.size == largest.size else None
    # the k largest scores themselves (torch.topk's .values, np.sort's tail) instead of their
    # indices, as returned or cast to integers (a newcomer followed "return int64" to .values.long())
    with np.errstate(invalid="ignore", over="ignore"):   # the scores in the dtype they came back in
        rounded = largest.astype(g.dtype).astype(np.float64) if g.dtype.kind not in "iu" else np.trunc(largest)
    scores_back = values is not None and np.array_equal(values, rounded, equal_nan=True)
    if g.dtype.kind not in "iu":
        why = ": they look like the k largest scores themselves; return their indices" if scores_back else ""
        return f"the indices are {g.dtype.name} values, not integers{why}"
    rows_g = g.reshape(-1, g.shape[-1]).astype(np.int64)
    wrong = _wrong_indices(rows_g, rows_s, largest, n)
    if wrong and scores_back:   # only where the output is wrong: right indices may equal truncated scores
        return ("these look like the k largest scores (cast to integers), not their indices: return the indices of "
                "the k largest scores")
    return wrong


def _wrong_indices(rows_g: np.ndarray, rows_s: np.ndarray, largest: np.ndarray, n: int) -> str | None:
    """What is wrong with integer indices ``rows_g`` (rows, k) of scores ``rows_s`` (rows, n),
    against the k largest scores ``largest`` (rows, k; descending); None when right. A wrong row
    is named with what its output looks like where every row agrees: the largest left out (an
    off-by-one), ascending order, the k smallest."""
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
    want = largest
    bad = got_scores != want
    if bad.any():
        r, c = (int(x) for x in np.argwhere(bad)[0])
        descending = bool(np.all(got_scores[r][:-1] >= got_scores[r][1:]))
        why = ("not the largest scores" if descending else "not in descending order of score")
        k = rows_g.shape[1]
        ranked = -np.sort(-rows_s, axis=1)
        if descending and k < n and np.array_equal(got_scores, ranked[:, 1:k + 1]):
            why += f" (the 2nd to the {_ordinal(k + 1)} largest in every row: the largest is left out, an off-by-one)"
        elif not descending and np.array_equal(got_scores, ranked[:, :k][:, ::-1]):
            why += " (the k largest in ascending order in every row: reverse them)"
        elif not descending and np.array_equal(got_scores, np.sort(rows_s, axis=1)[:, :k]):
            why += " (the k smallest in every row: sort in descending order, or take the other end)"
        return (f"row {r}: position {c} holds index {int(rows_g[r, c])} (score {got_scores[r, c]:.6g}) where the "
                f"{_ordinal(c + 1)} largest score is {want[r, c]:.6g}: {why}")
    return None


def _ordinal(i: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    suffix = "th" if 10 <= i % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(i % 10, "th")
    return f"{i}{suffix}"


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


def from_spec(checker: dict[str, Any] | None, spec_path: Path, fail: Callable[..., Exception],
              where: list[Any]) -> dict[str, Any] | None:
    """A spec's ``checker`` mapping (the problem's, or one output's) with its module resolved
    (:func:`resolve`), or None.

    Raises:
        Exception: ``fail(where + ["module"], message)`` (the spec loader's ``SpecError``) for
            an unknown checker, a path outside the spec's folder, a missing file.
    """
    if checker is None:
        return None
    try:
        return {**checker, "module": resolve(checker["module"], spec_path)}
    except CheckerError as exc:
        raise fail(where + ["module"], str(exc)) from None


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
