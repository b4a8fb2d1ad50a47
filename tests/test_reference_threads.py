"""The reference values of a plan are computed in several threads (``grader.plan.References``):
each case's values depend on that case alone, so they are the same, bit for bit, with one
thread or several, in every graded dtype (the derived allowance computed op by op included)."""
from __future__ import annotations

import numpy as np

from grader import plan
from grader.cases import fixed_cases
from grader.spec import find_problem, load_problem


def _values(monkeypatch, threads: int, problem, cases):
    monkeypatch.setattr(plan, "reference_threads", lambda: threads)
    refs = plan.References(problem, cases)
    try:
        out = [refs[i] for i in range(len(cases))]
    finally:
        refs.close()
    return [(e.ref, e.scale) for e in out]


def test_reference_values_do_not_depend_on_the_thread_count(monkeypatch):
    problem = load_problem(find_problem("cross_entropy"))   # derived allowances, op by op in each dtype
    cases = fixed_cases(problem, ("float16", "float32", "float64"), 0)[:12]
    one = _values(monkeypatch, 1, problem, cases)
    three = _values(monkeypatch, 3, problem, cases)
    assert len(one) == len(three) == len(cases)
    for (ref1, scale1), (ref3, scale3) in zip(one, three):
        assert np.asarray(ref1).tobytes() == np.asarray(ref3).tobytes()
        assert (scale1 is None) == (scale3 is None)
        if scale1 is not None:
            assert np.asarray(scale1).tobytes() == np.asarray(scale3).tobytes()


def test_the_thread_count_is_the_cores_at_most_four(monkeypatch):
    import os
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert plan.reference_threads() == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert plan.reference_threads() == 1


def test_a_signature_jax_cannot_compile_leaves_the_others_compiled():
    """``reference.run`` runs a call op by op when JAX cannot compile it, for that signature only:
    whether a case ran compiled never depends on which cases ran before it (in another thread)."""
    import jax

    from grader import reference

    seen: list[str] = []

    def fn(x):
        seen.append("traced" if isinstance(x, jax.core.Tracer) else "eager")
        if x.shape[0] > 2 and float(x.sum()) > 0:   # a value in Python control flow: no jit for this shape
            return x * 2
        return x + 1

    with reference.x64(reference._jax()):
        assert np.asarray(reference.run(fn, [np.ones(3)], {})).tolist() == [2.0, 2.0, 2.0]
        assert seen == ["traced", "eager"]
        seen.clear()
        assert np.asarray(reference.run(fn, [np.ones(2)], {})).tolist() == [2.0, 2.0]
        assert seen == ["traced"]                     # another signature is still compiled
        seen.clear()
        reference.run(fn, [np.ones(3)], {})
        assert seen == ["eager"]                      # the failing one is not traced again
