"""``grader validate PROBLEM|SPEC``: check a problem before any learner meets it.

A problem author runs it on a spec (a bundled problem's id, one from ``--problems-dir``, or a
path to a YAML file). Five checks, in order:

1. **the spec loads**: schema and consistency errors as :mod:`grader.spec` reports them (file,
   line, field);
2. **literal expected values**: every fixed case with an ``expected`` literal is reproduced by
   the reference, in every graded dtype, within the tolerance a submission's output gets in that
   dtype (``compare: exact`` cases: exactly, after rounding to the dtype); a stale value is an
   error that names the case and shows the spec's and the reference's values;
3. **oracle**: an independent computation (``oracle`` in the spec) agrees with the reference on
   every case that ``grader check`` grades by default, for every framework's dtypes (fixed and
   generated, each distinct input once), within the *float64* tolerance of the problem's model:
   the reference claims the exact result to float64 accuracy, so the strictest allowance
   applies. ``oracle: {numpy: EXPR}`` is evaluated with ``np`` and the parameters as the only
   names (no builtins), the float parameters given as ``np.longdouble`` arrays of the inputs'
   float64 images (long double is wider than float64 on x86; elsewhere it is float64), integer
   and bool parameters unchanged; ``oracle: {module: M, function: F}`` calls ``F`` of
   ``M.py`` beside the reference module with float64 arrays, as the reference is called;
4. **mistakes**: each ``.py`` file of ``mistakes.dir`` (relative to the spec's folder) is graded
   by :func:`grader.check.check_submission`, sandboxed, with the default cases and no
   shrinking, and must fail with the kind ``mistakes.expect`` states for it: the kind most of
   its failing cases have (``no_transpose.py: exception`` holds when 90 cases raise and 3 fail on
   tolerance), or the whole run's kind (``import``);
5. **mutation score**: per case group, the share of mistakes it catches (a mistake is caught by
   a group when any case of that group fails for it). A mistake no case catches is an error; a
   group that catches none is a warning. Mistakes that fail before any case runs (``import``)
   are left out of the shares.

A problem without ``oracle`` or ``mistakes`` gets a warning for each, not an error, so a
problem can be added first and given them later.

Mistakes are graded in threads of this process (``jobs`` at a time): each check runs the
mistake in its own sandboxed process, which is where the time goes, and the grader's imports
are paid once. The reference runs once per distinct case, before the mistakes, and its values
go into the case cache (:mod:`grader.cache`, as ``grader check`` stores them), so the mistakes'
checks read them instead of each computing them again.

Checks 4 and 5 (the mistakes and alternatives graded, the mutation score) and the records of
the findings are in :mod:`grader.validate_mistakes`; this module loads the spec, runs checks 1-3,
puts the whole validation together and renders it.

Exit codes (``grader validate``): 0 valid (warnings allowed), 1 the problem is invalid, 2 the
validation could not run (an unknown problem, an unreadable spec path, bad flags).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .errors import GraderError, SpecError
# checks 4 and 5 and the findings' records (the tests and callers import them from here too)
from .validate_mistakes import (ERROR, WARNING, AlternativeResult, ExecutorFor, Finding, MistakeResult,  # noqa: F401
                                rounded_margin, alternative_files, alternative_findings, grade_alternative,
                                grade_mistakes, margin_findings, mistake_files, mistake_findings,
                                mutation_scores, score_findings, single_case_findings)
_DTYPE_ORDER = ("bfloat16", "float16", "float32", "float64")


@dataclass
class Validation:
    """The outcome of :func:`validate_problem`.

    Attributes:
        spec: the spec path as given.
        problem: the problem id, or None when the spec did not load.
        reference: the reference module file used, or None when the spec did not load.
        findings: errors and warnings, in the order found.
        literal_cases: the fixed cases with a literal ``expected`` that were checked.
        oracle: what the oracle is and how many cases it was compared on, or None.
        mistakes: one record per file of the mistakes folder.
        alternatives: one record per file of the alternatives folder (correct code).
        groups: per case group: ``caught`` of ``of`` mistakes, ``share``, and ``missed`` files.
        seconds: wall-clock seconds; ``timings`` per stage.
    """

    spec: str
    problem: str | None = None
    reference: str | None = None
    findings: list[Finding] = field(default_factory=list)
    literal_cases: list[str] = field(default_factory=list)
    oracle: dict[str, Any] | None = None
    mistakes: list[MistakeResult] = field(default_factory=list)
    alternatives: list[AlternativeResult] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    jobs: int = 1
    seed: int = 0

    @property
    def errors(self) -> list[Finding]:
        """The findings of level error."""
        return [f for f in self.findings if f.level == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        """The findings of level warning."""
        return [f for f in self.findings if f.level == WARNING]

    @property
    def valid(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """The validation as a JSON-ready mapping (``grader validate --format json``)."""
        return {"problem": self.problem, "spec": self.spec, "reference": self.reference, "valid": self.valid,
                "errors": len(self.errors), "warnings": len(self.warnings),
                "findings": [f.to_json() for f in self.findings],
                "literal_cases": self.literal_cases, "oracle": self.oracle,
                "mistakes": [m.to_json() for m in self.mistakes],
                "alternatives": [a.to_json() for a in self.alternatives], "groups": self.groups,
                "seconds": round(self.seconds, 3),
                "timings": {k: round(v, 3) for k, v in self.timings.items()}, "jobs": self.jobs, "seed": self.seed}


# -- finding the spec ------------------------------------------------------------------------

def resolve_spec(target: str, problems_dir: str | None = None) -> Path:
    """The spec file of ``target``: a path to a YAML file, or a problem id.

    A target that names an existing file, ends in ``.yaml``/``.yml`` or contains a path
    separator is a path; anything else is an id looked up like ``grader check --problem``.

    Raises:
        GraderError: an unknown problem id, or a spec path that is missing, not a file, or
            unreadable.
    """
    from .spec import find_problem

    looks_like_path = target.endswith((".yaml", ".yml")) or os.sep in target or "/" in target
    if looks_like_path or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise GraderError(f"spec {target!r} does not exist or is not a file")
        try:
            with open(path, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            raise GraderError(f"cannot read spec {target!r}: {exc.strerror or exc}") from None
        return path
    return find_problem(target, problems_dir)


# -- cases and the reference -----------------------------------------------------------------

@dataclass
class _Entry:
    """One distinct graded input (a case as some framework's check builds it)."""

    case: Any
    label: str
    ref: np.ndarray | None = None
    scale: np.ndarray | None = None
    expected: Any = None  # the check's Expected, once computed


@dataclass
class _Plan:
    """The default cases of every framework, as ``grader check`` builds them, and their inputs
    deduplicated across frameworks (``entries``: fixed cases of one dtype are the same for
    every framework, and so are most generated ones)."""

    entries: list[_Entry]
    runs: list[tuple[str, str, list[tuple[Any, _Entry]], bool]]  # framework, cache key, its cases, cached


def plan_cases(problem: Any, seed: int = 0) -> _Plan:
    """Every case ``grader check`` grades by default for each framework, each distinct input once.

    Fixed cases keep their names; generated ones, whose numbering depends on the framework's
    dtypes, are labelled with the framework (``gen009[float16] (jax)``). Expected values come
    from the case cache where a check has stored them.

    Raises:
        ValueError: a case cannot be built (e.g. a literal input that does not fit its dtype).
    """
    from . import cache
    from .cases import content_key, fixed_cases, generated_cases

    count = (problem.generated or {}).get("count", 0)
    seen: dict[str, _Entry] = {}
    runs = []
    built: dict[tuple[str, ...], list[Any]] = {}  # frameworks grading the same dtypes share their cases
    for framework, dtypes in problem.frameworks.items():
        key = cache.case_key(problem, seed, count, dtypes)
        try:
            cached = cache.load_cases(key)
        except (OSError, ValueError, KeyError):
            cached = None
        known = {c.name: (ref, scale) for c, ref, scale in cached} if cached else {}
        mine = []
        if tuple(dtypes) not in built:
            built[tuple(dtypes)] = fixed_cases(problem, dtypes, seed) + generated_cases(problem, dtypes, seed, count)
            if not cached:   # what checks of another count computed for the same inputs (once per
                # dtypes: a framework grading the same ones finds every case in ``seen`` already)
                known = cache.donated_values(cache.family_key(problem, seed, dtypes), built[tuple(dtypes)], key)
        for case in built[tuple(dtypes)]:
            ck = content_key(case)
            if ck not in seen:
                label = case.name if case.origin == "fixed" else f"{case.name} ({framework})"
                seen[ck] = _Entry(case, label)
                if case.name in known and not getattr(case, "raises", ()):
                    seen[ck].ref, seen[ck].scale = known[case.name]
            mine.append((case, seen[ck]))  # the framework's own case (its name) and the shared values
        runs.append((framework, key, mine, cached is not None))
    return _Plan(list(seen.values()), runs)


def width_findings(problem: Any, plan: _Plan) -> list[Finding]:
    """A warning for each integer parameter declared with several dtypes (``dtype: [int64,
    int32]``) of which a framework's cases never grade one: that width goes untested for that
    framework's learners (add a fixed case, or generated cases)."""
    findings = []
    for p in problem.parameters:
        if not isinstance(p.dtype, tuple) or len(p.dtype) < 2:
            continue
        for framework, _, mine, _ in plan.runs:
            seen = {str(c.inputs[p.name].dtype) for c, _ in mine if p.name in c.inputs and not getattr(c, "raises", ())}
            missing = [d for d in p.dtype if d not in seen]
            if missing:
                findings.append(Finding(
                    WARNING, "coverage",
                    f"{p.name} is declared as {', '.join(p.dtype)} but {framework}'s cases grade only "
                    f"{', '.join(sorted(seen)) or 'none'}: {', '.join(missing)} is never tested there (add a fixed "
                    f"case or generated cases: the widths are cycled over both)",
                    {"parameter": p.name, "framework": framework, "missing": missing}))
    return findings


def allowance_findings(plan: _Plan) -> list[Finding]:
    """A warning naming the cases whose allowance is at least every expected value's own size,
    in some output: an answer of zeros passes them, so they test no value (an instructor's
    reference squared ``x - mean`` in float16, which overflowed there: the derived allowance,
    measured from the reference run in the graded dtype, grew as large as the values, and a
    mistake returning zeros passed with no word of why). The allowance is the one ``grader
    check`` uses (:func:`grader.compare.full_allowance`), at full share; cases judged exactly, by a
    checker, or that must raise are left out."""
    from .compare import Expected, full_allowance
    from .dtypes import dtype_of

    def useless(e: Expected, dtype: str) -> bool:
        out = e.out_dtype or dtype
        if e.checker is not None or e.model == "exact" or dtype_of(out).kind in "biu":
            return False
        ref = np.asarray(e.ref, dtype=np.float64)
        try:
            full = full_allowance(e, out)
        except (KeyError, TypeError, ValueError):   # a model this check cannot read: no finding
            return False
        shown = np.isfinite(ref) & (ref != 0)
        return bool(shown.any()) and bool(np.all(np.abs(ref[shown]) <= full[shown]))

    names = []
    for entry in plan.entries:
        e, case = entry.expected, entry.case
        if e is None or getattr(case, "raises", ()) or getattr(case, "compare", "") == "exact":
            continue
        parts = [p for _, p in e.parts] if e.parts else [e]
        if any(useless(p, case.dtype) for p in parts):
            names.append(entry.label)
    if not names:
        return []
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return [Finding(WARNING, "tolerance",
                    f"{len(names)} case{'s' if len(names) != 1 else ''} allow{'' if len(names) != 1 else 's'} "
                    f"an error as large as every expected value, so an answer of zeros passes: {shown}. "
                    "The derived allowance measures the reference run in the graded dtype: where that run "
                    "loses every digit (a square or sum that overflows float16, a cancellation), the "
                    "allowance grows as large as the values. Compute that step in float32 inside the "
                    "reference (as the statement asks of learners); where it already is, the inputs in that "
                    "dtype cannot hold what the answer depends on (values of 100-1000 at a small spread in "
                    "float16): draw other values for the dtype, leave the dtype out for those cases "
                    "(dtypes: [float32, float64]), or give the problem another tolerance",
                    {"cases": names})]


def _evaluate(problem: Any, entry: _Entry) -> None:
    """Fill ``entry.ref`` and ``entry.scale`` from the reference (GraderError if it fails)."""
    from . import reference

    if entry.ref is None and not getattr(entry.case, "raises", ()):
        from .expected import derived_key, output_dtype

        case = entry.case
        if problem.several:   # each output evaluated on its own, packed (expected.pack_outputs)
            from .expected import expected_for
            done = expected_for(problem, case)
            entry.ref, entry.scale = done.ref, done.scale
            return
        entry.ref, entry.scale = reference.evaluate(problem, case.inputs, case.dtype, output_dtype(problem, case)[0],
                                                    derived_key(case))


def expected_values(problem: Any, plan: _Plan) -> None:
    """The reference on every case, as ``grader check`` computes it (``expected.expected_for``: a case
    that must raise is checked to raise), stored in the case cache for each framework that has
    no entry yet: the mistakes' checks then read it instead of each computing it again.

    Raises:
        GraderError: the reference failed on a case, or does not raise where a case says it must.
    """
    from . import cache
    from .expected import expected_for, expected_from

    for entry in plan.entries:
        if entry.ref is not None:
            entry.expected = expected_from(problem, entry.case, entry.ref, entry.scale)
        else:
            entry.expected = expected_for(problem, entry.case)
            if not getattr(entry.case, "raises", ()):
                entry.ref, entry.scale = entry.expected.ref, entry.expected.scale
    for _, key, mine, cached in plan.runs:
        if not cached:
            cache.store_cases(key, [(case, e.expected.ref, e.expected.scale) for case, e in mine])


def _judge(problem: Any, case: Any, ref: np.ndarray, scale: np.ndarray | None, got: np.ndarray,
           float64_output: bool = False) -> Any:
    """The :class:`grader.results.Failure` ``got`` would get as a submission's output for
    ``case`` (whose reference values are ``ref``, ``scale``), or None: the same comparison and
    tolerance model ``grader check`` applies (``compare.compare``), so every model of the
    registry is honoured. ``float64_output``: a float output dtype the spec fixes (``returns.dtype:
    float32``) is judged as float64 instead, as the oracle computes (an instructor's oracle of a
    float32 problem failed every case on its dtype, whatever it returned)."""
    from .expected import expected_from  # the one place that turns reference values into Expected
    from .grading import judge          # the one judge
    from .results import CallOutcome

    expected = expected_from(problem, dataclasses.replace(case, expected_literal=None), ref, scale)
    if float64_output:
        def free(e: Any) -> Any:
            return dataclasses.replace(e, out_dtype=None) if e.out_dtype and np.dtype(e.out_dtype).kind == "f" else e
        expected = free(expected)
        if expected.parts:
            expected = dataclasses.replace(expected, parts=tuple((k, free(e)) for k, e in expected.parts))
    if isinstance(got, dict):   # several outputs, by name
        return judge(case, CallOutcome(status="ok", results=got, result_type=problem.returns_as), expected).failure
    return judge(case, CallOutcome(status="ok", result=got), expected).failure


def _is_float(arr: np.ndarray) -> bool:
    return arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"


def _as_float64_case(case: Any) -> Any:
    """``case`` in float64: float inputs as their (exact) float64 images, others unchanged."""
    inputs = {k: (np.asarray(v, dtype=np.float64) if _is_float(v) else v) for k, v in case.inputs.items()}
    return dataclasses.replace(case, dtype="float64", inputs=inputs, expected_literal=None)


def _fmt(x: Any) -> str:
    try:
        return f"{float(x):.6g}"
    except (TypeError, ValueError):
        return str(x)


def _apart(a: Any, b: Any) -> tuple[str, str]:
    """``a`` and ``b`` as :func:`_fmt` writes them, with the digits that tell them apart (up to
    17): "spec -0.142932, reference -0.142932" told an author nothing."""
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return _fmt(a), _fmt(b)
    for digits in (6, 9, 12, 17):
        fx, fy = f"{x:.{digits}g}", f"{y:.{digits}g}"
        if fx != fy:
            return fx, fy
    return _fmt(a), _fmt(b)


def _small_list(arr: np.ndarray, limit: int = 16) -> Any:
    return np.asarray(arr, dtype=np.float64).tolist() if np.size(arr) <= limit else None


def _where(failure: Any) -> tuple[str, dict[str, Any]]:
    """The worst element of a comparison failure as text (``reference``/``other`` wording) and data."""
    d = failure.data
    if failure.kind == "shape":
        return (f"shape {tuple(d.get('got', ()))} where the reference gives {tuple(d.get('expected', ()))}",
                {"kind": "shape", "got_shape": d.get("got"), "reference_shape": d.get("expected")})
    if failure.kind == "tolerance" and "worst_index" not in d:   # a checker's verdict: its own line
        return failure.message, {"kind": "tolerance", "message": failure.message}
    if failure.kind == "tolerance":
        idx = tuple(d.get("worst_index", ()))
        got, expected = _apart(d.get("got"), d.get("expected"))
        return (f"{d.get('mismatched')} of {d.get('total')} elements; worst at index {idx}: "
                f"{{other}} {got}, reference {expected}, "
                f"error {_fmt(d.get('error'))}, allowed {_fmt(d.get('allowed'))}",
                {"kind": "tolerance", "index": list(idx), "other": d.get("got"), "reference": d.get("expected"),
                 "error": d.get("error"), "allowed": d.get("allowed"), "mismatched": d.get("mismatched"),
                 "total": d.get("total")})
    return failure.message, {"kind": failure.kind, "message": failure.message}


# -- checks 2 and 3 --------------------------------------------------------------------------

def check_literals(problem: Any, entries: list[_Entry]) -> tuple[list[Finding], list[str]]:
    """Check 2: the reference reproduces every fixed case's literal ``expected`` (module doc).

    Returns the findings (one per stale case, naming the dtypes where it fails) and the names
    of the cases checked.

    Raises:
        GraderError: the reference failed on a case.
    """
    from .dtypes import dtype_of

    stale: dict[str, dict[str, Any]] = {}
    checked: list[str] = []
    # the narrowest dtype first: the worst element shown is that of the most precise failing dtype
    order = {name: i for i, name in enumerate(_DTYPE_ORDER)}
    for entry in sorted(entries, key=lambda e: order.get(e.case.dtype, -1)):
        case = entry.case
        if case.expected_literal is None or getattr(case, "raises", ()):
            continue
        base = case.name.split("[")[0]
        if base not in checked:
            checked.append(base)
        _evaluate(problem, entry)
        for label, view, literal, ref, scale in _literal_parts(problem, case, entry):
            key = f"{base} output {label}" if label else base
            if literal.shape != ref.shape:
                info = stale.setdefault(key, {"dtypes": []})
                info["dtypes"] += [case.dtype] if case.dtype not in info["dtypes"] else []
                info["text"] = f"shape {literal.shape} where the reference gives {ref.shape}"
                info["data"] = {"kind": "shape", "spec_shape": list(literal.shape), "reference_shape": list(ref.shape)}
            else:
                with np.errstate(all="ignore"):   # in the output's dtype: a fixed one (bool, int64) or the case's
                    got = literal.astype(dtype_of(view.returns_fixed_dtype or case.dtype))
                failure = _judge(view, case, ref, scale, got)
                if failure is None:
                    continue
                text, data = _where(failure)
                info = stale.setdefault(key, {"dtypes": []})   # each dtype once: frameworks share it
                info["dtypes"] += [case.dtype] if case.dtype not in info["dtypes"] else []
                info["text"], info["data"] = text.replace("{other}", "spec"), data
            info["spec"], info["reference"] = _small_list(literal), _small_list(ref)
            if label:
                info["data"]["output"] = label
    findings = []
    for base, info in stale.items():
        values = ""
        if info.get("spec") is not None and info.get("reference") is not None:
            values = f"; spec {info['spec']}, reference {info['reference']}"
        findings.append(Finding(ERROR, "literal",
                                f"stale expected value in case {base} ({', '.join(info['dtypes'])}): "
                                f"{info['text']}{values}",
                                {"case": base, "dtypes": info["dtypes"], **info["data"],
                                 "spec_values": info.get("spec"), "reference_values": info.get("reference")}))
    return findings, checked


def _literal_parts(problem: Any, case: Any, entry: _Entry) -> list[tuple[str, Any, np.ndarray, np.ndarray, Any]]:
    """``(output name or "", the problem as that output, the literal, the reference's values,
    scale)`` of each output a case's literal ``expected`` gives: one for one output, and for
    several outputs each output the mapping names (``grader.cases.expected_literal``)."""
    if not problem.several:
        return [("", problem, case.expected_literal, entry.ref, entry.scale)]
    from .expected import unpack_outputs

    count = len(problem.outputs)
    literals = unpack_outputs(case.expected_literal, count)
    refs, scales = unpack_outputs(entry.ref, count), unpack_outputs(entry.scale, count)
    out = []
    for i, o in enumerate(problem.outputs):
        if literals[i] is not None:
            out.append((o.name, problem.output_view(i), literals[i], refs[i], scales[i]))
    return out


def longdouble_name() -> str:
    """``"long double"`` where ``np.longdouble`` is wider than float64, else ``"float64"``."""
    return "long double" if np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant else "float64"


def oracle_function(problem: Any) -> tuple[Callable[[dict[str, np.ndarray]], Any], dict[str, Any]]:
    """The spec's oracle as a function of a case's inputs, and a description of it.

    Raises:
        GraderError: the oracle's expression does not compile, or its module cannot be
            imported or lacks the function (the message names the spec field).
    """
    cfg = problem.raw.get("oracle") or {}
    if "numpy" in cfg:
        text = str(cfg["numpy"])
        try:
            code = compile(text, f"{problem.path}:oracle.numpy", "eval")
        except SyntaxError as exc:
            raise GraderError(f"{problem.path}: oracle.numpy: not a Python expression: {exc.msg}") from None
        names = {p.name for p in problem.parameters}
        unknown = sorted(set(code.co_names) - names - {"np"})
        # attribute names (np.einsum) are in co_names too; only a bare unknown name is an error
        bare = [n for n in unknown if _is_bare_name(text, n)]
        if bare:
            raise GraderError(f"{problem.path}: oracle.numpy: unknown name {bare[0]!r}; the expression sees only "
                              f"np and the parameters ({', '.join(p.name for p in problem.parameters)})")

        def run(inputs: dict[str, np.ndarray]) -> Any:
            # no builtins but the import statement's, which NumPy's array methods use on their first
            # call (x.sum() imports numpy._core._methods through the calling frame's builtins: an
            # instructor's oracle failed 50 times with KeyError: '__import__' in a fresh process)
            scope: dict[str, Any] = {"__builtins__": {"__import__": __import__}, "np": np}
            for name, value in _oracle_arguments(problem, inputs).items():
                scope[name] = (np.asarray(value, dtype=np.float64).astype(np.longdouble)
                               if isinstance(value, np.ndarray) and _is_float(value) else value)
            return eval(code, scope)  # noqa: S307 - the instructor's trusted text, no builtins

        return run, {"kind": "numpy", "text": text, "precision": longdouble_name()}

    from . import reference

    module, function = str(cfg["module"]), str(cfg.get("function", problem.function))
    path = Path(problem.reference_path).parent / f"{module}.py"
    if not path.is_file():
        raise GraderError(f"{problem.path}: oracle.module: no module at {path}")
    fn = reference.load_reference(dataclasses.replace(problem, reference_path=path, reference_function=function))

    def run_module(inputs: dict[str, np.ndarray]) -> Any:
        given = _oracle_arguments(problem, inputs)
        with reference.x64_scope():  # float64 as the reference runs (the flag is scoped, not global)
            out = fn(*[np.asarray(v, dtype=np.float64) if isinstance(v, np.ndarray) and _is_float(v)
                       else v for v in given.values()])
            return out if problem.several else np.asarray(out)

    return run_module, {"kind": "module", "text": f"{module}.{function}", "path": str(path), "precision": "float64"}


def _oracle_arguments(problem: Any, inputs: dict[str, np.ndarray]) -> dict[str, Any]:
    """Every parameter's value for the oracle, in the spec's order: a case's input, a scalar
    parameter as its Python value, and an optional parameter the case leaves out as its default
    (an instructor's oracle then needs no branch for omitted arguments; it used to get a
    ``KeyError`` from the grader)."""
    from .cases import call_layout
    from .spec import NO_DEFAULT

    scalars = call_layout(problem, inputs)["scalars"]
    out: dict[str, Any] = {}
    for p in problem.parameters:
        if p.name in inputs:
            out[p.name] = np.asarray(inputs[p.name]).item() if p.name in scalars else inputs[p.name]
        elif p.default is not NO_DEFAULT:
            out[p.name] = p.default
    return out


def _is_bare_name(text: str, name: str) -> bool:
    """``name`` occurs in ``text`` as a name of its own, not only after a dot."""
    import io
    import tokenize

    previous = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and tok.string == name and previous != ".":
                return True
            previous = tok.string
    except (tokenize.TokenError, SyntaxError):
        return False
    return False


def _oracle_value(out: np.ndarray, integral_ref: bool) -> np.ndarray:
    """An oracle's output as compared: in its own kind where both it and the reference's are
    integers or booleans (exactly; an int64 oracle made float64 failed every case of an index
    problem on its dtype), else as float64."""
    if out.dtype.kind in "iub" and integral_ref:
        return out
    return out.astype(np.float64) if out.dtype.kind in "fiub" else np.asarray(out, dtype=np.float64)


def check_oracle(problem: Any, entries: list[_Entry]) -> tuple[list[Finding], dict[str, Any]]:
    """Check 3: the oracle agrees with the reference on every entry (module doc).

    Returns one finding per disagreeing case and the oracle's description with the number of
    cases compared.

    Raises:
        GraderError: the oracle is malformed, or the reference failed on a case.
    """
    run, info = oracle_function(problem)
    findings: list[Finding] = []
    compared = 0
    for entry in entries:
        if getattr(entry.case, "raises", ()):
            continue  # a case that must raise has no output to agree on
        _evaluate(problem, entry)
        case64 = _as_float64_case(entry.case)
        try:
            with np.errstate(all="ignore"):
                raw = run(entry.case.inputs)
                if problem.several:   # each output as the reference's, by name or in order
                    names = [o.name for o in problem.outputs]
                    pairs = [(k, raw[k]) for k in names] if hasattr(raw, "keys") else list(zip(names, raw))
                    if len(pairs) != len(names):
                        raise ValueError(f"the oracle gave {len(pairs)} outputs, not {len(names)} ({', '.join(names)})")
                    got: Any = {k: _oracle_value(np.asarray(v), o.fixed_dtype is not None
                                                 and np.dtype(o.fixed_dtype).kind in "iub")
                                for (k, v), o in zip(pairs, problem.outputs)}
                else:
                    out = np.asarray(raw)
                    got = _oracle_value(out, entry.ref is not None and entry.ref.dtype.kind in "iub")
        except Exception as exc:  # noqa: BLE001 - the oracle is the author's code; its failure is a finding
            findings.append(Finding(ERROR, "oracle", f"the oracle raised on case {entry.label}: "
                                                     f"{type(exc).__name__}: {exc}",
                                    {"case": entry.label, "exception": type(exc).__name__}))
            continue
        compared += 1
        if not isinstance(got, dict) and got.dtype.kind == "f":
            got = got.astype(np.float64)
        failure = _judge(problem, case64, entry.ref, entry.scale, got, float64_output=True)
        if failure is None:
            continue
        text, data = _where(failure)
        findings.append(Finding(ERROR, "oracle", f"the oracle disagrees with the reference on case {entry.label} "
                                                 f"(float64 tolerance): {text.replace('{other}', 'oracle')}",
                                {"case": entry.label, **data}))
    info["cases"] = compared
    return findings, info


# -- the whole validation --------------------------------------------------------------------

def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def validate_problem(spec_path: str | os.PathLike[str], *, jobs: int | None = None,
                     sandbox: str = "auto", executor_for: ExecutorFor | None = None, seed: int = 0) -> Validation:
    """Run every check of the module doc on the spec at ``spec_path``; never raises for a fault
    of the problem (those are findings), only for a spec that cannot be read.

    Args:
        spec_path: the YAML file (see :func:`resolve_spec`).
        jobs: mistakes graded at a time (default: the cores this process may use).
        sandbox: the sandbox tier request for the mistakes' checks.
        executor_for: run the mistakes and alternatives through the executor this gives for
            each (``grader.run.inprocess.for_file``: trusted files in this process) instead of
            each in its sandboxed process; the verdicts are the same, nothing is started.
        seed: the case seed, as ``grader check --seed``: the generated cases (and fixed cases'
            filled values) every check uses, the oracle's, the mistakes' and the alternatives'.

    Raises:
        GraderError: the spec file cannot be read.
    """
    from .spec import load_problem

    t0 = time.monotonic()
    jobs = jobs or default_jobs()
    v = Validation(str(spec_path), jobs=jobs, seed=seed)

    def done() -> Validation:
        v.seconds = time.monotonic() - t0
        return v

    # 1. the spec loads
    try:
        problem = load_problem(spec_path)
    except SpecError as exc:
        if str(exc).startswith(f"{exc.path}: cannot read"):
            raise
        v.findings.append(Finding(ERROR, "spec", str(exc), {"file": exc.path, "line": exc.line, "field": exc.field}))
        return done()
    v.problem = problem.id
    v.reference = str(problem.reference_path)
    has_oracle = bool(problem.raw.get("oracle"))
    if not has_oracle:
        v.findings.append(Finding(WARNING, "oracle", "no oracle: add oracle: {numpy: EXPR} (or {module, function}) "
                                                     "so an independent computation checks the reference"))
    if not problem.raw.get("mistakes"):
        v.findings.append(Finding(WARNING, "mistakes", "no mistakes folder: add mistakes: {dir: ..., expect: {...}} "
                                                       "so known wrong solutions are shown to fail"))
    folder, files, expect, config = mistake_files(problem)
    v.findings.extend(config)
    alternatives, share, alt_config = alternative_files(problem)
    v.findings.extend(alt_config)
    v.timings["spec"] = time.monotonic() - t0

    try:
        plan = plan_cases(problem, seed)
    except ValueError as exc:
        v.findings.append(Finding(ERROR, "spec", f"{problem.path}: a case cannot be built: {exc}"))
        return done()
    entries = plan.entries
    v.findings.extend(width_findings(problem, plan))

    # 2. literal expected values (before the mistakes: a stale literal stops every check)
    t = time.monotonic()
    try:
        stale, v.literal_cases = check_literals(problem, entries)
        if not stale:  # every case's expected values, once, into the case cache the mistakes read
            expected_values(problem, plan)
    except GraderError as exc:
        v.findings.append(Finding(ERROR, "reference", str(exc)))
        return done()
    v.findings.extend(stale)
    if not stale:
        v.findings.extend(allowance_findings(plan))
    v.timings["reference"] = time.monotonic() - t

    # 4. the mistakes, in the background while the oracle runs here
    graded: list[MistakeResult] = []
    mistakes_error: list[BaseException] = []
    worker = None
    if (files or alternatives) and not stale:
        def grade() -> None:
            t_m = time.monotonic()
            try:
                graded.extend(grade_mistakes(problem, files, expect, jobs, sandbox, executor_for, seed))
            except BaseException as exc:  # noqa: BLE001 - reported as a finding below
                mistakes_error.append(exc)
            v.timings["mistakes"] = time.monotonic() - t_m
            t_a = time.monotonic()
            try:
                # one at a time, after the mistakes, in this thread: parallel checks parsed ASTs
                # concurrently (gh-106905: SystemError)
                v.alternatives = [grade_alternative(f, problem, share, sandbox, executor_for, seed)
                                  for f in alternatives]
            except BaseException as exc:  # noqa: BLE001
                mistakes_error.append(exc)
            v.timings["alternatives"] = time.monotonic() - t_a
        worker = threading.Thread(target=grade, name="mistakes", daemon=True)
        worker.start()
    elif files:
        v.findings.append(Finding(WARNING, "mistakes", "mistakes not graded: fix the stale expected values first "
                                                       "(every check of the problem would stop on them)"))

    # 3. the oracle
    t = time.monotonic()
    if has_oracle:
        try:
            found, v.oracle = check_oracle(problem, entries)
            v.findings.extend(found)
        except GraderError as exc:
            v.findings.append(Finding(ERROR, "oracle" if "oracle" in str(exc) else "reference", str(exc)))
    v.timings["oracle"] = time.monotonic() - t

    if worker is not None:
        worker.join()
        if mistakes_error:
            exc = mistakes_error[0]
            v.findings.append(Finding(ERROR, "mistakes", f"grading the mistakes failed: {type(exc).__name__}: {exc}"))
        v.mistakes = graded
        v.findings.extend(mistake_findings(graded))
        v.findings.extend(alternative_findings(v.alternatives))
        v.groups, coverage = mutation_scores(problem, graded)
        for row in v.groups:   # the correct files' side of each group's margin
            worst = [a.margins[row["group"]] for a in v.alternatives if row["group"] in a.margins]
            row["worst_alternative_margin"] = rounded_margin(max(worst)) if worst else None
        v.findings.extend(coverage)
        v.findings.extend(margin_findings(graded))
        v.findings.extend(single_case_findings(graded))
        v.findings.extend(score_findings(graded))
    return done()


# -- output ----------------------------------------------------------------------------------

def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities written as strings (``"nan"``, ``"inf"``): strict JSON."""
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def render_json(v: Validation) -> str:
    """The validation as one JSON document (``--format json``), with a final newline."""
    return json.dumps(_finite(v.to_json()), indent=2, allow_nan=False, default=str) + "\n"


def _times(x: float | str) -> str:
    """A margin as text: ``0.28x``, ``1.2e+03x``, ``infx`` for an infinite one."""
    x = float(x)
    return "inf x" if not math.isfinite(x) else f"{x:.2g}x"


def render_text(v: Validation) -> str:
    """A short report: one line per check, the mistakes, the mutation score, the verdict."""
    from .reports.common import printable

    def p(text: Any) -> str:
        return printable(text, one_line=True)

    spec = v.spec
    try:
        rel = os.path.relpath(spec)
        spec = rel if not rel.startswith("..") else spec
    except ValueError:  # pragma: no cover - another drive (Windows)
        pass
    # a spec that does not load has no id yet: its file says which (a newcomer read "?:")
    lines = [f"{p(v.problem or 'not loaded')}: {p(spec)}" + (f" (seed {v.seed})" if v.seed else "")]
    shown: set[int] = set()

    def errors_of(*checks: str) -> list[Finding]:
        return [f for f in v.findings if f.level == ERROR and f.check in checks and id(f) not in shown]

    def status(checks: tuple[str, ...], ok_text: str | None) -> None:
        errors = errors_of(*checks)
        if not errors and ok_text:
            lines.append(f"  ok       {ok_text}")
        for f in errors:
            shown.add(id(f))
            lines.append(f"  ERROR    {p(f.message)}")

    status(("spec",), "spec loads" if v.problem else None)
    if v.reference:
        lines.append(f"  ok       reference: {p(v.reference)}")
    status(("reference",), None)
    if v.literal_cases:
        status(("literal",), f"literal expected values reproduced ({', '.join(v.literal_cases)})")
    if v.oracle is not None:
        text = v.oracle["text"] if len(v.oracle["text"]) <= 60 else v.oracle["text"][:57] + "..."
        status(("oracle",), f"oracle ({v.oracle['kind']} {text!r}, {v.oracle['precision']}) agrees "
                            f"with the reference on {v.oracle['cases']} cases (float64 tolerance)")
    else:   # an oracle that could not run (an unknown name): said at its step, not after the alternatives
        status(("oracle",), None)
    if v.mistakes:
        from .reports.common import points
        n_ok = sum(m.ok for m in v.mistakes)
        t = v.timings.get("mistakes", 0.0)
        lines.append(f"  {'ok      ' if n_ok == len(v.mistakes) else 'ERROR   '} mistakes: {n_ok} of "
                     f"{len(v.mistakes)} fail with their stated kind ({t:.1f} s, {v.jobs} at a time)")
        width = max(len(m.file) for m in v.mistakes)
        for m in v.mistakes:
            if m.error is not None:
                what = "could not be graded"
            elif m.passed:
                what = "PASSES: no case catches it"
            else:
                n = len(m.caught_by)
                what = (f"{m.kind} ({m.kinds.get(m.kind or '', 0)} of {m.total} cases; caught by {n} "
                        f"case{'s' if n != 1 else ''})")
                if m.kind == "tolerance" and m.margin is not None:   # inf: an infinite or NaN value somewhere
                    what += (f", up to {_times(m.margin)} the allowance" if math.isfinite(float(m.margin))
                             else ", an infinite or NaN value where the expected one is finite")
                if m.score is not None and m.max_score:
                    what += f", scores {points(m.score)} of {points(m.max_score)}"
                if not m.ok:
                    what += f", expected {m.expected}"
            lines.append(f"           {p(m.file):<{width}}  {what}")
    if v.alternatives:
        n_ok = sum(a.passed for a in v.alternatives)
        t = v.timings.get("alternatives", 0.0)
        lines.append(f"  {'ok      ' if n_ok == len(v.alternatives) else 'ERROR   '} alternatives: {n_ok} of "
                     f"{len(v.alternatives)} correct implementations pass within {v.alternatives[0].share:g} of "
                     f"every allowance ({t:.1f} s)")
        width = max(len(a.file) for a in v.alternatives)
        for a in v.alternatives:
            worst = max(a.margins.values()) if a.margins else None
            # failing with no margin past 0: its failures were exact comparisons ("at most 0 of the allowance")
            used = f", at most {worst:.2g} of the allowance" if worst is not None and (a.passed or worst > 0) else ""
            what = ("could not be graded" if a.error is not None else f"passes {a.total} cases{used}" if a.passed
                    else f"FAILS: {a.kind} in {a.failed} of {a.total} cases ({a.case}){used}")
            lines.append(f"           {p(a.file):<{width}}  {what}")
    status(("oracle", "mistakes", "coverage", "alternatives"), None)
    if v.groups and any(g["of"] for g in v.groups):
        lines.append("  mutation score (share of the mistakes each group catches) and margins (error / allowance:")
        lines.append("  the worst correct file's, the least a value mistake reaches):")
        width = max(len(g["group"]) for g in v.groups)
        for g in v.groups:
            share = f"{100 * g['share']:.0f}%" if g["share"] is not None else "-"
            missed = f"  missed: {', '.join(g['missed'])}" if g["missed"] and g["caught"] else ""
            alt, mis = g.get("worst_alternative_margin"), g.get("least_mistake_margin")
            margins = (f"  correct <= {_times(alt)}" if alt is not None else "") + \
                      (f"  mistakes >= {_times(mis)}" if mis is not None else "")
            lines.append(f"           {p(g['group']):<{width}}  {g['caught']:>2}/{g['of']:<2} {share:>4}"
                         f"{margins}{p(missed)}")
    status(tuple({f.check for f in v.findings}), None)  # any error not shown above
    for f in v.warnings:
        lines.append(f"  warning  {p(f.message)}")
    n_err, n_warn = len(v.errors), len(v.warnings)
    tail = f"{n_warn} warning{'s' if n_warn != 1 else ''}, " if n_warn else ""
    if v.valid:
        lines.append(f"VALID ({tail}{v.seconds:.1f} s)")
    else:
        lines.append(f"INVALID: {n_err} error{'s' if n_err != 1 else ''} ({tail}{v.seconds:.1f} s)")
    return "\n".join(lines) + "\n"
