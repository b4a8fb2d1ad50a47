"""The shrink search (grader.shrink) in process, with a stand-in for the submission's process:
it stops at the run's --total-timeout, and what it finds is no larger than the failing case."""
from __future__ import annotations

import dataclasses

import time
from pathlib import Path

import numpy as np

from grader import reference, shrink, spec
from grader.cases import generated_cases
from grader.grading import judge
from grader.options import CheckOptions
from grader.plan import replay_of
from grader.results import ArrayInfo, CaseResult, Failure
from grader.results import CallOutcome

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = spec.load_problem(ROOT / "problems" / "tied_lm_head.yaml")


class Offset:
    """A submission that adds 0.5 to every logit: every case fails with kind tolerance."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[float] = []

    def call(self, case, timeout=None):
        self.calls.append(time.monotonic())
        time.sleep(self.delay)
        h = case.inputs["hidden"].astype(np.float64)
        e = case.inputs["embedding_matrix"].astype(np.float64)
        return CallOutcome(status="ok", result=(h @ e.T + 0.5).astype(case.dtype), seconds=self.delay)


def failing_generated(dtype="float32"):
    cases = generated_cases(PROBLEM, (dtype,), 0, 4)
    results = [CaseResult(name=c.name, group=c.group, status="failed", dtype=c.dtype, rank=c.rank,
                          inputs={k: ArrayInfo(shape=tuple(v.shape), dtype=v.dtype.name) for k, v in c.inputs.items()},
                          failure=Failure(kind="tolerance", message="off")) for c in cases]
    return cases, results


class _Clock:
    """A virtual ``time`` module for shrink: time passes only in the submission's calls, so the
    test does not depend on how busy the machine is (it failed at load 4 with a real clock)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def thread_time(self) -> float:   # the search's CPU budget: on the same virtual clock
        return self.now


def test_the_search_stops_at_the_runs_deadline(monkeypatch):
    cases, results = failing_generated()
    clock = _Clock()
    monkeypatch.setattr(shrink, "time", clock)

    class Slow(Offset):
        def call(self, case, timeout=None):
            started = clock.now
            clock.now += 0.2                     # each call takes 0.2 s of the run's time
            out = super().call(case, timeout)
            self.calls[-1] = started
            return out

    sub = Slow()
    deadline = clock.now + 2.0
    shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",), deadline=deadline)
    assert sub.calls, "the search ran"
    assert max(sub.calls) <= deadline  # no call of the submission is started after the deadline
    assert len(sub.calls) <= 11


def test_a_long_search_says_how_to_skip_it(monkeypatch):
    """A learner waited 28.8 s for a search and was not told of --no-shrink: a search of
    LONG_SEARCH seconds or more says how to skip it; a short one does not."""
    for per_call, said in ((2.0, True), (0.0, False)):
        cases, results = failing_generated()
        clock = _Clock()
        monkeypatch.setattr(shrink, "time", clock)

        class Slow(Offset):
            def call(self, case, timeout=None):
                clock.now += per_call
                return super().call(case, timeout)

        out = shrink.shrink_failures(PROBLEM, cases, results, Slow(), judge, dtypes=("float32",), budget=100.0)
        line = out[0].failure.details[0]
        assert "found and shrunk by hypothesis" in line
        assert ("--no-shrink, or shrink=False in check(), skips the search" in line) is said, line


def test_no_search_when_the_run_has_no_time_left():
    cases, results = failing_generated()
    sub = Offset()
    out = shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",),
                                 deadline=time.monotonic() - 1)
    assert out == [] and sub.calls == []


def test_what_the_search_finds_fails_the_same_way_and_is_no_larger():
    cases, results = failing_generated()
    replay = lambda case: replay_of(CheckOptions(), PROBLEM, case, "sub.py")  # noqa: E731
    out = shrink.shrink_failures(PROBLEM, cases, results, Offset(), judge, dtypes=("float32",), replay=replay)
    assert out, "an offset of 0.5 fails on any input: the search finds one"
    found = out[0]
    assert found.shrunk and found.failure.kind == "tolerance"
    original = next(c for c in cases if found.name == f"shrunk:{c.name}")
    assert sum(np.prod(i.shape) for i in found.inputs.values()) <= original.size * len(original.inputs)
    assert found.replay_facts.literal is not None and "--replay" in found.replay_facts.words()


def test_calls_that_crash_or_block_cannot_keep_a_search_going(monkeypatch):
    """A submission that fails tolerance on the graded case but crashes on other inputs (little
    CPU per call, a restart each time) ends its search at the budget, not after SEARCH_EXAMPLES
    calls: a call whose CPU time is unknown counts its wall-clock seconds, and a wall-clock
    ceiling bounds calls that block. On a virtual clock (time passes only in the calls)."""
    cases, results = failing_generated()
    clock = _Clock()
    clock.thread_time = lambda: 0.0        # the grader's thread uses no CPU here: only the calls cost
    monkeypatch.setattr(shrink, "time", clock)

    class Crashes(Offset):
        def call(self, case, timeout=None):
            self.calls.append(clock.now)
            clock.now += 1.0
            return CallOutcome(status="crash", message="killed by SIGSEGV", seconds=1.0)

    sub = Crashes()
    shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",))
    # two searches at most (MAX_SHRINKS), each ending once 8 s of calls are spent
    assert 0 < len(sub.calls) <= 2 * (shrink.SHRINK_BUDGET + 1), len(sub.calls)

    class Blocks(Offset):
        def call(self, case, timeout=None):
            self.calls.append(clock.now)
            clock.now += 10.0                      # waits 10 s of wall clock, using no CPU
            return CallOutcome(status="timeout", message="blocked", limit="wall", seconds=10.0, cpu_seconds=0.0)

    sub = Blocks()
    shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",))
    ceiling = shrink.WALL_FACTOR * shrink.SHRINK_BUDGET + shrink.WALL_MARGIN
    assert 0 < len(sub.calls) <= 2 * (ceiling / 10 + 1), len(sub.calls)


def test_the_searches_of_a_check_share_what_its_graded_cases_cost(monkeypatch):
    """With ``budget`` (the graded visible cases' CPU seconds), the searches of one check spend
    that, at least MIN_BUDGET, in all: a failing check takes about twice a passing one, not the
    8 s a search of old (24 s against 0.6 s on the exercise page). Each call here costs 1 s
    of CPU, on a virtual clock."""
    cases, results = failing_generated()
    clock = _Clock()
    clock.thread_time = lambda: 0.0
    monkeypatch.setattr(shrink, "time", clock)

    class Costs(Offset):
        def call(self, case, timeout=None):
            clock.now += 1.0
            out = super().call(case, timeout)       # records the call
            return dataclasses.replace(out, cpu_seconds=1.0)

    spent = {}
    for budget in (None, 0.2, 4.0):
        sub = Costs()
        out = shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",), budget=budget)
        spent[budget] = 1.0 * len(sub.calls)
        if budget is not None:
            assert out, "the smallest failing input found within the budget is reported"
    # one search here (one failing generated case of one kind and dtype): its share is the budget
    # (a search may start one call before its share is spent)
    assert spent[0.2] <= shrink.MIN_BUDGET + 1.0, spent
    assert spent[4.0] <= 4.0 + 1.0, spent
    assert spent[None] > 4.0 + 1.0, spent      # the old per-search budget (SHRINK_BUDGET) is larger


def test_one_search_per_failure_kind_not_per_dtype():
    """A failure of one kind in two dtypes is searched once (a newcomer's slow function, wrong
    in float32 and float64 alike, paid a second search of 14 s that found the same boundary);
    another kind is searched too, and a (kind, dtype) a small fixed case shows is not."""
    c32, r32 = failing_generated("float32")
    c64, r64 = failing_generated("float64")
    targets = shrink._targets(c32 + c64, r32 + r64)
    assert [(c.dtype, r.failure.kind) for c, r in targets] == [("float32", "tolerance")]
    r64 = [dataclasses.replace(r, failure=Failure(kind="shape", message="off")) for r in r64]
    targets = shrink._targets(c32 + c64, r32 + r64)
    assert [(c.dtype, r.failure.kind) for c, r in targets] == [("float32", "tolerance"), ("float64", "shape")]
