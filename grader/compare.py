"""Compare a submission's output with the reference: type, shape, dtype, finiteness, values, inputs.

The checks run in that fixed order; every problem found is collected, and the first one
decides the failure's kind (``grader.results.CASE_KINDS``). Messages are built from the
mismatch data in one place (:func:`_tolerance_failure`, ...), so reporters never re-derive them.

The allowed error comes from the problem's tolerance model, looked up in the registry
``grader.tolerance`` (``exact``, ``sum_of_products``, ``masked_mean``; docs/tolerance.md derives
each and gives the measured margins). :func:`allowed_error` is the ``sum_of_products`` model,
kept here under its old name. Model ``exact`` (and ``compare: exact`` cases) allows no error:
the sign of a zero is not graded (``-0.0 == 0.0``).

A case that must raise (``raises`` in the spec) is judged by :func:`judge_raises` instead: the
call must raise one of the listed types (a subclass counts; the child sends the exception
type's names along its MRO), else the failure kind is ``raises``.

Hints come from the hint stage, ``grader.diagnose``: the generic ideas of
``grader/hints/generic.py`` (worded with the problem's own names) and the ideas of the module
the spec names in ``hints`` (carried in :attr:`Expected.hints`), for that problem only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import diagnose, tolerance
from .cases import Case
from .dtypes import dtype_of
from .results import Failure
from .results import CallOutcome

SMALL = 64  # arrays of at most this many elements are shown with their values
PYTHON_NUMBERS = ("float", "int", "bool")  # result_type of a Python number (grader._child)


def _same_kind(got: np.dtype, want: str) -> bool:
    """A Python number stands for a 0-d result of ``want`` when it is of the same kind (a float
    for a float dtype, an int for an integer dtype, a bool for bool)."""
    w = dtype_of(want)
    return (got.kind == "f") == (w.kind == "f" or want == "bfloat16") and (got.kind == "b") == (w.kind == "b")


@dataclass(kw_only=True)
class Expected:
    """The reference's answer for one case and how to judge it.

    Attributes:
        ref: the exact output, float64 (empty for a case that must raise).
        scale: the condition scale ``S`` of the tolerance model, or None (exact comparison).
        n: terms per output element: the contraction size (``sum_of_products``), the per-element
            counts broadcastable against ``ref`` (``masked_mean``), 0 for ``exact``.
        model: the tolerance model's name (``grader.tolerance.MODELS``).
        hints: the problem's hint module (``Problem.hints``: a bundled name such as
            ``"tied_lm_head"`` or a file's absolute path), or None for the generic hints only.
        out_dtype: the expected output dtype's name; None: the case's graded dtype.
        dtype_rule: how the statement words the output dtype ("the inputs' dtype", "the dtype of
            embedding_matrix") and the parameter to copy it from (for hints).
        float_names: the float parameters' names (the scale is the computation on their |.|).
        python_scalar: a 0-d result may be a Python number (the spec's ``returns.python_scalar``).
        checker: the spec's ``checker`` (``grader.checkers``), which judges the values instead
            of the tolerance; None for the tolerance.
        allowance_share: the share of the allowance the values may use (``grader validate``'s
            alternatives: 0.5).
        parts: for a function with several outputs, ``(name, Expected)`` per output in order
            (``ref`` and ``scale`` then hold them packed, ``grader.expected.pack_outputs``); None
            for one output.
        several_as: with ``parts``, ``"tuple"`` or ``"dict"``: how the outputs are returned.
    """

    ref: np.ndarray
    scale: np.ndarray | None
    n: Any  # int, or an integer array for masked_mean
    model: str = "sum_of_products"
    hints: str | None = None
    out_dtype: str | None = None
    dtype_rule: tuple[str, str] = ("the inputs' dtype", "")
    float_names: tuple[str, ...] | None = None
    python_scalar: bool = False
    checker: dict[str, Any] | None = None
    allowance_share: float = 1.0
    parts: tuple[tuple[str, "Expected"], ...] | None = None
    several_as: str = ""


def allowed_error(dtype: str, ref: np.ndarray, scale: np.ndarray | None, n: int) -> np.ndarray:
    """Per-element allowed absolute error of the ``sum_of_products`` model (see the module doc).

    Args:
        dtype: the output dtype's name (``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``).
        ref: the exact result, float64, any shape.
        scale: ``S``, the reference evaluated on the absolute values of the inputs, shaped like
            ``ref``; None means the exact model (every allowance is 0).
        n: the number of products per element (``d_model``), an int >= 0.

    Returns:
        A float64 array shaped like ``ref``, every element > 0 unless ``scale`` is None.

    Raises:
        ValueError: ``dtype`` is not a floating dtype (from ``grader.dtypes``).

    Sources: Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed., 2002), section
    3.1, the dot product bound ``|fl(x.y) - x.y| <= gamma_n |x|.|y|`` with
    ``gamma_n = n u / (1 - n u)`` (taken as ``(n + 1) u``, which bounds it while
    ``n (n + 1) u <= 1``); sections 2.1-2.2 for ``u`` and underflow; docs/tolerance.md for the
    half-dtype factor and the measured margins.
    """
    return tolerance.sum_of_products_allowed(dtype, ref, scale, n)


def _fmt(x: float) -> str:
    """A value in a message, written as the text report's value lines (Python's words, as the
    learner's own prints) write it: ``nan``, ``inf``, ``-inf`` (a newcomer once saw ``got nan``
    above ``got = [NaN, ...]`` when those lines were JSON; a trial then read ``-Infinity``)."""
    return f"{float(x):.6g}"


def _fmt_pair(got: float, want: float) -> tuple[str, str]:
    """``got`` and ``want`` as :func:`_fmt` writes them, with more significant digits (up to
    17, which tell any two float64 apart) while they would read alike but differ: a float64
    result off by 1e-8 read "got -0.380819, expected -0.380819" (an instructor's trial)."""
    a, b = float(got), float(want)
    for digits in (6, 9, 12, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y or a == b or not (math.isfinite(a) and math.isfinite(b)):
            return x, y
    return x, y


def _values(arr: np.ndarray) -> Any:
    return np.asarray(arr, dtype=np.float64).tolist()


def _safe(idea: Any, *args: Any) -> diagnose.Hint | None:
    """A hint, or None if finding it failed: hints are advice and never change or break a verdict."""
    try:
        return idea(*args)
    except Exception:  # noqa: BLE001 - a hint that cannot be computed is left out
        return None


def _hinted(failure: Failure, hint: diagnose.Hint | None) -> Failure:
    """``failure`` with ``hint``'s idea and facts in ``data`` (``hint_id``, ``hint_params``).

    Its sentence is chosen when the report is made, for the submission's framework
    (``grader.grading.finish``, :func:`grader.words.render_failure`); only an instructor's idea,
    which brings its own sentence, sets ``failure.hint`` here."""
    if hint is not None:
        failure.hint = hint.text
        failure.data["hint_id"] = hint.idea
        if hint.facts:
            failure.data["hint_params"] = hint.facts
    return failure


def with_exception_hint(failure: Failure, hints: str | None, case: Case) -> Failure:
    """``failure`` (of ``case``) with the problem's hint for an exception when it is one and the
    problem's hint module (``hints``, :attr:`grader.spec.Problem.hints`) or the generic ideas name
    a cause (:func:`grader.diagnose.for_exception`); any other failure unchanged."""
    if failure.kind == "exception" and failure.hint is None and "hint_id" not in failure.data:
        _hinted(failure, _safe(diagnose.for_exception, hints, case, failure.message))
    return failure


def mutation_failure(mutated: list[str], raised: str = "") -> Failure:
    """The ``mutation`` failure of a call that changed the inputs ``mutated`` in place (and then
    raised ``raised``, the error a must-raise case asks for), with the mutation hint."""
    return _hinted(Failure(
        kind="mutation", message=f"the function changed its input{'s' if len(mutated) > 1 else ''} "
                                 f"{', '.join(mutated)} in place" + (f" before it raised {raised}" if raised else ""),
        data={"mutated": list(mutated), **({"raised": raised} if raised else {})}),
        diagnose.mutation_hint())


def judge_raises(case: Case, outcome: CallOutcome, hints: str | None = None) -> Failure | None:
    """The verdict of a case that must raise one of ``case.raises``, or None when it did.

    Only ``ok``, ``type`` and ``exception`` outcomes are judged here (a timeout, crash or memory
    failure keeps its own kind): returning anything, or raising a type not in the list (nor a
    subclass of one: ``outcome.error_types`` holds the type's names along its MRO), is a
    ``raises`` failure. Its hint is the problem module's (``hints``: its ``diagnose_raises``
    names what is wrong with these inputs) when it has one, with the type raised among its facts
    (``raised``) when the function raised another type; else the statement's contract.
    """
    failure = _judge_raises(case, outcome)
    if failure is not None and failure.kind != "mutation":
        # an error the problem's module explains is the cause, not these inputs: torch's
        # F.cross_entropy refusing int32 targets on a negative target's case was told "raise
        # ValueError, not RuntimeError" (a newcomer's)
        hint = _safe(diagnose.for_exception, hints, case, failure.details[0], True) \
            if "raised" in failure.data and failure.details else None
        if hint is not None:
            _hinted(failure, hint)
            return failure
        hint = _safe(diagnose.for_raises, hints, case, list(case.raises))
        if hint is not None and hint.text is None and "raised" in failure.data:
            # the function raised, only another type: the facts say which, so that the words
            # do not say it "returns row 2 instead of failing" (a format consumer's read)
            hint = diagnose.Hint(idea=hint.idea, facts={**hint.facts, "raised": failure.data["raised"]})
        _hinted(failure, hint)
    return failure


def _judge_raises(case: Case, outcome: CallOutcome) -> Failure | None:
    accepted = ", ".join(case.raises)
    if outcome.status == "exception":
        names = outcome.error_types or [outcome.message.split(":", 1)[0]]
        if set(names) & set(case.raises):
            # the right error, but with the caller's inputs changed on the way it is no pass (an
            # attacker zeroed the table before raising: every must-raise case passed)
            return mutation_failure(outcome.mutated, names[0]) if outcome.mutated else None
        first = outcome.message.splitlines()[0] if outcome.message else names[0]
        return Failure(kind="raises", message=f"raised {names[0]}, not one of {accepted}",
                       details=[first], frames=list(outcome.frames), exception=outcome.exception,
                       hint=f"these inputs break the function's contract (see the statement): raise {accepted}",
                       data={"raised": names[0], "accepted": list(case.raises)})
    if outcome.status == "type":
        what = f"returned {outcome.message}"
    elif outcome.results is not None:   # several arrays (a newcomer read "an array of shape ?")
        kind = outcome.result_type or "tuple"
        what = (f"returned a {kind} of {len(outcome.results)} arrays (shapes "
                f"{', '.join(str(tuple(a.shape)) for a in outcome.results.values())})")
    else:
        what = f"returned an array of shape {tuple(outcome.result.shape) if outcome.result is not None else '?'}"
    accepted = " or ".join(case.raises)
    return Failure(kind="raises", message=f"the function {what} where it must raise {accepted}",
                   hint=f"these inputs break the function's contract (see the statement): check them and "
                        f"raise {accepted} instead of returning",
                   data={"returned": outcome.message if outcome.status == "type" else "array",
                         "accepted": list(case.raises)})


def compare(case: Case, outcome: CallOutcome, expected: Expected) -> Failure | None:
    """The failure of one case, or None when the output is right (:func:`assess`'s failure).

    Args:
        case: the case (its inputs in their dtypes).
        outcome: what the submission's process returned (``grader.runner.CallOutcome``).
        expected: the reference's exact values, scale, ``n``, tolerance model and dtype rule.
    """
    return assess(case, outcome, expected)[0]


def assess(case: Case, outcome: CallOutcome, expected: Expected) -> tuple[Failure | None, float | None]:
    """The failure of one case (None when the output is right) and its **margin**: the worst
    ``|got - expected| / allowance`` over the output at the full allowance (``allowance_share``
    ignored), from the same errors and allowance the verdict uses. Below 1 is within the
    tolerance; ``inf`` where an element is off and nothing is allowed, an output is NaN or
    infinite where the expected value is finite, or an infinite or NaN expected element is not
    matched (``-1e9`` for ``-inf``: no tolerance passes it). None where no tolerance applies or
    nothing is comparable: a result that is not an array (or a Python number where one is due),
    a shape that differs, a checker, an exact case or integer output, no finite expected element.

    Args: as for :func:`compare`.
    """
    if expected.parts is not None:
        return _assess_several(case, outcome, expected)
    if outcome.status == "ok" and outcome.results is not None:   # a tuple, list or dict where one array is due
        outcome = CallOutcome(status="type", message=outcome.result_type or "tuple", mutated=outcome.mutated,
                              seconds=outcome.seconds)
    want_dtype = expected.out_dtype or case.dtype
    python_number = outcome.status == "ok" and outcome.result_type in PYTHON_NUMBERS
    if python_number and not (expected.python_scalar and np.ndim(outcome.result) == 0):
        outcome = CallOutcome(status="type", message=outcome.result_type, mutated=outcome.mutated,
                              seconds=outcome.seconds)
    if outcome.status == "type":
        hint = _safe(diagnose.for_type, expected.hints, outcome.message, want_dtype)
        return _hinted(Failure(kind="type", message=f"the function returned {outcome.message}, not an array",
                               data={"returned": outcome.message, "wanted": "array"}), hint), None
    got = outcome.result
    assert got is not None
    ref = expected.ref
    want_shape = tuple(ref.shape)
    problems: list[Failure] = []
    if tuple(got.shape) != want_shape:
        problems.append(_hinted(Failure(
            kind="shape", message=f"shape {tuple(got.shape)} != expected {want_shape}",
            data={"got": list(got.shape), "expected": list(want_shape)}),
            _safe(diagnose.for_shape, expected.hints, case, got, ref)))
    if got.dtype.name != want_dtype and not (python_number and _same_kind(got.dtype, want_dtype)):
        problems.append(_hinted(Failure(
            kind="dtype", message=f"dtype {got.dtype.name} != expected {want_dtype} ({expected.dtype_rule[0]})",
            data={"got": got.dtype.name, "expected": want_dtype}),
            _safe(diagnose.for_dtype, expected.hints, case, got, want_dtype, expected.dtype_rule)))
    margin = None
    if not problems or problems[0].kind == "dtype":
        if problems and got.dtype.kind not in "fiubc" and got.dtype.name != "bfloat16":
            problems[0].data["values_compared"] = False   # grading._answered: not values right
        value_failure, margin = _compare_values(case, got, expected)
        if value_failure is not None:
            problems.append(value_failure)
    if outcome.mutated:
        problems.append(mutation_failure(outcome.mutated))
    if not problems:
        return None, margin
    first = problems[0]
    for extra in problems[1:]:
        first.details.append(f"also {extra.kind}: {extra.message}")
        if "hint_id" not in first.data and "hint_id" in extra.data:
            first.hint = extra.hint
            for key in ("hint_id", "hint_params"):
                if key in extra.data:
                    first.data[key] = extra.data[key]
        first.data.setdefault("also", []).append({"kind": extra.kind, "message": extra.message})
    return first, margin


def _several_items(outcome: CallOutcome, expected: Expected) -> tuple[dict[str, CallOutcome] | None, str]:
    """Each declared output's part of ``outcome`` (an ``ok`` outcome for an array, ``type`` for
    a Python number where none may be), or None and why the result is not the declared tuple or
    dict."""
    names = [name for name, _ in expected.parts or ()]
    listing = ", ".join(names)
    if expected.several_as == "dict":
        want = f"a dict with the keys {listing}"
    else:
        want = f"a tuple of {len(names)} ({listing})"
    if outcome.status == "type":
        if outcome.result_types:   # the container, with an item that is no array
            key, what = next(iter(outcome.result_types.items()))
            names_it = f"item {key}" if key.isdigit() else f"item {key!r}"
            it = "None" if what == "NoneType" else ("an " if what[:1].lower() in "aeiou" else "a ") + what
            return None, f"the function returned a {outcome.message} whose {names_it} is {it}: each of " \
                         f"{listing} must be an array"
        return None, f"the function returned {outcome.message}, not {want}"
    if outcome.results is None:
        shape = tuple(outcome.result.shape) if outcome.result is not None else ()
        return None, f"the function returned one array of shape {shape}, not {want}"
    kind = outcome.result_type
    if expected.several_as == "dict":
        if kind != "dict":
            return None, f"the function returned a {kind} of {len(outcome.results)}, not {want}"
        missing = [n for n in names if n not in outcome.results]
        extra = [k for k in outcome.results if k not in names]
        if missing or extra:
            return None, (f"the function returned a dict with the keys {', '.join(outcome.results)}, not {want}"
                          + (f" (missing: {', '.join(missing)})" if missing else ""))
        items = [(n, outcome.results[n], outcome.result_types.get(n, "")) for n in names]
    else:
        if kind == "dict":
            return None, f"the function returned a dict, not {want}"
        if len(outcome.results) != len(names):
            return None, f"the function returned a {kind} of {len(outcome.results)}, not {want}"
        items = [(n, arr, outcome.result_types.get(k, ""))
                 for n, (k, arr) in zip(names, outcome.results.items())]
    return {n: CallOutcome(status="ok", result=arr, result_type=t, seconds=outcome.seconds) for n, arr, t in items}, ""


#: kinds of a failure whose values were right (the call computed the answer, and returned it in
#: another dtype or wrote into an input): such a case counts as answered (``grading.unearned``)
VALUES_RIGHT = ("dtype", "mutation")


def items_returned(outcome: CallOutcome, expected: Expected) -> dict[str, Any] | None:
    """The arrays a call of a several-output function returned, by output name (as
    :func:`_assess_several` pairs them), or None when the result is not the declared tuple or dict."""
    items, _ = _several_items(outcome, expected)
    return None if items is None else {name: o.result for name, o in items.items()}


def values_right(failure: Failure | None) -> bool:
    """Whether a case's ``failure`` leaves its values right: none, or only a dtype or mutation
    failure whose values were compared (not ``values_compared: false``), with nothing else in
    its ``also``, and, for several outputs, every output so (``data["outputs"][name]
    ["values_right"]``: a second output of garbage in a wrong dtype was listed as a dtype failure
    only, and the case counted as answered: round nineteen of issue 32)."""
    if failure is None:
        return True
    data = failure.data
    if failure.kind not in VALUES_RIGHT or data.get("values_compared") is False:
        return False
    outputs = data.get("outputs")
    if isinstance(outputs, dict) and not all(o.get("values_right") for o in outputs.values()):
        return False
    return all(a.get("kind") in VALUES_RIGHT for a in data.get("also", []))


def _assess_several(case: Case, outcome: CallOutcome, expected: Expected) -> tuple[Failure | None, float | None]:
    """:func:`assess` of a function with several outputs: the result must be the declared tuple
    (a list is accepted) or dict, else a ``type`` failure; then each output is judged as one
    array by its own :class:`Expected`. The first failing output (in declaration order) gives
    the failure's kind and message (``"v: 3 / 10 elements are outside the tolerance"``); the
    details say how every output fared (``param is right (0.02 of the allowance)``), and
    ``data["outputs"]`` holds each output's ``kind`` (None when right) and ``margin``. The
    margin is the worst output's."""
    items, why = _several_items(outcome, expected)
    if items is None:
        failure = Failure(kind="type", message=why, data={"returned": outcome.result_type or outcome.message,
                                                          "expected": [n for n, _ in expected.parts or ()]})
        if outcome.status == "type" and outcome.result_types:
            # the container was right but an item is no array (``[y.tolist(), mean, rstd]``): the
            # hint is that item's, as for a one-output problem (an instructor's learner was told of
            # the container only, and looked for the fault there)
            key, what = next(iter(outcome.result_types.items()))
            failure.data["item"] = {"key": key, "returned": what}
            return _hinted(failure, _safe(diagnose.for_type, expected.hints, what, expected.out_dtype or case.dtype)), None
        return failure, None
    verdicts: list[tuple[str, Failure | None, float | None]] = []
    for name, part in expected.parts or ():
        if part.allowance_share != expected.allowance_share:
            # validate's alternatives use their share of every output's allowance: each part's own
            # record kept 1.0, and a torch alternative passed "within 0.5" at 0.62 (an instructor's trial)
            part = replace(part, allowance_share=expected.allowance_share)
        failure, margin = assess(case, items[name], part)
        verdicts.append((name, failure, margin))
    margins = [m for _, _, m in verdicts if m is not None]
    margin = max(margins) if margins else None
    summary = {name: {"kind": f.kind if f else None, "margin": m, "values_right": values_right(f)}
               for name, f, m in verdicts}
    lines = []
    for name, f, m in verdicts:
        if f is None:
            lines.append(f"{name} is right" + (f" ({m:.2g} of the allowance)" if m is not None else ""))
        else:   # what else is wrong with it too (its values, beside a dtype)
            more = [a.get("kind") for a in f.data.get("also", []) if a.get("kind")]
            lines.append(f"{name} is off: {f.message}" + (f" (also {', '.join(more)})" if more else ""))
    failing = [(name, f) for name, f, _ in verdicts if f is not None]
    if outcome.mutated:
        failing.append(("", mutation_failure(outcome.mutated)))
    if not failing:
        return None, margin
    name, first = failing[0]
    swapped = _swapped(case, items, expected)
    if swapped is not None:   # the pair's own hint, not a fitted one of the first output's values
        for key in ("hint_id", "hint_params"):
            first.data.pop(key, None)
        first.hint = None
        _hinted(first, swapped)
    if name:
        first.message = f"{name}: {first.message}"
        first.details = ["; ".join(lines)] + first.details
        first.data["output"] = name
    first.data["outputs"] = summary
    for other, extra in failing[1:]:
        if not other:   # an output's own failure is in the line of every output's verdict above
            # (an instructor's learner read each output's dtype three times)
            first.details.append(f"also {extra.kind}: {extra.message}")
        first.data.setdefault("also", []).append({"kind": extra.kind, "message": extra.message,
                                                  **({"output": other} if other else {})})
    return first, margin


def _swapped(case: Case, items: dict[str, CallOutcome], expected: Expected) -> diagnose.Hint | None:
    """The hint that two outputs came back in each other's place (``generic.swapped_outputs``),
    judged with each output's allowance in the case's dtype, or None."""
    from .hints.generic import swapped_outputs
    got, refs, allowed = {}, {}, {}
    for name, part in expected.parts or ():
        arr = items[name].result
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiub" and arr.dtype.name != "bfloat16":
            continue
        try:
            got[name] = np.asarray(arr, dtype=np.float64)
            refs[name] = np.asarray(part.ref, dtype=np.float64)
            out = part.out_dtype or case.dtype
            # an integer output (indices) is compared exactly: its allowance raised, and a newcomer's
            # (indices, values) for (values, indices) was told "return float32" instead
            exact = part.model == "exact" or case.compare == "exact" or np.dtype(dtype_of(out)).kind in "biu"
            allowed[name] = np.zeros_like(refs[name]) if exact else full_allowance(part, out)
        except Exception:  # noqa: BLE001 - a hint that cannot be computed is left out
            return None
    return _safe(swapped_outputs, got, refs, allowed)


def full_allowance(expected: Expected, out_dtype: str) -> np.ndarray:
    """The allowed absolute error of each element of ``expected.ref`` under its tolerance model
    for output dtype ``out_dtype`` (float64, the ref's shape) at the full allowance
    (``allowance_share`` ignored); 0 where the expected value is infinite or NaN, which only the
    same value matches whatever the model (``u |ref|`` is inf there).

    Raises:
        KeyError: an unknown model; whatever the model raises for its inputs.
    """
    ref = np.asarray(expected.ref, dtype=np.float64)
    full = tolerance.model(expected.model).allowed(out_dtype, ref, expected.scale, expected.n)
    return np.where(np.isfinite(ref), np.broadcast_to(np.asarray(full, dtype=np.float64), ref.shape), 0.0)


def _past(ratio: float) -> str:
    """``ratio`` (an error over its allowance, above 1) in 3 significant digits, or as many more
    as it takes not to read 1: "1x the allowance" for 1.0018 read as rounding noise (a
    newcomer's report)."""
    digits = 3
    while digits < 8 and float(f"{ratio:.{digits}g}") <= 1.0:
        digits += 1
    return f"{ratio:.{digits}g}"


def _compare_values(case: Case, got: np.ndarray, expected: Expected) -> tuple[Failure | None, float | None]:
    """The value failure of an output of the expected shape, and its margin (:func:`assess`)."""
    ref = expected.ref
    if got.dtype.kind == "c":
        # complex where real values are expected: a nonzero imaginary part is wrong whatever the
        # real part; else the real part is the value judged (complex zeros "answered" every case
        # as a dtype failure only, and took back the free cases' points: round thirteen)
        imaginary = np.imag(got) != 0
        if imaginary.any():
            return Failure(kind="tolerance",
                           message=f"{int(imaginary.sum())} / {got.size} elements have a nonzero imaginary "
                                        "part where the expected values are real",
                           data={"imaginary": int(imaginary.sum()), "total": int(got.size)}), None
        got = np.real(got)
    elif got.dtype.kind not in "fiub" and got.dtype.name != "bfloat16":
        return None, None  # another kind (the dtype failure says it): no value was compared
    if expected.checker is not None:
        from .checkers import run as run_checker
        message = run_checker(expected.checker, case.inputs, got, ref, case.dtype)  # CheckerError: a spec fault
        if message is None:
            return None, None
        return Failure(kind="tolerance", message=message, data={"checker": str(expected.checker.get("module"))}), None
    g = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    finite_ref = np.isfinite(ref)
    bad = ~np.isfinite(g) & finite_ref
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        n_bad = int(bad.sum())
        exact_case = case.compare == "exact" or expected.model == "exact"
        return _hinted(Failure(
            kind="non_finite",
            message=f"{n_bad} / {g.size} elements are NaN or infinite where the expected values are finite",
            details=[f"first at index {idx}: got {_fmt(g[idx])}, expected {_fmt(ref[idx])}"],
            data={"count": n_bad, "total": int(g.size), "index": list(idx)}),
            _safe(diagnose.for_non_finite, expected.hints, case, g, ref)), \
            None if exact_case or dtype_of(expected.out_dtype or case.dtype).kind in "biu" else math.inf
    out_dtype = expected.out_dtype or case.dtype
    integral = dtype_of(out_dtype).kind in "biu"
    margin = None
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # inf - inf where both are inf: nan, judged below
        # an infinite or NaN expected element must come out as the same value (NaN for NaN)
        same = (g == ref) | (np.isnan(g) & np.isnan(ref))
        if case.compare == "exact" or expected.model == "exact" or integral:
            allowed = np.zeros_like(ref)
            rounded = ref.astype(dtype_of(out_dtype)).astype(np.float64)
            err = np.abs(g - rounded)
            mask = ~(g == rounded)
        else:
            full = full_allowance(expected, out_dtype)
            allowed = full * expected.allowance_share
            err = np.abs(g - ref)
            mask = ~(err <= allowed)
            if np.any(~finite_ref & ~same):
                margin = math.inf
            elif finite_ref.any():
                full = full[finite_ref]
                e = err[finite_ref]
                ratio = np.where(full > 0, e / np.where(full > 0, full, 1.0), np.where(e > 0, np.inf, 0.0))
                margin = float(np.max(np.where(np.isnan(ratio), np.inf, ratio)))
        mask &= ~(same & ~finite_ref)
    if not mask.any():
        return None, margin
    return _tolerance_failure(case, g, ref, err, allowed, mask, expected), margin


GRID_BLOCKS = 16  # at most this many blocks a side in a tolerance failure's data["grid"] (about 1 KB)


def error_grid(ratio: np.ndarray, worst: tuple[int, ...] | None = None,
               blocks: int = GRID_BLOCKS) -> dict[str, Any] | None:
    """A coarse map of where an output is off: ``ratio`` (|got - expected| / allowed per element)
    with its leading axes flattened into rows (``rows x last axis``), cut into at most
    ``blocks`` x ``blocks`` blocks, and the largest ratio of each block (over 1: some element
    of the block is outside its allowance): ``{"shape": [rows, cols],
    "blocks": [nr, nc], "max_ratio": ["0.5 1.2e+02 ...", ...]}``: one string per block row
    (one line in indented JSON), its blocks' ratios with 2 significant digits separated by
    spaces, ``inf`` where an element is off and nothing is allowed (or is NaN); Python's
    ``float`` reads each. Block ``i`` covers the rows ``i * rows // nr`` up to ``(i + 1) * rows
    // nr`` (columns alike). ``worst`` (an index of ``ratio``) adds ``"worst": [row, col]``, that
    element in the flattened grid. None for a scalar or empty output, or one of at most
    :data:`SMALL` elements (its values are in the report)."""
    if ratio.ndim == 0 or ratio.size == 0 or ratio.size <= SMALL:
        return None
    grid = ratio.reshape(-1, ratio.shape[-1])
    rows, cols = grid.shape
    nr, nc = min(rows, blocks), min(cols, blocks)
    with np.errstate(invalid="ignore"):
        grid = np.where(np.isnan(grid), np.inf, grid)
        grid = np.maximum.reduceat(grid, [i * rows // nr for i in range(nr)], axis=0)
        grid = np.maximum.reduceat(grid, [j * cols // nc for j in range(nc)], axis=1)
    out: dict[str, Any] = {"shape": [rows, cols], "blocks": [nr, nc],
                           "max_ratio": [" ".join(f"{v:.2g}" for v in row) for row in grid.tolist()]}
    if worst is not None:
        flat = int(np.ravel_multi_index(worst[:-1], ratio.shape[:-1])) if ratio.ndim > 1 else 0
        out["worst"] = [flat, int(worst[-1])]
    return out


def _inf_words(values: np.ndarray) -> str:
    """``-inf``, ``inf``, ``NaN`` or a list of them, for the non-finite expected values shown."""
    kinds = [w for w, hit in (("-inf", np.any(values == -np.inf)), ("inf", np.any(values == np.inf)),
                              ("NaN", np.any(np.isnan(values)))) if hit]
    return " or ".join(kinds) or "not finite"


def _tolerance_failure(case: Case, g: np.ndarray, ref: np.ndarray, err: np.ndarray,
                       allowed: np.ndarray, mask: np.ndarray, expected: Expected) -> Failure:
    n_bad, total = int(mask.sum()), int(mask.size)
    with np.errstate(all="ignore"):
        ratio = np.where(allowed > 0, err / np.where(allowed > 0, allowed, 1.0), np.where(err > 0, np.inf, 0.0))
        ratio = np.where(np.isnan(err), np.inf, ratio)   # NaN where -inf is due: as far off as can be
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(mask, ratio, -1))), ratio.shape))
    w_ratio = float(ratio[worst])
    out_dtype = expected.out_dtype or case.dtype
    exact = case.compare == "exact" or expected.model == "exact" or dtype_of(out_dtype).kind in "biu"
    message = (f"{n_bad} / {total} elements ({100.0 * n_bad / total:.1f}%) "
               + ("differ from the exact result" if exact else "are outside the tolerance"))
    shown_got, shown_want = _fmt_pair(g[worst], ref[worst])
    details = [
        f"worst at index {worst}: got {shown_got}, expected {shown_want}, "
        f"error {_fmt(err[worst])}, allowed {_fmt(allowed[worst])}"
        + ("" if exact or not math.isfinite(w_ratio) else
           # where 0 is due the allowance is a rounding's: "9.45e+35x the allowance" told a newcomer nothing
           " (0 is expected there: only an error at the level of rounding is allowed)"
           if ref[worst] == 0 and w_ratio > 1e6 else f" ({_past(w_ratio)}x the allowance)"),
    ]
    data = {"mismatched": n_bad, "total": total, "worst_index": list(worst),
            "got": float(g[worst]), "expected": float(ref[worst]),
            "error": float(err[worst]), "allowed": float(allowed[worst]),
            "ratio": w_ratio if math.isfinite(w_ratio) else None}
    if (grid := error_grid(ratio, worst)) is not None:
        data["grid"] = grid
    missed = mask & ~np.isfinite(ref)
    if missed.any():   # an infinity (a masked logit's -inf) or NaN of the exact result not matched
        at = tuple(int(i) for i in np.argwhere(missed)[0])
        k = int(missed.sum())
        details.insert(0, f"{k} of them where the expected value is {_inf_words(ref[missed])}, which only the same "
                          f"value matches: first at index {at}: got {_fmt(g[at])}, expected {_fmt(ref[at])}")
        data["non_finite_expected"] = k
        if k == n_bad:
            message = (f"{n_bad} / {total} elements ({100.0 * n_bad / total:.1f}%) are not the "
                       f"{_inf_words(ref[missed])} the exact result has there")
    if exact:
        details.append("this case is computed exactly by every correct method (no rounding happens), "
                       "so the result must match exactly")
    else:
        s_worst = float(expected.scale[worst]) if expected.scale is not None else 0.0
        data["scale"] = s_worst
        n_worst = np.broadcast_to(np.asarray(expected.n), ref.shape)[worst] if np.ndim(expected.n) else expected.n
        names = expected.float_names if expected.float_names is not None else tuple(case.inputs)
        line = tolerance.model(expected.model).describe(out_dtype, n_worst, s_worst, names)
        if line:
            details.append(line)
    hint = _safe(diagnose.for_values, expected.hints, case, g, ref, allowed, expected.scale, expected.n,
                 expected.model, out_dtype)
    return _hinted(Failure(kind="tolerance", message=message, details=details, data=data), hint)
