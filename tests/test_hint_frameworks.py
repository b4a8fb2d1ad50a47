"""Issue 34, acceptance through the pipeline: a NumPy, a JAX and a torch submission with each
hint-producing mistake of tied_lm_head and of the course pack get hints (per case and in the
summary) that name only their own framework's code.

``tests/test_hint_words.py`` words every idea's facts directly; here each bundled mistake
(``problems/mistakes/<problem>/*.py``, NumPy files) is graded in process
(:class:`grader.run.inprocess.InProcessExecutor`, through ``grader.check.grade_plan`` and so
``grading.finish``, which words the hints) as a submission of each framework: for JAX and torch
the mistake is wrapped so that it is called with that framework's arrays and returns that
framework's arrays (the same values, so the same mistake). What is checked is what a learner
reads: the hint of every failing case and every summary line.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from grader import frameworks
from grader.check import grade_plan
from grader.options import CheckOptions
from grader.plan import make_plan
from grader.run.inprocess import InProcessExecutor, for_file, framework_call
from grader.spec import find_problem, load_problem

from .test_hint_words import FOREIGN, NAMES_THE_RETURNED_TYPE

ROOT = Path(__file__).resolve().parent.parent
MISTAKES = ROOT / "problems" / "mistakes"
#: the bundled mistakes that get a hint, with the hint ids their own framework's learner gets:
#: every one of tied_lm_head's and of the lesson's other two problems, and of the course pack one
#: per idea the lesson's do not already have (each costs its problem's reference values once)
HINTED = {
    "tied_lm_head": {"bias.py": {"offset"}, "flattened_leading_axes.py": {"added_axis", "flattened"},
                     "float32_for_float64.py": {"demoted"}, "half_running_sum.py": {"half_accumulation"},
                     "inv_sqrt_d_model.py": {"factor"}, "last_feature_dropped.py": {"feature_dropped"},
                     "mutates_input.py": {"mutation"}, "no_transpose.py": {"no_transpose", "shapes_do_not_line_up"},
                     "returns_list.py": {"not_array"}, "softmax.py": {"softmax"},
                     "vocab_blocks_1024.py": {"wrong_vocab"}},
    "masked_mean_pool": {"dtype_float32.py": {"promoted"}, "half_running_sum.py": {"half_running_sum", "half_sum_overflow"},
                         # two roundings: beyond the allowance in the long sequences and some generated
                         # cases (XLA's float16 division rounds once more, and fails the fixed ones too)
                         "half_sum_rounded.py": {"half_sum_overflow"},
                         "mutation.py": {"mutation"}, "non_finite_zero_count.py": {"nan_where_zero"},
                         "shape_keepdims.py": {"extra_axis"}, "tolerance_divide_by_seq_len.py": {"divide_by_seq_len"},
                         "type_list.py": {"not_array"}},
    "embedding_lookup": {"dtype_float32.py": {"demoted", "promoted"},
                         "exception_stub.py": {"bool_ids", "float_ids", "id_out_of_range", "negative_id", "not_implemented"},
                         "raises_negative_wraps.py": {"negative_id"}, "shape_transposed.py": {"transposed"}},
    # layer_norm's own idea (the generic variance_count before it had a hint module), and eps
    # outside the root, the file's other mistake
    "layer_norm": {"tolerance_annotated_transformer_std.py": {"unbiased_variance", "eps_outside_sqrt"},
                   "tolerance_no_eps.py": {"no_eps"}, "tolerance_axis0.py": {"wrong_axis"}, "tolerance_float32_unbiased.py": {"unbiased_variance"}},
    "softmax": {"tolerance_orris_axis0.py": {"wrong_axis"}},
    "scaled_dot_product_attention": {"tolerance_padding_mask_inverted.py": {"mask_inverted"}},
    "greedy_next_token": {"dtype_jax_argmax_int32.py": {"dtype"}},
    # the course pack's other hint modules (a helper's trial: none of these got a hint) and a
    # factor that is an axis size; NumPy files (the torch-written ones are in test_hints.py)
    "kl_divergence": {"tolerance_sum_over_rows.py": {"axis_factor"}},
    "gelu": {"tolerance_picogpt_tanh.py": {"tanh_approximation"}},
    "rms_norm": {"tolerance_float16_squares_overflow.py": {"square_overflow"}},
    "cross_entropy": {"tolerance_sum_not_mean.py": {"axis_factor"}},
    "conv1d": {"tolerance_np_convolve_flips_kernel.py": {"flipped_kernel"}},
}
NO_SANDBOX = lambda request: ("none", None)  # noqa: E731 - the tier a plan records; nothing is started


@lru_cache(maxsize=None)
def _problem(pid: str):
    return load_problem(find_problem(pid))


def own_framework(path: Path) -> str:
    """The framework a bundled mistake file is written in (from its imports, as a check decides)."""
    import ast
    return frameworks.detect(ast.parse(path.read_text()))


def _ported(path: Path, function: str, framework: str) -> InProcessExecutor:
    """The mistake at ``path`` (written in its own framework) as a ``framework`` submission:
    called with ``framework``'s arrays (``framework_call``), it passes NumPy copies of them to the
    file's function called as its own framework's submission would be, and returns the result
    converted to ``framework``'s arrays (a tuple or list item by item, Python numbers as they are)."""
    own = for_file(path, function, own_framework(path))
    if own.fn is None or own_framework(path) == framework:
        return own
    mistake, fw = own.fn, frameworks.get(framework)

    def to_np(v):
        if isinstance(v, (bool, int, float)) or v is None:
            return v
        out = fw.to_numpy(v)
        return out[0] if isinstance(out, tuple) else out

    own_to_numpy = getattr(mistake, "to_numpy", lambda v: None)   # framework_call's: the file's own arrays

    def to_fw(v):
        if not isinstance(v, (np.ndarray, bool, int, float)) and v is not None:
            converted = own_to_numpy(v)
            v = converted[0] if converted else v
        return fw.to_framework(v) if isinstance(v, np.ndarray) else v

    def submission(*args, **kwargs):
        result = mistake(*(to_np(a) for a in args), **{k: to_np(v) for k, v in kwargs.items()})
        if isinstance(result, dict):
            return {k: to_fw(v) for k, v in result.items()}
        if type(result) in (tuple, list):
            return type(result)(to_fw(v) for v in result)
        return to_fw(result)
    return InProcessExecutor(framework_call(submission, framework))


def _read_by_learner(pid: str, path: Path, framework: str) -> tuple[list[str], set[str]]:
    """The hints and summary lines a ``framework`` learner reads for the mistake at ``path``,
    and the hint ids behind them."""
    problem = _problem(pid)
    opts = CheckOptions(max_examples=2, shrink=False, sandbox="none", framework=framework)
    plan = make_plan(path, problem, opts, NO_SANDBOX)
    executor = _ported(path, problem.function, framework)
    report = grade_plan(plan, executor)
    texts, ids = [], set()
    for fail in [report.failure] + [c.failure for c in report.cases]:
        if fail is not None and fail.hint:
            texts.append(fail.hint)
            ids.add(fail.data.get("hint_id") or "")
    texts += [s.get("text") or "" for s in report.summary]
    return texts, ids


def _check(framework: str) -> None:
    if framework not in _problem("tied_lm_head").frameworks:
        pytest.skip(f"{framework} is not graded")
    try:
        frameworks.get(framework)
    except Exception:  # noqa: BLE001 - the framework is not installed here
        pytest.skip(f"{framework} is not installed")
    same, total = 0, 0
    for pid, files in HINTED.items():
        for name, own_ids in files.items():
            path = MISTAKES / pid / name
            texts, ids = _read_by_learner(pid, path, framework)
            total += 1
            same += bool(ids & own_ids)
            if own_framework(path) == framework:   # the list above still holds
                assert own_ids <= ids, (pid, name, own_ids, ids)
            _only_own_code(framework, pid, name, texts, ids)
    # the ported mistakes are the same mistakes: most get the same idea as in their own framework
    # (one that mutates an input or returns a list may be judged otherwise where arrays are copies)
    assert same >= 0.8 * total, (framework, same, total)


def _only_own_code(framework, pid, name, texts, ids):
    """Every text names only ``framework``'s code (``jax_enable_x64`` only to a JAX learner)."""
    for text in texts:
        for token in FOREIGN[framework]:
            if ids & NAMES_THE_RETURNED_TYPE and token in (r"\bjax", r"jnp\."):
                continue
            assert not re.search(token, text), (framework, pid, name, token, text)
    assert framework == "jax" or not any("jax_enable_x64" in t for t in texts), (framework, pid, name, texts)


def test_a_numpy_submission_of_each_mistake_reads_only_numpy_code():
    _check("numpy")


def test_a_jax_submission_of_each_mistake_reads_only_jax_code():
    _check("jax")


def test_a_torch_submission_of_each_mistake_reads_only_torch_code():
    _check("torch")


def test_one_idea_found_in_many_cases_is_one_line_to_fix():
    """The learner's list of hints (``ReportView.hints``: the page's "What to fix", the text
    report's hints) has one line per idea: 1/sqrt(d_model) found in cases of many d_model sizes
    was one bullet per size (a newcomer read 14 near-identical bullets)."""
    from grader.reports import view

    path = MISTAKES / "tied_lm_head" / "inv_sqrt_d_model.py"
    plan = make_plan(path, _problem("tied_lm_head"), CheckOptions(max_examples=6, shrink=False, sandbox="none",
                                                                  framework="numpy"), NO_SANDBOX)
    report = grade_plan(plan, for_file(path, "tied_lm_head", "numpy"))
    worded = {c.failure.hint for c in report.cases if c.failure and c.failure.data.get("hint_id") == "factor"}
    assert len(worded) >= 2, worded            # the cases' own sentences differ (each names its size)
    hints = view.build(report).hints
    assert len(hints) == len(set(hints)) and sum(h in worded for h in hints) <= 1, hints
    assert any("sqrt" in h for h in hints), hints


@pytest.mark.parametrize("framework,cast", [("torch", "x.to(torch.float32)"), ("jax", "x.astype(jnp.float32)"),
                                            ("numpy", "x.astype(np.float32)")])
def test_float16_failing_where_bfloat16_passes_is_named_a_range_problem(framework, cast):
    """An instructor's torch learner squared in float16 (zeros where the values were large) and
    got no hint. bfloat16 keeps fewer digits than float16 but float32's range: where it passes
    and float16 fails, the summary says a value left float16's range, in the learner's code."""
    from grader.results import ArrayInfo, CaseResult, Failure
    from grader.summary import summarise

    def case(name, dtype, status):
        failure = Failure(kind="tolerance", message="off") if status == "failed" else None
        return CaseResult(name=f"{name}[{dtype}]", group="g", dtype=dtype, status=status, rank=2, failure=failure,
                          inputs={"x": ArrayInfo(shape=(4, 64), dtype=dtype)})

    dtypes = ("bfloat16", "float16", "float32", "float64")
    cases = [case("large", d, "failed" if d == "float16" else "passed") for d in dtypes]
    entry = summarise(cases, dtypes, framework)[0]
    assert entry["hint"]["id"] == "half_range" and cast in entry["hint"]["text"], entry["hint"]
    assert "65504" in entry["hint"]["text"]
    # float16 and bfloat16 both failing, or no bfloat16 graded (NumPy's dtypes): no such inference
    both = [case("large", d, "failed" if d in ("float16", "bfloat16") else "passed") for d in dtypes]
    assert summarise(both, dtypes, framework)[0]["hint"] is None
    numpy_dtypes = ("float16", "float32", "float64")
    assert summarise([c for c in cases if c.dtype != "bfloat16"], numpy_dtypes, framework)[0]["hint"] is None
