"""Failures grouped into patterns: by kind, dtype and rank, with the hints the cases share.

A pure function of the case records (``grader.results.CaseResult``), used by the check stage
to fill ``Report.summary`` and by reporters that must recompute it for a learner audience
(hidden cases left out); it belongs to no pipeline stage, so reporters need not reach back
into ``grader.check``.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

import numpy as np

from .results import CaseResult


def unearned_words(failed: list[CaseResult]) -> str:
    """What a summary's ``unearned`` entry means (``grader.grading.unearned``), after its counts,
    with the reasons of these cases only: a learner graded under a secret seed was told "(an empty
    batch, zero inputs, a must-raise)" of a literal case that was none of those."""
    from .words.generic import free_because
    reasons: list[str] = []
    for c in failed:
        why = (c.failure.data or {}).get("free_because") if c.failure is not None else None
        said = free_because(why) if isinstance(why, str) else None
        if said and said not in reasons:
            reasons.append(said)
    return (": cases a submission can pass without computing their answer"
            + (f" ({'; '.join(reasons)})" if reasons else "")
            + ", credited once the values are right in at least half of the other cases")


def _rank_pattern(failed: list[CaseResult], ran: list[CaseResult]) -> tuple[str, int] | None:
    """Whether failures of one kind are confined to some ranks of hidden.

    ``("only", r)``, ``("from", r)`` or ``("up_to", r)`` when every failing case has such a
    rank, the other ranks ran, and the evidence is not a coincidence: at least three failing
    cases, and at least two thirds of the cases run at the confining ranks fail. ``ran``: the
    cases run in the dtypes where the kind failed.
    """
    failing, ranks = {c.rank for c in failed}, {c.rank for c in ran}
    if len(failed) < 3 or not failing or len(ranks) < 2 or failing == ranks:
        return None
    low, high = min(failing), max(failing)
    if len(failing) == 1:
        pattern, inside = ("only", low), {low}
    elif failing == {r for r in ranks if r >= low}:
        pattern, inside = ("from", low), {r for r in ranks if r >= low}
    elif failing == {r for r in ranks if r <= high}:
        pattern, inside = ("up_to", high), {r for r in ranks if r <= high}
    else:
        return None
    at = sum(c.rank in inside for c in ran)
    return pattern if 3 * len(failed) >= 2 * at else None


def _rank_text(pattern: tuple[str, int] | None, name: str = "hidden") -> str:
    """The rank pattern in words; ``name`` is the first parameter's (the rank is its number of axes)."""
    if pattern is None:
        return ""
    how, r = pattern
    axes = "axis" if r == 1 else "axes"
    if how == "only":
        what = f"a single {name} vector (1 axis)" if r == 1 and name == "hidden" else f"{name} with {r} {axes}"
        return f", only for {what}; other ranks pass"
    if how == "from":
        return f", only from rank {r} on ({name} with {r} or more axes); smaller ranks pass"
    return f", only up to rank {r} ({name} with at most {r} {axes}); larger ranks pass"


def _input_dtype_pattern(failed: list[CaseResult], ran: list[CaseResult]) -> dict[str, Any] | None:
    """Whether failures of one kind are confined to some dtypes of an input whose dtype is not
    the graded one (an index array drawn int32 or int64, say): ``{"input": name, "failing":
    [dtypes], "passing": [dtypes]}``, or None.

    As for ranks (:func:`_rank_pattern`), not a coincidence: at least three failing cases, every
    one with the input in a ``failing`` dtype, cases with it in the ``passing`` dtypes (of the
    same kind: integers against integers) run in the same graded dtypes without this failure,
    and at least two thirds of the cases run with the ``failing`` dtypes fail. ``ran``: the cases run in the graded dtypes where the kind failed.
    (Issue 34: a lookup that refused int32 ids was summarised as failing "in every dtype",
    the float ones, which were not what varied.)
    """
    if len(failed) < 3:
        return None
    for name in failed[0].inputs:
        if not all(name in c.inputs for c in ran):
            continue
        if all(c.inputs[name].dtype == c.dtype for c in ran):   # the graded dtype itself
            continue
        failing = {c.inputs[name].dtype for c in failed}
        kinds = {_kind(d) for d in failing}
        # what varied among dtypes of one kind (int32 against int64): cases whose input is of
        # another kind (float ids that must raise) test something else
        alike = [c for c in ran if _kind(c.inputs[name].dtype) in kinds]
        every = {c.inputs[name].dtype for c in alike}
        if len(every) < 2 or failing == every:
            continue
        at = sum(c.inputs[name].dtype in failing for c in alike)
        if 3 * len(failed) >= 2 * at:
            return {"input": name, "failing": sorted(failing), "passing": sorted(every - failing)}
    return None


def _kind(dtype: str) -> str:
    """``"i"``, ``"u"``, ``"f"``, ``"b"``... of a dtype name (``"f"`` for bfloat16 and names NumPy
    does not know)."""
    try:
        return np.dtype(dtype).kind
    except TypeError:
        return "f"


def _input_dtype_text(pattern: dict[str, Any] | None) -> str:
    """The input dtype pattern in words: ``, only when token_ids is int32 (int64 passes)``."""
    if pattern is None:
        return ""
    failing, passing = pattern["failing"], pattern["passing"]
    return (f", only when {pattern['input']} is {' or '.join(failing)} "
            f"({', '.join(passing)} pass{'es' if len(passing) == 1 else ''})")


def _combine_safely(combine: Callable[..., list[dict[str, Any]]], hints: list[dict[str, Any]],
                    framework: str, module: str | None) -> list[dict[str, Any]]:
    """The shared hints, or none if combining them failed: hints never break a report."""
    try:
        return combine(hints, framework, module)
    except Exception:  # noqa: BLE001
        return []


def _word_safely(hint: Any, framework: str, module: str | None) -> str | None:
    """``hint`` in the framework's words, or None if wording it failed: hints never break a report."""
    from . import words
    try:
        return words.render(hint, framework, module)
    except Exception:  # noqa: BLE001
        return None


def summarise(cases: list[CaseResult], dtypes: tuple[str, ...], framework: str = "numpy",
              hints: str | None = None) -> list[dict[str, Any]]:
    """Failures grouped by kind, with the dtypes and ranks they occur in, and a shared hint.

    ``framework`` and ``hints`` (the problem's hint module) choose the words of a shared hint
    made here from several cases' facts (``grader.words``).

    Shrunk cases (extra information, no points) are left out of the counts but may be the
    example. Each entry, most frequent kind first (``unearned`` last, whatever its count):

    ``kind``, ``count`` (failing cases), ``dtypes`` and ``ranks`` where it failed,
    ``by_dtype`` (failing cases per dtype), ``only_dtypes`` (the failing dtypes when other
    dtypes ran without this failure, else None), ``only_dtype`` (the one such dtype, else None),
    ``rank_pattern`` (``{"how": "only"|"from"|"up_to", "rank": r}`` when the failures are
    confined to some ranks of hidden, checked within the failing dtypes, else None),
    ``from_rank`` (r for ``"from"``, else None), ``input_dtypes`` (the failures confined to
    some dtypes of an input that is not in the graded dtype, :func:`_input_dtype_pattern`, else
    None), ``example`` (the smallest failing case, a
    shrunk one first), ``hints`` (:func:`grader.diagnose.combine` of the cases' hints, each
    ``id``, ``text``, ``count``, ``of``), ``hint`` (the first of them, or None) and ``text``,
    the one-line pattern for people, e.g.
    ``"tolerance: 17 cases, only in float16 (float32, float64 pass)"``.
    """
    from .diagnose import combine

    graded = [c for c in cases if not c.shrunk and c.status != "skipped"]
    by_kind: dict[str, list[CaseResult]] = defaultdict(list)
    for c in graded:
        if c.failure is not None:
            by_kind[c.failure.kind].append(c)
    order = {d: i for i, d in enumerate(dtypes)}
    ran_dtypes = sorted({c.dtype for c in graded}, key=lambda d: (order.get(d, len(order)), d))
    stopped = {c.dtype for c in cases if not c.shrunk and c.status == "skipped"}   # left out after a stop
    failing_dtypes = {c.dtype for c in graded if c.failure is not None}
    out = []
    # most frequent kind first; ``unearned`` (a case a stub passes, not credited beside a submission
    # that fails most others: ``grading.unearned``) last whatever its count: the submission's own
    # mistake leads its feedback
    for kind, failed in sorted(by_kind.items(), key=lambda kv: (kv[0] == "unearned", -len(kv[1]), kv[0])):
        f_dtypes = sorted({c.dtype for c in failed}, key=lambda d: (order.get(d, len(order)), d))
        # the dtypes that ran cases of the failing cases' groups without this failure: a case the
        # spec runs only in float16 in a group of its own read "only in float16 (float32, float64
        # fail in another way)", as if those dtypes had run it (a helper's new exercise)
        # (a case left out after a stop counts: its dtype has it, as a learner's endless loop in
        # float16 showed, whose float32 and float64 cases were skipped)
        groups = {c.group for c in failed}
        alike = {c.dtype for c in cases if not c.shrunk and c.group in groups}
        passing = [d for d in ran_dtypes if d not in f_dtypes and d in alike]
        alone = not passing and len(alike) == len(f_dtypes) < len(ran_dtypes)
        only = f_dtypes if passing else None
        in_failing = [c for c in graded if c.dtype in f_dtypes]
        pattern = _rank_pattern(failed, in_failing)
        input_dtypes = _input_dtype_pattern(failed, in_failing)
        shrunk = [c for c in cases if c.shrunk and c.failure is not None and c.failure.kind == kind]
        example = min(shrunk or failed, key=lambda c: (sum(int(np.prod(i.shape)) for i in c.inputs.values()), c.name))
        shared = _combine_safely(combine, [
            {"id": c.failure.data.get("hint_id"), "params": c.failure.data.get("hint_params", {}),
             "text": c.failure.hint, "size": sum(int(np.prod(i.shape)) for i in c.inputs.values()),
             "dtype": c.dtype, "kind": kind, "message": c.failure.message, "data": c.failure.data,
             "shapes": {k: list(i.shape) for k, i in c.inputs.items()}}
            for c in failed], framework, hints)   # hints: the problem's module, the same for every kind
        n = len(failed)
        first = next(iter(failed[0].inputs), "hidden")  # the parameter whose axes the rank counts
        if not shared and kind in ("tolerance", "non_finite") and f_dtypes == ["float16"] \
                and "bfloat16" in passing and "bfloat16" not in failing_dtypes:
            # bfloat16 has fewer digits than float16 and float32's range: where it passes and float16
            # fails, a value left float16's range (an instructor's torch learner squared in float16
            # and got zeros, with no hint)
            from .hints import Hint
            said = _word_safely(Hint(idea="half_range", facts={"first": first}), framework, hints)
            shared = [{"id": "half_range", "text": said, "count": n, "of": n}] if said else []
        if only and any(d in stopped for d in passing):   # a timeout stopped the run: not a pass
            where = (f"only in {', '.join(only)} ({', '.join(passing)} passed the cases that ran before the run "
                     "stopped)")
        elif only:
            # a dtype without this kind may fail in another way: it does not "pass" (a newcomer
            # read "(float64 passes)" beside float64's own tolerance failures)
            clean = [d for d in passing if d not in failing_dtypes]
            other = [d for d in passing if d in failing_dtypes]
            said = ([f"{', '.join(clean)} pass{'es' if len(clean) == 1 else ''}"] if clean else []) + \
                ([f"{', '.join(other)} fail{'s' if len(other) == 1 else ''} in another way"] if other else [])
            where = f"only in {', '.join(only)} ({'; '.join(said)})"
        elif alone:   # the other dtypes ran none of these cases' groups
            where = (f"in {', '.join(f_dtypes)} (the only dtype{'s' if len(f_dtypes) > 1 else ''} "
                     f"{'these cases run' if n > 1 else 'this case runs'} in)")
        else:
            where = "in " + ("every dtype (" + ", ".join(f_dtypes) + ")" if len(f_dtypes) > 1 else f_dtypes[0])
        text = (f"{kind}: {n} case{'s' if n != 1 else ''}, {where}{_rank_text(pattern, first)}"
                f"{_input_dtype_text(input_dtypes)}")
        if kind == "unearned":   # a learner trial: the kind's name alone said nothing
            text += unearned_words(failed)
        out.append({"kind": kind, "count": n, "dtypes": f_dtypes, "ranks": sorted({c.rank for c in failed}),
                    "by_dtype": {d: sum(c.dtype == d for c in failed) for d in f_dtypes},
                    "only_dtypes": only, "only_dtype": only[0] if only and len(only) == 1 else None,
                    "rank_pattern": {"how": pattern[0], "rank": pattern[1]} if pattern else None,
                    "from_rank": pattern[1] if pattern and pattern[0] == "from" else None,
                    "input_dtypes": input_dtypes,
                    "example": example.name, "hint": shared[0] if shared else None, "hints": shared,
                    "text": text})
    return out
