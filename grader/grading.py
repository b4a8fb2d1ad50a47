"""Grading: the one judge of a case's outcome, and the loop that grades a plan with an executor.

:func:`judge` turns what one call gave (:class:`grader.results.CallOutcome`) and what was expected
(:class:`grader.compare.Expected`) into a :class:`grader.results.Verdict`; ``grader check``, the
shrink search and ``grader validate`` all judge with it. :func:`grade` runs a plan
(``grader.plan.Plan``) through an executor (``grader.run.Executor``): it imports the submission,
calls it on every case (visible cases first), judges each, shrinks failing generated cases,
scores the groups, and assembles the :class:`grader.results.Report`, with failures worded in the
submission's framework and placed in a notebook's cells. It holds no process state; the
executor owns the process.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import words
from .compare import assess, judge_raises, values_right, with_exception_hint
from .expected import values_of
from .run import empty_output
from .results import (SECRET_REPLAY_NOTE, ArrayInfo, CallOutcome, CaseResult, Failure, Frame, GroupScore, Report,
                      Verdict)
from .siblings import hint_for as sibling_hint
from .spec import Problem
from .summary import summarise
from .words.generic import FREE_BECAUSE, free_because

if TYPE_CHECKING:
    from .compare import Expected
    from .run import Executor


def judge(case: Any, outcome: CallOutcome, expected: "Expected") -> Verdict:
    """The verdict on ``case`` given what the call gave and what was expected.

    A case that must raise (``case.raises``) passes when the call raised one of the accepted
    types and fails when it returned or raised another (nothing is compared); an outcome with a
    value (``ok``, ``type``) is compared (``grader.compare.compare``: type, shape, dtype,
    finiteness, the tolerance model, mutation); any other outcome (``exception``, ``memory``,
    ``timeout``, ``crash``) is an error or a timeout (:func:`run_failure`), with the spec's
    exception hint where it applies.
    """
    if case.raises and outcome.status in ("ok", "type", "exception"):
        failure = judge_raises(case, outcome, expected.hints)
        return Verdict(status="passed" if failure is None else "failed", failure=failure)
    if outcome.status in ("ok", "type"):
        failure, margin = assess(case, outcome, expected)
        return Verdict(status="passed" if failure is None else "failed", failure=failure, margin=margin)
    status, failure = run_failure(outcome)
    with_exception_hint(failure, expected.hints, case)
    return Verdict(status=status, failure=failure)


def returned(outcome: CallOutcome, expected: Any) -> Any:
    """What the call returned, for the report's values: the array, or for several outputs the
    arrays by output name (``compare.items_returned``; None when the result is not the declared
    tuple or dict)."""
    if expected.parts is None:
        return outcome.result
    from .compare import items_returned
    return items_returned(outcome, expected)


def run_failure(outcome: CallOutcome) -> tuple[str, Failure]:
    """The case status (``"timeout"`` or ``"error"``) and :class:`grader.results.Failure` of an
    outcome that gave no comparable value (status ``timeout``, ``memory``, ``exception`` or
    ``crash``)."""
    if outcome.status == "timeout":
        limit = getattr(outcome, "limit", "")
        hint = {"wall": "the call waited without computing (time.sleep, a lock, a blocking read?): it used "
                        "almost no CPU time before the wall-clock backstop stopped it",
                "total": "the whole run ran out of time: the cases before this one took most of --total-timeout"
                }.get(limit, "an endless loop, or far more work than the inputs' sizes need (a Python loop over "
                             "elements instead of one array operation?)")
        return "timeout", Failure(kind="timeout", message=outcome.message, hint=hint,
                                  data={"limit": limit} if limit else {})
    if outcome.status == "memory":
        return "error", Failure(kind="memory", message=outcome.message, frames=list(outcome.frames),
                                exception=outcome.exception, hint="the submission used more memory than allowed")
    if outcome.status == "exception":
        return "error", Failure(kind="exception",
                                message=outcome.message.splitlines()[0] if outcome.message else "exception",
                                frames=list(outcome.frames), exception=outcome.exception)
    return "error", Failure(kind="crash", message=outcome.message or "the submission's process died")


def total(groups: list[GroupScore]) -> float:
    """The score: the groups' exact shares summed, then rounded to 4 decimals (summing the groups'
    rounded scores gave 3.3332 for a third of each of 1, 2, 1, 1, 1 and 4 points, not 3.3333)."""
    return round(float(sum(g.points * g.passed / g.total for g in groups if g.earned and g.total)), 4)


def _answered(r: CaseResult) -> bool:
    """Whether case ``r`` got the right values: passed, or failed only by dtype or mutation with
    its values compared and right, in every output (``compare.values_right``)."""
    if r.status == "passed":
        return True
    return r.status == "failed" and r.failure is not None and values_right(r.failure)


def free_cases(plan: Any) -> dict[str, str]:
    """The cases of ``plan`` that a function computing nothing may pass, by name, with why.

    A case is free when it must raise (``"an exception"``); when its every expected output is
    empty, all zeros, constant over two or more elements (or one integer, or one float that is a
    whole number or a half), or one of its inputs
    unchanged, reshaped or broadcast to the output's shape (what a stub returning zeros, a
    constant or its input gives: rounds eleven and twenty of issue 32); or, under
    a secret seed, when its inputs are the same under every seed (``plan.seeded`` leaves it
    out: a table of a published run's answers passes it, round twelve). A case whose reference
    failed is left out (its failure is reported with the case)."""
    free: dict[str, str] = {}
    for i, case in enumerate(plan.cases):
        if case.raises:
            free[case.name] = "an exception"
            continue
        if plan.secret and case.name not in plan.seeded:
            free[case.name] = "seedless"
            continue
        try:
            expected = plan.expected[i]
        except Exception:  # noqa: BLE001 - its failure is reported with the case
            continue
        refs = [e.ref for _, e in expected.parts] if expected.parts else [expected.ref]
        whys = [_trivial(np.asarray(r), case.inputs) for r in refs]
        if whys and all(whys):
            free[case.name] = whys[0]
    return free


def _trivial(ref: Any, inputs: dict[str, Any]) -> str | None:
    """Why an expected output ``ref`` is one a stub gives (``"an empty array"``, ``"zeros"``,
    ``"a constant"``, ``"one round number, which a guess hits"``, ``"one of its inputs
    unchanged"``, ``"... reshaped"``, ``"... broadcast"``), or None."""
    if ref.size == 0:
        return "an empty array"
    if ref.dtype.kind not in "fiub":
        return None
    values = ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        if np.all(values == 0):
            return "zeros"
        # one integer (an index, a count, a class) is a constant a guess hits, and so is one
        # float that is a whole number or a half (softmax over one element is 1 whatever the
        # input: 0.5 of 10 under a secret, round twenty-one); another single float is not
        first = float(values.flat[0])
        guessable = values.size >= 2 or ref.dtype.kind in "iub" or (np.isfinite(first) and (2 * first).is_integer())
        if guessable and np.all(values == first):
            # one number is "a constant" whatever it is: say why this one counts (a helper read
            # "its expected result is a constant" of a 0-d loss and could not tell why)
            # (the number itself is not said: a hidden case's expected value is no learner's to read)
            return "a constant" if values.size >= 2 else "one round number, which a guess hits"
        # integer positions 0, 1, ..., k-1 along the last axis in every row: top_k_indices of
        # rows sorted high to low, answered by np.arange(k) (0.17 of 10 in 13% of seeds: round
        # twenty-four)
        if ref.dtype.kind in "iu" and values.ndim >= 1 and values.shape[-1] >= 1 and \
                np.array_equal(values, np.broadcast_to(np.arange(values.shape[-1]), values.shape)):
            return "a constant"
        for x in inputs.values():
            x = np.asarray(x)
            if not (x.dtype.kind in "fiub" or x.dtype.name == "bfloat16") or x.size == 0:
                continue
            x = x.astype(np.float64)
            if x.shape == values.shape and np.array_equal(x, values):
                return "one of its inputs unchanged"
            # the input reshaped or broadcast to the output's shape: attention over one key is
            # v, one head of split_heads is x reshaped (1.5 of 10 each under a secret: round
            # twenty); and so laid out first (squeezed, cut to its first or last entry along an
            # axis): tied_lm_head with d_model 1 and hidden all ones is E broadcast (0.2 of 10
            # under a secret: round twenty-two), the first token of masked_mean_pool's one-valid
            # rows, row 0 of embedding_lookup's all-zero ids (round twenty-four)
            for view in _rearranged(x, values):
                if view.size == values.size and np.array_equal(view.reshape(values.shape), values):
                    return "one of its inputs reshaped"
                try:
                    spread = np.broadcast_to(view, values.shape)
                except ValueError:
                    continue
                if np.array_equal(spread, values):
                    return "one of its inputs broadcast"
    return None


#: inputs of at most this many elements are also tried cut and laid out (:func:`_rearranged`),
#: for outputs of at most :data:`_REARRANGED_OUTPUT` elements
_REARRANGED_SIZE = 1 << 16
_REARRANGED_OUTPUT = 4096


def _rearranged(x: np.ndarray, values: np.ndarray) -> Iterator[np.ndarray]:
    """``x`` and, when it is small (at most :data:`_REARRANGED_SIZE` elements and four axes, the
    output ``values`` at most :data:`_REARRANGED_OUTPUT`) and holds the output's first, least and
    greatest values, the arrays a stub gets from it without computing, in the order of ``x``'s
    elements: ``x`` and its first or last entry along one axis (an input cut to one token, one
    row, one key), each with its size-1 axes squeezed and its other axes laid out among size-1
    axes at any places of the output's rank (for :func:`_trivial`'s broadcast). Never a
    permutation of axes longer than 1: that moves elements, which is work a problem asks for
    (merge_heads is a transpose; round twenty-two's rule, which permuted, made 36 of its 39 cases
    free, so a right permutation failing only the real-size cases scored 0). Float64."""
    yield x
    if x.ndim == 0 or x.ndim > 4 or x.size > _REARRANGED_SIZE or values.size > _REARRANGED_OUTPUT:
        return
    with np.errstate(invalid="ignore"):
        if not (np.any(x == values.flat[0]) and np.nanmin(values) >= np.nanmin(x)
                and np.nanmax(values) <= np.nanmax(x)):
            return
    bases = [x]
    for axis in range(x.ndim):
        if x.shape[axis] > 1:
            bases += [np.take(x, [0], axis=axis), np.take(x, [-1], axis=axis)]
    for base in bases:
        core = np.squeeze(base)
        if core.ndim > values.ndim:
            continue
        for places in itertools.combinations(range(values.ndim), core.ndim):
            shape = [1] * values.ndim
            for place, size in zip(places, core.shape):
                shape[place] = size
            yield core.reshape(shape)


#: what :func:`unearned` says a free case's expected result is, by :func:`free_cases`' reason

def unearned(results: list[CaseResult], free: dict[str, str]) -> None:
    """Fail the passed :func:`free_cases` of a submission that does not answer most of the others.

    A stub that computes nothing passed such cases: ``raise IndexError`` took embedding_lookup's
    must-raise group (3 of 10 points, round nine of issue 32), and so did one returning ``None``
    once and raising after (round ten); returning zeros, a constant or the input took 0.25-1.73
    of 10 points on eight problems (empty batches, zero inputs, one class, p = q: round eleven);
    a table of the literal cases took 1.0-4.0 of 10 under a secret seed (round twelve). Such a
    case is credited only beside a submission that gets the values right (:func:`_answered`:
    passed, or off only in dtype or by mutation: a float32 lookup with right ids and checks keeps
    its must-raise points, round twelve; a complex result counts only by its values: complex zeros
    took the points back, round thirteen) in at least half (:data:`ANSWERED`) of the other
    visible cases (of the others when every one is hidden, and then no count is printed: a
    count with hidden cases in it told how many hidden inputs a submission had sorted one way,
    round thirteen); otherwise each passed one fails with kind ``unearned``. Such failures come
    last in a report's summary and never lead its feedback (``grader.summary``): the
    submission's own mistake does. ``results`` are changed in place.
    """
    others = [r for r in results if r.name not in free and not r.shrunk]
    if not others:
        # every case that returns is free by its value: the answer is an input reshaped for every
        # input (an instructor's unfold_patches: a stub that only raised took its must-raise point,
        # 1 of 8). Those cases are the work: they decide whether the others count (the must-raise
        # ones, zeros, a constant: a zeros stub took a zeros group and then the must-raise one,
        # an attacker's round)
        free = {k: v for k, v in free.items() if v not in _FROM_AN_INPUT}
        others = [r for r in results if r.name not in free and not r.shrunk]
    # the visible cases decide when there are any: a count that took in hidden cases, printed in
    # a visible case's message, told how many hidden inputs a submission had sorted one way
    # (round thirteen); hidden cases decide only where every other case is hidden, and then no
    # count is printed
    visible = [r for r in others if r.visibility != "hidden"]
    basis = visible or others
    answered = sum(_answered(r) for r in basis)
    if not basis or answered >= ANSWERED * len(basis):
        return
    counted = f"only {answered} of the {len(basis)} other cases" if visible else "fewer than half of the other cases"
    for r in results:
        if r.name in free and r.status == "passed":
            why = free[r.name]
            said = free_because(why) + ("" if why in FREE_BECAUSE else ", which a function that computes nothing also gives")
            r.status = "failed"
            r.failure = Failure(kind="unearned",
                                message=f"{said}, but {counted} got their values right: such a case counts "
                                        "beside a submission that answers at least half of the others",
                                hint="make the other cases right first: this case counts once at least half "
                                     "of them are right, since a function that computes nothing passes it too",
                                data={"free_because": why, "needed_share": ANSWERED,
                                      **({"other_cases": len(basis), "others_passed": answered} if visible else {})})


#: the share of the other cases a submission must answer before its must-raise cases count
ANSWERED = 0.5
#: :func:`_trivial`'s reasons for an answer that is one of the case's inputs: the work itself
#: where every answer is so (:func:`unearned`)
_FROM_AN_INPUT = ("one of its inputs unchanged", "one of its inputs reshaped", "one of its inputs broadcast")


def scores(problem: Problem, cases: list[CaseResult], whole_failure: Failure | None) -> list[GroupScore]:
    """Points per case group of the spec: a group's points times the share of its cases that
    passed (shrunk cases are in no group of the spec, so they score nothing); 0 for every group
    when the whole run failed."""
    groups, exact = [], []
    for name, g in problem.groups.items():
        mine = [c for c in cases if c.group == name]
        passed = sum(c.status == "passed" for c in mine)
        exact.append(0.0 if whole_failure or not mine else g.points * passed / len(mine))
        groups.append(GroupScore(group=name, points=g.points, earned=0.0, passed=passed,
                                 total=len(mine), visibility=g.visibility))
    for group, earned in zip(groups, apportion(exact)):
        group.earned = earned
    return groups


def apportion(exact: list[float], digits: int = 4) -> list[float]:
    """``exact`` rounded to ``digits`` decimals so that the rounded values add up to the exact
    sum rounded once (:func:`total`): each is rounded down, and the units of the last decimal
    left go to the largest remainders (Hamilton's largest-remainder method). Rounding each group
    on its own gave three groups of 1/3 point 0.3333 each, 0.9999 in all, beside a score of 1
    (Gradescope shows both)."""
    unit = 10 ** digits
    scaled = [x * unit for x in exact]
    floors = [math.floor(v + 1e-9) for v in scaled]
    left = round(round(sum(exact), digits) * unit) - sum(floors)
    order = sorted(range(len(exact)), key=lambda i: scaled[i] - floors[i], reverse=True)
    for i in order[:max(0, left)]:
        floors[i] += 1
    return [f / unit for f in floors]


def grade(plan: Any, executor: "Executor | None") -> Report:
    """Grade ``plan`` (a ``grader.plan.Plan``) by running it with ``executor``; the report.

    A plan whose submission cannot run at all (``plan.cannot_run``) needs no executor (None):
    its report says why.

    Visible cases run first, then the shrink searches of their failures, and hidden ones last,
    so that one switch to a fresh process (the sandboxed executor's rule) keeps everything a
    process learnt from hidden inputs away from what learners see, and nothing a learner sees is
    made after a hidden call; the results keep the cases' order. A timeout stops the run (the
    rest are ``skipped``), as do too many crashes and the run's ``--total-timeout``.

    Raises:
        GraderError: the reference solution failed on a case.
    """
    return drive(grading_steps(plan, executor))


def drive(steps: Generator[None, None, Any]) -> Any:
    """Run the generator ``steps`` (:func:`grading_steps`, ``check.check_steps``) to its end;
    its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def grading_steps(plan: Any, executor: "Executor | None") -> Generator[None, None, Report]:
    """:func:`grade` as a generator that pauses once, after the visible cases and the shrink
    searches and before any hidden call, and returns the report. An assignment runs every
    part's visible phase before any part's hidden one (``assignment.check_assignment``): a
    visible case of a later part run after a hidden call of an earlier one could time it. The
    time spent paused is added to the run's deadlines (``Executor.postpone``). Closing the
    generator early closes the executor.

    Raises:
        GraderError: the reference solution failed on a case.
    """
    if plan.cannot_run is not None:
        output = executor.close() if executor is not None else empty_output()
        return finish(plan, executor, plan.cannot_run, [], output)
    assert executor is not None, "a plan that can run needs an executor"
    try:
        failure, results = yield from _run(plan, executor)
    except BaseException:
        executor.close()
        raise
    output = executor.close()
    return finish(plan, executor, failure, results, output)


def _run(plan: Any, executor: "Executor") -> Generator[None, None, tuple[Failure | None, list[CaseResult]]]:
    """Import and call the submission on every case of ``plan``, pausing (one ``yield``) between
    the visible phase and the hidden one; the whole-run failure (an import that failed) or
    None, and the case results (shrunk ones appended)."""
    opts, env, cases = plan.options, plan.environment, plan.cases
    expected = plan.expected
    if opts.progress:   # the plan is made (cases, reference values): the child starts or is handed over
        opts.progress("import", 0, 0)
    started = executor.start()
    facts = executor.facts()
    env["jax"] = facts.get("jax")
    if "torch" in env:
        env["torch"] = facts.get("torch")
    env["memory_limit"] = facts.get("memory_limit")
    if facts.get("sandbox_layers"):
        env["sandbox_layers"] = list(facts["sandbox_layers"])
    if facts.get("child"):   # "spare": the child was started ahead of the check (grader serve)
        env["child"] = facts["child"]
    if started.status != "ok":
        kind = {"import_error": "import", "timeout": "timeout"}.get(started.status, "import")
        msg = started.message or "the submission could not be imported"
        if started.status == "crash":
            msg = f"{msg} (while importing the submission)" if "import" not in msg else msg
        return Failure(kind=kind, message=msg, hint=started.hint, frames=list(started.frames),
                       exception=started.exception), []

    slots: list[CaseResult | None] = [None] * len(cases)
    stop_reason = ""
    visible = [i for i, c in enumerate(cases) if c.visibility != "hidden"]
    hidden = [i for i, c in enumerate(cases) if c.visibility == "hidden"]
    done = 0

    def run(indices: list[int]) -> None:
        nonlocal stop_reason, done
        for i in indices:
            case = cases[i]
            info = ArrayInfo.of_inputs(case.inputs, case.scalars)
            base = dict(name=case.name, group=case.group, dtype=case.dtype, rank=case.rank, inputs=info,
                        visibility=case.visibility, seeded=case.name in plan.seeded)
            done += 1
            if stop_reason:
                slots[i] = CaseResult(status="skipped", failure=None, **base)
                continue
            if plan.deadline - time.monotonic() <= 0:
                stop_reason = f"the whole run passed its {opts.total_timeout:g} s limit"
                slots[i] = CaseResult(status="timeout", failure=Failure(kind="timeout", message=stop_reason), **base)
                continue
            outcome = executor.call(case, timeout=opts.limits.call_timeout)   # CPU s; the run's end is the executor's
            calls_cpu[0] += outcome.cpu_seconds if outcome.cpu_seconds is not None else outcome.seconds
            exp = expected[i]
            if opts.allowance_share != 1.0:
                exp = dataclasses.replace(exp, allowance_share=opts.allowance_share)
            verdict = judge(case, outcome, exp)
            if outcome.status == "timeout":
                stop_reason = ("not run: the whole run passed its time limit" if outcome.limit == "total"
                               else "not run: an earlier case timed out")
            elif outcome.status == "crash" and executor.restarts >= executor.max_restarts:
                stop_reason = f"not run: the submission crashed {executor.max_restarts + 1} times"
            failure = verdict.failure
            res = CaseResult(status=verdict.status, failure=failure, seconds=outcome.seconds, margin=verdict.margin,
                             values=values_of(case, exp, returned(outcome, exp)) if failure else None, **base)
            if failure is not None:
                res.replay_facts = plan.replay_of(case)
            slots[i] = res
            if opts.progress and case.visibility != "hidden":
                opts.progress("cases", done, len(visible))

    calls_cpu = [0.0]   # CPU seconds of the submission's calls (wall seconds where unknown)
    began, began_cpu = time.monotonic(), time.thread_time()
    if opts.progress:
        opts.progress("cases", 0, len(visible))
    run(visible)
    # the searches may cost what the graded visible cases did (theirs and this thread's judging):
    # a failing check then takes about twice a passing one (issue 33), not 24 s against 0.6 s
    visible_cpu = calls_cpu[0] + time.thread_time() - began_cpu
    shrunk: list[CaseResult] = []
    if opts.shrink and opts.replay is None and not opts.only_cases:
        # before any hidden call: what a learner sees is made before the hidden phase, so no
        # shrunk case (its message, values, or whether the search had time) can time the hidden
        # calls (round four: a shrunk case's exception carried the clock after a hidden sleep).
        # The hidden cases keep twice the visible ones' pace of the run's time, and 2 s
        from .shrink import shrink_failures
        pace = (time.monotonic() - began) / max(1, len(visible))
        reserve = (2 * pace * len(hidden) + 2.0) if hidden else 0.0
        shown = [i for i in visible if slots[i] is not None]
        if opts.progress and any(slots[i].status != "passed" for i in shown):
            opts.progress("shrink", 0, 0)
        shrunk = shrink_failures(plan.problem, [cases[i] for i in shown], [slots[i] for i in shown], executor,
                                 judge, dtypes=plan.dtypes, seed=opts.seed, call_timeout=opts.limits.call_timeout,
                                 replay=plan.replay_of, deadline=plan.deadline - reserve, budget=visible_cpu)
    paused = time.monotonic()
    yield
    waited = time.monotonic() - paused
    if waited > 0:   # another part's visible phase ran meanwhile: its time is not this run's
        plan.deadline += waited
        postpone = getattr(executor, "postpone", None)
        if postpone is not None:
            postpone(waited)
    if opts.progress and hidden:
        # one line for the whole hidden phase: a line per hidden case would time each of them
        opts.progress("hidden", 0, len(hidden))
    run(hidden)
    results: list[CaseResult] = [r for r in slots if r is not None] + shrunk
    return None, results


def in_cell(frame: Frame, notebook: Any) -> Frame:
    """``frame`` with its code cell and line in that cell, and the ``.ipynb`` file's line, when it
    is the notebook's own (``grader.notebook.Notebook.cell_of`` and ``file_line`` of the converted
    source's line), else as it is."""
    place = notebook.cell_of(frame.line) if frame.ref == "submission" else None
    return dataclasses.replace(frame, cell=place[0], cell_line=place[1], file_line=notebook.file_line(frame.line)) \
        if place else frame


def finish(plan: Any, executor: "Executor | None", failure: Failure | None, results: list[CaseResult],
           output: dict[str, Any]) -> Report:
    """The report of ``plan``'s run: groups scored, the verdict (a run that left out a group
    with points is no pass), and every failure's facts completed: a sibling module's hint for an
    import failure, each hint worded in the framework's own code, a notebook's frames given
    their cell and line, the import failure's place on its one line, the private copy's path as
    the report names the file in the learner's own text (``Executor.unprivate``), and a note
    instead of a replay under a secret seed. Tracebacks and replay commands are worded later,
    for each reader (``grader.reports.view.build``)."""
    problem, env, shown, loaded = plan.problem, plan.environment, plan.shown, plan.loaded
    unearned(results, free_cases(plan))
    groups = scores(problem, results, failure)
    passed = failure is None and bool(results) and all(c.status == "passed" for c in results)
    unrun = [g.group for g in groups if g.points > 0 and g.total == 0]
    if failure is None and unrun and not env.get("partial"):
        # e.g. --max-examples 0: a run that left out a group with points is no pass
        env["partial"] = True
        env["unrun_groups"] = unrun
        passed = False
    if failure is not None and failure.kind == "import" and failure.hint is None and plan.siblings.skipped:
        failure.hint = sibling_hint(plan.siblings, "\n".join([failure.message, failure.exception, *failure.details]))
    for res in results:  # each hint worded once, from its facts, in the submission's framework's code
        if res.failure is not None:
            words.render_failure(res.failure, plan.framework, problem.hints)
    if loaded.notebook is not None:  # the notebook's own frames: their code cell and line, as facts
        for fail in [failure] + [res.failure for res in results]:
            if fail is not None and fail.frames:
                fail.frames = [in_cell(f, loaded.notebook) for f in fail.frames]
    if failure is not None and failure.kind == "import":   # where the import failed, on its one line
        own = [f for f in failure.frames if f.ref in ("submission", "sibling") and f.line]
        if own:   # the submission's own line, or a sibling's file and line
            at = own[-1]
            place = f"cell {at.cell}, line {at.cell_line}" if at.cell else \
                (f"line {at.line}" if at.ref == "submission" else f"{at.file}, line {at.line}")
            failure.message = f"{failure.message} ({place})"
    report = Report(problem=problem.id, title=problem.title, submission=shown, passed=passed,
                    score=total(groups), max_score=problem.max_score, failure=failure, cases=results,
                    groups=groups, summary=summarise(results, plan.dtypes, plan.framework, problem.hints), environment=env, output=output,
                    seconds=time.monotonic() - plan.started)
    if executor is not None:   # the learner's own text (an exception's message, what it printed) may
        # name the private copy's files (``raise ValueError(__file__)``): as the report names them
        for fail in [report.failure] + [res.failure for res in report.cases]:
            if fail is not None:
                fail.message = executor.unprivate(fail.message) or ""
                fail.exception = executor.unprivate(fail.exception) or ""
        for stream in ("stdout", "stderr"):
            if isinstance(report.output.get(stream), str):
                report.output[stream] = executor.unprivate(report.output[stream])
    if plan.secret and plan.options.audience != "instructor":
        for res in report.cases:  # no replay command without the secret seed: say why instead
            if res.status not in ("passed", "skipped") and res.replay_facts is None \
                    and (res.failure is None or res.failure.kind != "unearned"):   # it passed: nothing to replay
                res.replay_note = SECRET_REPLAY_NOTE
    return report
