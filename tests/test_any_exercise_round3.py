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

from grader.cases import case_strategy, fixed_cases, generated_cases
from grader.errors import SpecError
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


def test_a_cycle_through_an_array_is_a_spec_error_and_exits_2(tmp_path):
    """labels in [0, k) and k in [0, ndim(labels)): each needs the other first."""
    spec = one_hot_spec(tmp_path, "[0, num_classes)", 'domain: "[1, ndim(labels)]"')
    with pytest.raises(SpecError, match=r"cycle \((labels -> num_classes -> labels|num_classes -> labels -> "
                                        r"num_classes)\)"):
        load_problem(spec)
    run = subprocess.run([sys.executable, "-m", "grader", "validate", str(spec)], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert "cycle" in run.stdout
