"""Hints per problem (issue 10, item 2): the generic ideas, a problem's own module, and no
problem's hints in another's report.

In process: each problem's mistakes (problems/mistakes/<id>/*.py, imported here as trusted test
code) are called on the problem's cases and judged by grader.compare with the hint stage, as
grader check would judge their outputs; and the generic ideas are tested on outputs computed
here for each mistake they must name, and for the look-alikes they must not.
"""
from __future__ import annotations

import importlib.util
import shutil
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from grader import diagnose, words
from grader.cases import fixed_cases, generated_cases
from grader.compare import compare, judge_raises, with_exception_hint
from grader.errors import SpecError
from grader.expected import expected_for
from grader.grading import run_failure
from grader.hints import generic
from grader.hints import tied_lm_head as tied
from grader.results import CallOutcome
from grader.spec import load_problem

from .conftest import ROOT

EMB = load_problem(ROOT / "problems" / "embedding_lookup.yaml")
POOL = load_problem(ROOT / "problems" / "masked_mean_pool.yaml")
TIED = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
NUMPY = ("float16", "float32", "float64")

#: Ids only tied_lm_head's module gives (its ids that the generic stage never uses).
TIED_ONLY = {"zeros", "softmax", "log_softmax", "sign_flip", "abs", "relu", "factor", "normalised_hidden", "cosine",
             "normalised_table", "standardised_hidden", "row_offset", "no_transpose", "returns_hidden",
             "swapped_axes", "first_row", "feature_dropped", "half_accumulation", "offset", "column_offset", "where",
             "added_axis", "flattened", "squeezed", "vocab_dropped", "hidden_shape", "first_row_only", "wrong_vocab",
             "scalar", "empty_batch", "integer", "other_half", "nan_zero_rows", "overflow", "shapes_do_not_line_up"}
#: Words of tied_lm_head's hints that name nothing in the other problems.
TIED_WORDS = ("logit", "hidden", "softmax", "bias", "embedding_matrix.T", "d_model)", "the head")



def said(hint, framework="numpy", module=None):
    """The hint's sentence as a ``framework`` learner reads it (``module``: the problem's hints)."""
    return words.render(hint, framework, module) if hint is not None else None

def _mistake(path: Path):
    spec = importlib.util.spec_from_file_location(f"mistake_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(problem, count=12):
    return fixed_cases(problem, NUMPY, 0) + generated_cases(problem, NUMPY, 0, count)


def grade_in_process(problem, path: Path, cases) -> list[dict]:
    """The hint dicts (as grader.summary hands them to combine) of every failing case of the
    mistake at ``path`` called in this process on ``cases``."""
    fn = getattr(_mistake(path), problem.function)
    out = []
    for c in cases:
        args = [np.array(c.inputs[p.name], copy=True) for p in problem.parameters]
        try:
            with np.errstate(all="ignore"):
                result = fn(*args)
        except Exception as exc:  # noqa: BLE001 - the submission's exception is an outcome
            outcome = CallOutcome(status="exception", message=f"{type(exc).__name__}: {exc}",
                                  error_types=[t.__name__ for t in type(exc).__mro__])
        else:
            outcome = (CallOutcome(status="ok", result=result) if isinstance(result, np.ndarray)
                       else CallOutcome(status="type", message=type(result).__name__))
            outcome.mutated = [p.name for p, a in zip(problem.parameters, args)
                               if not np.array_equal(a, c.inputs[p.name], equal_nan=a.dtype.kind == "f")]
        if c.raises:
            failure = judge_raises(c, outcome)
        elif outcome.status == "exception":  # as check does: the problem's module names the cause
            failure = with_exception_hint(run_failure(outcome)[1], problem.hints, c)
        else:
            failure = compare(c, outcome, expected_for(problem, c))
        if failure is not None:
            words.render_failure(failure, "numpy", problem.hints)   # as grading.finish words it
            out.append({"id": failure.data.get("hint_id"), "params": failure.data.get("hint_params", {}),
                        "text": failure.hint, "kind": failure.kind, "message": failure.message,
                        "data": failure.data, "dtype": c.dtype, "size": 1,
                        "shapes": {k: list(np.shape(v)) for k, v in c.inputs.items()}})
    return out


def _all_hints(hints: list[dict]) -> list[tuple[str, str]]:
    found = [(h["id"], h["text"]) for h in hints if h.get("id")]
    return found + [(h["id"], h["text"]) for h in diagnose.combine(hints, "numpy", None)]


@pytest.mark.parametrize("problem", [EMB, POOL], ids=lambda p: p.id)
def test_no_tied_lm_head_hint_in_another_problems_report(problem):
    cases = _cases(problem)
    folder = ROOT / "problems" / "mistakes" / problem.id
    seen: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        if "jax" in path.read_text():
            continue  # a JAX mistake: judged by raises (no hint stage), and slow to import here
        hints = grade_in_process(problem, path, cases)
        assert hints, f"{path.name} fails no case"
        for hid, text in _all_hints(hints):
            assert hid not in TIED_ONLY, (path.name, hid, text)
            assert not any(w in text for w in TIED_WORDS), (path.name, text)
            seen.setdefault(path.stem, set()).add(hid)
    # the generic ideas that apply do fire, worded for this problem
    assert "promoted" in seen["dtype_float32"] or "demoted" in seen["dtype_float32"]
    assert "not_array" in seen["type_list"]
    if problem is EMB:
        assert "not_implemented" in seen["exception_stub"]
    else:
        assert "extra_axis" in seen["shape_keepdims"]
        assert "nan_where_zero" in seen["non_finite_zero_count"]


def test_tied_lm_head_hints_still_appear_for_its_mistakes():
    cases = [c for c in _cases(TIED, 6) if max(np.size(v) for v in c.inputs.values()) < 100_000]
    folder = ROOT / "problems" / "mistakes" / "tied_lm_head"
    want = {"softmax.py": "softmax", "bias.py": "offset", "inv_sqrt_d_model.py": "factor",
            "no_transpose.py": "shapes_do_not_line_up", "returns_list.py": "not_array"}
    for name, hid in want.items():
        ids = [h for h, _ in _all_hints(grade_in_process(TIED, folder / name, cases))]
        assert hid in ids, (name, ids)
    text = dict(_all_hints(grade_in_process(TIED, folder / "softmax.py", cases)))["softmax"]
    assert "logits" in text


# -- the generic value ideas ---------------------------------------------------------------------
def _judge_generic(got, ref, allowed, dtype, ideas=None, allowed_in=None):
    names = diagnose.Names("f", ("x", "mask"), dtype)
    allowed_in = allowed_in or (lambda low: allowed * 0 + 2 * generic.unit_roundoff(low) * np.abs(ref))
    return generic.value_ideas(np.asarray(got, np.float64), ref, allowed, dtype, allowed_in, names, ideas)


def test_an_output_about_zero_is_said_so_not_fitted_with_a_factor_or_an_offset():
    """A newcomer's instructor trial: a probability returned for a log-probability (values near 0,
    expected -2.8 to -14.8) read in bfloat16 as "multiplied by a constant factor of -0.0003817",
    zeros as "a constant 1.51e+04 was added". Where zeros explain the output as well, no factor or
    offset is fitted; it is "close to zero" (or "all zeros"); a real factor is still found."""
    ref = np.array([-2.7833, -14.7892, -12.9378, -7.9860, -3.1, -9.4])
    allowed = np.full(ref.shape, 1.15)                  # a wide bfloat16 allowance
    got = np.array([0.0618, 3.8e-7, 2.4e-6, 3.4e-4, 0.04, 1e-5])
    hint = _judge_generic(got, ref, allowed, "bfloat16")
    assert hint is not None and hint.idea == "near_zero" and not hint.facts["exact"], hint
    assert "close to zero" in said(hint)
    zeros = _judge_generic(np.zeros(6), -1.51e4 + 10.0 * np.arange(6), np.full(6, 1.2e2), "bfloat16")
    assert zeros is not None and zeros.idea == "near_zero" and zeros.facts["exact"], zeros
    # tight allowances: twice the answer is a factor of 2, never "about zero"
    tight = 2 * 2.0 ** -53 * np.abs(ref)
    assert _judge_generic(2 * ref, ref, tight, "float64").idea == "scaled"


def test_lower_precision_names_the_format_the_values_show():
    rng = np.random.default_rng(0)
    ref = rng.normal(0, 3, (6, 8))
    allowed = 2 * 2.0 ** -53 * np.abs(ref) + 1e-300
    for low in ("float32", "float16", "bfloat16"):
        got = ref.astype(np.dtype(ml_dtypes.bfloat16) if low == "bfloat16" else low).astype(np.float64)
        hint = _judge_generic(got, ref, allowed, "float64")
        assert hint is not None and hint.facts["computed_in"] == low, (low, hint)
        assert "logit" not in said(hint) and "f computed in" in said(hint) and "a cast such as x.astype" in said(hint)


def test_lower_precision_is_not_claimed_for_flushed_subnormals_or_noise():
    ref = np.array([1.5, -2.25, 3e-40, -4e-41, 0.75, 8.0], np.float64)
    ref32 = ref.astype(np.float32).astype(np.float64)
    allowed = 2 * 2.0 ** -24 * np.abs(ref32)
    flushed = np.where(np.abs(ref32) < 1.2e-38, 0.0, ref32)  # every value a float16 number, not float16's work
    assert _judge_generic(flushed, ref32, allowed, "float32") is None
    noisy = ref32 * (1 + 0.01 * np.random.default_rng(1).standard_normal(ref32.shape))
    assert _judge_generic(noisy.astype(np.float32), ref32, allowed, "float32") is None


def test_factor_offset_and_row_offsets_fit_only_what_they_explain():
    rng = np.random.default_rng(2)
    ref = rng.normal(0, 2, (5, 16)).astype(np.float32).astype(np.float64)
    allowed = 4 * 2.0 ** -24 * np.abs(ref) + 1e-7
    assert _judge_generic((ref * 3).astype(np.float32), ref, allowed, "float32").idea == "scaled"
    assert _judge_generic((ref + 0.25).astype(np.float32), ref, allowed, "float32").idea == "shifted"
    rows = np.arange(5.0)[:, None] - 2
    hint = _judge_generic((ref + rows).astype(np.float32), ref, allowed, "float32")
    assert hint.idea == "row_shifted" and "logit" not in said(hint)
    bent = ref + 0.1 * ref ** 2  # no factor or offset explains it
    assert _judge_generic(bent.astype(np.float32), ref, allowed, "float32") is None


@pytest.mark.parametrize("shape", [(), (2,), (3,)])
def test_no_factor_is_fitted_to_fewer_elements_than_the_evidence_rule(shape):
    """A factor fitted to a 0-d (or 2-element) output fits it exactly, whatever the mistake: an
    instructor's masked log-sum-exp was told "multiplied by a constant factor of 1.161" on its
    worked example (one element per row)."""
    ref = np.full(shape, 2.5)
    allowed = np.full(shape, 1e-6)
    assert _judge_generic(ref * 1.161, ref, allowed, "float64") is None
    big = np.linspace(1, 2, 8)
    assert _judge_generic(big * 1.161, big, np.full(8, 1e-6), "float64").idea == "scaled"
    # a factor that names a count still does: a sum of 4 rows where their mean is due
    assert _judge_generic(ref * 4, ref, allowed, "float64").idea == "scaled"
    assert _judge_generic(ref / 3, ref, allowed, "float64").idea == "scaled"


def test_a_transposed_square_result_is_named_and_a_reshape_is_not():
    ref = np.random.default_rng(3).normal(0, 1, (2, 4, 4))
    allowed = 4 * 2.0 ** -24 * np.abs(ref) + 1e-7
    assert _judge_generic(np.swapaxes(ref, -1, -2), ref, allowed, "float32").idea == "transposed"
    assert _judge_generic(ref.reshape(2, 16)[:, ::-1].reshape(2, 4, 4), ref, allowed, "float32") is None


# -- an instructor's hint module -------------------------------------------------------------------
HINTS_PY = '''
from grader.hints import Idea

def ideas(inputs, expected, got, names):
    x, mask = inputs[names.parameters[0]], inputs[names.parameters[1]]
    total = (x * mask[..., None]).sum(axis=-2)
    return [Idea("sum_not_mean", f"looks like the sum over the valid rows of {names.parameters[0]}, not their mean",
                 total),
            Idea("offset", "a reserved id", expected ** 2)]
'''


def _problem_with_hints(tmp_path, hints_line, module_text=HINTS_PY, name="my_hints.py"):
    probs = tmp_path / "problems"
    probs.mkdir(exist_ok=True)
    if not (tmp_path / "reference").exists():
        shutil.copytree(ROOT / "reference", tmp_path / "reference")
    if module_text is not None:
        (probs / name).write_text(textwrap.dedent(module_text))
    text = (ROOT / "problems" / "masked_mean_pool.yaml").read_text()
    text = text.replace("\nstatement:", f"\n{hints_line}\nstatement:", 1) if hints_line else text
    (probs / "masked_mean_pool.yaml").write_text(text)
    return probs / "masked_mean_pool.yaml"


def test_an_instructors_hint_module_beside_the_spec_names_its_idea(tmp_path):
    problem = load_problem(_problem_with_hints(tmp_path, "hints: my_hints.py"))
    assert problem.hints == str((tmp_path / "problems" / "my_hints.py").resolve())
    c = next(c for c in fixed_cases(problem, ("float32",), 0) if c.name == "batch[float32]")
    exp = expected_for(problem, c)
    x, mask = c.inputs["embeddings"].astype(np.float64), c.inputs["mask"]
    total = (x * mask[..., None]).sum(axis=-2).astype(np.float32)
    f = compare(c, CallOutcome(status="ok", result=total), exp)
    assert f.data["hint_id"] == "sum_not_mean" and "valid rows of embeddings" in f.hint
    # an idea that does not reproduce the output is not named; a reserved id is the module's own
    f = compare(c, CallOutcome(status="ok", result=(exp.ref ** 2).astype(np.float32)), exp)
    assert f.data["hint_id"] == "my_hints.offset"
    f = compare(c, CallOutcome(status="ok", result=(exp.ref + 0.1 * exp.ref ** 2).astype(np.float32)), exp)
    assert f.hint is None


@pytest.mark.parametrize("hints_line,module_text,words", [
    ("hints: nosuch.py", None, "no hint module at"),
    ("hints: sub/../../escape.py", None, "inside the spec's folder"),
    ("hints: my_hints.py", "x = 1\n", "defines none of ideas"),
    ("hints: my_hints.py", "def ideas(:\n", "does not parse"),
    ("hints: nosuch", None, "neither a bundled hint module"),
])
def test_a_bad_hint_module_breaks_only_its_problem_with_a_clear_error(tmp_path, hints_line, module_text, words):
    spec = _problem_with_hints(tmp_path, hints_line, module_text)
    with pytest.raises(SpecError, match="hints") as err:
        load_problem(spec)
    assert words in str(err.value)


def test_a_huge_reply_of_the_wrong_size_is_not_converted_to_look_for_a_hint():
    """generic.shape_hint converted the whole reply to float64 before comparing sizes: a 256 MiB
    bool reply (the protocol's cap) cost the grader's own process 2.4 GB per case."""
    import tracemalloc

    import numpy as np

    from grader.hints import generic

    got = np.zeros(1 << 24, dtype=np.bool_)  # 16 MiB; float64 would be 128 MiB
    tracemalloc.start()
    try:
        assert generic.shape_hint(got, np.zeros((3, 4))) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    right = np.arange(12.0).reshape(3, 4)  # the same values with an axis too many is still named
    assert generic.shape_hint(right[None], right).idea == "extra_axis"


def test_a_summary_never_states_one_cases_factor_for_cases_with_other_factors():
    """A newcomer's mistake divided by embedding_matrix.shape[0]: the summary said "a constant
    factor of 0.2" for 76 cases whose factors were 1/vocab_size of each, and a square table
    (d_model = vocab_size = 4) was blamed on 1/d_model, a guess. Varying factors are named by the
    size they follow, or said to vary; a square table names both sizes."""
    from grader import diagnose

    square = tied._factor_hint(0.25, 4, 4)
    assert "1/d_model or 1/vocab_size = 0.25 (d_model = vocab_size = 4)" in said(square, module="tied_lm_head")
    assert "attention" not in said(tied._factor_hint(1 / 8, 64, 8), module="tied_lm_head")  # 1/sqrt(d_model) and 1/vocab_size: not the sqrt
    assert "1/sqrt(d_model)" in said(tied._factor_hint(0.125, 64, 10), module="tied_lm_head")

    def case(hint):
        return {"id": hint.idea, "params": hint.facts, "text": said(hint, module="tied_lm_head"), "size": 12, "dtype": "float32",
                "kind": "tolerance", "message": "", "data": {}}

    by_vocab = [case(tied._factor_hint(1 / v, 16, v)) for v in (3, 5, 7, 2085)]
    (entry,) = diagnose.combine(by_vocab, "numpy", "tied_lm_head")
    assert "1/vocab_size (in every case, vocab_size 3, 5, 7, 2085)" in entry["text"]
    wild = [case(tied._factor_hint(c, 16, 9)) for c in (-24.94, 3.1, 19.96)]
    (entry,) = diagnose.combine(wild, "numpy", "tied_lm_head")
    assert "differs from case to case (from -24.94 to 19.96)" in entry["text"]
    generic = [{"id": "scaled", "params": {"factor": c}, "text": f"looks like ... constant factor of {c:.4g}",
                "size": 4, "dtype": "float32", "kind": "tolerance", "message": "", "data": {}} for c in (2.0, -24.94, 7.0)]
    (entry,) = diagnose.combine(generic)
    assert "constant factor of" not in entry["text"] and "from -24.94 to 7" in entry["text"]
    same = [dict(g, params={"factor": 2.0}, text="looks like ... constant factor of 2") for g in generic]
    assert diagnose.combine(same)[0]["text"] == "looks like ... constant factor of 2"


def test_a_factor_that_reads_as_one_or_matches_a_count_by_chance_names_nothing():
    """Seen on the course pack: float32 rounding called "a constant factor of 1"; a factor of 2
    on rows of 2 and 1.001 on rows of 256 called an unbiased variance."""
    import math

    from grader.hints.generic import _fitted, _variance_count
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4, 256))
    allowed = np.full_like(ref, 1e-9)
    assert [h.idea for h, _ in _fitted(ref * (1 + 1e-4), ref, allowed, "float64")] == []
    assert [h.idea for h, _ in _fitted(ref * (1 + 1e-3), ref, allowed, "float64")] == ["scaled"]
    assert _variance_count(2.0, 2) is None and _variance_count(1.001, 256) is None
    assert _variance_count(math.sqrt(256 / 255), 256).idea == "variance_count"
    assert _variance_count(math.sqrt(2 / 3), 3).facts["formula"] == "sqrt((n - 1) / n)"


def test_a_deliberate_not_implemented_error_is_not_called_a_stub():
    """Seen on ports: code that raises NotImplementedError("only 2-D input") for other ranks was
    told to "write its body"; a stub's bare NotImplementedError (or a TODO) still is."""
    from grader.hints.generic import exception_hint
    assert exception_hint("NotImplementedError").idea == "not_implemented"
    for stub in ("TODO", "TODO: project hidden states onto the vocabulary", "write your solution here"):
        assert exception_hint(f"NotImplementedError: {stub}").idea == "not_implemented", stub
    refused = exception_hint("NotImplementedError: only 2-D hidden is supported")
    assert refused.idea == "not_handled" and "only 2-D hidden is supported" in said(refused)
    assert "write its body" not in said(refused)


def test_no_constant_offset_is_fitted_to_a_constant_right_answer():
    """A newcomer's softmax without the max subtraction overflowed on 16 logits of 11.0 in
    float16 and returned zeros where 1/16 was due; the hint read "a constant -0.0625 was added
    to every element". Any constant result fits an offset from a constant answer: none is named."""
    import numpy as np
    from grader.hints import generic
    ref = np.full(16, 1 / 16)
    ideas = generic._fitted(np.zeros(16), ref, np.full(16, 1e-3), "float16")
    assert "shifted" not in {h.idea for h, _ in ideas}, ideas
    varied = np.linspace(0.01, 0.2, 16)
    ideas = generic._fitted(varied + 0.5, varied, np.full(16, 1e-3), "float16")
    assert "shifted" in {h.idea for h, _ in ideas}, ideas     # an offset on a varied answer is still named


@pytest.mark.parametrize("problem,mistake,idea", [
    ("softmax", "non_finite_d2l_naive_exp.py", "no_max_shift"),
    ("softmax", "tolerance_orris_axis0.py", "wrong_axis"),
    ("softmax", "tolerance_boomsday_ignores_axis.py", "wrong_axis"),
    ("layer_norm", "tolerance_annotated_transformer_std.py", "unbiased_variance"),
    ("layer_norm", "tolerance_np_std_eps_outside.py", "eps_outside_sqrt"),
    ("scaled_dot_product_attention", "tolerance_padding_mask_inverted.py", "mask_inverted"),
    # a helper's trial: the rest of the course pack had no hint module
    ("kl_divergence", "tolerance_reversed_arguments.py", "reversed"),
    ("gelu", "tolerance_hf_quick_gelu.py", "sigmoid_approximation"),
    ("gelu", "tolerance_jax_nn_gelu_default.py", "tanh_approximation"),
    ("rms_norm", "tolerance_bzhang_eps_outside_sqrt.py", "eps_outside_sqrt"),
    ("cross_entropy", "non_finite_d2l_softmax_then_log.py", "no_max_shift"),
    # a newcomer's trial: np.convolve's flipped kernel got "a constant factor of -1" or nothing
    ("conv1d", "tolerance_np_convolve_flips_kernel.py", "flipped_kernel"),
    # and a negative target got only the statement's contract
    ("cross_entropy", "raises_cs231n_no_target_check.py", "negative_target"),
    # a one-hot product passed every case until a table held an infinity (now special_rows)
    ("embedding_lookup", "tolerance_one_hot_matmul.py", "computed_not_copied"),
])
def test_course_pack_mistakes_get_their_own_hint(problem, mistake, idea):
    """A newcomer's trial: the course pack's softmax, layer_norm and attention gave no hint for
    their commonest mistakes (exp without the max shift, the wrong axis, the unbiased variance,
    eps outside the root, an inverted mask). Their hint modules name each, as facts, in the
    summary of the mistake files of problems/mistakes/<problem>."""
    from tests.conftest import ROOT, grade_function_in_process
    got = grade_function_in_process(ROOT / "problems" / "mistakes" / problem / mistake, "--problem", problem,
                                    "--no-shrink")
    assert got is not None
    code, report = got
    ideas = {h["id"] for entry in report["summary"] for h in entry["hints"]}
    assert code == 1 and idea in ideas, report["summary"]


@pytest.mark.parametrize("problem,body,idea", [
    ("layer_norm", "    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)"
                   " + beta\n", "gamma_ignored"),
    ("scaled_dot_product_attention", "    s = q @ np.swapaxes(k, -1, -2)\n"
                                     "    if mask is not None:\n        s = np.where(mask, s, -np.inf)\n"
                                     "    e = np.exp(s - s.max(-1, keepdims=True))\n"
                                     "    return (e / e.sum(-1, keepdims=True)) @ v\n", "no_scale"),
])
def test_a_hand_written_pack_mistake_gets_its_hint(tmp_path, problem, body, idea):
    """The ideas without a mistake file: layer norm without gamma, attention without 1/sqrt(d)
    (a newcomer's trial), each named in its summary."""
    from tests.conftest import grade_function_in_process
    params = {"layer_norm": "x, gamma, beta, eps=1e-5", "scaled_dot_product_attention": "q, k, v, mask=None"}[problem]
    path = tmp_path / f"{problem}.py"
    path.write_text(f"import numpy as np\n\n\ndef {problem}({params}):\n{body}")
    code, report = grade_function_in_process(path, "--problem", problem, "--no-shrink")
    ideas = {h["id"] for entry in report["summary"] for h in entry["hints"]}
    assert code == 1 and idea in ideas, report["summary"]


def test_no_max_shift_is_named_only_where_exp_of_the_unshifted_logits_is_what_broke():
    """A format consumer's read: a softmax that subtracted the global maximum (axis 0) got NaN
    from 0/0 where every exp underflowed, and was told "exp overflowed to infinity". The hint is
    now predicted from exp of the unshifted logits in the case's dtype."""
    from tests.conftest import ROOT, grade_function_in_process
    code, report = grade_function_in_process(ROOT / "problems" / "mistakes" / "softmax" / "tolerance_orris_axis0.py",
                                             "--problem", "softmax", "--no-shrink")
    ideas = {h["id"] for entry in report["summary"] for h in entry["hints"]}
    assert "non_finite" in {e["kind"] for e in report["summary"]} and "no_max_shift" not in ideas, report["summary"]


def test_two_mistakes_at_once_are_both_named():
    """A newcomer's trial: layer norm with ``ddof=1`` computed in float32 got its hint in
    float16 and float32 but none in float64, where neither mistake alone explains the output.
    The idea is judged again with float32's rounding: the float64 cases name the unbiased
    variance *and* float32, the others the variance alone; the text report does not call the
    float64 failure "the same way" without the second mistake."""
    from tests.conftest import ROOT, grade_function_in_process
    path = ROOT / "problems" / "mistakes" / "layer_norm" / "tolerance_float32_unbiased.py"
    code, report = grade_function_in_process(path, "--problem", "layer_norm", "--no-shrink")
    hinted = {}
    for c in report["cases"]:
        data = (c["failure"] or {}).get("data") or {}
        if data.get("hint_id") == "unbiased_variance":
            hinted.setdefault(c["dtype"], set()).add((data.get("hint_params") or {}).get("also_computed_in"))
    assert code == 1 and hinted.get("float64") == {"float32"}, hinted
    assert hinted.get("float16") == {None} and hinted.get("float32") == {None}, hinted
    # its d = 1 rows are NaN from ddof=1 (0 / 0, eps or not): not "eps was left out" (a helper's trial)
    ids = {((c["failure"] or {}).get("data") or {}).get("hint_id") for c in report["cases"]}
    assert "no_eps" not in ids, ids
    lines = [h["text"] for e in report["summary"] for h in e["hints"] if h["id"] == "unbiased_variance"]
    assert any("every value is a float32 number: it was computed in float32 precision (a cast such as "
               "x.astype(np.float32)?); compute in float64" in t for t in lines), lines
    assert any("float32" not in t for t in lines), lines


def test_a_right_float32_computation_is_no_second_mistake():
    """The second clause needs an idea that explains the output: a correct layer norm computed
    in float32 for float64 inputs is named as a lower precision alone, never with an idea."""
    from grader.hints import Names, generic, layer_norm
    rng = np.random.default_rng(3)
    x, gamma, beta = rng.normal(size=(6, 16)), rng.normal(size=16), rng.normal(size=16)
    ref = layer_norm._norm(x, gamma, beta, 1e-5)
    x32 = x.astype(np.float32)
    m = x32.mean(-1, keepdims=True)
    got = ((x32 - m) / np.sqrt(x32.var(-1, keepdims=True) + np.float32(1e-5)) * gamma + beta).astype(np.float64)
    names = Names(function="layer_norm", parameters=("x", "gamma", "beta", "eps"), dtype="float64")
    ideas = layer_norm.ideas({"x": x, "gamma": gamma, "beta": beta, "eps": np.float64(1e-5)}, ref, got, names)
    allowed = np.full(ref.shape, 1e-14)
    hint = generic.value_ideas(got, ref, allowed, "float64", lambda low: np.zeros_like(ref), names, ideas)
    assert hint is None or "also_computed_in" not in hint.facts, hint


def test_a_layer_norm_without_eps_is_named_and_its_nan_rows_too():
    """A newcomer's trial: a layer norm without eps got no hint, neither for its values (a few
    units off in float32 and float64) nor for the NaN of a constant row (0/0)."""
    from tests.conftest import ROOT, grade_function_in_process
    path = ROOT / "problems" / "mistakes" / "layer_norm" / "tolerance_no_eps.py"
    code, report = grade_function_in_process(path, "--problem", "layer_norm", "--no-shrink")
    by_kind = {e["kind"]: {h["id"] for h in e["hints"]} for e in report["summary"]}
    # its NaN rows are d = 1 ones, where ddof=1 gives the same 0/0: both causes are named
    assert code == 1 and by_kind.get("tolerance") == {"no_eps"}, by_kind
    assert by_kind.get("non_finite") == {"zero_variance_rows"}, by_kind
    texts = [h["text"] for e in report["summary"] for h in e["hints"] if e["kind"] == "non_finite"]
    assert any("variance is 0" in t and "without eps" in t for t in texts), texts


def test_a_constant_row_of_several_values_names_the_missing_eps():
    """NaN on a constant row of d >= 2 values comes from eps left out (ddof=1 divides by d - 1 > 0)."""
    from grader.cases import Case
    from grader.hints import layer_norm
    x = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]])
    ref = np.array([[0.5, 0.5, 0.5], [-1.2, 0.0, 1.2]])
    got = np.array([[np.nan, np.nan, np.nan], [-1.2, 0.0, 1.2]])
    case = Case(name="c", group="g", dtype="float64",
                inputs={"x": x, "gamma": np.ones(3), "beta": np.full(3, 0.5), "eps": np.float64(1e-5)}, sizes={})
    assert layer_norm.diagnose_non_finite(case, got, ref).idea == "no_eps"
    one = Case(name="c", group="g", dtype="float64",
               inputs={"x": x[:, :1], "gamma": np.ones(1), "beta": np.full(1, 0.5), "eps": np.float64(1e-5)}, sizes={})
    assert layer_norm.diagnose_non_finite(one, np.full((2, 1), np.nan), np.full((2, 1), 0.5)).idea == \
        "zero_variance_rows"


def test_a_factor_that_is_an_axis_size_is_named_as_that_axis():
    """A helper's trial: a cross entropy divided by N * C instead of N read "multiplied by a
    factor that differs from case to case (from 0.000244 to 0.5003)". A factor of 1/n or n for
    an input's axis size n >= 3 names that axis, per case and once in the summary."""
    from grader.hints import generic
    shapes = {"logits": (4, 6), "targets": (4,)}
    hint = generic._axis_factor(1 / 6, shapes)
    assert hint.idea == "axis_factor" and hint.facts["where"] == ["logits.shape[-1]"] and hint.facts["how"] == "divided"
    assert generic._axis_factor(4.0, shapes).facts["where"] == ["logits.shape[-2]", "targets.shape[-1]"]
    assert generic._axis_factor(0.5, shapes) is None and generic._axis_factor(1 / 7, shapes) is None


def test_a_cross_entropy_over_the_wrong_count_names_the_axis(tmp_path):
    from tests.conftest import grade_function_in_process
    path = tmp_path / "ce.py"
    path.write_text("import numpy as np\n\n\ndef cross_entropy(logits, targets):\n"
                    "    z = logits.astype(np.float64)\n    m = z.max(axis=-1, keepdims=True)\n"
                    "    lse = np.log(np.exp(z - m).sum(axis=-1)) + m[..., 0]\n"
                    "    n, c = z.shape\n"
                    "    return np.asarray((lse - z[np.arange(n), targets]).sum() / (n * c), dtype=logits.dtype)\n")
    code, report = grade_function_in_process(path, "--problem", "cross_entropy", "--no-shrink")
    hints = [h for e in report["summary"] for h in e["hints"]]
    assert code == 1 and any(h["id"] == "axis_factor" and "logits.shape[-1]" in h["text"] for h in hints), hints


#: a helper's files that were told something false (tests/hint_cases/), with the hint each must
#: get and the words none of its hints may hold
_SKEPTIC = [
    # pure float64 with an erf approximation (1.5e-7): "computed in float32" was false
    ("gelu", "gelu_as_erf.py", None, ("float32",)),
    # subtracts the maximum, then log of a softmax that underflows: "subtract the maximum" was false
    # (where the case lets exp overflow too, both causes are named, neither guessed)
    ("cross_entropy", "ce_shifted_softmax_log.py", ("log_of_softmax", "no_max_shift_and_underflow"),
     ("subtract each row's maximum before exp",)),
    # eps hard-coded to 1e-5: "eps was left out" was false
    ("rms_norm", "rms_hardcoded_eps.py", "eps_ignored", ("eps was left out",)),
    # one mean over every element: "along axis -2" was false
    ("rms_norm", "rms_global_mean.py", "whole_array", ("axis -2",)),
    # a newcomer's: count + 1 was told "divided by seq_len" where the two are the same number
    ("masked_mean_pool", "mmp_count_plus_one.py", "divide_by_count_plus_one", ("(every position, padding included) instead",)),
    # a newcomer's: jnp.sum of a half dtype rounds the float32 sum to it before the division (no hint)
    ("masked_mean_pool", "mmp_half_sum_jit_jax.py", "half_sum_rounded", ("float32 precision",)),
    # a newcomer's: layer_norm along dim=0 (an axis the rank-4 case counts as -4 is named as written)
    ("layer_norm", "ln_axis0_torch.py", "wrong_axis", ("axis -",)),
    # a newcomer's: NumPy code in a file that imports torch gets tensors; the hint says why
    ("masked_mean_pool", "mmp_numpy_importing_torch.py", "numpy_code_given_tensors", ("float16 values",)),
    # a newcomer's: an unshifted log(sum(exp)) computes no softmax (both causes are named now)
    ("cross_entropy", "ce_unshifted_log_sum_exp.py", "no_max_shift_and_underflow", ("softmax",)),
    # a newcomer's: F.cross_entropy refusing int32 targets is the cause, in the must-raise cases too
    ("cross_entropy", "ce_F_cross_entropy_torch.py", "targets_not_int64", ("a target is negative",)),
]


@pytest.mark.parametrize("problem,name,idea,never", _SKEPTIC)
def test_what_a_skeptic_was_told_falsely_is_no_longer_said(problem, name, idea, never):
    """A hint skeptic's trial (helper, 2026-12-07): a wrong hint is worse than none."""
    from tests.conftest import ROOT, grade_function_in_process
    code, report = grade_function_in_process(ROOT / "tests" / "hint_cases" / name, "--problem", problem, "--no-shrink")
    texts = [h["text"] for e in report["summary"] for h in e["hints"]]
    texts += [(c["failure"] or {}).get("hint") or "" for c in report["cases"]]
    assert code == 1 and not [t for t in texts for w in never if w in t], texts
    if idea is not None:
        ideas = {idea} if isinstance(idea, str) else set(idea)
        assert ideas & {h["id"] for e in report["summary"] for h in e["hints"]}, report["summary"]


def test_a_factor_that_reads_as_a_size_and_as_a_root_of_one_names_neither():
    """1/4 on rows of 16 is 1/sqrt(16) (a sum of squares under a root) as much as 1/x.shape[-2]."""
    from grader.hints import generic
    assert generic._axis_factor(0.25, {"x": (4, 16), "weight": (16,)}) is None
    root = generic._axis_factor(1 / 5 ** 0.5, {"x": (3, 5), "weight": (5,)})
    assert root.facts["root"] and root.facts["n"] == 5 and root.facts["where"] == ["x.shape[-1]", "weight.shape[-1]"]


def test_a_name_never_imported_gets_the_import_to_add():
    """A file that uses np without importing it read 'exception: 75 cases' in the gradebook and
    nothing more (an instructor's trial): the hint names the import."""
    from grader.hints.generic import exception_hint
    from grader.words import render
    hint = exception_hint("NameError: name 'np' is not defined")
    assert hint is not None and hint.idea == "missing_import"
    for framework in ("numpy", "jax", "torch"):
        assert render(hint, framework) == "np is used but never imported: add import numpy as np at the top of the file"
    assert exception_hint("NameError: name 'helper' is not defined") is None   # the learner's own name: no guess


def test_a_reduction_over_the_wrong_axis_is_named_from_the_shapes():
    """A masked mean over d_model instead of seq_len read 'shape (3,) != expected (2,)' in every
    case and no hint (an instructor's trial): the shapes alone name the two axes, in each
    framework's keyword; two axes of one size, or two inputs that fit, name nothing."""
    import numpy as np

    from grader.hints.generic import shape_hint
    from grader.words import render
    got, ref = np.zeros((5, 4)), np.zeros((5, 3))      # d_model (3) reduced where seq_len (4) should be
    hint = shape_hint(got, ref, {"embeddings": (5, 4, 3), "mask": (5, 4)})
    assert hint is not None and hint.idea == "reduced_axis" and hint.facts == {"of": "embeddings", "used": -1, "instead": -2, "from_front": 2, "rank": 3}
    assert render(hint, "numpy").endswith("reduce over axis=-2 instead of axis=-1")
    assert render(hint, "torch").endswith("reduce over dim=-2 instead of dim=-1")
    assert shape_hint(np.zeros((5, 4)), np.zeros((5, 4)), {"a": (5, 4, 4)}) is None     # two axes of one size
    both = {"a": (5, 4, 3), "b": (5, 4, 3)}
    assert shape_hint(got, ref, both) is None                                         # two inputs fit: no guess


def test_row_medians_are_numpys_nanmedian():
    """The hints' per-row offset (``_Fits.rows``) takes each row's median in one sort; NumPy's
    ``nanmedian`` went row by row in Python (1.7 s of the hints of 18 failing checks). Any
    shape, ties, and rows partly or wholly NaN give NumPy's values."""
    import warnings

    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import array_shapes, arrays

    from grader.hints.generic import _row_medians

    values = st.floats(min_value=-1e300, max_value=1e300) | st.just(np.nan) | st.integers(-3, 3).map(float)

    @settings(max_examples=300, deadline=None)
    @given(arrays(np.float64, array_shapes(min_dims=1, max_dims=3, max_side=7), elements=values))
    def same(d):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.nanmedian(d, axis=-1, keepdims=True)
        assert np.array_equal(_row_medians(d), want, equal_nan=True), (d, want)
    same()


def test_judging_on_a_sample_first_changes_no_verdict_of_an_idea(monkeypatch):
    """``judge`` rejects an idea on about 1,024 of a large output's elements before computing all
    of them (condition (1) must hold at every element): the same residual or None as judging
    every element, for ideas that fit, fit nowhere, or miss at one element only."""
    from grader.hints import generic
    rng = np.random.default_rng(7)
    ref = rng.standard_normal((64, 512))
    allowed = np.full(ref.shape, 1e-6)
    one_off = 2 * ref
    one_off[37, 301] += 1.0          # right everywhere but one element, which the sample may skip
    ideas = [2 * ref, ref + 0.5, one_off, np.where(ref > 3, np.inf, 2 * ref), ref[::-1]]
    got = 2 * ref + rng.standard_normal(ref.shape) * 1e-9
    sampled = [generic.judge(p, got, ref, allowed, "float64") for p in ideas]
    monkeypatch.setattr(generic, "SAMPLED", 10**12)
    assert sampled == [generic.judge(p, got, ref, allowed, "float64") for p in ideas]
    assert sampled[0] is not None and sampled[1] is None and sampled[2] is None


def test_embedding_lookups_must_raise_hints_claim_no_code_the_learner_may_not_have_written():
    """A newcomer who cast bool IDs with ``.astype(np.int64)`` (rows 1, 0, 1) was told indexing
    had read them as a mask; one whose ``jnp.take`` filled NaN was told indexing clamps. The
    hints name both readings, and no other framework's code."""
    from grader.hints import Hint
    bools = Hint(idea="bool_ids", facts={"dtype": "bool", "raise": "TypeError or ValueError"})
    for framework, cast in (("numpy", ".astype(int)"), ("jax", ".astype(jnp.int32)"), ("torch", ".long()")):
        text = said(bools, framework, "embedding_lookup")
        assert "True" in text and cast in text and "mask" not in text, text
    past = Hint(idea="id_out_of_range", facts={"id": 7, "vocab_size": 5, "raise": "IndexError"})
    for framework in ("numpy", "jax", "torch"):
        text = said(past, framework, "embedding_lookup")
        assert "NaN" in text and "last row" in text and "JAX" not in text and "jnp" not in text, text


def test_torchs_refusal_of_int32_targets_is_named_for_each_framework():
    """F.cross_entropy's "expected target dtype to be Long" (and the older wordings) is the cause
    of every int32 case's exception and of the must-raise cases' RuntimeError; its words name
    the conversion in the learner's framework."""
    from grader.hints import cross_entropy
    for message in ("RuntimeError: expected target dtype to be Long or Byte, but got Int",
                    "RuntimeError: expected scalar type Long but found Int",
                    "RuntimeError: \"nll_loss_out_frame\" not implemented for 'Int'"):
        assert cross_entropy.diagnose_exception(message).idea == "targets_not_int64", message
    assert cross_entropy.diagnose_exception("ValueError: target out of range") is None
    said = {fw: words.render(diagnose.Hint(idea="targets_not_int64"), fw, "cross_entropy")
            for fw in ("numpy", "jax", "torch")}
    assert "targets.long()" in said["torch"] and "np.int64" in said["numpy"] and "jnp.int64" in said["jax"], said


def test_a_function_whose_parameters_are_not_the_statements_is_told_them():
    """A newcomer's ``layer_norm(x, weight, bias, epsilon=1e-5)`` got "TypeError: ... unexpected
    keyword argument 'eps'" in 18 cases and no hint; a missing or extra parameter the same."""
    from grader.hints import generic
    params = ["x", "gamma", "beta", "eps"]
    hint = generic.signature_hint("TypeError: layer_norm() got an unexpected keyword argument 'eps'", params)
    assert hint.idea == "signature" and hint.facts == {"function": "layer_norm", "params": params, "unexpected": "eps"}
    said = words.render(hint, "torch")
    assert said.startswith("the grader calls layer_norm(x, gamma, beta, eps)") and "'eps' is one of them" in said
    for message in ("TypeError: softmax() missing 1 required positional argument: 'axis'",
                    "TypeError: softmax() takes 1 positional argument but 2 were given",
                    "TypeError: Mod.softmax() got multiple values for argument 'axis'"):
        hint = generic.signature_hint(message, ["logits", "axis"])
        assert hint is not None and hint.facts["function"] == "softmax" and hint.facts["unexpected"] is None, message
        assert "exactly these parameters, in this order" in words.render(hint, "numpy")
    assert generic.signature_hint("TypeError: unsupported operand type(s) for +: 'int' and 'str'", params) is None


def test_an_overflow_and_a_zero_count_are_both_named_where_both_happen():
    """A newcomer's masked_mean_pool summed in float16 and divided by the count: the case's first
    element shown was a 0/0 NaN of an empty sequence, the hint only the overflow's. Both now; the
    overflow alone keeps its sentence."""
    from types import SimpleNamespace

    import numpy as np

    from grader.hints.masked_mean_pool import diagnose_non_finite
    from grader.words import render
    emb = np.full((2, 3, 1), 40000.0)
    mask = np.array([[False, False, False], [True, True, True]])
    case = SimpleNamespace(dtype="float16", inputs={"embeddings": emb, "mask": mask})
    ref = np.array([[0.0], [40000.0]])
    both = diagnose_non_finite(case, np.array([[np.nan], [np.inf]]), ref)
    assert both.idea == "half_sum_overflow" and both.facts == {"computed_in": "float16", "and_empty": True}
    assert render(both, "numpy", "masked_mean_pool").endswith("; and NaN where a sequence has no valid token: a 0/0, "
                                                              "where the statement asks for zeros")
    alone = diagnose_non_finite(case, np.array([[0.0], [np.inf]]), ref)
    assert alone.facts == {"computed_in": "float16"} and "NaN" not in render(alone, "numpy", "masked_mean_pool")
