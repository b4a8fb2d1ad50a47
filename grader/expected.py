"""The expected values of a case: the reference solution's exact output and the tolerance model's
inputs (:class:`grader.compare.Expected`), and the values a report shows for a small case.

Used by the plan (the reference values of its cases), the grading loop, the shrink search and
``grader validate``; nothing here keeps or changes process state (the reference runs with
``jax_enable_x64`` scoped to its own calls, ``grader.reference``).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import reference
from .cases import Case
from .compare import SMALL, Expected
from .dtypes import dtype_of
from .errors import GraderError
from .packing import pack_outputs, unpack_outputs  # noqa: F401 - callers import them from here
from .spec import Problem


def expected_for(problem: Problem, case: Case) -> Expected:
    """The :class:`grader.compare.Expected` of ``case``: the reference's exact output (float64,
    the case's output shape) and condition scale, with the tolerance model's term count.

    For a case that must raise (``case.raises``), the reference is checked to raise one of the
    accepted types and the expected value is empty (nothing is compared).

    Raises:
        GraderError: the reference fails, returns where it must raise (or raises another type),
            or disagrees with the case's literal ``expected`` values.
    """
    if case.raises:
        try:
            reference.must_raise(problem, case.inputs, case.raises)  # the spec and the reference agree
        except GraderError as exc:
            if case.origin != "replay":
                raise
            # a replay's "raises" is the learner's text, not the spec's: say so, never blame the reference
            raise GraderError(f"--replay: its \"raises\" cannot be met, the reference solution does not raise "
                              f"{' or '.join(case.raises)} on these inputs ({str(exc).split(': ', 1)[-1]})") from None
        return expected_from(problem, case, np.zeros(0), None)
    try:
        if problem.several:   # each output as a problem of its own; the values travel packed (pack_outputs)
            refs, scales = [], []
            for i in range(len(problem.outputs)):
                view = problem.output_view(i)
                ref, scale = reference.evaluate(view, case.inputs, case.dtype, output_dtype(view, case)[0],
                                                derived_key(case))
                refs.append(ref)
                scales.append(scale)
            return expected_from(problem, case, pack_outputs(refs), pack_outputs(scales))
        out_dtype, _ = output_dtype(problem, case)
        ref, scale = reference.evaluate(problem, case.inputs, case.dtype, out_dtype, derived_key(case))
    except GraderError as exc:
        if "the reference solution raised" not in str(exc):
            raise
        raise GraderError(f"{exc} on case {case.name}: {describe_inputs(problem, case)}") from None
    return expected_from(problem, case, ref, scale)


def describe_inputs(problem: Problem, case: Case, limit: int = 16) -> str:
    """A case's inputs in one line, for a reference that failed on them: its sizes and int
    scalars (``D=10, n_heads=4``), each array's shape and dtype, and its values when it has at
    most ``limit`` elements; scalars with their values."""
    parts = [", ".join(f"{k}={v}" for k, v in problem.size_env(case.sizes, case.inputs).items())]
    for name, arr in case.inputs.items():
        a = np.asarray(arr)
        if name in case.scalars:
            parts.append(f"{name}={a.item()!r}")
        elif a.size <= limit:
            parts.append(f"{name}={np.asarray(a, dtype=np.float64).tolist() if a.dtype.kind == 'f' else a.tolist()} "
                         f"({a.dtype.name})")
        else:
            parts.append(f"{name}: {a.dtype.name} {tuple(a.shape)}")
    return "; ".join(p for p in parts if p)


def declared_shape(shape: tuple[Any, ...], problem: Problem, case: Case) -> tuple[int, ...] | None:
    """The concrete shape ``shape`` (a ``returns.shape``: symbols, ints, ``"..."``, size
    expressions) takes in ``case``, from its sizes and int scalar parameters; None when a name
    is not known in the case (an optional parameter it leaves out)."""
    from .spec import LEAD, WithoutAxis
    from .spec_expr import eval_size, size_expr

    env = {k: int(v) for k, v in case.sizes.items() if k != LEAD and not isinstance(v, (tuple, list))}
    for p in problem.parameters:
        if p.scalar == "int" and p.name in case.inputs:
            env[p.name] = int(np.asarray(case.inputs[p.name]))
        elif p.scalar == "int" and p.optional and isinstance(p.default, int):
            env[p.name] = int(p.default)   # left out: the function's default applies
    if isinstance(shape, WithoutAxis):
        return shape.resolve({k: tuple(np.shape(v)) for k, v in case.inputs.items()}, env)
    out: list[int] = []
    try:
        for entry in shape:
            if entry == LEAD:
                out.extend(int(x) for x in case.sizes.get(LEAD, ()))
            elif isinstance(entry, int):
                out.append(entry)
            else:
                out.append(eval_size(size_expr(entry), env))
    except (KeyError, ZeroDivisionError):
        return None
    return tuple(out)


def check_shape(problem: Problem, case: Case, ref: np.ndarray, label: str = "") -> None:
    """Check that the reference's output on ``case`` has the shape ``returns.shape`` declares.

    Raises:
        GraderError: one line naming the case, both shapes and the declaration.
    """
    from .spec import shape_text

    want = declared_shape(problem.returns_shape, problem, case)
    if want is not None and tuple(ref.shape) != want:
        sizes = ", ".join(f"{k}={v}" for k, v in problem.size_env(case.sizes, case.inputs).items())
        what = f"returns.outputs {label}" if label else "returns"
        raise GraderError(f"{problem.path}: case {case.name} ({sizes}): the reference's output{' ' + label if label else ''} "
                          f"has shape {tuple(ref.shape)} where {what}.shape {shape_text(problem.returns_shape)} gives {want}; "
                          f"fix the spec or the reference")


def derived_key(case: Case) -> str:
    """What seeds a case's derived-tolerance probes: its dtype and inputs (names, dtypes, shapes,
    bytes), not its name, so that the same inputs get the same allowance in every framework's
    case list (``grader validate`` shares them)."""
    import hashlib

    h = hashlib.sha256(case.dtype.encode())
    for name, arr in case.inputs.items():
        a = np.ascontiguousarray(arr)
        h.update(f"{name}\0{a.dtype.name}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:32]


def output_dtype(problem: Problem, case: Case) -> tuple[str, tuple[str, str]]:
    """The dtype the output must have in ``case`` and how the statement words it (with the
    parameter to copy it from, for hints)."""
    if problem.returns_fixed_dtype is not None:
        return problem.returns_fixed_dtype, ("as the statement says", "")
    if problem.returns_dtype == "same_as_inputs":
        return case.dtype, ("the inputs' dtype", next(p.name for p in problem.parameters if p.graded))
    return (case.inputs[problem.returns_dtype].dtype.name,
            (f"the dtype of {problem.returns_dtype}", problem.returns_dtype))


def expected_from(problem: Problem, case: Case, ref: np.ndarray, scale: np.ndarray | None) -> Expected:
    """The :class:`Expected` of a case from the reference's output and scale (by the spec's
    tolerance model, output dtype rule and hint setting).

    Raises:
        GraderError: the reference disagrees with the case's literal ``expected`` values.
    """
    if problem.several:
        parts = []
        refs = unpack_outputs(ref, len(problem.outputs)) if not case.raises else [np.zeros(0)] * len(problem.outputs)
        scales = unpack_outputs(scale, len(problem.outputs)) if not case.raises else [None] * len(problem.outputs)
        literals = unpack_outputs(case.expected_literal, len(problem.outputs))   # each output's, or None
        for i, o in enumerate(problem.outputs):
            view = problem.output_view(i)
            r = refs[i]
            if not case.raises and view.returns_fixed_dtype is not None and dtype_of(view.returns_fixed_dtype).kind in "biu":
                r = np.rint(r).astype(view.returns_fixed_dtype) if view.returns_fixed_dtype != "bool" else r.astype(bool)
            parts.append((o.name, expected_from(view, dataclasses.replace(case, expected_literal=literals[i]), r,
                                                scales[i])))
        first = parts[0][1]
        return dataclasses.replace(first, ref=ref, scale=scale, parts=tuple(parts), several_as=problem.returns_as)
    if not case.raises:
        check_shape(problem, case, ref, problem.select[1] if problem.select else "")
    model = problem.tolerance["model"]
    n: Any = 0
    if model == "sum_of_products":
        n = int(case.sizes[problem.tolerance["contraction"]])
    elif model == "masked_mean":
        mask = np.asarray(case.inputs[problem.tolerance["count"]], dtype=bool)
        n = mask.sum(axis=-1, dtype=np.int64)[..., None] if mask.ndim else np.int64(mask)
    out_dtype, rule = output_dtype(problem, case)
    float_names = tuple(p.name for p in problem.parameters if p.kind == "float")
    extra = {"python_scalar": problem.python_scalar, "checker": problem.checker}
    if case.raises:
        return Expected(ref=ref, scale=None, n=0, model=model, hints=problem.hints, out_dtype=out_dtype,
                        dtype_rule=rule, float_names=float_names, **extra)
    if case.expected_literal is not None and (ref.shape != case.expected_literal.shape
                                              or not np.allclose(ref, case.expected_literal, rtol=1e-2, atol=1e-2)):
        what = f" output {problem.select[1]}" if problem.select else ""
        raise GraderError(f"{problem.path}: case {case.name}{what}: the reference gives {ref.tolist()} "
                          f"but the spec expects {case.expected_literal.tolist()}; fix the spec or the reference")
    return Expected(ref=ref, scale=scale if case.compare != "exact" else None, n=n, model=model, hints=problem.hints,
                    out_dtype=out_dtype, dtype_rule=rule,
                    float_names=float_names, **extra)


def values_of(case: Case, expected: Expected, got: Any) -> dict[str, Any] | None:
    """The case's inputs, expected and got values as nested lists (floats as float64 values,
    integer and bool inputs as given) when every array has at most ``compare.SMALL`` elements,
    else None. ``got`` may be None (no value came back); ``expected`` is left out for a case
    that must raise. For several outputs ``expected`` and ``got`` are mappings by output name
    (``got``: name -> the array returned for it, those that came back; a swapped pair was
    invisible without it: an instructor's trial)."""
    if expected.parts is not None:   # several outputs: the expected value of each, by name
        if case.size > SMALL or any(e.ref.size > SMALL for _, e in expected.parts):
            return None
        out = values_of(case, expected.parts[0][1], None) or {}
        if not case.raises:
            out["expected"] = {name: _listed(e.ref) for name, e in expected.parts}
        if isinstance(got, dict):
            shown = {name: _listed(g) for name, g in got.items()
                     if isinstance(g, np.ndarray) and g.size <= SMALL
                     and (g.dtype.kind in "fiub" or g.dtype.name == "bfloat16")}
            if shown:
                out["got"] = shown
        return out
    if case.size > SMALL or expected.ref.size > SMALL:
        return None
    out: dict[str, Any] = {k: (v.tolist() if v.dtype.kind in "biu" or k in case.scalars
                               else np.asarray(v, dtype=np.float64).tolist())
                           for k, v in case.inputs.items()}  # ids, masks and scalars as they were given
    if not case.raises:  # a case that must raise has no expected output
        out["expected"] = expected.ref.tolist() if expected.ref.dtype.kind in "biuf" else \
            np.asarray(expected.ref, dtype=np.float64).tolist()
    if got is not None and got.size <= SMALL and (got.dtype.kind in "fiub" or got.dtype.name == "bfloat16"):
        out["got"] = _listed(got)
    return out


def _listed(a: np.ndarray) -> list[Any]:
    """``a`` as nested lists: integers and booleans as they are, floats as float64 values (a
    newcomer read "expected = [1, 3, 2]" beside "got = [3.0, 2.0, 0.0]" for an int64 result)."""
    return a.tolist() if a.dtype.kind in "biu" else np.asarray(a, dtype=np.float64).tolist()
