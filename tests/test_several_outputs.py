"""Functions with several named outputs, output shapes computed from sizes, and the child's
tuples (issue 35, items 1 and 2)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.cases import fixed_cases
from grader.errors import GraderError, SpecError
from grader.expected import expected_for, pack_outputs, unpack_outputs
from grader.results import CallOutcome
from grader.grading import judge
from grader.spec import load_problem
from grader.spec_expr import SizeExprError, eval_size, size_expr
from tests.conftest import grade_function_in_process, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

SPEC = """\
id: tail_and_total
title: the last n - k + 1 entries doubled, and the row sums
statement: |
  Write `tail_and_total(x, k)`: `(2 * x[..., k - 1:], x.sum(-1))`.
function:
  name: tail_and_total
  parameters:
    - {{name: x, shape: ["...", n]}}
    - {{name: k, scalar: int, domain: "[1, n]"}}
  returns:
    as: {kind}
    outputs:
      - {{name: tail, shape: ["...", "n - k + 1"], dtype: same_as_inputs, tolerance: {{model: exact}}}}
      - {{name: total, shape: ["..."], dtype: same_as_inputs}}
reference: {{module: tail_and_total}}
frameworks:
  numpy: {{dtypes: [float32, float64]}}
groups:
  values: {{points: 1}}
  generated: {{points: 1}}
cases:
  - {{name: plain, group: values, sizes: {{"...": [3], n: 6}}, args: {{k: 2}}}}
  - {{name: whole, group: values, sizes: {{"...": [2, 2], n: 5}}, args: {{k: 1}}}}
generated: {{group: generated, count: 4, sizes: {{"...": [1, 4], n: [1, 9]}}}}
"""

REFERENCE = """\
import jax.numpy as jnp

def tail_and_total(x, k):
    x = jnp.asarray(x)
    return {ret}
"""


def make(tmp_path: Path, kind: str = "tuple", ret: str = "2 * x[..., k - 1:], x.sum(-1)") -> Path:
    return _problem_folder(tmp_path, "tail_and_total", SPEC.format(kind=kind), REFERENCE.format(ret=ret))


def grade(tmp_path: Path, folder: Path, body: str) -> dict:
    code, report = _graded(tmp_path, folder, "tail_and_total", "sub.py", "import numpy as np\n\n"
                           "def tail_and_total(x, k):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    assert code == (0 if report["passed"] else 1)
    return report


def failures(report: dict) -> list[dict]:
    return [c["failure"] for c in report["cases"] if c["failure"]]


def _problem_folder(tmp_path: Path, pid: str, spec: str, reference: str) -> Path:
    """A problems folder holding ``pid``'s ``spec`` and its reference module's source."""
    folder = tmp_path / "probs"
    (folder / "reference").mkdir(parents=True)
    (folder / f"{pid}.yaml").write_text(spec)
    (folder / "reference" / f"{pid}.py").write_text(reference)
    return folder


def _graded(tmp_path: Path, folder: Path, pid: str, name: str, source: str) -> tuple[int, dict]:
    """``source`` saved as ``name`` and graded in process against ``pid`` of ``folder``, no shrinking."""
    sub = tmp_path / name
    sub.write_text(source)
    return grade_function_in_process(sub, "--problem", pid, "--problems-dir", str(folder), "--no-shrink")


def test_a_right_tuple_passes_and_each_output_is_judged(tmp_path):
    folder = make(tmp_path)
    report = grade(tmp_path, folder, "return 2 * x[..., k - 1:], x.sum(-1)")
    assert report["passed"], failures(report)[:2]
    assert all(c["margin"] is not None for c in report["cases"])   # the float output's margin


def test_one_wrong_output_is_named_and_the_others_are_said_to_be_right(tmp_path):
    folder = make(tmp_path)
    report = grade(tmp_path, folder, "return 2 * x[..., k - 1:], x.sum(-1) + 1")
    fails = failures(report)
    assert fails and all(f["kind"] == "tolerance" for f in fails)
    first = fails[0]
    assert first["message"].startswith("total: ")
    assert "tail is right" in first["details"][0]
    assert first["data"]["output"] == "total"
    assert first["data"]["outputs"]["tail"]["kind"] is None
    assert first["data"]["outputs"]["total"]["kind"] == "tolerance"


def test_a_result_that_is_not_the_declared_tuple_is_a_type_failure(tmp_path):
    folder = make(tmp_path)
    one = failures(grade(tmp_path, folder, "return x.sum(-1)"))
    assert one and {f["kind"] for f in one} == {"type"}
    assert "one array" in one[0]["message"] and "tail, total" in one[0]["message"]
    three = failures(grade(tmp_path, folder, "return 2 * x[..., k - 1:], x.sum(-1), x"))
    assert {f["kind"] for f in three} == {"type"} and "tuple of 3" in three[0]["message"]
    mapping = failures(grade(tmp_path, folder, "return {'tail': 2 * x[..., k - 1:], 'total': x.sum(-1)}"))
    assert {f["kind"] for f in mapping} == {"type"} and "dict" in mapping[0]["message"]


def test_a_list_is_accepted_for_a_tuple_and_a_wrong_shape_is_that_outputs_failure(tmp_path):
    folder = make(tmp_path)
    assert grade(tmp_path, folder, "return [2 * x[..., k - 1:], x.sum(-1)]")["passed"]
    fails = failures(grade(tmp_path, folder, "return 2 * x[..., k:], x.sum(-1)"))
    assert fails and fails[0]["kind"] == "shape" and fails[0]["message"].startswith("tail: ")


def test_a_dict_spec_takes_the_dict_by_name_and_refuses_missing_keys(tmp_path):
    folder = make(tmp_path, "dict", "{'total': x.sum(-1), 'tail': 2 * x[..., k - 1:]}")
    assert grade(tmp_path, folder, "return {'total': x.sum(-1), 'tail': 2 * x[..., k - 1:]}")["passed"]
    fails = failures(grade(tmp_path, folder, "return {'tail': 2 * x[..., k - 1:]}"))
    assert fails and fails[0]["kind"] == "type" and "missing: total" in fails[0]["message"]


def test_a_single_output_problem_still_calls_a_tuple_a_type_failure():
    from grader.spec import find_problem
    problem = load_problem(find_problem("softmax"))
    case = fixed_cases(problem, ("float32",), 0)[0]
    exp = expected_for(problem, case)
    outcome = CallOutcome(status="ok", results={"0": exp.ref.astype(np.float32), "1": exp.ref}, result_type="tuple")
    verdict = judge(case, outcome, exp)
    assert verdict.failure.kind == "type" and "tuple" in verdict.failure.message


def test_the_sandboxed_child_sends_a_tuple_of_framework_arrays(tmp_path):
    """One run through the real child: a tuple of a NumPy array and a Python float list item."""
    folder = make(tmp_path)
    sub = tmp_path / "child_sub.py"
    sub.write_text("import numpy as np\n\ndef tail_and_total(x, k):\n    return (2 * x[..., k - 1:], x.sum(-1))\n")
    run = run_grader("check", str(sub), "--problem", "tail_and_total", "--problems-dir", str(folder),
                     "--format", "json", "--no-shrink")
    assert run.code == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_the_reference_output_shape_is_checked_against_the_declared_expression(tmp_path):
    folder = make(tmp_path, ret="2 * x[..., k:], x.sum(-1)")   # one entry short of n - k + 1
    problem = load_problem(folder / "tail_and_total.yaml")
    case = fixed_cases(problem, ("float64",), 0)[0]
    with pytest.raises(GraderError, match=r"case plain.*tail has shape \(3, 4\) where .*gives \(3, 5\)"):
        expected_for(problem, case)


def test_packed_outputs_round_trip_with_their_shapes_and_missing_ones():
    a, b = np.arange(6.0).reshape(2, 3), np.asarray(2.5)
    back = unpack_outputs(pack_outputs([a, None, b]), 3)
    assert np.array_equal(back[0], a) and back[1] is None and back[2].shape == () and float(back[2]) == 2.5
    with pytest.raises(GraderError):
        unpack_outputs(pack_outputs([a]), 2)


@pytest.mark.parametrize("text, env, value", [
    ("D // n_heads", {"D": 12, "n_heads": 3}, 4),
    ("(L + 2*padding - K) // stride + 1", {"L": 10, "padding": 1, "K": 3, "stride": 2}, 5),
    ("max(n - k, 0) % 7", {"n": 3, "k": 5}, 0),
    ("-a + 3 * b", {"a": 1, "b": 2}, 5),
])
def test_size_expressions_compute_integer_sizes(text, env, value):
    assert eval_size(size_expr(text), env) == value


@pytest.mark.parametrize("text", ["__import__('os').getcwd()", "x.shape", "n / 2", "n ** 2", "[n]", "lambda: 1",
                                  "n if n else 1", "abs(n)", "1.5 * n", "n +"])
def test_anything_else_in_a_size_expression_is_refused(text):
    with pytest.raises(SizeExprError):
        size_expr(text)


def test_a_bad_output_shape_is_one_line_of_the_spec_and_exit_2(tmp_path):
    folder = make(tmp_path)
    spec = folder / "tail_and_total.yaml"
    spec.write_text(spec.read_text().replace('"n - k + 1"', '"n.bit_length()"'))
    with pytest.raises(SpecError, match=r"function\.returns\.outputs\[0\]\.shape\[1\]: .*\(Call is not\)"):
        load_problem(spec)
    spec.write_text(SPEC.format(kind="tuple").replace('"n - k + 1"', '"m + 1"'))
    with pytest.raises(SpecError, match="size 'm' is not in any parameter's shape"):
        load_problem(spec)
    sub = tmp_path / "sub.py"
    sub.write_text("def tail_and_total(x, k):\n    return x, x\n")
    run = run_grader("check", str(sub), "--problem", "tail_and_total", "--problems-dir", str(folder))
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1 and "size 'm'" in run.stderr


def test_each_output_is_judged_at_the_share_of_its_allowance_validate_asks():
    """``grader validate`` grades an alternative at 0.5 of every allowance: with several outputs
    each output's own record kept the whole allowance, and an instructor's torch alternative
    "passed within 0.5 of every allowance" at 0.62 of one. An output at 0.6 of its allowance
    passes at the full allowance and fails at half; its margin is 0.6 either way."""
    from dataclasses import replace

    from grader.cases import Case
    from grader.compare import Expected, assess

    part = Expected(ref=np.array([1.0, 2.0]), scale=np.array([1e-3, 1e-3]), n=1, model="derived",
                    out_dtype="float64")
    whole = Expected(ref=pack_outputs([part.ref, part.ref]), scale=pack_outputs([part.scale, part.scale]), n=1,
                     model="derived", out_dtype="float64", parts=(("a", part), ("b", part)), several_as="tuple")
    case = Case(name="c", group="g", dtype="float64", inputs={"x": np.zeros(2)}, sizes={})
    off = np.array([1.0 + 6e-4, 2.0])
    outcome = CallOutcome(status="ok", result_type="tuple", results={"0": part.ref.copy(), "1": off},
                          result_types={"0": "ndarray", "1": "ndarray"})
    failure, margin = assess(case, outcome, whole)
    assert failure is None and margin == pytest.approx(0.6)
    failure, margin = assess(case, outcome, replace(whole, allowance_share=0.5))
    assert failure is not None and failure.kind == "tolerance" and failure.data["output"] == "b", failure
    assert margin == pytest.approx(0.6)


def test_an_item_that_is_no_array_is_named_alike_by_the_child_and_the_fake(tmp_path):
    """An instructor's learner returned ``[y.tolist(), mean.tolist(), rstd.tolist()]`` and was told
    "the function returned list, not a tuple of 3" with no hint: the container was fine, its
    items were not. The child (``bad_item``) and the in-process fake name the first such item,
    the message says it, and the hint is that item's (drop .tolist())."""
    from tests.conftest import check_like_cli

    folder = make(tmp_path)
    sub = tmp_path / "lists.py"
    sub.write_text("import numpy as np\n\ndef tail_and_total(x, k):\n"
                   "    return [(2 * x[..., k - 1:]).tolist(), x.sum(-1)]\n")
    args = ("--problem", "tail_and_total", "--problems-dir", str(folder), "--no-shrink")
    child_code, child = check_like_cli(str(sub), *args)
    fake_code, fake = grade_function_in_process(sub, *args)
    for report in (child, fake):
        first = failures(report)[0]
        assert first["kind"] == "type" and first["data"]["item"] == {"key": "0", "returned": "list"}, first
        assert first["message"] == ("the function returned a list whose item 0 is a list: each of tail, total "
                                    "must be an array"), first["message"]
        assert first["data"]["hint_id"] == "not_array" and ".tolist()" in first["hint"], first
    assert child_code == fake_code == 1
    assert [(c["name"], c["status"], c["failure"]["message"]) for c in child["cases"]] == \
        [(c["name"], c["status"], c["failure"]["message"]) for c in fake["cases"]]


def test_a_scalar_parameter_has_its_value_in_every_case_whatever_its_size(tmp_path):
    """An instructor's learner read ``{"shape": [], "dtype": "int64"}`` of a large case's patch
    length. A scalar parameter's value is in every case's inputs record (JSON and text), an
    array's is not; a non-finite float is left out rather than written as JSON cannot hold it."""
    from grader.reports.common import scalar_text
    from grader.results import ArrayInfo

    folder = make(tmp_path)
    report = grade(tmp_path, folder, "return 2 * x[..., k - 1:], x.sum(-1)")
    for c in report["cases"]:
        assert isinstance(c["inputs"]["k"]["value"], int) and "value" not in c["inputs"]["x"], c["inputs"]
    infos = ArrayInfo.of_inputs({"x": np.zeros(3), "k": np.asarray(2), "eps": np.asarray(np.inf)}, ("k", "eps"))
    assert [i.value for i in infos.values()] == [None, 2, None]
    assert ArrayInfo.from_json(infos["k"].to_json()) == infos["k"] and "value" not in infos["eps"].to_json()
    assert scalar_text("k", infos["k"], None) == "k = 2" and scalar_text("eps", infos["eps"], None) == "eps (float64 scalar)"


def test_each_outputs_failure_is_said_once(tmp_path):
    """An instructor's learner read each output's dtype failure three times: the headline, the
    line of every output's verdict, and an "also dtype in ..." line per other output. The line
    of verdicts says each output's; only a mutation (no output's) is added with "also"."""
    folder = make(tmp_path)
    report = grade(tmp_path, folder, "return (2 * x[..., k - 1:]).astype(np.float64), x.sum(-1).astype(np.float64)")
    first = next(f for f in failures(report) if f["kind"] == "dtype")
    assert first["details"][0].startswith("tail is off: dtype float64") and "total is off: dtype float64" in first["details"][0]
    assert not [d for d in first["details"] if d.startswith("also")], first["details"]
    assert first["data"]["also"] == [{"kind": "dtype", "message": first["data"]["also"][0]["message"], "output": "total"}]
    report = grade(tmp_path, folder, "r = 2 * x[..., k - 1:], x.sum(-1)\nx *= 2\nreturn r")
    mutated = next(f for f in failures(report) if f["kind"] == "mutation")
    assert mutated["message"].startswith("the function changed its input x")


MEAN_VAR = """\
id: mean_var
title: the mean and the variance of each row
statement: |
  Write `mean_var(x)`: `(x.mean(-1), x.var(-1))`.
function:
  name: mean_var
  parameters:
    - {name: x, shape: ["...", n]}
  returns:
    as: tuple
    outputs:
      - {name: mean, shape: ["..."], dtype: same_as_inputs}
      - {name: var, shape: ["..."], dtype: same_as_inputs}
reference: {module: mean_var}
frameworks:
  numpy: {dtypes: [float32, float64]}
groups:
  values: {points: 1}
  generated: {points: 1}
cases:
  - {name: plain, group: values, sizes: {"...": [3], n: 6}}
generated: {group: generated, count: 4, sizes: {"...": [1, 4], n: [2, 9]}}
"""


def test_two_outputs_in_each_others_place_are_named_and_shown(tmp_path):
    """An instructor's trial: a learner returning ``(var, mean)`` for ``(mean, var)`` was told
    "the whole result was multiplied by a constant factor of 0.5" (it fitted one case), and the
    report showed the expected outputs but not what came back. The hint names the swapped pair,
    and a small case shows what came back by output name."""
    folder = _problem_folder(tmp_path, "mean_var", MEAN_VAR, "import jax.numpy as jnp\n\n\ndef mean_var(x):\n"
                             "    x = jnp.asarray(x)\n    return x.mean(-1), x.var(-1)\n")
    code, report = _graded(tmp_path, folder, "mean_var", "swapped.py",
                           "import numpy as np\n\n\ndef mean_var(x):\n    return x.var(-1), x.mean(-1)\n")
    fails = failures(report)
    assert code == 1 and fails
    assert {f["data"].get("hint_id") for f in fails} == {"swapped_outputs"}, [f["hint"] for f in fails]
    assert "mean and var came back in each other's place" in fails[0]["hint"]
    shown = next(c["values"] for c in report["cases"] if c["failure"] and c.get("values"))
    assert set(shown["got"]) == {"mean", "var"} and shown["got"]["mean"] == pytest.approx(shown["expected"]["var"])


def test_several_arrays_returned_where_the_case_must_raise_are_named_with_their_shapes():
    """A newcomer's top_k returning (values, indices) for k = 0 read "the function returned an
    array of shape ? where it must raise one of ValueError"; and int32 indices showed as floats."""
    from types import SimpleNamespace

    import numpy as np

    from grader import compare
    from grader.results import CallOutcome
    out = CallOutcome(status="ok", results={"0": np.zeros((2, 0)), "1": np.zeros((2, 0), dtype=np.int32)},
                      result_type="tuple")
    failure = compare._judge_raises(SimpleNamespace(raises=("ValueError",)), out)
    assert failure.message == "the function returned a tuple of 2 arrays (shapes (2, 0), (2, 0)) where it must raise ValueError"
    two = compare._judge_raises(SimpleNamespace(raises=("ValueError", "TypeError")),
                                CallOutcome(status="ok", result=np.zeros(3)))
    assert two.message == "the function returned an array of shape (3,) where it must raise ValueError or TypeError"


MAX_ARGMAX = MEAN_VAR.replace("mean_var", "max_argmax").replace(
    "`(x.mean(-1), x.var(-1))`", "`(x.max(-1), x.argmax(-1))`, the argmax int64").replace(
    "      - {name: mean, shape: [\"...\"], dtype: same_as_inputs}\n      - {name: var, shape: [\"...\"], dtype: same_as_inputs}",
    "      - {name: largest, shape: [\"...\"], dtype: same_as_inputs}\n      - {name: where, shape: [\"...\"], dtype: int64}")


def test_a_float_and_an_integer_output_in_each_others_place_are_named(tmp_path):
    """A newcomer's top_k returned (indices, values) for (values, indices) and was told "return
    float32, the inputs' dtype": the integer output's allowance could not be computed, so the
    swap was never tried. An integer output is compared exactly there too."""
    folder = _problem_folder(tmp_path, "max_argmax", MAX_ARGMAX,
                             "import jax.numpy as jnp\n\n\ndef max_argmax(x):\n    x = jnp.asarray(x)\n"
                             "    return x.max(-1), jnp.argmax(x, -1).astype(jnp.int64)\n")
    code, report = _graded(tmp_path, folder, "max_argmax", "swapped.py", "import numpy as np\n\n\n"
                           "def max_argmax(x):\n    return x.argmax(-1).astype(np.int64), x.max(-1)\n")
    fails = failures(report)
    assert code == 1 and fails
    assert {f["data"].get("hint_id") for f in fails} == {"swapped_outputs"}, [f["hint"] for f in fails]


TOP_K = """\
id: top_k
title: the k largest scores of each row and their indices
statement: |
  Write `top_k(scores, k)`: `(values, indices)`, the k largest scores along the last axis in
  descending order and their int64 indices; among equal scores any order is right.
function:
  name: top_k
  parameters:
    - {name: scores, shape: ["...", n]}
    - {name: k, scalar: int, domain: "[1, n]"}
  returns:
    as: tuple
    outputs:
      - {name: values, shape: ["...", k], dtype: same_as_inputs}
      - {name: indices, shape: ["...", k], dtype: int64, checker: {module: indices_of_largest, options: {scores: scores}}}
reference: {module: top_k}
frameworks:
  numpy: {dtypes: [float16, float32, float64]}
groups:
  ties: {points: 1}
  generated: {points: 1}
cases:
  - name: many_ties
    group: ties
    sizes: {"...": [4], n: 9}
    args: {k: 4}
    fill: {scores: {kind: integers, low: 0, high: 3}}
generated: {group: generated, count: 4, sizes: {"...": [1, 4], n: [3, 9]}}
"""


def test_one_output_of_several_takes_a_checker_of_its_own(tmp_path):
    """A newcomer could not write top_k as (values, indices) with any order among ties: a
    checker judged only a function of one output. ``returns.outputs[i].checker`` judges that
    output: another order among ties passes, the wrong indices fail with the checker's words,
    and a top-level checker beside several outputs is refused, naming the field to use."""
    folder = _problem_folder(tmp_path, "top_k", TOP_K, "import jax\nimport jax.numpy as jnp\n\n\n"
                             "def top_k(scores, k):\n    values, indices = jax.lax.top_k(jnp.asarray(scores), k)\n"
                             "    return values, indices.astype(jnp.int64)\n")
    # the last of equal scores first: another order than lax.top_k's
    code, report = _graded(tmp_path, folder, "top_k", "right.py", "import numpy as np\n\n\ndef top_k(scores, k):\n"
                           "    i = np.argsort(-scores[..., ::-1], axis=-1, kind='stable')[..., :k]\n"
                           "    i = scores.shape[-1] - 1 - i\n    return np.take_along_axis(scores, i, -1), i.astype(np.int64)\n")
    assert code == 0, [f["message"] for f in failures(report)][:3]
    code, report = _graded(tmp_path, folder, "top_k", "wrong.py", "import numpy as np\n\n\ndef top_k(scores, k):\n"
                           "    i = np.argsort(scores, axis=-1)[..., :k]\n"
                           "    return np.take_along_axis(scores, i, -1), i.astype(np.int64)\n")
    assert code == 1 and any("indices is off: row 0" in d for f in failures(report) for d in f.get("details") or []), \
        [f["details"] for f in failures(report)][:2]
    (folder / "top_k.yaml").write_text(TOP_K + "checker: {module: indices_of_largest}\n")
    with pytest.raises(SpecError, match=r"returns.outputs\[i\].checker"):
        load_problem(folder / "top_k.yaml")
