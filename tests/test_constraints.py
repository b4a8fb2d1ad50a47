"""Constraints on sizes and scalars, sets of sizes, per-dtype factors, a reference that raises
on a case, and validate's single-case warning (issue 35, items 3 and 5)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.cases import fixed_cases, generated_cases
from grader.errors import GraderError, SpecError
from grader.expected import expected_for
from grader.shrink import case_strategy
from grader.spec import load_problem
from grader.validate import MistakeResult, single_case_findings

SPEC = """\
id: heads
title: split heads
statement: split.
function:
  name: heads
  parameters:
    - {{name: x, shape: [T, D]}}
    - {{name: n_heads, scalar: int, values: [2, 3, 4, 5]}}
  returns: {{shape: [n_heads, T, "D // n_heads"], dtype: same_as_inputs}}
constraints: {constraints}
reference: {{module: heads}}
tolerance: {tolerance}
frameworks:
  numpy: {{dtypes: [float32, float64]}}
groups:
  values: {{points: 1}}
  generated: {{points: 1}}
cases: {cases}
generated: {{group: generated, count: 40, sizes: {{T: [1, 5], D: {{one_of: [2, 4, 6, 8, 12, 16, 32]}}}}}}
"""
REFERENCE = """\
import jax.numpy as jnp

def heads(x, n_heads):
    x = jnp.asarray(x)
    t, d = x.shape
    if d % n_heads:
        raise ValueError("n_heads must divide D")
    return x.reshape(t, n_heads, d // n_heads).transpose(1, 0, 2)
"""
CASES = '[{name: plain, group: values, sizes: {T: 3, D: 12}, args: {n_heads: 3}}]'


def make(tmp_path: Path, constraints: str = '["D % n_heads == 0"]', cases: str = CASES,
         tolerance: str = "{model: derived}") -> Path:
    (tmp_path / "reference").mkdir(exist_ok=True)
    (tmp_path / "reference" / "heads.py").write_text(REFERENCE)
    spec = tmp_path / "heads.yaml"
    spec.write_text(SPEC.format(constraints=constraints, cases=cases, tolerance=tolerance))
    return spec


def test_generated_cases_honour_the_constraints_and_the_set_of_sizes(tmp_path):
    problem = load_problem(make(tmp_path))
    cases = generated_cases(problem, ("float32", "float64"), 0, 40)
    assert len(cases) == 40
    for c in cases:
        d, h = c.sizes["D"], int(c.inputs["n_heads"])
        assert d in (2, 4, 6, 8, 12, 16, 32) and d % h == 0
    assert {int(c.inputs["n_heads"]) for c in cases} > {2}   # the constraint did not collapse the values
    assert len({c.sizes["D"] for c in cases}) > 2


def test_without_the_constraint_the_same_draws_break_it(tmp_path):
    """The check above can fail: with no constraint some generated case has n_heads not dividing D."""
    problem = load_problem(make(tmp_path, constraints="[]"))
    cases = generated_cases(problem, ("float32", "float64"), 0, 40)
    assert any(c.sizes["D"] % int(c.inputs["n_heads"]) for c in cases)


def test_the_hypothesis_strategy_honours_the_constraints(tmp_path):
    from hypothesis import HealthCheck, given, settings

    problem = load_problem(make(tmp_path))
    seen = []

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case_strategy(problem, "float32"))
    def run(case):
        seen.append((case.sizes["D"], int(case.inputs["n_heads"])))

    run()
    assert seen and all(d % h == 0 and d in (2, 4, 6, 8, 12, 16, 32) for d, h in seen)


def test_a_fixed_case_that_breaks_a_constraint_is_refused_unless_it_must_raise(tmp_path):
    bad = '[{name: odd, group: values, sizes: {T: 3, D: 10}, args: {n_heads: 4}}]'
    problem = load_problem(make(tmp_path, cases=bad))
    with pytest.raises(ValueError, match=r"case odd \(T=3, D=10, n_heads=4\) breaks the constraint 'D % n_heads == 0'"):
        fixed_cases(problem, ("float32",), 0)
    raising = '[{name: odd, group: values, sizes: {T: 3, D: 10}, args: {n_heads: 4}, raises: [ValueError]}]'
    assert len(fixed_cases(load_problem(make(tmp_path, cases=raising)), ("float32",), 0)) == 1


def test_a_reference_that_raises_on_a_case_is_reported_with_its_inputs(tmp_path):
    problem = load_problem(make(tmp_path, constraints="[]"))
    case = next(c for c in generated_cases(problem, ("float64",), 0, 40) if c.sizes["D"] % int(c.inputs["n_heads"]))
    with pytest.raises(GraderError) as info:
        expected_for(problem, case)
    text = str(info.value)
    assert f"on case {case.name}" in text and f"D={case.sizes['D']}" in text
    assert f"n_heads={int(case.inputs['n_heads'])}" in text and "ValueError" in text


@pytest.mark.parametrize("constraints, message", [
    ('["D % heads == 0"]', "'heads' is neither a size symbol nor an int scalar parameter"),
    ('["D % n_heads"]', "is not a comparison"),
    ('["__import__(\'os\') == 0"]', "Call is not"),
    ('["D.real == 1"]', "Attribute is not"),
])
def test_a_bad_constraint_is_one_line_naming_the_field(tmp_path, constraints, message):
    with pytest.raises(SpecError, match="constraints") as info:
        load_problem(make(tmp_path, constraints=constraints))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_per_dtype_factor_widens_only_that_dtypes_allowance(tmp_path):
    plain = load_problem(make(tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path))
    wide = load_problem(make(tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path,
                             tolerance="{model: derived, factors: {float64: 64}}"))
    cases = {c.dtype: c for c in fixed_cases(plain, ("float32", "float64"), 0)}
    for dtype, ratio in (("float32", 1.0), ("float64", 16.0)):
        a = expected_for(plain, cases[dtype]).scale
        b = expected_for(wide, cases[dtype]).scale
        assert np.allclose(b, a * ratio, rtol=0.05), (dtype, float(np.max(b / a)))


def test_validate_warns_of_a_mistake_caught_by_one_case_only():
    one = MistakeResult("a.py", "tolerance", kind="tolerance", caught_by=["tiny_gradients"])
    two = MistakeResult("b.py", "tolerance", kind="tolerance", caught_by=["tiny_gradients", "gen003"])
    found = single_case_findings([one, two])
    assert [f.data["file"] for f in found] == ["a.py"] and "tiny_gradients" in found[0].message


def test_a_python_int_is_a_declared_int64_result_and_a_float_is_not():
    from grader.cases import Case
    from grader.compare import Expected, compare
    from grader.results import CallOutcome

    case = Case(name="c[float32]", group="values", dtype="float32", inputs={"x": np.zeros(3, np.float32)},
                sizes={"n": 3})
    want = Expected(ref=np.asarray(3, dtype=np.int64), scale=None, n=0, model="exact", out_dtype="int64",
                    python_scalar=True)
    assert compare(case, CallOutcome(status="ok", result=np.asarray(3), result_type="int"), want) is None
    wrong_value = compare(case, CallOutcome(status="ok", result=np.asarray(4), result_type="int"), want)
    assert wrong_value is not None and wrong_value.kind == "tolerance"
    as_float = compare(case, CallOutcome(status="ok", result=np.asarray(3.0), result_type="float"), want)
    assert as_float is not None and as_float.kind == "dtype"
