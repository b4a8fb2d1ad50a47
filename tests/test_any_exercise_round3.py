"""Issue 35, what a fresh instructor's trial left open: domains bounded by an int scalar
parameter (drawn in dependency order), value hints with infinities in the output, both integer
widths of ``dtype: [int64, int32]`` graded, literal expected values of several outputs, and a
returns.shape that drops an axis given by a parameter."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.cases import fixed_cases, generated_cases
from grader.errors import SpecError
from grader.shrink import case_strategy
from grader.spec import load_problem

ONE_HOT = """\
id: one_hot
title: one-hot
statement: one-hot rows.
function:
  name: one_hot
  parameters:
    - {{name: labels, shape: ["..."], dtype: int64, domain: "{domain}"}}
    - {{name: num_classes, scalar: int, {scalar}}}
  returns: {{shape: ["...", num_classes], dtype: float32}}
reference: {{module: one_hot}}
frameworks:
  numpy: {{dtypes: [float32]}}
groups:
  values: {{points: 1}}
  generated: {{points: 1}}
cases:
  - {{name: plain, group: values, sizes: {{"...": [6]}}, args: {{num_classes: 3}}}}
  - {{name: drawn, group: values, sizes: {{"...": [2, 5]}}}}
generated: {{group: generated, count: 12, leading_axes: [1, 2], sizes: {{"...": [1, 9]}}}}
"""
ONE_HOT_REF = """\
import jax.numpy as jnp

def one_hot(labels, num_classes):
    return (jnp.asarray(labels)[..., None] == jnp.arange(num_classes)).astype(jnp.float32)
"""


def one_hot_spec(tmp_path: Path, domain: str = "[0, num_classes)",
                 scalar: str = 'domain: "[1, 40]"') -> Path:
    (tmp_path / "reference").mkdir(exist_ok=True)
    (tmp_path / "reference" / "one_hot.py").write_text(ONE_HOT_REF)
    spec = tmp_path / "one_hot.yaml"
    spec.write_text(ONE_HOT.format(domain=domain, scalar=scalar))
    return spec


# -- 1. a domain bounded by an int scalar parameter ---------------------------------------------

def test_labels_bounded_by_a_scalar_parameter_are_drawn_after_it(tmp_path):
    """labels in [0, num_classes) with num_classes an int scalar: every case (fixed, generated,
    the shrink search's) draws num_classes first and every label lies below it."""
    problem = load_problem(one_hot_spec(tmp_path))
    assert problem.draw_order == ("num_classes", "labels")
    cases = fixed_cases(problem, ("float32",), 0) + generated_cases(problem, ("float32",), 0, 12)
    assert len(cases) == 14
    seen = set()
    for case in cases:
        k = int(case.inputs["num_classes"])
        labels = case.inputs["labels"]
        assert labels.dtype == np.int64 and labels.min() >= 0 and labels.max() < k, case.name
        seen.add(k)
    assert int(cases[0].inputs["num_classes"]) == 3 and len(seen) > 3   # args given, else drawn
    from hypothesis import given, settings

    @settings(max_examples=10, deadline=None, database=None)
    @given(case_strategy(problem, "float32"))
    def labels_below(case):
        assert case.inputs["labels"].max(initial=-1) < int(case.inputs["num_classes"])

    labels_below()


def test_a_scalar_bounded_by_another_scalar_and_an_array_by_both(tmp_path):
    """A chain: k in [1, n], labels in [0, k); n drawn first, then k, then labels."""
    text = ONE_HOT.replace("- {{name: num_classes, scalar: int, {scalar}}}",
                           "- {{name: num_classes, scalar: int, {scalar}}}\n    - {{name: n, scalar: int, "
                           "domain: \"[2, 30]\", default: 7}}")
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "one_hot.py").write_text(ONE_HOT_REF.replace("num_classes)", "num_classes, n=7)"))
    spec = tmp_path / "one_hot.yaml"
    spec.write_text(text.format(domain="[0, num_classes)", scalar='domain: "[1, n]"'))
    problem = load_problem(spec)
    assert problem.draw_order == ("n", "num_classes", "labels")
    for case in generated_cases(problem, ("float32",), 1, 12):
        n = int(case.inputs["n"]) if "n" in case.inputs else 7   # optional: every other case leaves it out
        k = int(case.inputs["num_classes"])
        assert 1 <= k <= n and case.inputs["labels"].max() < k


@pytest.mark.parametrize("domain, scalar, field, words", [
    ("[0, num_classes)", 'domain: "[1, num_classes]"', "function.parameters[1].domain",
     "the domains refer to each other in a cycle (num_classes -> num_classes)"),
    ("[0, nclasses)", 'domain: "[1, 40]"', "function.parameters[0].domain",
     "bound 'nclasses' is neither an integer, a size symbol (none), an int scalar parameter (num_classes)"),
])
def test_a_cycle_or_an_unknown_name_is_one_spec_error(tmp_path, domain, scalar, field, words):
    with pytest.raises(SpecError) as err:
        load_problem(one_hot_spec(tmp_path, domain, scalar))
    assert f"{field}: " in str(err.value) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_a_cycle_through_an_array_is_one_line_never_a_traceback(tmp_path):
    """labels in [0, k) and k in [0, ndim(labels)): each needs the other first. ``grader check``
    exits 2 with the spec's file and field; ``grader validate`` calls the problem invalid (1)."""
    spec = one_hot_spec(tmp_path, "[0, num_classes)", 'domain: "[1, ndim(labels)]"')
    with pytest.raises(SpecError, match=r"cycle \((labels -> num_classes -> labels|num_classes -> labels -> "
                                        r"num_classes)\)"):
        load_problem(spec)
    run = subprocess.run([sys.executable, "-m", "grader", "validate", str(spec)], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert "one_hot.yaml:7: function.parameters[0].domain: the domains refer to each other in a cycle" in run.stdout
    sub = tmp_path / "sub.py"
    sub.write_text("import numpy as np\n\ndef one_hot(labels, num_classes):\n    return None\n")
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(sub), "--problem", "one_hot",
                          "--problems-dir", str(tmp_path), "--sandbox", "none"], capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stdout + run.stderr, run.stderr
    assert "function.parameters[0].domain: the domains refer to each other in a cycle" in run.stderr


# -- 2. infinities in the output ----------------------------------------------------------------

def _masked_logits() -> np.ndarray:
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(6, 8)) * 3
    ref[:, 5:] = -np.inf      # masked positions
    ref[0, 1] = -np.inf
    return ref


def _assess(got: np.ndarray, ref: np.ndarray, model: str = "derived"):
    from grader.cases import Case
    from grader.compare import Expected, assess
    from grader.results import CallOutcome

    case = Case(name="masked[float32]", group="values", dtype="float32",
                inputs={"x": np.where(np.isfinite(ref), ref, -1e30).astype(np.float32)},
                sizes={})
    finite = np.where(np.isfinite(ref), np.abs(ref), 0.0)
    # derived: the scale is the allowance itself; sum_of_products: S = |ref|
    scale = 1e-6 * (1 + finite) if model == "derived" else finite
    return assess(case, CallOutcome(status="ok", result=np.asarray(got, dtype=np.float32)),
                  Expected(ref=ref, scale=scale, n=1, model=model, out_dtype="float32"))


@pytest.mark.parametrize("how, hint_id", [(lambda r: 2 * r, "scaled"), (lambda r: r + 0.5, "shifted"),
                                          (lambda r: r + np.arange(6.0)[:, None], "row_shifted")])
def test_value_hints_fire_when_the_output_has_matching_infinities(how, hint_id):
    """Masked logits: -inf where the reference has -inf (right), a wrong factor or offset
    elsewhere: the hint names it (it never fired: every hint gave up on a non-finite output)."""
    ref = _masked_logits()
    failure, margin = _assess(how(ref), ref)
    assert failure is not None and failure.kind == "tolerance"
    assert failure.data.get("hint_id") == hint_id, failure.hint
    assert "non_finite_expected" not in failure.data and margin > 1


def test_a_prediction_must_keep_the_infinities_too():
    """-2 x the right answer turns -inf into +inf: not a constant factor's work where the
    output kept -inf; no hint rather than a wrong one."""
    ref = _masked_logits()
    got = np.where(np.isfinite(ref), -2 * ref, ref)
    failure, _ = _assess(got, ref)
    assert failure is not None and failure.data.get("hint_id") != "scaled"


@pytest.mark.parametrize("model", ["derived", "sum_of_products"])
@pytest.mark.parametrize("wrong", [0.0, np.inf, np.nan])
def test_a_missed_infinity_fails_with_a_clear_message(model, wrong):
    """A finite value (or +inf, or NaN) where the exact result is -inf fails in every model
    (sum_of_products allowed u|ref| = inf there and passed 0.0), and the message says so."""
    ref = _masked_logits()
    got = ref.copy()
    got[2, 6] = wrong
    failure, margin = _assess(got, ref, model)
    assert failure is not None and failure.kind == "tolerance", failure
    assert failure.message == "1 / 48 elements (2.1%) are not the -inf the exact result has there"
    assert failure.details[0].startswith("1 of them where the expected value is -inf, which only the same value "
                                         "matches: first at index (2, 6): got ")
    assert failure.data["non_finite_expected"] == 1 and margin == float("inf")
    right, margin = _assess(ref, ref, model)   # matching infinities are equal
    assert right is None and margin < 1


# -- 3. both integer widths ----------------------------------------------------------------------

def _widths_spec(tmp_path: Path, cases: int, count: int) -> Path:
    spec = one_hot_spec(tmp_path)
    text = spec.read_text().replace("dtype: int64, domain", "dtype: [int64, int32], domain")
    head, _, _ = text.partition("cases:\n")
    rows = "".join(f"  - {{name: c{i}, group: values, sizes: {{\"...\": [4]}}, args: {{num_classes: 3}}}}\n"
                   for i in range(cases))
    spec.write_text(head + "cases:\n" + rows
                    + f"generated: {{group: generated, count: {count}, leading_axes: [1, 1], sizes: {{\"...\": [1, 5]}}}}\n")
    return spec


def test_both_widths_are_graded_with_one_graded_dtype(tmp_path):
    """frameworks.numpy.dtypes: [float32] and labels [int64, int32]: the fixed cases alternate the
    widths (before, every fixed case of the one dtype took int64)."""
    problem = load_problem(_widths_spec(tmp_path, cases=2, count=0))
    assert [c.inputs["labels"].dtype.name for c in fixed_cases(problem, ("float32",), 0)] == ["int64", "int32"]
    # with two graded dtypes each case is graded in both widths
    two = fixed_cases(problem, ("float32", "float64"), 0)
    assert [(c.name, c.inputs["labels"].dtype.name) for c in two] == [
        ("c0[float32]", "int64"), ("c0[float64]", "int32"), ("c1[float32]", "int32"), ("c1[float64]", "int64")]


def test_validate_warns_when_a_width_is_never_graded(tmp_path):
    from grader.validate import plan_cases, width_findings

    problem = load_problem(_widths_spec(tmp_path, cases=1, count=1))
    found = width_findings(problem, plan_cases(problem))
    assert [f.message for f in found] == [
        "labels is declared as int64, int32 but numpy's cases grade only int64: int32 is never tested there "
        "(add a fixed case or generated cases: the widths are cycled over both)"]
    (tmp_path / "two").mkdir()
    problem = load_problem(_widths_spec(tmp_path / "two", cases=1, count=2))   # a generated case of each width
    assert width_findings(problem, plan_cases(problem)) == []


# -- 5. literal expected values of several outputs --------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _adam(tmp_path: Path, expected: str) -> Path:
    (tmp_path / "reference").mkdir(exist_ok=True)
    (tmp_path / "reference" / "adam_step.py").write_text((ROOT / "reference" / "adam_step.py").read_text())
    text = (ROOT / "problems" / "adam_step.yaml").read_text()
    start = text.index("    expected: {param:")
    end = text.index("\n", start)
    spec = tmp_path / "adam_step.yaml"
    spec.write_text(text[:start] + f"    expected: {expected}" + text[end:])
    return spec


def test_several_outputs_take_a_literal_per_output(tmp_path):
    """The bundled worked example gives each output's literal; the reference reproduces them in
    every dtype, and a stale one is named with its output."""
    from grader import validate
    from grader.expected import expected_for

    problem = load_problem(ROOT / "problems" / "adam_step.yaml")
    entries = validate.plan_cases(problem).entries
    stale, checked = validate.check_literals(problem, entries)
    assert stale == [] and checked == ["worked_example"]
    case = next(c for c in fixed_cases(problem, ("float32",), 0) if c.name == "worked_example[float32]")
    assert expected_for(problem, case).parts[1][1].ref.tolist() == pytest.approx([0.05])

    problem = load_problem(_adam(tmp_path, "{m: [0.05], v: [0.0003]}"))   # param left out, v stale
    stale, _ = validate.check_literals(problem, validate.plan_cases(problem).entries)
    assert len(stale) == 1
    assert stale[0].message.startswith("stale expected value in case worked_example output v (float32, float64): "
                                       "1 of 1 elements; worst at index (0,): spec 0.0003, reference 0.00025")
    assert stale[0].data["output"] == "v"


@pytest.mark.parametrize("expected, message", [
    ("{m: [0.05], w: [1.0]}", "cases[0].expected.w: unknown output; outputs: param, m, v"),
    ("[0.9]", "cases[0].expected: with several outputs, give a mapping of output names to literals (param, m, v)"),
    ("{m: [0.05], v: {a: 1}}", "cases[0].expected"),
])
def test_a_bad_literal_of_several_outputs_is_one_spec_error(tmp_path, expected, message):
    with pytest.raises(SpecError) as err:
        load_problem(_adam(tmp_path, expected))
    assert message in str(err.value) and "\n" not in str(err.value)


# -- 6. a result without the axis a parameter names -----------------------------------------

SUM_ALONG = """\
id: sum_along
title: sum along an axis
statement: sum x along axis.
function:
  name: sum_along
  parameters:
    - {{name: x, shape: ["...", n]}}
    - {{name: axis, scalar: int, default: -1, domain: "[-ndim(x), ndim(x))"}}
  returns: {{shape: {shape}, dtype: same_as_inputs}}
reference: {{module: sum_along}}
frameworks:
  numpy: {{dtypes: [float32, float64]}}
groups:
  values: {{points: 1}}
  generated: {{points: 1}}
cases:
  - {{name: default_axis, group: values, sizes: {{"...": [2, 3], n: 4}}}}
  - {{name: axis_0, group: values, sizes: {{"...": [2, 3], n: 4}}, args: {{axis: 0}}}}
generated: {{group: generated, count: 8, leading_axes: [0, 3], sizes: {{"...": [1, 5], n: [1, 6]}}, optional: always}}
"""


def _sum_along(tmp_path: Path, shape: str = "{of: x, without_axis: axis}", keepdims: bool = False) -> Path:
    (tmp_path / "reference").mkdir(exist_ok=True)
    (tmp_path / "reference" / "sum_along.py").write_text(
        "import jax.numpy as jnp\n\ndef sum_along(x, axis=-1):\n"
        f"    return jnp.sum(jnp.asarray(x), axis=axis, keepdims={keepdims})\n")
    spec = tmp_path / "sum_along.yaml"
    spec.write_text(SUM_ALONG.format(shape=shape))
    return spec


def test_returns_shape_without_the_axis_a_parameter_names(tmp_path):
    """``shape: {of: x, without_axis: axis}``: x's shape with the axis removed, checked against
    the reference on every case (the default axis where a case leaves it out)."""
    from grader.expected import declared_shape, expected_for

    problem = load_problem(_sum_along(tmp_path))
    cases = fixed_cases(problem, ("float64",), 0) + generated_cases(problem, ("float64",), 0, 8)
    axes = set()
    for case in cases:
        ref = expected_for(problem, case).ref   # check_shape passes on every case
        want = declared_shape(problem.returns_shape, problem, case)
        assert want == ref.shape, case.name
        axes.add(int(case.inputs.get("axis", -1)))
    assert declared_shape(problem.returns_shape, problem, cases[0]) == (2, 3)   # axis left out: -1
    assert declared_shape(problem.returns_shape, problem, cases[1]) == (3, 4)
    assert len(axes) >= 3
    from grader.web.problems import shape_text
    assert shape_text(problem.returns_shape) == "{of: x, without_axis: axis}"   # as the page shows it


def test_a_reference_that_keeps_the_axis_is_named(tmp_path):
    from grader.errors import GraderError
    from grader.expected import expected_for

    problem = load_problem(_sum_along(tmp_path, keepdims=True))
    with pytest.raises(GraderError, match=r"case default_axis\[float64\] \(n=4, axis=-1\): the reference's output has "
                                          r"shape \(2, 3, 1\) where returns.shape \{of: x, without_axis: axis\} "
                                          r"gives \(2, 3\)"):
        expected_for(problem, fixed_cases(problem, ("float64",), 0)[0])


@pytest.mark.parametrize("shape, message", [
    ("{of: y, without_axis: axis}", "function.returns.shape.of: 'y' is not an array parameter; array parameters: x"),
    ("{of: x, without_axis: ax}", "function.returns.shape.without_axis: 'ax' is not an int scalar parameter"),
    ("{of: x}", "function.returns.shape"),
])
def test_a_bad_without_axis_shape_is_one_spec_error(tmp_path, shape, message):
    with pytest.raises(SpecError) as err:
        load_problem(_sum_along(tmp_path, shape))
    assert message in str(err.value) and "\n" not in str(err.value)
