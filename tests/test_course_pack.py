"""Exercises beyond the first lesson: scalar and optional parameters, Python-number results,
checkers, the derived tolerance, and a ninth exercise written from scratch (issue 18)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.cases import Stream, fixed_cases, generated_cases
from grader.checkers import indices_of_largest
from grader.compare import Expected, compare
from grader.derived import one_ulp
from grader.results import CallOutcome
from grader.spec import find_problem, load_problem
from tests.conftest import grade_function_in_process


def _softmax():
    return load_problem(find_problem("softmax"))


def test_a_case_passes_an_optional_scalar_by_keyword_or_leaves_it_out():
    problem = _softmax()
    cases = {c.name: c for c in fixed_cases(problem, ("float32",), 0)}
    given, default = cases["axis_0[float32]"], cases["default_axis[float32]"]
    assert given.keywords == ("axis",) and given.scalars == ("axis",)
    assert int(given.inputs["axis"]) == 0
    assert "axis" not in default.inputs and default.keywords == () and default.positional == ("logits",)
    gen = generated_cases(problem, ("float32",), 0, 8)
    assert {("axis" in c.inputs) for c in gen} == {True, False}   # the optional one alternates
    for c in gen:
        if "axis" in c.inputs:
            nd = c.inputs["logits"].ndim
            assert -nd <= int(c.inputs["axis"]) < nd


def test_the_function_gets_python_ints_and_the_default_when_left_out(tmp_path):
    seen = tmp_path / "seen.txt"
    sub = tmp_path / "softmax_types.py"
    sub.write_text(textwrap.dedent(f"""
        import numpy as np
        def softmax(logits, axis=-1):
            with open({str(seen)!r}, "a") as fh:
                fh.write(type(axis).__name__ + "\\n")
            e = np.exp(logits - np.max(logits, axis=axis, keepdims=True))
            return e / np.sum(e, axis=axis, keepdims=True)
    """))
    code, report = grade_function_in_process(sub, "--problem", "softmax", "--no-shrink")
    assert code == 0, [c["failure"] for c in report["cases"] if c["status"] != "passed"][:2]
    assert set(seen.read_text().split()) == {"int"}


def test_a_python_float_is_a_type_failure_unless_the_spec_accepts_one():
    case = fixed_cases(_softmax(), ("float32",), 0)[0]
    outcome = CallOutcome(status="ok", result=np.asarray(0.5), result_type="float")
    ref = np.asarray(0.5)
    strict = compare(case, outcome, Expected(ref=ref, scale=None, n=0, model="derived", out_dtype="float32"))
    assert strict is not None and strict.kind == "type" and "float" in strict.message
    loose = compare(case, outcome, Expected(ref=ref, scale=np.asarray(1e-6), n=0, model="derived", out_dtype="float32",
                                            python_scalar=True))
    assert loose is None


def test_indices_of_largest_takes_any_order_among_ties_and_nothing_else():
    scores = np.array([[1.0, 3.0, 3.0, 2.0]])
    want = np.array([[1, 2]])
    assert indices_of_largest({"scores": scores}, np.array([[2, 1]]), want, "float32") is None
    assert indices_of_largest({"scores": scores}, np.array([[1, 2]]), want, "float32") is None
    assert "largest" in indices_of_largest({"scores": scores}, np.array([[1, 3]]), want, "float32")
    assert "twice" in indices_of_largest({"scores": scores}, np.array([[1, 1]]), want, "float32")
    assert "outside" in indices_of_largest({"scores": scores}, np.array([[1, 4]]), want, "float32")
    ascending = indices_of_largest({"scores": np.array([[1.0, 3.0, 2.0]])}, np.array([[2, 1]]),
                                   np.array([[1, 2]]), "float32")
    assert "descending" in ascending


def test_top_k_mistakes_are_named_by_what_the_output_looks_like():
    """A newcomer's trial of top_k_indices: the scores returned instead of their indices read
    "return int64", and following it (.values.long()) "index 0 appears twice"; an off-by-one
    ([1:k+1]) and ascending order were told only "not the largest scores" and "2-th largest".
    Each is named now, where every row agrees; right indices equal to truncated scores pass."""
    scores = np.array([[0.1, 4.7, 2.2, 0.3, 3.9], [1.5, 0.2, 2.9, 2.8, 0.1]])
    want = np.array([[1, 4, 2], [2, 3, 0]])
    def check(got):
        return indices_of_largest({"scores": scores}, np.asarray(got), want, "float32")
    assert check(want) is None
    top = np.array([[4.7, 3.9, 2.2], [2.9, 2.8, 1.5]])
    assert "look like the k largest scores themselves" in check(top.astype(np.float32))
    assert "the k largest scores (cast to integers)" in check(top.astype(np.int64))
    off = check([[4, 2, 3], [3, 0, 1]])
    assert "1st largest" in off and "the 2nd to the 4th largest in every row: the largest is left out" in off, off
    assert "in ascending order in every row: reverse them" in check([[2, 4, 1], [0, 3, 2]])
    assert "the k smallest in every row" in check([[0, 3, 2], [4, 1, 0]])
    # right indices that happen to equal the truncated scores are right (k = 1: index 2, score 2.x)
    assert indices_of_largest({"scores": np.array([[0.5, 1.0, 2.5]])}, np.array([[2]]), np.array([[2]]), "float32") is None


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_one_ulp_moves_each_finite_nonzero_value_by_one_unit_and_nothing_else(dtype):
    a = np.array([1.0, -2.5, 0.0, -np.inf, 3e-3], dtype=dtype)
    moved = one_ulp(Stream("t"), a)
    for x, y in zip(a[[0, 1, 4]], moved[[0, 1, 4]]):
        assert y != x and y in (np.nextafter(x, dtype(np.inf)), np.nextafter(x, dtype(-np.inf)))
    assert moved[2] == 0 and moved[3] == -np.inf


LOGSUMEXP_SPEC = """\
id: logsumexp
title: log(sum(exp(x))) along an axis
statement: |
  Write `logsumexp(x, axis=-1)`: `log(sum(exp(x)))` along `axis`, stable for large x.
function:
  name: logsumexp
  parameters:
    - {name: x, shape: ["...", n]}
    # the last axis only: returns.shape is checked against the reference on every case, and a
    # reduction over any axis has no shape expression (x.shape without that axis)
    - {name: axis, scalar: int, default: -1, values: [-1]}
  returns: {shape: ["..."], dtype: same_as_inputs}
reference: {module: logsumexp}
frameworks:
  numpy: {dtypes: [float16, float32, float64]}
groups:
  values: {points: 1}
  generated: {points: 1}
cases:
  - {name: plain, group: values, sizes: {"...": [4], n: 6}}
  - {name: large, group: values, sizes: {"...": [4], n: 6}, fill: {x: {kind: uniform, low: 100, high: 10000}}}
generated:
  group: generated
  count: 6
  leading_axes: [1, 1]
  sizes: {"...": [1, 5], n: [1, 30]}
mistakes: {dir: mistakes, expect: {naive.py: non_finite}}
alternatives: {dir: alternatives}
"""


def test_a_ninth_exercise_with_no_tolerance_model_validates_and_grades(tmp_path):
    """Written as an instructor would, from the docs: no tolerance model named."""
    from grader.validate import validate_problem

    (tmp_path / "reference").mkdir()
    (tmp_path / "mistakes").mkdir()
    (tmp_path / "alternatives").mkdir()
    (tmp_path / "logsumexp.yaml").write_text(LOGSUMEXP_SPEC)
    (tmp_path / "reference" / "logsumexp.py").write_text(
        "import jax.numpy as jnp\nfrom jax.scipy.special import logsumexp as lse\n"
        "def logsumexp(x, axis=-1):\n    return lse(jnp.asarray(x), axis=axis)\n")
    correct = tmp_path / "alternatives" / "shifted.py"
    correct.write_text("import numpy as np\n"
                       "def logsumexp(x, axis=-1):\n"
                       "    m = np.max(x, axis=axis, keepdims=True)\n"
                       "    wide = np.float32 if x.dtype == np.float16 else x.dtype\n"
                       "    s = np.sum(np.exp((x - m).astype(wide)), axis=axis, keepdims=True)\n"
                       "    return np.squeeze(m + np.log(s).astype(x.dtype), axis=axis)\n")
    wrong = tmp_path / "mistakes" / "naive.py"
    wrong.write_text("import numpy as np\n"
                     "def logsumexp(x, axis=-1):\n    return np.log(np.sum(np.exp(x), axis=axis))\n")
    (tmp_path / "mistakes" / "mean_not_sum.py").write_text(   # off by log(n): caught by value
        "import numpy as np\n"
        "def logsumexp(x, axis=-1):\n"
        "    m = np.max(x, axis=axis, keepdims=True)\n"
        "    return np.squeeze(m + np.log(np.mean(np.exp(x - m), axis=axis, keepdims=True)), axis=axis)\n")
    (tmp_path / "logsumexp.yaml").write_text(LOGSUMEXP_SPEC.replace(
        "expect: {naive.py: non_finite}", "expect: {naive.py: non_finite, mean_not_sum.py: tolerance}"))
    v = validate_problem(tmp_path / "logsumexp.yaml", jobs=2)
    assert v.valid, [f.message for f in v.errors]
    assert [a.passed for a in v.alternatives] == [True]
    assert [(m.file, m.kind) for m in v.mistakes] == [("mean_not_sum.py", "tolerance"), ("naive.py", "non_finite")]
    # both margins, per group: the correct file within half of every allowance, the value mistake
    # off by far more than the allowance wherever it is compared
    (alt,) = v.alternatives
    assert alt.margins and all(0 < m <= 0.5 for m in alt.margins.values()), alt.margins
    offset = v.mistakes[0]
    assert offset.margin is not None and offset.margin >= 10, offset.margins
    rows = {g["group"]: g for g in v.groups}
    assert all(float(r["worst_alternative_margin"]) <= 0.5 for r in rows.values() if r["worst_alternative_margin"] is not None)
    assert any(r["least_mistake_margin"] is not None and float(r["least_mistake_margin"]) >= 10 for r in rows.values())
    assert not [f for f in v.warnings if f.check == "margin"]
    args = ("--problem", "logsumexp", "--problems-dir", str(tmp_path), "--no-shrink")
    assert grade_function_in_process(correct, *args)[0] == 0
    code, report = grade_function_in_process(wrong, *args)
    assert code == 1 and {c["failure"]["kind"] for c in report["cases"] if c["failure"]} >= {"non_finite"}


def test_the_bundled_pack_problems_load_with_the_derived_tolerance():
    for pid in ("softmax", "layer_norm", "rms_norm", "gelu"):
        problem = load_problem(find_problem(pid))
        assert problem.tolerance["model"] == "derived"
        assert Path(problem.path).parent.joinpath(problem.alternatives["dir"]).is_dir()


def test_an_unbiased_standard_deviation_in_a_layer_norm_is_named(tmp_path):
    """The Annotated Transformer's LayerNorm divides by torch.std (n - 1): on rows of 3 the
    whole result is 0.8165 = sqrt(2/3) times the right one. The hint names the count, not just
    "a constant factor" (which named no mistake)."""
    sub = tmp_path / "ln.py"
    sub.write_text("import numpy as np\n"
                   "def layer_norm(x, gamma, beta, eps=1e-5):\n"
                   "    m = x.mean(-1, keepdims=True)\n"
                   "    return gamma * (x - m) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps) + beta\n")
    code, report = grade_function_in_process(sub, "--problem", "layer_norm", "--no-shrink", "--audience", "instructor")
    assert code == 1
    ids = {(c["failure"].get("data") or {}).get("hint_id") for c in report["cases"] if c["failure"]}
    # layer_norm's own idea since it has a hint module (the generic variance_count before)
    assert "unbiased_variance" in ids and "scaled" not in ids, ids
    text = next(c["failure"]["hint"] for c in report["cases"]
                if c["failure"] and (c["failure"].get("data") or {}).get("hint_id") == "unbiased_variance")
    assert "d - 1" in text and "ddof=1" in text


NORM_SPEC = """\
id: l2_norm
title: The Euclidean norm of a vector
statement: |
  Write `l2_norm(x)`: `sqrt(sum(x**2))`, a 0-d array of x's dtype.
function:
  name: l2_norm
  parameters:
    - {name: x, shape: [n]}
  returns: {shape: [], dtype: same_as_inputs}
reference: {module: l2_norm}
frameworks:
  numpy: {dtypes: [float32, float64]}
groups:
  values: {points: 1}
cases:
  - {name: long, group: values, sizes: {n: 262144}, fill: {x: {kind: uniform, low: 0.5, high: 1.5}}}
"""


def test_a_long_sum_added_in_another_correct_order_passes_the_derived_tolerance(tmp_path):
    """A float32 norm of 262,144 terms summed left to right (np.cumsum: recursive summation, as
    a loop does) errs by hundreds of units of roundoff where XLA's reduction errs by about one: the derived allowance counts sqrt(L) u for the reference's longest sum
    (an instructor's torch port failed by 3.9 allowances). A sum kept in float16 still fails."""
    (tmp_path / "reference").mkdir()
    (tmp_path / "l2_norm.yaml").write_text(NORM_SPEC)
    (tmp_path / "reference" / "l2_norm.py").write_text(
        "import jax.numpy as jnp\ndef l2_norm(x):\n    return jnp.sqrt(jnp.sum(jnp.asarray(x) ** 2))\n")
    chunked = tmp_path / "sequential.py"
    chunked.write_text("import numpy as np\n"
                       "def l2_norm(x):\n"
                       "    return np.sqrt(np.cumsum(x * x)[-1])\n")   # recursive summation, left to right
    half = tmp_path / "half.py"
    half.write_text("import numpy as np\n"
                    "def l2_norm(x):\n"
                    "    return np.sqrt(np.sum((x * x).astype(np.float16), dtype=np.float16)).astype(x.dtype)\n")
    args = ("--problem", "l2_norm", "--problems-dir", str(tmp_path), "--no-shrink", "--audience", "instructor")
    code, report = grade_function_in_process(chunked, *args)
    assert code == 0, [c["failure"] for c in report["cases"] if c["failure"]]
    assert all(c["margin"] < 0.5 for c in report["cases"]), [c["margin"] for c in report["cases"]]
    code, report = grade_function_in_process(half, *args)
    assert code == 1


CAUSAL_MASK_SPEC = """\
id: causal_mask
title: Causal attention mask
statement: |
  Write `causal_mask(seq_len)`: a bool (seq_len, seq_len) array, True where k <= q.
function:
  name: causal_mask
  parameters:
    - {name: seq_len, scalar: int, domain: "[1, 300]"}
  returns: {shape: [seq_len, seq_len], dtype: bool}
reference: {module: causal_mask}
frameworks:
  numpy: {dtypes: [float32]}
tolerance: {model: exact}
groups:
  examples: {points: 1}
  generated: {points: 1}
cases:
  - {name: worked_example, group: examples, args: {seq_len: 3},
     expected: [[true, false, false], [true, true, false], [true, true, true]]}
  - {name: long, group: examples, args: {seq_len: 256}}
generated: {group: generated, count: 4}
mistakes: {dir: mistakes, expect: {strict_lower.py: tolerance, float_tril.py: dtype}}
alternatives: {dir: alternatives}
"""


def test_an_exercise_with_no_float_input_and_a_bool_output_validates(tmp_path):
    """causal_mask(seq_len): only a scalar parameter and a fixed bool output (it was refused:
    "the output needs a fixed float dtype"), its bool literal checked as bool, no sizes: {}."""
    from grader.validate import validate_problem

    for folder in ("reference", "mistakes", "alternatives"):
        (tmp_path / folder).mkdir()
    (tmp_path / "causal_mask.yaml").write_text(CAUSAL_MASK_SPEC)
    (tmp_path / "reference" / "causal_mask.py").write_text(
        "import jax.numpy as jnp\ndef causal_mask(seq_len):\n"
        "    i = jnp.arange(int(seq_len))\n    return i[None, :] <= i[:, None]\n")
    (tmp_path / "alternatives" / "tril.py").write_text(
        "import numpy as np\ndef causal_mask(seq_len):\n    return np.tril(np.ones((seq_len, seq_len), dtype=bool))\n")
    (tmp_path / "mistakes" / "strict_lower.py").write_text(
        "import numpy as np\ndef causal_mask(seq_len):\n"
        "    return np.tril(np.ones((seq_len, seq_len), dtype=bool), k=-1)\n")
    (tmp_path / "mistakes" / "float_tril.py").write_text(
        "import numpy as np\ndef causal_mask(seq_len):\n    return np.tril(np.ones((seq_len, seq_len)))\n")
    v = validate_problem(tmp_path / "causal_mask.yaml", jobs=2, sandbox="none")
    assert v.valid, [f.message for f in v.errors]
    assert v.literal_cases == ["worked_example"]
    assert [(m.file, m.kind) for m in v.mistakes] == [("float_tril.py", "dtype"), ("strict_lower.py", "tolerance")]
    assert [a.passed for a in v.alternatives] == [True]


def test_a_reference_that_turns_its_index_array_into_numpy_still_has_its_sum_counted():
    """label_smoothing_cross_entropy's reference one-hots ``np.asarray(targets)``, which a traced
    index array cannot be: the sum's length L (the derived allowance's sqrt(L) u |f| term) was
    read as 1, and at seed 11 every correct alternative failed a float64 case by 1.05x (the
    reference itself 14 u off). Tracing only the float arrays reads the (N * C)-term sum."""
    from grader.reference import longest_sum
    problem = load_problem(find_problem("label_smoothing_cross_entropy"))
    inputs = {"logits": np.zeros((32, 60)), "targets": np.arange(32, dtype=np.int64) % 60,
              "smoothing": np.asarray(0.1)}
    assert longest_sum(problem, inputs) == 32 * 60
    assert longest_sum(load_problem(find_problem("cross_entropy")), {"logits": np.zeros((5, 7)),
                                                       "targets": np.arange(5, dtype=np.int64)}) >= 7


@pytest.mark.parametrize("seed", range(20))
def test_kl_divergence_large_logits_fit_a_float16_sum_over_the_rows(seed):
    """A correct float16 kl_divergence may sum the rows' KL and then divide by N (PyTorch's
    batchmean does): the large_logits case must keep that sum below float16's largest value
    (at N = 6 it reached about 74,000 at seeds 4, 12 and 13: inf where 12,386 was expected)."""
    problem = load_problem(find_problem("kl_divergence"))
    case = next(c for c in fixed_cases(problem, ("float16",), seed) if c.name.startswith("large_logits"))

    def log_softmax(x):
        x = x.astype(np.float64)
        m = x.max(-1, keepdims=True)
        return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    log_p, log_q = log_softmax(case.inputs["p_logits"]), log_softmax(case.inputs["q_logits"])
    rows = (np.exp(log_p) * (log_p - log_q)).sum(-1)
    assert rows.sum() < np.finfo(np.float16).max / 1.5, rows


def test_integer_results_are_shown_as_integers_beside_the_expected_ones():
    """A newcomer read "expected = [1, 3, 2]" beside "got = [3.0, 2.0, 0.0]" for int64 indices,
    and floats for int32 indices returned as one output of several."""
    from grader.compare import Expected
    from grader.expected import values_of
    problem = load_problem(find_problem("top_k_indices"))
    case = next(c for c in fixed_cases(problem, ("float32",), 0) if c.name.startswith("worked_example"))
    expected = Expected(ref=np.array([1, 3, 2], dtype=np.int64), scale=None, n=1, model="exact")
    shown = values_of(case, expected, np.array([3, 2, 0], dtype=np.int64))
    assert shown["got"] == [3, 2, 0] and all(type(v) is int for v in shown["got"]) and shown["expected"] == [1, 3, 2]
    several = Expected(ref=np.zeros(0), scale=None, n=1, model="exact",
                       parts=[("values", Expected(ref=np.array([0.7, 0.7, 0.2]), scale=None, n=1, model="exact")),
                              ("indices", Expected(ref=np.array([1, 3, 2]), scale=None, n=1, model="exact"))])
    got = values_of(case, several, {"values": np.array([0.7, 0.7, 0.2]), "indices": np.array([1, 3, 2], np.int32)})
    assert got["got"]["indices"] == [1, 3, 2] and all(type(v) is int for v in got["got"]["indices"])
