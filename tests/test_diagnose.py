"""Hints (tied_lm_head's ideas in grader.hints.tied_lm_head, combined by grader.diagnose) and the failure summary (grader.summary.summarise), in-process.

Each idea is tested against the output a mistake actually gives, computed here the way a
learner's code would compute it, and against outputs it must not claim (a near miss, another
mistake). Learner-facing messages are asserted exactly for a few (STYLE.md).
"""
from __future__ import annotations

import dataclasses

import math

import ml_dtypes
import numpy as np
import pytest

from grader import diagnose, words
from grader.hints import generic
from grader.hints import tied_lm_head as tied
from grader.cases import Case
from grader.summary import summarise
from grader.compare import allowed_error
from grader.results import ArrayInfo, CaseResult, Failure

NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16),
      "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}


def said(hint, framework="numpy", module="tied_lm_head"):
    """The hint's sentence as a ``framework`` learner of tied_lm_head reads it."""
    return words.render(hint, framework, module) if hint is not None else None


def inputs(seed=0, lead=(4,), d=8, v=6, dt="float32", mean=(-2, 2), scale=(0.5, 2)):
    rng = np.random.default_rng(seed)
    h = rng.uniform(*mean, lead + (1,)) + rng.uniform(*scale, lead + (1,)) * rng.standard_normal(lead + (d,))
    e = rng.standard_normal((v, d))
    return h.astype(NP[dt]), e.astype(NP[dt])


def hint_for(h, e, got_fn, dt="float32", exact=False):
    """The Hint for the output ``got_fn(h64, e64, ref)`` (computed in float64, rounded to dt)."""
    case = Case(name=f"c[{dt}]", group="g", dtype=dt, inputs={"hidden": h, "embedding_matrix": e}, sizes={},
                compare="exact" if exact else "tolerance")
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    ref = h64 @ e64.T
    scale = np.abs(h64) @ np.abs(e64).T
    got = np.asarray(got_fn(h64, e64, ref)).astype(NP[dt]).astype(np.float64)
    allowed = np.zeros_like(ref) if exact else allowed_error(dt, ref, scale, h.shape[-1])
    return tied.diagnose_values(case, got, ref, None if exact else scale, allowed)


def softmax(x):
    z = np.exp(x - x.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


IDEAS = {
    "softmax": lambda h, e, r: softmax(r),
    "log_softmax": lambda h, e, r: r - np.log(np.exp(r - r.max(-1, keepdims=True)).sum(-1, keepdims=True))
    - r.max(-1, keepdims=True),
    "sign_flip": lambda h, e, r: -r,
    "abs": lambda h, e, r: np.abs(r),
    "relu": lambda h, e, r: np.maximum(r, 0),
    "normalised_hidden": lambda h, e, r: (h / np.linalg.norm(h, axis=-1, keepdims=True)) @ e.T,
    "cosine": lambda h, e, r: (h / np.linalg.norm(h, axis=-1, keepdims=True))
    @ (e / np.linalg.norm(e, axis=-1, keepdims=True)).T,
    "normalised_table": lambda h, e, r: h @ (e / np.linalg.norm(e, axis=-1, keepdims=True)).T,
    "standardised_hidden": lambda h, e, r: ((h - h.mean(-1, keepdims=True)) / h.std(-1, keepdims=True)) @ e.T,
    "row_offset": lambda h, e, r: r - r.mean(-1, keepdims=True),
    "first_row": lambda h, e, r: np.broadcast_to(r[0], r.shape),
    "feature_dropped": lambda h, e, r: h[:, :-1] @ e[:, :-1].T,
}


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("idea", sorted(IDEAS))
def test_each_idea_is_named_in_every_dtype(idea, dt):
    h, e = inputs(seed=1, dt=dt)
    hint = hint_for(h, e, IDEAS[idea], dt)
    assert hint is not None and hint.idea == idea, hint


def test_exact_messages():
    h, e = inputs(seed=2)
    assert said(hint_for(h, e, IDEAS["softmax"])) == (
        "looks like softmax was applied to the logits: return the raw logits (softmax belongs to the loss or "
        "to sampling)")
    assert said(hint_for(h, e, lambda h, e, r: r + 0.5)) == (
        "looks like a constant offset of 0.5 was added to every logit (a bias?); the head has no bias")
    assert said(hint_for(h, e, lambda h, e, r: r / math.sqrt(8))) == (
        "looks like the logits were multiplied by a factor of 1/sqrt(d_model) = 0.3536 (d_model = 8); scaling "
        "belongs to attention scores, not to the output logits; leave them unscaled")
    assert said(hint_for(h, e, lambda h, e, r: 2 * r)) == (
        "looks like the logits were multiplied by a factor of 2; leave them unscaled")
    h64 = h.astype(np.float64)
    assert said(hint_for(h64, e.astype(np.float64), lambda h, e, r: (h.astype(np.float32) @ e.astype(np.float32).T),
                    "float64")) == (
        "every value is a float32 number and the errors are float32's: the float64 inputs were computed in "
        "float32 precision (a cast such as hidden.astype(np.float32)?); compute in the inputs' dtype")


def test_factor_does_not_fire_for_softmax_even_with_one_logit_per_row():
    h, e = inputs(seed=3, v=1)
    # with one logit per row softmax returns all ones, which says nothing about softmax (clipping
    # or tanh of large logits give it too): no cause, and surely no factor
    assert hint_for(h, e, IDEAS["softmax"]) is None
    h, e = inputs(seed=3, v=2)
    assert hint_for(h, e, IDEAS["softmax"]).idea == "softmax"


def test_constant_offset_versus_per_row_versus_bias_vector():
    h, e = inputs(seed=4)
    assert hint_for(h, e, lambda h, e, r: r - 0.25).idea == "offset"
    rows = np.array([[0.5], [-1.0], [2.0], [0.25]])
    assert hint_for(h, e, lambda h, e, r: r + rows).idea == "row_offset"
    cols = np.linspace(-1, 1, 6)
    assert hint_for(h, e, lambda h, e, r: r + cols).idea == "column_offset"


def test_an_offset_needs_more_than_one_number():
    h, e = np.array([0.0], np.float32), np.array([[0.0]], np.float32)
    assert hint_for(h, e, lambda h, e, r: r + 0.5) is None  # one number is no evidence
    assert hint_for(h, e, lambda h, e, r: r + 1.0) is None  # exp(0), softmax of one logit...
    # three zero logits that all became 0.5 (softmax would give 1/3)
    h, e = np.array([0.0, 0.0], np.float32), np.zeros((3, 2), np.float32)
    assert hint_for(h, e, lambda h, e, r: r + 0.5).idea == "offset"
    h, e = np.array([0.7], np.float32), np.array([[0.3]], np.float32)
    assert hint_for(h, e, lambda h, e, r: r + 0.123456) is None


def test_no_factor_or_offset_from_a_single_nonzero_logit():
    # one number fits a factor and an offset alike, and noise as well (float16 resolves 0.0495 ->
    # 0.0595 as x1.2 or +0.01; 1% noise lands on plain values too): no fitted hint from it
    h, e = np.array([1.5], np.float16), np.array([[-2.0]], np.float16)
    assert hint_for(h, e, lambda h, e, r: r * 0.125, "float16") is None
    assert hint_for(h, e, lambda h, e, r: r * 0.8137, "float16") is None
    h, e = np.array([0.5], np.float16), np.array([[0.099]], np.float16)
    assert hint_for(h, e, lambda h, e, r: r + 0.01, "float16") is None
    assert hint_for(h, e, lambda h, e, r: r * 1.2, "float16") is None
    assert hint_for(h.astype(np.float32), e.astype(np.float32), lambda h, e, r: r + 0.01) is None
    # two logits that agree on the factor are evidence
    h, e = np.array([1.5, 0.5], np.float16), np.array([[-2.0, 1.0], [0.75, 3.0]], np.float16)
    assert hint_for(h, e, lambda h, e, r: r * 0.125, "float16").idea == "factor"


def test_hints_on_exact_probe_cases_where_nothing_is_allowed():
    e = inputs(seed=5)[1]
    h = np.zeros((3, 8), np.float32)
    h[np.arange(3), np.arange(3)] = 2.0  # 2 * e_k rows, as the spec's basis probes
    assert hint_for(h, e, lambda h, e, r: r / math.sqrt(8), exact=True).idea == "factor"
    assert hint_for(h, e, lambda h, e, r: r + 1e-3, exact=True).idea == "offset"
    zero = np.zeros((3, 8), np.float32)
    assert hint_for(zero, e, lambda h, e, r: r + 0.5, exact=True).idea == "offset"
    # softmax of zero logits is 1/V everywhere: an offset of 1/V gives the same output, so the
    # case cannot tell them apart and names neither
    assert hint_for(zero, e, IDEAS["softmax"], exact=True) is None
    assert hint_for(h, e, IDEAS["softmax"], exact=True).idea == "softmax"


def test_mistake_on_some_elements_only():
    h, e = inputs(seed=6)
    relu = hint_for(h, e, IDEAS["relu"])
    assert relu.idea == "relu"  # only the negative logits change, and the idea still fits

    def last_row_zero(h, e, r):
        out = r.copy()
        out[-1] = 0
        return out
    hint = hint_for(h, e, last_row_zero)
    assert hint.idea == "where"
    assert said(hint) == ("only the last of 4 rows (hidden vectors, leading axes flattened) is wrong (they came "
                         "back as 0: never computed?): a loop or slice that stops short?")

    def negatives_halved(h, e, r):
        return np.where(r < 0, r / 3 + 0.1, r)
    assert hint_for(h, e, negatives_halved).facts["sign"] == "negative"


def test_no_idea_claims_a_near_miss_or_noise():
    h, e = inputs(seed=7)
    rng = np.random.default_rng(0)
    for dt in ("float16", "float32"):
        hh, ee = h.astype(NP[dt]), e.astype(NP[dt])
        h64, e64 = hh.astype(np.float64), ee.astype(np.float64)
        allowed = allowed_error(dt, h64 @ e64.T, np.abs(h64) @ np.abs(e64).T, 8)
        noisy = lambda h, e, r: r + 3 * allowed * rng.choice([-1, 1], r.shape)  # noqa: E731
        hint = hint_for(hh, ee, noisy, dt)
        assert hint is None or hint.idea == "half_accumulation", hint


def test_precision_ideas():
    h, e = inputs(seed=8)
    hint = hint_for(h, e, lambda h, e, r: h.astype(np.float16) @ e.astype(np.float16).T, "float32")
    assert (hint.idea, hint.facts["computed_in"]) == ("lower_precision", "float16")

    h16, e16 = inputs(seed=8, lead=(4,), d=512, v=3, dt="float16", mean=(1, 2), scale=(0.1, 0.2))
    e16 = np.abs(e16)

    def loop_in_float16(h, e, r):
        acc = np.zeros(r.shape, np.float16)
        for k in range(h.shape[-1]):
            acc = (acc + (h[:, None, k] * e[:, k]).astype(np.float16)).astype(np.float16)
        return acc
    hint = hint_for(h16, e16, loop_in_float16, "float16")
    assert hint is not None and hint.idea == "half_accumulation"


def test_structure_ideas_on_square_tables():
    h, e = inputs(seed=9, lead=(5,), d=5, v=5)
    assert hint_for(h, e, lambda h, e, r: h @ e).idea == "no_transpose"
    assert hint_for(h, e, lambda h, e, r: r.T).idea == "swapped_axes"
    assert hint_for(h, e, lambda h, e, r: h).idea == "returns_hidden"


def test_zeros_and_all_negative():
    h, e = inputs(seed=10)
    assert said(hint_for(h, e, lambda h, e, r: 0 * r)) == (
        "the result is all zeros: were the logits computed and returned?")
    # every logit negative: a ReLU and a result never computed both give zeros; neither is named
    hn, en = np.abs(h), -np.abs(e)
    assert hint_for(hn, en, lambda h, e, r: 0 * r) is None
    assert hint_for(hn, en, IDEAS["relu"]) is None


def test_ideas_that_coincide_on_a_case_are_not_named():
    # rows 2 e_k: normalising them halves the logits, exactly as a factor 1/2 (= 1/sqrt(4)) does
    e = inputs(seed=19, d=4)[1]
    h = 2 * np.eye(4, dtype=np.float32)
    assert hint_for(h, e, IDEAS["normalised_hidden"], exact=True) is None
    assert hint_for(h, e, lambda h, e, r: r / 2, exact=True) is None
    # one logit per row: subtracting the row mean, log-softmax and ReLU of a negative logit all give 0
    h, e = inputs(seed=20, v=1)
    assert hint_for(h, e, IDEAS["row_offset"]) is None
    # a zero input plus 0.001 is an offset, not one offset per row that happens to be equal
    zero = np.zeros((4, 4), np.float32)
    assert hint_for(zero, inputs(seed=21, d=4)[1], lambda h, e, r: r + 1e-3, exact=True).idea == "offset"
    # a parameter-free idea of a fitted family stays named: log-softmax is an offset per row
    h, e = inputs(seed=22)
    assert hint_for(h, e, IDEAS["log_softmax"]).idea == "log_softmax"
    assert hint_for(h, e, IDEAS["sign_flip"]).idea == "sign_flip"


# ---------------------------------------------------------------------------------------------
# shapes, dtypes, non-finite values, exceptions

def shape_hint(got_shape, lead=(2, 3), d=4, v=5, got=None):
    h = np.ones(lead + (d,), np.float32)
    e = np.arange(v * d, dtype=np.float32).reshape(v, d)
    case = Case(name="c[float32]", group="g", dtype="float32", inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    ref = h.astype(np.float64) @ e.astype(np.float64).T
    if got is None:
        got = np.zeros(got_shape, np.float32)
    return tied.diagnose_shape(case, got, ref)


def test_shape_ideas():
    assert said(shape_hint((1, 5), lead=())) == (
        "a leading axis of size 1 was added (e.g. np.atleast_2d or a reshape to 2-D): a single vector of shape "
        "(d_model,) must give shape (vocab_size,); the values differ as well")
    h = np.ones((4,), np.float32)
    right = h @ np.arange(20, dtype=np.float32).reshape(5, 4).T
    assert said(shape_hint(None, lead=(), got=right[None])).endswith("must give shape (vocab_size,)")
    assert shape_hint((6, 5)).idea == "flattened"
    assert shape_hint((2, 5, 3)).idea == "transposed"
    assert shape_hint((2, 3, 4)).idea == "hidden_shape"
    assert shape_hint((2, 3, 5), lead=(2, 1, 3)).idea == "squeezed"
    assert shape_hint((2, 3, 7)).idea == "wrong_vocab"
    ref = np.ones((2, 3, 4)) @ np.arange(20.0).reshape(5, 4).T
    assert said(shape_hint(None, got=np.float32(ref.sum()))) == (
        "a scalar came back, all logits summed: return every logit, shape (..., vocab_size)")
    assert shape_hint(()) is None  # a scalar that is no reduction of the logits: no cause named
    # rows all alike (hidden = ones): the first row or the last? neither is named
    assert shape_hint(None, got=ref[0].astype(np.float32)) is None
    h = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    e = np.arange(20, dtype=np.float32).reshape(5, 4)
    case = Case(name="c[float32]", group="g", dtype="float32", inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    ref = h.astype(np.float64) @ e.astype(np.float64).T
    assert said(tied.diagnose_shape(case, ref[0].astype(np.float32), ref)) == (
        "only the first row of the batch was computed (the leading axis of size 2 is missing); keep every "
        "leading axis")
    assert tied.diagnose_shape(case, (ref[0] + 7).astype(np.float32), ref) is None
    assert shape_hint((0,), lead=(0,)).idea == "empty_batch"
    # an empty result of another shape (code that assumes a rank): the shape, not np.array's cause
    assert said(shape_hint((0, 0, 5), lead=(0,))) == (
        "an empty batch must still give shape (0, 5) (leading axes, then vocab_size), not (0, 0, 5)")
    ones = np.ones((2, 3, 4), np.float32)
    dropped = ones.astype(np.float64) @ np.arange(20.0).reshape(5, 4)[:-1].T
    assert shape_hint(None, got=dropped.astype(np.float32)).idea == "vocab_dropped"
    assert shape_hint(None, got=ones).idea == "returns_hidden"


def test_dtype_hints():
    case = Case(name="c[float16]", group="g", dtype="float16", inputs={"hidden": np.ones(2, np.float16)}, sizes={})
    assert said(tied.diagnose_dtype(case, np.ones(2, np.float32))) == (
        "the result was promoted to float32: compute as you like, but return float16 (e.g. .astype(hidden.dtype))")
    case64 = Case(name="c[float64]", group="g", dtype="float64", inputs={"hidden": np.ones(2)}, sizes={})
    assert tied.diagnose_dtype(case64, np.ones(2, np.float32)).idea == "demoted"
    assert tied.diagnose_dtype(case64, np.ones(2, np.int64)).idea == "integer"
    bf = Case(name="c[bfloat16]", group="g", dtype="bfloat16", inputs={"hidden": np.ones(2, NP["bfloat16"])}, sizes={})
    assert tied.diagnose_dtype(bf, np.ones(2, np.float16)).idea == "other_half"


def test_non_finite_and_type_hints():
    h = np.array([[0.0, 0.0], [1.0, 2.0]], np.float32)
    case = Case(name="c[float32]", group="g", dtype="float32",
                inputs={"hidden": h, "embedding_matrix": np.eye(2, dtype=np.float32)}, sizes={})
    got = np.array([[np.nan, np.nan], [1.0, 2.0]])
    assert tied.diagnose_non_finite(case, got, h.astype(np.float64)).idea == "nan_zero_rows"
    # an infinity is called an overflow only where an intermediate really leaves the range
    assert tied.diagnose_non_finite(case, np.array([[0, 0], [np.inf, 2]]), h.astype(np.float64)) is None
    big = np.array([[300.0, 300.0]], np.float16)
    case16 = Case(name="c[float16]", group="g", dtype="float16",
                  inputs={"hidden": big, "embedding_matrix": np.full((1, 2), 100.0, np.float16)},
                  sizes={})
    assert tied.diagnose_non_finite(case16, np.array([[np.inf]]), np.array([[60000.0]])).idea == "overflow"
    assert said(tied.diagnose_type("NoneType")) == "the function returned None: is a return statement missing?"
    assert said(tied.diagnose_type("list")) == "return an array, not a list (drop .tolist() or wrap with np.asarray)"
    # a PyTorch learner returns a tensor, not "an array" (a newcomer's finding)
    assert said(tied.diagnose_type("list"), "torch") == \
        "return a tensor, not a list (drop .tolist() or wrap with torch.as_tensor)"
    assert "not a tensor: return a torch.Tensor" in said(tied.diagnose_type("dict"), "torch")


def test_exception_hints():
    shapes = {"hidden": [4, 8], "embedding_matrix": [6, 8]}
    msg = ("ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
           "(n?,k),(k,m?)->(n?,m?) (size 6 is different from 8)")
    assert tied.diagnose_exception(msg, shapes).idea == "shapes_do_not_line_up"
    assert generic.exception_hint("NotImplementedError").idea == "not_implemented"
    assert tied.diagnose_exception("NotImplementedError") is None  # the generic stage says it
    assert tied.diagnose_exception("ZeroDivisionError: division by zero") is None


# ---------------------------------------------------------------------------------------------
# many cases: combine() and summarise()

def test_combine_names_a_factor_that_follows_d_model():
    hints = [{"id": "factor", "params": {"factor": 1 / math.sqrt(d), "d_model": d}, "text": f"t{d}", "size": d}
             for d in (2, 4, 8, 16, 32)]
    (top,) = diagnose.combine(hints, "numpy", "tied_lm_head")
    assert top["text"] == ("looks like the logits were multiplied by a factor of 1/sqrt(d_model) (in every case, "
                           "d_model from 2 to 32); scaling belongs to attention scores, not to the output logits; "
                           "leave them unscaled")
    assert (top["count"], top["of"]) == (5, 5)


def test_combine_constant_factor_and_minorities():
    hints = [{"id": "factor", "params": {"factor": 0.5, "d_model": d}, "text": "x", "size": 1} for d in (1, 2, 4)]
    hints.append({"id": None, "text": None})
    (top,) = diagnose.combine(hints, "numpy", "tied_lm_head")
    assert top["text"] == "looks like the logits were multiplied by a constant factor of 0.5; leave them unscaled"
    assert (top["count"], top["of"]) == (3, 4)
    assert diagnose.combine([{"id": None}] * 3) == []


def test_combine_reads_exceptions_and_spots_a_hard_coded_shape():
    exc = [{"id": None, "kind": "exception", "message": "NotImplementedError", "text": None}] * 3
    assert diagnose.combine(exc)[0]["id"] == "not_implemented"
    shapes = [{"id": None, "kind": "shape", "text": None, "data": {"got": [3], "expected": list(s)}}
              for s in [(5,), (2, 7), (1, 1, 4)]]
    assert diagnose.combine(shapes)[0]["text"] == (
        "the result has shape (3,) whatever the inputs' shapes: is it hard-coded (the worked example?) instead of "
        "computed from the inputs?")


def result(name, dt, rank, kind=None, hint_id=None, shrunk=False):
    failure = Failure(kind=kind, message="m", hint="h", data={"hint_id": hint_id} if hint_id else {}) if kind else None
    return CaseResult(name=name, group="g", status="failed" if kind else "passed", dtype=dt, rank=rank,
                      inputs={"hidden": ArrayInfo(shape=(2,) * rank, dtype=dt)}, failure=failure, shrunk=shrunk)


DT = ("float16", "float32", "float64")


def test_a_case_that_runs_in_one_dtype_only_is_not_said_to_fail_only_there():
    """A helper's new exercise had a case the spec runs only in float16, in a group of its own;
    its failure read "only in float16 (float32, float64 fail in another way)", as if the other
    dtypes had run it. A dtype counts against "only" when it ran cases of the failing cases'
    groups; with none, the line says the case runs in that dtype only, and no range hint is
    drawn from a bfloat16 that never ran it."""
    dts = ("bfloat16", "float16", "float32", "float64")
    others = [dataclasses.replace(result(f"a{i}[{dt}]", dt, 1, "shape"), group="g")
              for dt in ("float32", "float64") for i in range(2)]
    ok = [dataclasses.replace(result(f"b{i}[bfloat16]", "bfloat16", 1), group="g") for i in range(2)]
    own = [dataclasses.replace(result("range[float16]", "float16", 1, "tolerance"), group="range_only")]
    entries = {e["kind"]: e for e in summarise(own + others + ok, dts, framework="numpy")}
    assert entries["tolerance"]["text"] == "tolerance: 1 case, in float16 (the only dtype this case runs in)"
    assert entries["tolerance"]["only_dtypes"] is None and entries["tolerance"]["hint"] is None
    # a group the other dtypes ran keeps "only in": there they passed or failed otherwise
    mixed = own + [dataclasses.replace(result("range[float32]", "float32", 1), group="range_only")] + ok
    (tol,) = [e for e in summarise(mixed, dts, framework="numpy") if e["kind"] == "tolerance"]
    assert tol["text"] == "tolerance: 1 case, only in float16 (float32 passes)"
    # a dtype whose cases of the group were skipped after a stop has them (a helper's endless
    # loop in float16 read "the only dtype this case runs in")
    stopped = own + [dataclasses.replace(result("range[float32]", "float32", 1), group="range_only", status="skipped")] \
        + [dataclasses.replace(result("b0[float32]", "float32", 1), group="g")]
    (tol,) = [e for e in summarise(stopped, dts, framework="numpy") if e["kind"] == "tolerance"]
    assert "only dtype" not in tol["text"] and tol["only_dtypes"] == ["float16"], tol["text"]


def test_summary_only_one_dtype():
    cases = [result(f"a{i}[{dt}]", dt, 1 + i % 3, "tolerance" if dt == "float16" else None, "factor")
             for dt in DT for i in range(6)]
    (s,) = summarise(cases, DT)
    assert s["text"] == "tolerance: 6 cases, only in float16 (float32, float64 pass)"
    assert (s["only_dtype"], s["only_dtypes"], s["rank_pattern"]) == ("float16", ["float16"], None)
    assert s["hint"] == {"id": "factor", "text": "h", "count": 6, "of": 6}


def test_summary_rank_patterns():
    only1 = [result(f"a{i}[{dt}]", dt, r, "shape" if r == 1 else None) for dt in DT for i, r in enumerate([1, 1, 2, 3])]
    (s,) = summarise(only1, DT)
    assert s["text"] == ("shape: 6 cases, in every dtype (float16, float32, float64), only for a single hidden "
                         "vector (1 axis); other ranks pass")
    from3 = [result(f"b{i}[{dt}]", dt, r, "tolerance" if r >= 3 else None)
             for dt in DT for i, r in enumerate([1, 2, 3, 4])]
    (s,) = summarise(from3, DT)
    assert s["rank_pattern"] == {"how": "from", "rank": 3} and s["from_rank"] == 3
    assert s["text"].endswith("only from rank 3 on (hidden with 3 or more axes); smaller ranks pass")


def test_summary_says_which_dtype_of_an_index_input_fails():
    """Issue 34: a lookup that refused int32 ids was summarised as "raises: 4 cases, only in
    float32 (float16, float64 pass)", the float dtype, which was not what varied. The pattern
    names the input and its dtypes (integers against integers: float ids that must raise test
    something else); fewer than three failures, or a failing dtype that passes as often as it
    fails, claim nothing."""
    def lookup(name, dt, ids, kind=None):
        failure = Failure(kind=kind, message="m", data={}) if kind else None
        return CaseResult(name=name, group="g", status="failed" if kind else "passed", dtype=dt, rank=1,
                          inputs={"token_ids": ArrayInfo(shape=(3,), dtype=ids),
                                  "embedding_matrix": ArrayInfo(shape=(5, 2), dtype=dt)}, failure=failure)
    cases = [lookup(f"a{i}[{dt}]", dt, ids, "exception" if ids == "int32" else None)
             for dt in DT for i, ids in enumerate(["int32", "int64", "int32", "float32", "bool"])]
    (s,) = summarise(cases, DT)
    assert s["input_dtypes"] == {"input": "token_ids", "failing": ["int32"], "passing": ["int64"]}
    assert s["text"] == ("exception: 6 cases, in every dtype (float16, float32, float64), only when token_ids is "
                         "int32 (int64 passes)")
    few = [c for c in cases if c.dtype == "float32"]
    assert summarise(few, ("float32",))[0]["input_dtypes"] is None           # 2 failures: a coincidence
    mixed = cases + [lookup(f"b{i}[{dt}]", dt, "int32") for dt in DT for i in range(3)]
    assert summarise(mixed, DT)[0]["input_dtypes"] is None                     # int32 passes 9 of 15 times
    floats = [result(f"a{i}[{dt}]", dt, 1, "tolerance" if dt == "float16" else None) for dt in DT for i in range(6)]
    assert summarise(floats, DT)[0]["input_dtypes"] is None                    # only the graded dtype varied


def test_every_summary_entry_gets_its_shared_hint_not_only_the_first():
    """A newcomer's trial: the summary's second entry never had a hint (its 25 of 26 cases
    carried "multiplied by 1/sqrt(d_model)"): the first entry's hints replaced the problem's hint
    module in the loop, the second combine raised on them, and that was taken as "no hint"."""
    cases = [result(f"a{i}[{dt}]", dt, 2, "dtype" if dt != "float64" else "tolerance",
                    "promoted" if dt != "float64" else "factor") for dt in DT for i in range(4)]
    entries = summarise(cases, DT, "numpy", "tied_lm_head")
    assert [e["kind"] for e in entries] == ["dtype", "tolerance"]
    # the dtype entry's two dtypes carry one hint worded alike ("h"): one line for its 8 cases
    assert [(bool(e["hints"]), e["hint"]["count"]) for e in entries] == [(True, 8), (True, 4)], entries
    assert entries[0]["text"] == "dtype: 8 cases, only in float16, float32 (float64 fails in another way)"
    assert entries[1]["text"] == "tolerance: 4 cases, only in float64 (float16, float32 fail in another way)"


def test_a_result_promoted_in_several_dtypes_is_one_hint():
    """A newcomer's trial: "promoted to float64 ... return float16" and "... return float32", 31
    of 62 cases each, two near-identical hints for one mistake. One hint names the dtypes."""
    hints = [{"id": "promoted", "params": {"got": "float64", "want": dt, "like": "hidden", "how": "promoted"},
              "text": f"return {dt}", "size": 4, "dtype": dt, "kind": "dtype", "message": "m", "data": {}}
             for dt in ("float32", "float16") for _ in range(3)]
    (h,) = diagnose.combine(hints, "torch")
    assert (h["id"], h["count"], h["of"]) == ("promoted", 6, 6)
    assert h["text"] == ("the result was promoted to float64: compute as you like, but return each case in its "
                         "inputs' dtype (float16, float32) (e.g. .to(hidden.dtype))")
    (one,) = diagnose.combine(hints[:3], "numpy")
    assert one["text"] == "return float32"   # one dtype: the case's own sentence


def test_summary_claims_no_rank_pattern_from_a_few_coincidences():
    cases = [result(f"c{i}[float32]", "float32", r, None) for i, r in enumerate([1, 1, 2, 2, 2, 2, 2, 3])]
    cases[2] = result("c2[float32]", "float32", 2, "non_finite")
    cases[3] = result("c3[float32]", "float32", 2, "non_finite")
    (s,) = summarise(cases, ("float32",))
    assert s["rank_pattern"] is None


def test_summary_leaves_shrunk_cases_out_of_counts_but_uses_them_as_example():
    cases = [result("gen001[float32]", "float32", 2, "tolerance"), result("x[float32]", "float32", 2, "tolerance"),
             result("shrunk:gen001[float32]", "float32", 1, "tolerance", shrunk=True)]
    (s,) = summarise(cases, ("float32",))
    assert s["count"] == 2 and s["example"] == "shrunk:gen001[float32]"


def test_fitted_values_are_shown_plain_but_never_rounded_away():
    h, e = inputs(seed=11, d=6, dt="float16", mean=(20, 30))  # large logits: float16 rounds the offset
    assert hint_for(h, e, lambda h, e, r: r + 0.5, "float16").facts == {"offset": 0.5}
    assert hint_for(h, e, lambda h, e, r: r * 0.125, "float16").facts["factor"] == 0.125
    assert hint_for(h, e, lambda h, e, r: r * 0.37, "float16").facts["factor"] == 0.37


# ---------------------------------------------------------------------------------------------
# hints that are right or absent (issue 8): each class of wrong hint testers saw

def gradual_underflow_allowance(dt, ref, scale, n):
    """The allowance of a verdict that assumed gradual underflow ((n + 1) x the smallest
    subnormal), which failed flushed results: the hints must still name no cause for them."""
    u = float(ml_dtypes.finfo(NP[dt]).eps) / 2
    u_acc = 2.0 ** -53 if dt == "float64" else 2.0 ** -24
    allowed = u * np.abs(ref) + 2 * (n + 1) * u_acc * scale + (3 * u * scale if dt in ("float16", "bfloat16") else 0)
    return allowed + (n + 1) * float(ml_dtypes.finfo(NP[dt]).smallest_subnormal)


def flushed_hint(h, e, dt="float32"):
    """The hint for ``h @ e.T`` computed as XLA on the CPU does: products below the smallest
    normal number flushed to zero, graded with a gradual-underflow allowance."""
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    tn = float(ml_dtypes.finfo(NP[dt]).smallest_normal)
    products = h64[..., None, :] * e64
    got = np.where(np.abs(products) < tn, 0.0, products).sum(-1)
    got = np.where(np.abs(got) < tn, 0.0, got).astype(NP[dt]).astype(np.float64)
    ref, scale = h64 @ e64.T, np.abs(h64) @ np.abs(e64).T
    allowed = gradual_underflow_allowance(dt, ref, scale, h.shape[-1])
    assert np.any(np.abs(got - ref) > allowed)  # the verdict failed it
    case = Case(name=f"c[{dt}]", group="g", dtype=dt, inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    return tied.diagnose_values(case, got, ref, scale, allowed)


def test_flushed_subnormals_are_never_called_a_cast_to_float16():
    # the first row's logits are float16 numbers; the second row's products are subnormal and
    # flushed to 0, which is a float16 number too: once called "a cast to float16"
    h = np.array([[2.0, 4.0], [1.2e-38, 1.2e-38]], np.float32)
    e = np.array([[0.5, 0.25], [0.75, 0.5]], np.float32)
    assert flushed_hint(h, e) is None


def test_flushed_subnormals_are_never_called_a_relu():
    # all logits negative and tiny, flushed to zeros: once "all zeros where every logit should be
    # negative: a ReLU"
    h = np.array([[0.5, 0.5], [0.25, 0.75]], np.float32)
    e = -np.array([[1.5e-38, 1.0e-38], [2.0e-38, 1.2e-38], [1.3e-38, 1.5e-38]], np.float32)  # products < 2**-126
    assert flushed_hint(h, e) is None
    # positive logits normal, negative ones tiny and flushed: max(ref, 0) fits, but is no cause
    h = np.array([[1.0, 1e-30], [2.0, 1e-30]], np.float32)
    e = np.array([[0.5, 0.0], [0.0, -1e-9], [0.25, -2e-9]], np.float32)
    assert flushed_hint(h, e) is None
    # a real ReLU on the same kind of inputs is still named
    h, e = inputs(seed=12)
    assert hint_for(h, e, IDEAS["relu"]).idea == "relu"


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_bfloat16_rounding_is_called_bfloat16_not_float16(dt):
    h, e = inputs(seed=13, d=16, dt=dt)
    bf = NP["bfloat16"]

    def in_bfloat16(h, e, r):
        return (h.astype(bf).astype(np.float64) @ e.astype(bf).astype(np.float64).T).astype(bf)
    hint = hint_for(h, e, in_bfloat16, dt)
    assert (hint.idea, hint.facts["computed_in"]) == ("lower_precision", "bfloat16")
    # every bfloat16 value here is a float16 value too: the grid alone cannot tell them apart
    got = in_bfloat16(h.astype(np.float64), e.astype(np.float64), None).astype(np.float64)
    assert np.array_equal(got.astype(np.float16).astype(np.float64), got)

    def in_float16(h, e, r):
        return (h.astype(np.float16).astype(np.float64) @ e.astype(np.float16).astype(np.float64).T).astype(np.float16)
    hint = hint_for(h, e, in_float16, dt)
    assert (hint.idea, hint.facts["computed_in"]) == ("lower_precision", "float16")


def test_a_value_both_formats_hold_exactly_names_neither():
    """A shrunk case of a float16 computation (hidden [[1, 1]], every table entry 0.45304...):
    both got values are 0.90625, which float16 and bfloat16 predict alike, so the residuals tie at
    zero and "bfloat16" was named (the hint benchmark's only wrong hint). One value, however often
    repeated, is one piece of evidence, and an exact tie names neither."""
    h = np.array([[1.0, 1.0]], dtype=np.float32)
    e = np.full((2, 2), 0.4530409574508667, dtype=np.float32)

    def in_float16(h, e, r):
        return (h.astype(np.float16).astype(np.float64) @ e.astype(np.float16).astype(np.float64).T).astype(np.float16)
    hint = hint_for(h, e, in_float16, "float32")
    assert hint is None or hint.idea != "lower_precision", hint
    from grader.hints import generic
    got = in_float16(h, e, None).astype(np.float64)
    ref = h.astype(np.float64) @ e.astype(np.float64).T
    from grader.hints import Names
    assert generic.lower_precision(got, ref, np.full_like(ref, 1e-6), "float32", lambda low: np.full_like(ref, 1e-3),
                                   Names("tied_lm_head", ("hidden", "embedding_matrix"), "float32")) is None


def test_lower_precision_checks_the_exponent_range():
    # values beyond float16's range computed in bfloat16: no float16 number, so only bfloat16 fits
    h, e = inputs(seed=14, d=16, mean=(200, 300))
    bf = NP["bfloat16"]
    hint = hint_for(h, e, lambda h, e, r: (h.astype(bf).astype(np.float64) @ e.astype(bf).astype(np.float64).T)
                    .astype(bf), "float32")
    assert hint.facts["computed_in"] == "bfloat16"
    # tiny values below float16's range computed in float16 flush to 0 or to float16 subnormals:
    # those outputs are float16 numbers, and the prediction (inputs rounded to float16) matches
    h, e = inputs(seed=15, d=16)
    h = (h * 1e-4).astype(np.float32)
    hint = hint_for(h, e, lambda h, e, r: (h.astype(np.float16).astype(np.float64)
                                           @ e.astype(np.float16).astype(np.float64).T).astype(np.float16), "float32")
    assert hint is not None and hint.facts["computed_in"] == "float16"


def test_a_reshape_error_is_not_called_a_missing_transpose():
    # code that only handles rank-3 input, given a single vector: once "the table needs a transpose"
    shapes = {"hidden": [8], "embedding_matrix": [6, 8]}
    assert tied.diagnose_exception("ValueError: cannot reshape array of size 8 into shape (8,8)", shapes) is None
    assert tied.diagnose_exception("ValueError: operands could not be broadcast together with shapes (8,) (6,8)",
                                       shapes) is None
    hints = [{"id": None, "kind": "exception", "text": None, "shapes": shapes,
              "message": "ValueError: cannot reshape array of size 8 into shape (8,8)"}] * 3
    assert diagnose.combine(hints) == []


def test_a_missing_transpose_is_named_only_when_the_sizes_confirm_it():
    shapes = {"hidden": [2, 3, 8], "embedding_matrix": [6, 8]}
    numpy_msg = ("ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                 "signature (n?,k),(k,m?)->(n?,m?) (size 6 is different from 8)")
    jax_msg = ("TypeError: dot_general requires contracting dimensions to have the same shape, got (8,) and (6,).")
    dot_msg = "ValueError: shapes (4,8) and (6,8) not aligned: 8 (dim 1) != 6 (dim 0)"
    for msg in (numpy_msg, jax_msg):
        assert tied.diagnose_exception(msg, shapes).idea == "shapes_do_not_line_up"
    assert tied.diagnose_exception(dot_msg, {"hidden": [4, 8], "embedding_matrix": [6, 8]}).idea == \
        "shapes_do_not_line_up"
    # the same kind of message about other sizes (an intermediate of the learner's own making),
    # or without the case's sizes: no cause
    assert tied.diagnose_exception(numpy_msg.replace("size 6 is different from 8", "size 3 is different from 8"),
                                       shapes) is None
    assert tied.diagnose_exception(numpy_msg) is None
    assert tied.diagnose_exception(jax_msg, {"hidden": [2, 8], "embedding_matrix": [8, 8]}) is None
    # the case's own hint, asked of its problem's module only (summaries no longer guess the module)
    from grader.cases import Case
    from grader.compare import with_exception_hint
    from grader.results import Failure
    case = Case(name="c", group="shapes", dtype="float32", inputs={k: np.zeros(v, np.float32) for k, v in shapes.items()}, sizes={})
    assert diagnose.for_exception("tied_lm_head", case, numpy_msg).idea == "shapes_do_not_line_up"
    assert diagnose.for_exception(None, case, numpy_msg) is None  # same names, another problem: no guess
    assert diagnose.for_exception(None, case, "NotImplementedError").idea == "not_implemented"
    failure = with_exception_hint(Failure(kind="exception", message=numpy_msg), "tied_lm_head", case)
    assert failure.hint is None  # worded when the report is made, for the learner's framework
    words.render_failure(failure, "numpy", "tied_lm_head")
    assert failure.data["hint_id"] == "shapes_do_not_line_up" and "transpose" in failure.hint
    assert with_exception_hint(Failure(kind="exception", message=numpy_msg), None, case).hint is None
    hints = [{"id": None, "kind": "exception", "message": numpy_msg, "text": None, "shapes": shapes}] * 3
    assert diagnose.combine(hints) == []


def half_loop(h, e):
    """A Python loop over d_model with an accumulator in the inputs' half dtype."""
    acc = np.zeros(h.shape[:-1] + (e.shape[0],), h.dtype)
    for k in range(h.shape[-1]):
        acc = acc + h[..., k, None] * e[:, k]
    return acc


@pytest.mark.parametrize("low,high", [(0.0, 1.0), (0.0, 2.0), (1.0, 2.0)])
def test_a_saturating_half_running_sum_is_named_and_nothing_else_fits_it(low, high, monkeypatch):
    rng = np.random.default_rng(16)
    h = rng.uniform(low, high, (2, 4, 4096)).astype(np.float16)
    e = rng.uniform(low, high, (24, 4096)).astype(np.float16)
    got = half_loop(h, e)
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    ref, scale = h64 @ e64.T, np.abs(h64) @ np.abs(e64).T
    assert np.max(np.abs(got - ref) / allowed_error("float16", ref, scale, 4096)) > 10  # it stalls
    case = Case(name="c[float16]", group="g", dtype="float16", inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    allowed = allowed_error("float16", ref, scale, 4096)
    hint = tied.diagnose_values(case, got.astype(np.float64), ref, scale, allowed)
    assert hint is not None and hint.idea == "half_accumulation", hint
    assert "running sum kept in float16" in said(hint)
    # without that idea, no other may claim the output (once: "log-softmax", "an offset")
    monkeypatch.setattr(tied, "_half_accumulation", lambda x: None)
    hint = tied.diagnose_values(case, got.astype(np.float64), ref, scale, allowed)
    assert hint is None or hint.idea == "where", hint


def test_half_accumulation_is_not_claimed_for_noise():
    h, e = inputs(seed=17, lead=(8,), d=256, v=32, dt="float16")
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    ref, scale = h64 @ e64.T, np.abs(h64) @ np.abs(e64).T
    allowed = allowed_error("float16", ref, scale, 256)
    got = (ref + 3 * allowed * np.random.default_rng(1).choice([-1, 1], ref.shape)).astype(np.float16)
    case = Case(name="c[float16]", group="g", dtype="float16", inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    assert tied.diagnose_values(case, got.astype(np.float64), ref, scale, allowed) is None


def test_a_jax_array_from_a_numpy_submission_is_named_as_such():
    hint = tied.diagnose_type("jaxlib._jax.ArrayImpl")
    assert hint.idea == "jax_array"
    assert said(hint) == ("the function returned a JAX array (jaxlib._jax.ArrayImpl), which only a JAX submission may "
                         "return (the framework comes from the file's import statements): return a numpy.ndarray, "
                         "e.g. np.asarray(result), or import jax.numpy at the top to be graded as JAX")
    other = tied.diagnose_type("torch.Tensor")
    assert said(other) == ("the function returned a torch.Tensor, not an array: return a numpy.ndarray, e.g. "
                          "np.asarray(result)")
    assert "float" in said(tied.diagnose_type("float"))


def test_an_integer_result_says_how_the_fractions_were_lost():
    h, e = inputs(seed=18, mean=(-3, 3), scale=(2, 4))
    case = Case(name="c[float32]", group="g", dtype="float32", inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    ref = h.astype(np.float64) @ e.astype(np.float64).T
    assert said(tied.diagnose_dtype(case, np.trunc(ref).astype(np.int64))) == (
        "the result is an integer array (int64): the fractional parts were cut off (.astype(int)?); return float32 "
        "logits, the inputs' dtype")
    assert "rounded to whole numbers" in said(tied.diagnose_dtype(case, np.round(ref).astype(np.int32)))
    assert said(tied.diagnose_dtype(case, np.zeros(ref.shape, np.int64))) == (
        "the result is an integer array (int64); return float32 logits, the inputs' dtype")


def test_shape_ideas_that_coincide_are_not_named():
    # the worked example's table starts with the identity: dropping its last row gives hidden itself
    h = np.array([2.0, -1.0], np.float32)
    e = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    case = Case(name="worked_example[float32]", group="g", dtype="float32",
                inputs={"hidden": h, "embedding_matrix": e}, sizes={})
    ref = h.astype(np.float64) @ e.astype(np.float64).T
    assert tied.diagnose_shape(case, h.copy(), ref) is None
    e2 = np.array([[3.0, 1.0], [0.5, 2.0], [1.0, 1.0]], np.float32)
    case2 = Case(name="c[float32]", group="g", dtype="float32", inputs={"hidden": h, "embedding_matrix": e2}, sizes={})
    ref2 = h.astype(np.float64) @ e2.astype(np.float64).T
    assert tied.diagnose_shape(case2, ref2[:-1].astype(np.float32), ref2).idea == "vocab_dropped"
    assert tied.diagnose_shape(case2, h.copy(), ref2).idea == "returns_hidden"


def test_dropping_the_only_feature_is_not_called_a_result_never_computed():
    # d_model = 1 without its last feature sums nothing: zeros, and "never computed" fits as well
    h, e = inputs(seed=23, d=1)
    assert hint_for(h, e, lambda h, e, r: 0 * r) is None
    h, e = inputs(seed=23, d=3)
    assert hint_for(h, e, IDEAS["feature_dropped"]).idea == "feature_dropped"
    assert hint_for(h, e, lambda h, e, r: 0 * r).idea == "zeros"


@pytest.mark.parametrize("seed", [24, 25, 26])
def test_an_output_inside_the_allowance_of_zero_gets_no_factor(seed):
    # bfloat16, d_model 64: the allowance is about 4 * 2**-8 * S, larger than tanh(logits) (within
    # +-1); once "multiplied by a factor of 0.1", which any near-zero output fits as well
    h, e = inputs(seed=seed, lead=(2,), d=64, v=8, dt="bfloat16", mean=(-0.5, 0.5), scale=(1, 2))
    hint = hint_for(h, e, lambda h, e, r: np.tanh(r), "bfloat16")
    assert hint is None or hint.idea == "where", hint
    hint = hint_for(h, e, lambda h, e, r: np.clip(r, -1, 1), "bfloat16")
    assert hint is None or hint.idea == "where", hint


def test_no_normalisation_is_named_with_one_feature():
    # d_model = 1, hidden rows of norm 1: cosine similarity equals the table normalised (both are
    # h * sign(E)); the case cannot tell which normalisation happened
    h = np.array([[1.0], [-1.0], [1.0]], np.float32)
    e = np.array([[0.5], [-2.0], [1.5], [0.25], [-0.75]], np.float32)
    cosine = IDEAS["cosine"]
    assert hint_for(h, e, cosine, exact=True) is None
    assert hint_for(h, e, IDEAS["normalised_table"], exact=True) is None


def test_a_lower_precision_hint_names_only_the_learners_framework():
    """Issue 34: the float32-in-float64 hint said "or JAX without jax_enable_x64" to every learner
    (a torch PHRASES entry matched only tied_lm_head's wording, so a torch learner got it too).
    Now the facts are worded once per framework: the x64 cause for JAX learners only."""
    from grader.hints import Hint
    facts = {"computed_in": "float32", "dtype": "float64", "first": "hidden", "function": "f"}
    for module in (None, "tied_lm_head"):
        hint = Hint(idea="lower_precision", facts=facts)
        assert "jax" not in said(hint, "numpy", module).lower() and "hidden.astype(np.float32)" in said(hint, "numpy", module)
        torch_text = said(hint, "torch", module)
        assert "jax" not in torch_text.lower() and "hidden.to(torch.float32)" in torch_text
        # the grader turns x64 on: only the learner's own code can have turned it off
        assert "jax_enable_x64 turned off by the submission" in said(hint, "jax", module)
        # float16 inside float32: no x64 to blame
        half = Hint(idea="lower_precision", facts={**facts, "computed_in": "float16", "dtype": "float32"})
        assert "x64" not in said(half, "jax", module)


def test_a_torch_learner_hears_of_tensors_and_in_place_ops():
    """A newcomer's finding: an in-place mul_ was told to 'use operations that return new arrays'."""
    from grader import diagnose
    assert "new arrays" in said(diagnose.mutation_hint(), "numpy", None)
    text = said(diagnose.mutation_hint(), "torch", None)
    assert "new tensors" in text and "mul_" in text


def test_combine_names_an_axis_counted_from_the_front_that_is_another_axis_at_each_rank():
    """A newcomer's torch ``sum(dim=1)`` over inputs of ranks 2, 3 and 5 was summed up as "instead
    of dim=-1" for 16 of 16 cases, four of which said dim=-4 themselves: the axis it used is the
    same counted from the front, and the summary says so, in the learner's framework."""
    hints = [{"id": "reduced_axis", "params": {"of": "embeddings", "used": used, "instead": -2, "from_front": 1,
                                               "rank": rank}, "text": f"t{rank}", "size": 1}
             for used, rank in ((-1, 2), (-1, 2), (-4, 5))]
    (top,) = diagnose.combine(hints, "torch", "masked_mean_pool")
    assert "dim=1" in top["text"] and "reduce over dim=-2" in top["text"] and "-4, -1" in top["text"], top["text"]
    (top,) = diagnose.combine(hints, "numpy", "masked_mean_pool")
    assert "axis=1" in top["text"] and "dim=" not in top["text"], top["text"]
    same = [{**h, "params": {**h["params"], "used": -1}} for h in hints]   # one axis from the end: the case's words
    (top,) = diagnose.combine(same, "numpy", "masked_mean_pool")
    assert "counted from the front" not in top["text"]


def test_hints_worded_alike_are_one_summary_line_with_their_counts_summed():
    """A newcomer's trial: top_k_indices returning int32 read "hint (15 of 45 cases): return
    int64, as the statement says" three times, one per case dtype (the "dtype" idea is kept
    apart per dtype in case its words name it; these do not). One line, 45 of 45, now; ideas
    worded differently stay apart."""
    from grader.diagnose import combine
    from grader.hints import Hint
    from grader.words import render
    facts = {"got": "int32", "want": "int64", "rule": "as the statement says"}
    text = render(Hint(idea="dtype", facts=facts), "numpy")
    hints = [{"id": "dtype", "params": facts, "text": text, "dtype": dtype, "kind": "dtype", "size": 4}
             for dtype in ("float16", "float32", "float64") for _ in range(15)]
    assert combine(hints) == [{"id": "dtype", "text": text, "count": 45, "of": 45}]
    other = render(Hint(idea="not_implemented", facts={}), "numpy")
    mixed = hints[:30] + [{"id": "not_implemented", "params": {}, "text": other, "dtype": "float64",
                           "kind": "exception", "size": 4}] * 15
    assert [(h["id"], h["count"]) for h in combine(mixed)] == [("dtype", 30), ("not_implemented", 15)]
