"""Shrink a failing generated case to the smallest failing input, with hypothesis.

For the first failing generated case of each (failure kind, dtype), up to
:data:`MAX_SHRINKS`, the generation of that dtype is replayed with the same hypothesis seed and
strategy (``grader.cases.case_strategy``) in phases generate + shrink. The property tested is
"the submission's output for this input does not fail with that kind", so hypothesis finds the
first failing example again and shrinks it: fewer and smaller axes, values toward 0.

Verdicts are cached by input bytes, pre-filled from the main run, so replaying the generation
costs no calls of the submission. After :data:`SHRINK_BUDGET` seconds unseen inputs count as
passing, which ends the shrink with the best example so far (hypothesis replays the final
example, which is cached, so the result stays consistent). Timeouts and crashes are not shrunk.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from .cases import Case, case_strategy
from .compare import compare
from .results import ArrayInfo, CaseResult

MAX_SHRINKS = 2
SHRINK_BUDGET = 8.0  # seconds per shrink
SHRINKABLE = ("type", "shape", "dtype", "non_finite", "tolerance", "mutation", "exception")


def _key(case: Case) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name, arr in case.inputs.items():
        h.update(name.encode())
        h.update(str(arr.shape).encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def shrink_failures(problem: Any, cases: list[Case], results: list[CaseResult], session: Any,
                    opts: Any, shown: str, dtypes: tuple[str, ...]) -> list[CaseResult]:
    """Shrunk versions of the first failing generated cases, as extra :class:`CaseResult` records.

    A shrunk case only adds information: it is named ``"shrunk:<original>"``, carries a replay
    command with its exact values (``--replay JSON``), and is excluded from the points (its group
    is ``"shrunk"``). It is kept when hypothesis found a different failing input that is not
    larger (simpler values of the same size count: ``1.0`` says more than ``1.8486328125``).
    Nothing is shrunk when the run was asked for named cases (``--case``, a replay): the
    learner asked for exactly those.

    Args:
        problem: the :class:`grader.spec.Problem`.
        cases, results: the run's cases and their results, in the same order.
        session: the running submission (``grader.check._Session``), called for unseen inputs.
        opts: the :class:`grader.check.CheckOptions` of the run (seed, max_examples, limits).
        shown: the submission path as replay commands show it.
        dtypes: the graded dtypes, in the order generation spreads cases over them.

    Returns:
        At most :data:`MAX_SHRINKS` extra results, possibly none.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import HypothesisException

    from .check import _expected, _run_failure, _values_of, replay_command

    if getattr(opts, "only_cases", None):
        return []
    verdicts: dict[str, str | None] = {}
    for case, res in zip(cases, results):
        if case.origin == "generated":
            verdicts[_key(case)] = res.failure.kind if res.failure else None
    targets: list[tuple[Case, CaseResult]] = []
    seen: set[tuple[str, str]] = set()
    for case, res in zip(cases, results):
        if case.origin != "generated" or res.failure is None or res.failure.kind not in SHRINKABLE:
            continue
        if (res.failure.kind, case.dtype) in seen:
            continue
        seen.add((res.failure.kind, case.dtype))
        targets.append((case, res))
        if len(targets) >= MAX_SHRINKS:
            break

    out: list[CaseResult] = []
    count = opts.max_examples if opts.max_examples is not None else (problem.generated or {}).get("count", 0)
    for original, original_res in targets:
        kind = original_res.failure.kind
        dt = original.dtype
        i = dtypes.index(dt)
        per = count // len(dtypes) + (1 if i < count % len(dtypes) else 0)
        best: dict[str, Any] = {}
        t0 = time.monotonic()

        def failing(case: Case) -> bool:
            key = _key(case)
            if key not in verdicts:
                if time.monotonic() - t0 > SHRINK_BUDGET:
                    return False
                exp = _expected(problem, case)
                outcome = session.call(case, timeout=opts.limits.call_timeout)
                if outcome.status in ("ok", "type"):
                    failure = compare(case, outcome, exp)
                else:
                    _, failure = _run_failure(outcome)
                verdicts[key] = failure.kind if failure else None
                if failure is not None and failure.kind == kind:
                    best[key] = (case, outcome, failure, exp)
            return verdicts[key] == kind

        @hseed(opts.seed * 1000 + i)
        @settings(max_examples=max(per, 1), database=None, deadline=None,
                  phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck),
                  verbosity=Verbosity.quiet, report_multiple_bugs=False, derandomize=False)
        @given(case_strategy(problem, dt, opts.seed))
        def prop(case: Case) -> None:
            if failing(case):
                best["last"] = _key(case)
                raise AssertionError(kind)

        try:
            prop()
        except AssertionError:
            pass
        except HypothesisException:
            continue
        key = best.get("last")
        if key is None or key not in best:
            continue  # the smallest failing example is the original (already reported)
        case, outcome, failure, exp = best[key]
        if case.size > original.size:
            continue  # shapes shrink toward the spec's pool order, not always toward fewer elements
        case.origin = "shrunk"
        case.name = f"shrunk:{original.name}"
        info = {k: ArrayInfo(tuple(v.shape), v.dtype.name) for k, v in case.inputs.items()}
        status = "failed" if outcome.status in ("ok", "type") else _run_failure(outcome)[0]
        res = CaseResult(case.name, "shrunk", status, dt, case.rank, info, original.visibility,
                         failure, outcome.seconds, _values_of(case, exp, outcome.result),
                         replay_command(opts, problem, case, shown), shrunk=True)
        failure.details.insert(0, f"the smallest failing input found from {original.name} "
                                  f"(shrunk by hypothesis in {time.monotonic() - t0:.1f} s)")
        out.append(res)
    return out
