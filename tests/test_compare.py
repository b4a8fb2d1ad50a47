"""The tolerance rule (grader.compare.allowed_error) and the comparison's verdicts and messages.

Correct results computed several ways must pass in every dtype, well inside the allowance;
known wrong ones must fail. Learner-facing messages are asserted exactly.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from grader import compare
from grader.cases import Case
from grader.compare import Expected, allowed_error
from grader.results import CallOutcome

DTYPES = ("bfloat16", "float16", "float32", "float64")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16),
      "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}
U = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11, "float32": 2.0 ** -24, "float64": 2.0 ** -53}


def draw(seed: int, dt: str, lead=(3,), d=24, v=7, mean=(-3, 3), scale=(0.01, 4)) -> tuple[np.ndarray, np.ndarray]:
    """hidden (lead + (d,)) with a random mean and scale per row, table (v, d), rounded to dt."""
    rng = np.random.default_rng(seed)
    h = rng.uniform(*mean, lead + (1,)) + rng.uniform(*scale, lead + (1,)) * rng.standard_normal(lead + (d,))
    e = rng.uniform(0.01, 2, (v, 1)) * rng.standard_normal((v, d))
    return h.astype(NP[dt]), e.astype(NP[dt])


def exact(h: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact logits and S from math.fsum over float64 products (products of float16/bfloat16/float32
    numbers are exact in float64; float64 ones are rounded once, far below any allowance)."""
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    rows = h64.reshape(-1, h64.shape[-1])
    ref = np.array([[math.fsum(r * c) for c in e64] for r in rows]).reshape(h.shape[:-1] + (e.shape[0],))
    s = np.array([[math.fsum(np.abs(r * c)) for c in e64] for r in rows]).reshape(ref.shape)
    return ref, s


def ratio(got: np.ndarray, h: np.ndarray, e: np.ndarray, dt: str) -> float:
    ref, s = exact(h, e)
    return float(np.max(np.abs(np.asarray(got).astype(np.float64) - ref) / allowed_error(dt, ref, s, h.shape[-1])))


def _numpy_ways(dt: str) -> dict:
    acc = np.longdouble if dt == "float64" else np.float32
    ways = {
        "wide accumulator": lambda h, e: (h.astype(acc) @ e.astype(acc).T).astype(np.float64).astype(NP[dt]),
        "products in the dtype, float32 sum": lambda h, e: (h[..., None, :] * e).astype(
            np.float64 if dt == "float64" else np.float32).sum(-1).astype(NP[dt]),
        "math.fsum, rounded once": lambda h, e: exact(h, e)[0].astype(NP[dt]),
    }
    if dt != "bfloat16":  # NumPy is not graded in bfloat16 (its matmul returns float32, its sum
        # of ml_dtypes.bfloat16 accumulates in bfloat16: outside the model, docs/tolerance.md)
        ways["matmul"] = lambda h, e: h @ e.T
        ways["einsum"] = lambda h, e: np.einsum("...d,vd->...v", h, e)
        ways["broadcast multiply + sum"] = lambda h, e: (h[..., None, :] * e).sum(-1)
    return ways


@pytest.mark.parametrize("dt", DTYPES)
def test_correct_results_pass_with_margin(dt):
    worst = 0.0
    for seed in range(12):
        for shape in [dict(lead=(3,), d=24, v=7), dict(lead=(), d=1, v=5), dict(lead=(2, 2), d=2, v=33),
                      dict(lead=(2,), d=512, v=3)]:
            h, e = draw(seed, dt, **shape)
            for name, way in _numpy_ways(dt).items():
                got = way(h, e)
                assert got.dtype == NP[dt], name
                worst = max(worst, ratio(got, h, e, dt))
    assert worst <= 0.5, f"{dt}: correct code reached {worst:.3g} of the allowance"
    assert worst > 0.01, "the test should exercise the rule, not pass trivially"


@pytest.mark.parametrize("dt", DTYPES)
def test_jax_results_pass_against_the_graders_reference(dt):
    """JAX matmul and a jitted einsum, judged against grader.reference (JAX float64) as in a real run."""
    from grader import reference
    from grader.spec import find_problem, load_problem

    import jax
    import jax.numpy as jnp

    problem = load_problem(find_problem("tied_lm_head"))
    einsum = jax.jit(lambda h, e: jnp.einsum("...d,vd->...v", h, e))
    for seed in range(4):
        h, e = draw(seed, dt, lead=(2, 3), d=16, v=9)
        ref, s = reference.evaluate(problem, {"hidden": h, "embedding_matrix": e})
        allowed = allowed_error(dt, ref, s, 16)
        with reference.x64_scope():  # as in the submission's process, where x64 is on
            gots = [np.asarray(jnp.matmul(h, e.T)), np.asarray(einsum(h, e))]
        for got in gots:
            assert got.dtype == NP[dt]
            assert np.all(np.abs(got.astype(np.float64) - ref) <= 0.5 * allowed)


WRONG = {
    "softmax": lambda h, e, ref: np.exp(ref - ref.max(-1, keepdims=True))
    / np.exp(ref - ref.max(-1, keepdims=True)).sum(-1, keepdims=True),
    "bias 0.5": lambda h, e, ref: ref + 0.5,
    "1/sqrt(d)": lambda h, e, ref: ref / math.sqrt(h.shape[-1]),
    "hidden normalised": lambda h, e, ref: ref / np.linalg.norm(h.astype(np.float64), axis=-1, keepdims=True),
    "sign flipped": lambda h, e, ref: -ref,
}


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_wrong_results_fail(dt, mistake):
    for seed in range(6):
        h, e = draw(seed, dt, lead=(4,), d=16, v=6, mean=(-1, 1), scale=(0.5, 2))
        ref, _ = exact(h, e)
        got = WRONG[mistake](h, e, ref).astype(NP[dt])
        assert ratio(got, h, e, dt) > 2, f"{mistake} in {dt}, seed {seed}"


def test_float64_computed_in_float32_fails_by_far():
    for seed in range(6):
        h, e = draw(seed, "float64")
        got = (h.astype(np.float32) @ e.astype(np.float32).T).astype(np.float64)
        assert ratio(got, h, e, "float64") > 1e4


@pytest.mark.parametrize("dt", DTYPES)
def test_missing_transpose_fails_on_a_square_non_symmetric_table(dt):
    h, e = draw(3, dt, lead=(3,), d=5, v=5)
    assert not np.array_equal(e, e.T)
    assert ratio((h.astype(np.float64) @ e.astype(np.float64)).astype(NP[dt]), h, e, dt) > 10


def test_allowed_error_terms_by_hand():
    ref, s, n = np.array([1.0, -0.0]), np.array([2.0, 0.0]), 3
    got = allowed_error("float32", ref, s, n)
    tiny32 = 2.0 ** -126  # float32's smallest normal: flush-to-zero of products, partial sums, result
    assert got[0] == 2.0 ** -24 * 1.0 + 2 * 4 * 2.0 ** -24 * 2.0 + 2 * 4 * tiny32 + tiny32
    assert got[1] == 2 * 4 * tiny32 + tiny32
    half = allowed_error("float16", ref, s, n)
    assert half[0] == 2.0 ** -11 + 2 * 4 * 2.0 ** -24 * 2.0 + 3 * 2.0 ** -11 * 2.0 + 2 * 4 * tiny32 + 2.0 ** -14
    assert half[1] == 2 * 4 * tiny32 + 2.0 ** -14  # a float16 result below 2**-14 may be flushed
    bf = allowed_error("bfloat16", ref, s, n)
    assert bf[0] == pytest.approx(2.0 ** -8 + 2 * 4 * 2.0 ** -24 * 2.0 + 3 * 2.0 ** -8 * 2.0, rel=1e-12)
    f64 = allowed_error("float64", ref, s, n)
    assert f64[0] == pytest.approx(2.0 ** -53 + 2 * 4 * 2.0 ** -53 * 2.0, rel=1e-12)
    assert f64[1] == 2 * 4 * 2.0 ** -1022 + 2.0 ** -1022


@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_flush_to_zero_is_within_the_tolerance(dt):
    """XLA on the CPU returns 0 for 0.5 * 2**-126 (float32 subnormal result): not the learner's fault."""
    h = np.array([0.5]).astype(NP[dt])
    e = np.array([[2.0 ** -126]]).astype(NP[dt])
    ref, s = exact(h, e)
    assert ref[0] != 0
    assert np.abs(0.0 - ref) <= allowed_error(dt, ref, s, 1)
    # a flushed product inside a longer sum: 64 terms, one of them 2**-127
    h = np.array([0.5] + [0.0] * 63).astype(NP[dt])
    e = np.array([[2.0 ** -126] + [1.0] * 63]).astype(NP[dt])
    ref, s = exact(h, e)
    assert np.abs(0.0 - ref) <= allowed_error(dt, ref, s, 64)


def test_allowed_error_exact_model_is_zero():
    assert np.array_equal(allowed_error("float16", np.ones((2, 3)), None, 5), np.zeros((2, 3)))


def test_allowed_error_rejects_a_non_float_dtype():
    with pytest.raises(ValueError):
        allowed_error("int32", np.ones(2), np.ones(2), 2)


# ---------------------------------------------------------------------------------------------
# compare(): verdicts and messages

H = np.array([[2.0, -1.0], [0.5, 4.0]])
E = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def case(dt="float32", mode="tolerance", h=H, e=E) -> Case:
    inputs = {"hidden": h.astype(NP[dt]), "embedding_matrix": e.astype(NP[dt])}
    return Case(name=f"c[{dt}]", group="g", dtype=dt, inputs=inputs, sizes={}, compare=mode)


def expected(c: Case) -> Expected:
    h, e = (np.asarray(a, dtype=np.float64) for a in c.inputs.values())
    scale = np.abs(h) @ np.abs(e).T if c.compare != "exact" else None
    # tied_lm_head's spec turns its own hint ideas on (``hints: tied_lm_head``)
    return Expected(ref=h @ e.T, scale=scale, n=h.shape[-1], hints="tied_lm_head")


def run(c: Case, got, status="ok", **kw):
    """The failure, its hint worded for a NumPy learner as grading.finish words it."""
    from grader import words
    exp = expected(c)
    f = compare.compare(c, CallOutcome(status=status, result=got, **kw), exp)
    if f is not None:
        words.render_failure(f, "numpy", exp.hints)
    return f


def test_right_answer_passes_in_every_dtype():
    for dt in DTYPES:
        c = case(dt)
        assert run(c, (H @ E.T).astype(NP[dt])) is None


def test_tolerance_failure_message_and_data():
    c = case("float32")
    got = (H @ E.T).astype(np.float32)
    got[1, 2] += 0.25
    f = run(c, got)
    assert f.kind == "tolerance"
    assert f.message == "1 / 6 elements (16.7%) are outside the tolerance"
    allowed = allowed_error("float32", np.array(4.5), np.array(4.5), 2)
    assert f.details[0] == (f"worst at index (1, 2): got 4.75, expected 4.5, error 0.25, allowed "
                            f"{float(allowed):.6g} ({0.25 / float(allowed):.3g}x the allowance)")
    assert f.details[1] == ("tolerance: float32 (unit roundoff 5.96e-08), d = 2 terms per element, scaled by "
                            "S = 4.5 there (the same computation on |hidden|, |embedding_matrix|)")
    assert f.data["allowed"] == pytest.approx(float(allowed))
    # where 0 is expected the allowance is a rounding's: no "1e+35x the allowance" (a newcomer's trial)
    zero_case = case("float32")
    zero_case.inputs["hidden"] = np.zeros_like(zero_case.inputs["hidden"])
    z = run(zero_case, np.full((2, 3), 0.5, np.float32))
    assert z.kind == "tolerance" and z.details[0].endswith(
        "expected 0, error 0.5, allowed " + z.details[0].split("allowed ")[1].split(" ")[0]
        + " (0 is expected there: only an error at the level of rounding is allowed)"), z.details[0]
    assert f.data["error"] == 0.25 and f.data["scale"] == 4.5 and f.data["worst_index"] == [1, 2]
    # just past the allowance reads so, not "1x the allowance" (a newcomer read 1.0018 as rounding)
    from grader.compare import _past
    assert (_past(1.0018), _past(1.00001), _past(2.5)) == ("1.002", "1.00001", "2.5")


def test_exact_case_needs_the_exact_result_but_not_the_sign_of_zero():
    c = case("float16", "exact", h=np.zeros((2, 2)))
    assert run(c, np.full((2, 3), -0.0, dtype=np.float16)) is None
    f = run(c, np.full((2, 3), np.float16(2.0 ** -24), dtype=np.float16))
    assert f.kind == "tolerance"
    assert f.message == "6 / 6 elements (100.0%) differ from the exact result"
    assert f.details[1] == ("this case is computed exactly by every correct method (no rounding happens), "
                            "so the result must match exactly")


def test_shape_dtype_type_and_non_finite_messages():
    c = case("float32")
    right = (H @ E.T).astype(np.float32)
    f = run(c, right[None])
    assert (f.kind, f.message) == ("shape", "shape (1, 2, 3) != expected (2, 3)")
    f = run(c, right.astype(np.float64))
    assert (f.kind, f.message) == ("dtype", "dtype float64 != expected float32 (the inputs' dtype)")
    assert f.hint == ("the result was promoted to float64: compute as you like, but return float32 "
                      "(e.g. .astype(hidden.dtype))")
    f = compare.compare(c, CallOutcome(status="type", message="list"), expected(c))
    assert (f.kind, f.message) == ("type", "the function returned list, not an array")
    from grader import words
    words.render_failure(f, "torch", None)     # a torch learner's words, from the failure's facts
    assert f.message == "the function returned list, not a tensor"
    bad = right.copy()
    bad[0, 1] = np.nan
    f = run(c, bad)
    assert (f.kind, f.message) == ("non_finite",
                                   "1 / 6 elements are NaN or infinite where the expected values are finite")


def test_dtype_failure_also_reports_wrong_values():
    c = case("float32")
    f = run(c, (H @ E.T + 1.0).astype(np.float64))
    assert f.kind == "dtype"
    assert f.details == ["also tolerance: 6 / 6 elements (100.0%) are outside the tolerance"]
    assert f.data["also"][0]["kind"] == "tolerance"


def test_mutation_is_reported_after_right_values():
    c = case("float64")
    f = run(c, H @ E.T, mutated=["hidden"])
    assert (f.kind, f.message) == ("mutation", "the function changed its input hidden in place")
    assert f.data["hint_id"] == "mutation"


def test_empty_batch_compares_without_error():
    c = case("float32", h=np.zeros((0, 2)))
    assert run(c, np.zeros((0, 3), dtype=np.float32)) is None
    f = run(c, np.zeros((0,), dtype=np.float32))
    assert f.kind == "shape"
    assert f.data["hint_id"] == "empty_batch"


def test_a_missed_infinite_expected_value_is_an_infinite_margin():
    """-1e9 where -inf is expected passes no tolerance: the margin is inf, not the finite
    elements' (an instructor's validate warned "caught by only 0.08x")."""
    from grader.cases import Case
    from grader.compare import Expected, assess
    from grader.results import CallOutcome

    ref = np.array([[-np.inf, -1.0, -2.0]])
    case = Case(name="c", group="g", dtype="float64", inputs={"x": ref.copy()}, sizes={})
    exp = Expected(ref=ref, scale=np.full(ref.shape, 1e-12), n=3, model="derived")
    failure, margin = assess(case, CallOutcome(status="ok", result=np.array([[-1e9, -1.0, -2.0]])), exp)
    assert failure.kind == "tolerance" and margin == float("inf")
    assert assess(case, CallOutcome(status="ok", result=ref.copy()), exp) == (None, 0.0)


def test_non_finite_values_are_written_as_the_value_lines_write_them():
    """A newcomer's finding: a message said ``got nan`` above the report's ``got = [NaN, ...]``;
    messages and value lines now write NaN and infinities alike, as Python does (a trial read
    JSON's ``-Infinity`` and ``[true]`` as foreign to a Python learner)."""
    from grader.compare import _fmt
    from grader.reports.common import compact_value as _compact
    assert [_fmt(float("nan")), _fmt(float("inf")), _fmt(-float("inf")), _fmt(0.5)] == ["nan", "inf", "-inf", "0.5"]
    assert _compact([[float("nan"), float("-inf")], [True, False]]) == "[[nan, -inf], [True, False]]"
    # a report read back from its JSON (grader grade's feedback) holds them as strings
    assert _compact([["nan", "inf"], ["-inf", 1.5]]) == "[[nan, inf], [-inf, 1.5]]"


def test_a_worst_element_reads_as_two_numbers_when_it_differs():
    """A float64 result off by 1e-8 read 'got -0.380819, expected -0.380819' (an instructor's
    trial): digits are added until the two differ; equal or non-finite ones stay short."""
    from grader.compare import _fmt_pair
    assert _fmt_pair(-0.380819001, -0.38081900993411) == ("-0.380819001", "-0.38081901")
    assert _fmt_pair(0.41626, 0.0486354) == ("0.41626", "0.0486354")
    assert _fmt_pair(1.0, 1.0000000000000002) == ("1", "1.0000000000000002")
    assert _fmt_pair(float("nan"), 1.0) == ("nan", "1") and _fmt_pair(2.0, 2.0) == ("2", "2")
