"""Search for a small failing input with hypothesis, after the graded cases ran.

The graded cases are fixed by the seed (``grader.cases``); hypothesis is used here only to
*search*: for the first failing generated case of each failure kind (in a dtype no small
visible fixed case shows it failing already) (:func:`_targets`), up to :data:`MAX_SHRINKS`, hypothesis draws cases of that dtype from :func:`case_strategy`
(the spec's generated ranges) in phases generate + shrink. The property tested is "the
submission's output for this input does not fail with that kind", so hypothesis finds a
failing example and shrinks it: fewer and smaller axes, values toward 0. What it finds is
shown as extra feedback, never counted in the points, so the verdict does not depend on the
hypothesis version.

Verdicts are cached by input bytes. The searches of one check share a budget of CPU seconds
(this thread's and the submission's calls', so a loaded machine finds the same example, only
later; a call whose CPU time is unknown, such as a crash, counts its wall-clock time): what the
graded visible cases cost (``budget``, so that a failing check takes about twice a passing one,
issue 33; at least :data:`MIN_BUDGET`), at most :data:`SHRINK_BUDGET` a search. A search stops
when its share is spent, at a wall-clock ceiling shaped like a call's backstop (calls that block
or crash use little CPU), or at the run's ``--total-timeout`` deadline, whichever comes first: the search then ends at once with the
smallest failing example found so far (before, unseen inputs counted as passing and hypothesis
went on drawing and shrinking: a 0.6 s budget took 11 s at load 9). Timeouts and crashes are not shrunk.

hypothesis's storage (its constants cache and example database, ``./.hypothesis`` by default)
is a private folder of the grader's while the search runs (``grader.isolation.hypothesis_storage``):
nothing is read from or written to the working folder, which may be a class folder.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any, Callable

import numpy as np


from .cases import (Case, Stream, call_layout, cast_to, draw_inputs, fill_array, fill_range, param_array,
                    resolve_shape)
from .results import SHRUNK_PREFIX, ArrayInfo, CaseResult, Replay
from .spec import LEAD, Parameter, Problem

MAX_SHRINKS = 2
Z_BOUND = 4.0  # standard scores used by the shrink search lie in [-4, 4]
LONG_SEARCH = 5.0  # wall seconds of a search after which its line says how to skip it
#: CPU seconds all the searches of one check may use at least, whatever the graded cases cost:
#: a NumPy check's visible cases can cost 0.1 s, and each new shape a search tries costs the
#: reference a compilation. At 1.5 s a float16-only mistake of tied_lm_head found nothing on a
#: cold cache; 2.5 s finds masked_mean_pool's (2, 2, 1) example in about 2-3 s wall at load 8,
#: where the old 8 s a search took 20 s
MIN_BUDGET = 2.5
SHRINK_BUDGET = 8.0  # CPU seconds per search (the grader's thread and the submission's calls): not wall-clock
# time, so that what a search finds does not depend on how busy the machine is
WALL_FACTOR, WALL_MARGIN = 5.0, 5.0   # and a wall-clock ceiling of 5 x 8 + 5 = 45 s per search (Limits.backstop's shape)
SEARCH_EXAMPLES = 200  # examples hypothesis may draw per search (the time budget usually ends it first)
SHRINKABLE = ("type", "shape", "dtype", "non_finite", "tolerance", "mutation", "exception")


def _f32(x: float) -> float:
    """``x`` rounded to float32 (hypothesis wants float bounds representable at width 32)."""
    return float(np.float32(x))


def case_strategy(problem: Problem, dtype: str, within: dict[str, Any] | None = None) -> Any:
    """A hypothesis strategy of :class:`Case` in ``dtype`` over the spec's ``generated`` ranges.

    Used only to *search* for a small failing input (``grader.shrink``), never for graded
    cases. Shapes: a number of leading axes in ``leading_axes`` with sizes in ``sizes["..."]``,
    every other size symbol in its range; with ``within`` (the sizes of the failing case being
    shrunk) no larger than those, so that every example is a candidate and the search finds
    one sooner. Values: ``mean + scale * z`` per row with z drawn by hypothesis in [-4, 4], so
    that shrinking moves toward small shapes and simple values (z -> 0, the mean and scale
    toward their bounds); subnormals are flushed as in graded cases.
    """
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    gen = problem.generated or {}
    rank_lo, rank_hi = gen.get("leading_axes", [0, 0])
    lead_lo, lead_hi = gen.get("sizes", {}).get(LEAD, [1, 1])
    symbols = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in gen.get("sizes", {}).items() if k != LEAD}
    if within:
        lead = tuple(within.get(LEAD, ()))
        rank_hi = max(rank_lo, min(rank_hi, len(lead)))
        lead_hi = max(lead_lo, min([lead_hi, *lead]) if lead else lead_hi)
        for sym, bounds in symbols.items():
            if isinstance(within.get(sym), int):
                if isinstance(bounds, dict):   # one_of: the sizes no larger than the failing case's
                    bounds["one_of"] = [v for v in bounds["one_of"] if v <= within[sym]] or [within[sym]]
                else:
                    bounds[1] = max(bounds[0], min(bounds[1], within[sym]))
    values = gen.get("values", {})
    z_elems = st.floats(-Z_BOUND, Z_BOUND, allow_nan=False, allow_infinity=False,
                        allow_subnormal=False, width=32)

    @st.composite
    def draw(data: Any) -> Case:
        rank = data(st.integers(rank_lo, rank_hi))
        sizes: dict[str, Any] = {
            LEAD: tuple(data(st.lists(st.integers(lead_lo, lead_hi), min_size=rank, max_size=rank)))}
        for sym, bounds in symbols.items():
            sizes[sym] = data(st.sampled_from(bounds["one_of"])) if isinstance(bounds, dict) \
                else data(st.integers(bounds[0], bounds[1]))
        if problem.constraints:
            assume(problem.violated(sizes, {}) is None)   # on sizes alone, before any array is made
        def make(p: Parameter, env: dict[str, Any]) -> np.ndarray:
            shape = resolve_shape(p, env)
            if p.kind != "float":  # integers in the domain, masks: made by a stream hypothesis seeds
                return param_array(Stream(data(st.integers(0, 2**32 - 1))), p, shape, values.get(p.name),
                                   p.dtype_for(dtype, 0), env)
            fill = values.get(p.name, {"kind": "normal"})
            if fill.get("kind", "normal") != "normal":
                arr = fill_array(Stream(data(st.integers(0, 2**32 - 1))), shape, fill)
            else:
                rows = shape[:-1] + (1,) if shape else ()
                mlo, mhi = (_f32(x) for x in fill_range(fill.get("mean"), (0.0, 0.0)))
                slo, shi = (_f32(x) for x in fill_range(fill.get("scale"), (1.0, 1.0)))
                mean = data(hnp.arrays(np.float64, rows, elements=st.floats(mlo, mhi, width=32)))
                scale = data(hnp.arrays(np.float64, rows, elements=st.floats(slo, shi, width=32)))
                z = data(hnp.arrays(np.float64, shape, elements=z_elems))
                arr = mean + scale * z
            return cast_to(arr, dtype)

        present = [p for p in problem.parameters if p.scalar is None or not p.optional]
        inputs = draw_inputs(problem, present, {}, make, {}, sizes, Stream(data(st.integers(0, 2**32 - 1))), 0)
        if problem.constraints:
            assume(problem.violated(sizes, inputs) is None)
        group = problem.groups[gen["group"]]
        return Case(name="", group=gen["group"], dtype=dtype, inputs=inputs, sizes=sizes, compare="tolerance",
                    expected_literal=None, origin="generated", visibility=group.visibility,
                    **call_layout(problem, inputs))

    return draw()


def _key(case: Case) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name, arr in case.inputs.items():
        h.update(name.encode())
        h.update(str(arr.shape).encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def shrink_failures(problem: Any, cases: list[Case], results: list[CaseResult], executor: Any,
                    judge: Callable[[Case, Any, Any], Any], *, dtypes: tuple[str, ...], seed: int = 0,
                    call_timeout: float = 10.0, replay: Callable[[Case], Replay | None] | None = None,
                    deadline: float | None = None, budget: float | None = None) -> list[CaseResult]:
    """Small failing inputs like the first failing generated cases, as extra :class:`CaseResult` records.

    A shrunk case only adds information: it is named ``"shrunk:<original>"``, carries a replay
    command with its exact values (``--replay JSON``), and is excluded from the points (its group
    is ``"shrunk"``). It is kept when hypothesis found a failing input of the same kind that is
    not larger than the original.

    Args:
        problem: the :class:`grader.spec.Problem`.
        cases, results: the run's cases and their results, in the same order.
        executor: what runs the submission (``grader.run.Executor``; only ``call`` is used),
            called for unseen inputs.
        judge: the judge (``grader.grading.judge``: case, outcome, expected -> Verdict).
        dtypes: the graded dtypes, in the order generation spreads cases over them.
        seed: the run's case seed (each search's hypothesis seed derives from it).
        call_timeout: CPU seconds per call (cut to what the search has left).
        replay: how to re-run a case (``grader.plan.Plan.replay_of``), or None.
        deadline: ``time.monotonic()`` value of the run's ``--total-timeout``; no search goes past it.
        budget: CPU seconds for all the searches together (the graded visible cases' cost, at
            least :data:`MIN_BUDGET`; shared equally, at most :data:`SHRINK_BUDGET` each), or
            None for :data:`SHRINK_BUDGET` each.

    Returns:
        At most :data:`MAX_SHRINKS` extra results, possibly none.
    """
    if not _targets(cases, results):
        return []   # nothing to search for: hypothesis is not even imported (about 0.25 s of a check)
    from .isolation import hypothesis_storage

    # hypothesis keeps its storage (constants cache, database) in ./.hypothesis unless told
    # otherwise: the working folder may be a class folder or a learner's repository
    with hypothesis_storage():
        return _shrink(problem, cases, results, executor, judge, dtypes, seed, call_timeout, replay, deadline, budget)


class _Spent(BaseException):
    """A search's share of the budget is spent: raised inside the property, it is not a failure
    hypothesis would shrink (a BaseException ends its run), so the search stops with the
    smallest failing input found so far."""


#: a failing case shown to the learner whose every input has at most this many elements is a
#: small example already: its (failure kind, dtype) is not searched for a smaller one
SMALL_ENOUGH = 16


def _targets(cases: list[Case], results: list[CaseResult]) -> list[tuple[Case, CaseResult]]:
    """The failing generated cases to shrink: the first of each failure kind, at most
    :data:`MAX_SHRINKS`, with their results; none of a (kind, dtype) that a visible fixed case of
    at most :data:`SMALL_ENOUGH` elements an input already shows failing (the search would find
    an example no smaller: a wrong tied_lm_head fails the worked example, 2 and 6 elements, and
    the search cost it 2.5 of its 2.9 s in ``grader grade``). One search per kind, not per
    (kind, dtype): a second search of the same failure in another dtype found the same boundary
    again and doubled a slow function's check (a newcomer's: 8.4 s, then 14.0 s more)."""
    shown = {(res.failure.kind, case.dtype) for case, res in zip(cases, results)
             if res.failure is not None and case.origin != "generated" and res.visibility != "hidden"
             and case.size <= SMALL_ENOUGH}
    targets: list[tuple[Case, CaseResult]] = []
    searched: set[str] = set()
    for case, res in zip(cases, results):
        if case.origin != "generated" or res.failure is None or res.failure.kind not in SHRINKABLE:
            continue
        if res.failure.kind in searched or (res.failure.kind, case.dtype) in shown:
            continue
        searched.add(res.failure.kind)
        targets.append((case, res))
        if len(targets) >= MAX_SHRINKS:
            break
    return targets


def _shrink(problem: Any, cases: list[Case], results: list[CaseResult], executor: Any, judge: Callable[..., Any],
            dtypes: tuple[str, ...], seed: int, call_timeout: float, replay: Callable[[Case], Replay | None] | None,
            deadline: float | None, budget: float | None = None) -> list[CaseResult]:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import HypothesisException

    from .expected import expected_for, values_of
    verdicts: dict[str, str | None] = {}
    for case, res in zip(cases, results):
        if case.origin == "generated":
            verdicts[_key(case)] = res.failure.kind if res.failure else None
    targets = _targets(cases, results)
    share = SHRINK_BUDGET if budget is None else min(SHRINK_BUDGET, max(MIN_BUDGET, budget) / max(1, len(targets)))
    out: list[CaseResult] = []
    for original, original_res in targets:
        kind = original_res.failure.kind
        dt = original.dtype
        i = dtypes.index(dt)
        best: dict[str, Any] = {}
        t0, c0 = time.monotonic(), time.thread_time()
        calls_cpu = [0.0]   # what the submission's calls cost (their CPU seconds, as measured)
        if deadline is not None and deadline - t0 < 0.5:
            break  # the run's time is up: the graded cases are all reported already
        # a ceiling on the wall clock too, shaped like a call's backstop: calls that crash (and
        # restart the process) or block use little CPU, and must not keep a search going
        wall_end = t0 + WALL_FACTOR * share + WALL_MARGIN
        if deadline is not None:
            wall_end = min(wall_end, deadline)

        def spent() -> float:
            """CPU seconds of this search: this thread's (hypothesis, the reference) and the calls'
            (not the threads the reference's compilations run on: how many of those a search
            needs depends on the cache, and a search must find the same example either way)."""
            return time.thread_time() - c0 + calls_cpu[0]

        def failing(case: Case) -> bool:
            key = _key(case)
            if key not in verdicts:
                left = share - spent()
                if left <= 0 or time.monotonic() >= wall_end:
                    raise _Spent   # ends hypothesis at once: the smallest failing input so far stands
                exp = expected_for(problem, case)
                outcome = executor.call(case, timeout=min(call_timeout, left))
                # a call whose CPU time is unknown (a crash, an executor that does not measure it)
                # costs its wall-clock seconds
                calls_cpu[0] += outcome.cpu_seconds if outcome.cpu_seconds is not None else outcome.seconds
                verdict = judge(case, outcome, exp)
                failure = verdict.failure
                verdicts[key] = failure.kind if failure else None
                if failure is not None and failure.kind == kind:
                    best[key] = (case, outcome, verdict, exp)
            return verdicts[key] == kind

        @hseed(seed * 1000 + i)
        @settings(max_examples=SEARCH_EXAMPLES, database=None, deadline=None,
                  phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck),
                  verbosity=Verbosity.quiet, report_multiple_bugs=False, derandomize=False)
        @given(case_strategy(problem, dt, within=original.sizes))
        def prop(case: Case) -> None:
            if failing(case):
                best["last"] = _key(case)
                raise AssertionError(kind)

        try:
            prop()
        except (AssertionError, _Spent):
            pass
        except HypothesisException:
            continue
        key = best.get("last")
        if key is None or key not in best:
            continue  # the smallest failing example is the original (already reported)
        case, outcome, verdict, exp = best[key]
        failure = verdict.failure
        if case.size > original.size:
            continue  # shapes shrink toward the spec's pool order, not always toward fewer elements
        case.origin = "shrunk"
        case.name = f"{SHRUNK_PREFIX}{original.name}"
        info = ArrayInfo.of_inputs(case.inputs, case.scalars)
        res = CaseResult(name=case.name, group="shrunk", status=verdict.status, dtype=dt, rank=case.rank,
                         inputs=info, visibility=original.visibility, seeded=original_res.seeded,
                         failure=failure, seconds=outcome.seconds,
                         values=values_of(case, exp, outcome.result), replay_facts=replay(case) if replay else None,
                         shrunk=True)
        took = time.monotonic() - t0
        # a long search says how to skip it (a learner waited 28.8 s for one, not told of --no-shrink)
        failure.details.insert(0, f"a smaller input that fails like {original.name} ({kind}), "
                                  f"found and shrunk by hypothesis in {took:.1f} s"
                                  + (" (--no-shrink, or shrink=False in check(), skips the search)" if took >= LONG_SEARCH else ""))
        out.append(res)
    return out
