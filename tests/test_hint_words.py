"""Issue 34, acceptance: every hint of tied_lm_head and of the course pack, as a torch, a JAX and
a NumPy learner reads it, names only that framework's code.

Each idea's facts are worded by ``grader.words.render`` for each framework (cheap: no executor,
no framework imported). Every idea of every wording table is covered (a test asserts that every
idea has wording for every framework), with facts of the shapes the ideas record.
"""
from __future__ import annotations

import re

import pytest

from grader import words
from grader.hints import Hint

#: facts that satisfy every wording (each idea reads the ones it needs)
FACTS = {"computed_in": "float32", "dtype": "float64", "first": "hidden", "function": "the function",
         "factor": 0.125, "d_model": 64, "vocab_size": 10, "named": "1/sqrt(d_model)", "offset": 0.5, "n": 3,
         "formula": "sqrt((n - 1) / n)", "returned": "list", "want": "float16", "got": "float32", "rule": "the inputs' dtype",
         "like": "hidden", "how": "truncated", "shape": [2, 5], "got_shape": [0], "from_list": True, "said": "only 2-D",
         "which": "last", "lead": 2, "logits": 9, "values_differ": True, "where": "sum", "seq_len": 7, "id": -1,
         "raise": "IndexError", "target": -1, "classes": 5, "rows": [3], "rows_at": "last", "rows_of": 4, "zeros": True, "by": "max",
         "axis_used": -2, "axis": -1, "d": 8, "eps": 1e-5, "name": "np", "statement": "import numpy as np",
         "of": "embeddings", "used": -1, "instead": -2, "second": "var", "order": ["mean", "var"],
         "params": ["hidden", "embedding_matrix"], "unexpected": None}

#: tokens of another framework's code a learner of each framework must never read
FOREIGN = {
    "numpy": [r"jnp\.", r"\bjax", r"torch", r"\.to\(", r"\.long\(\)", r"\.mT\b"],
    "jax": [r"(?<![j\w])np\.", r"torch", r"\.to\(", r"\.long\(\)", r"numpy\.ndarray"],
    "torch": [r"(?<![j\w])np\.", r"jnp\.", r"\bjax", r"astype", r"numpy\.ndarray"],
}
#: each framework's own idiom for the ideas whose wording names code
OWN = {
    ("tied_lm_head", "lower_precision"): {"numpy": "hidden.astype(np.float32)", "jax": "hidden.astype(jnp.float32)",
                                          "torch": "hidden.to(torch.float32)"},
    ("tied_lm_head", "no_transpose"): {"numpy": "hidden @ embedding_matrix.T",
                                       "jax": "hidden @ jnp.transpose(embedding_matrix)",
                                       "torch": "hidden @ embedding_matrix.T"},
    ("tied_lm_head", "swapped_axes"): {"numpy": "hidden.T", "jax": "jnp.swapaxes(hidden, -1, -2)", "torch": "hidden.mT"},
    ("tied_lm_head", "promoted"): {"numpy": ".astype(hidden.dtype)", "jax": ".astype(hidden.dtype)",
                                   "torch": ".to(hidden.dtype)"},
    ("tied_lm_head", "integer"): {"numpy": ".astype(int)", "jax": ".astype(jnp.int32)", "torch": ".long()"},
    ("tied_lm_head", "added_axis"): {"numpy": "np.atleast_2d", "jax": "jnp.atleast_2d", "torch": "torch.atleast_2d"},
    ("tied_lm_head", "empty_batch"): {"numpy": "np.array", "jax": "jnp.array", "torch": "torch.tensor"},
    (None, "lower_precision"): {"numpy": "hidden.astype(np.float32)", "jax": "hidden.astype(jnp.float32)",
                                "torch": "hidden.to(torch.float32)"},
    (None, "not_array"): {"numpy": "np.asarray", "jax": "jnp.asarray", "torch": "torch.as_tensor"},
    (None, "mutation"): {"numpy": "new arrays", "jax": "new arrays", "torch": "mul_"},
    (None, "variance_count"): {"numpy": "ddof=1", "jax": "ddof=1", "torch": "correction=1"},
    ("masked_mean_pool", "half_running_sum"): {"numpy": "embeddings.astype(np.float32)",
                                               "jax": "embeddings.astype(jnp.float32)",
                                               "torch": "embeddings.to(torch.float32)"},
    ("masked_mean_pool", "half_sum_rounded"): {"numpy": "embeddings.astype(np.float32)",
                                               "jax": "embeddings.astype(jnp.float32)",
                                               "torch": "embeddings.to(torch.float32)"},
    ("embedding_lookup", "float_ids"): {"numpy": ".astype(int)", "jax": ".astype(jnp.int32)", "torch": ".long()"},
    ("softmax", "no_max_shift"): {"numpy": "logits - logits.max(axis=axis, keepdims=True)",
                                  "jax": "logits - jnp.max(logits, axis=axis, keepdims=True)",
                                  "torch": "logits - logits.amax(dim=axis, keepdim=True)"},
    ("layer_norm", "unbiased_variance"): {"numpy": "ddof=1", "jax": "ddof=1", "torch": "correction=1"},
    ("layer_norm", "wrong_axis"): {"numpy": "axis=-1, keepdims=True", "jax": "axis=-1, keepdims=True",
                                   "torch": "dim=-1, keepdim=True"},
    ("rms_norm", "wrong_axis"): {"numpy": "axis=-1, keepdims=True", "jax": "axis=-1, keepdims=True",
                                 "torch": "dim=-1, keepdim=True"},
    ("rms_norm", "square_overflow"): {"numpy": "x.astype(np.float32)", "jax": "x.astype(jnp.float32)",
                                      "torch": "x.to(torch.float32)"},
    ("cross_entropy", "no_max_shift"): {"numpy": "logits - logits.max(axis=-1, keepdims=True)",
                                        "jax": "logits - jnp.max(logits, axis=-1, keepdims=True)",
                                        "torch": "logits - logits.amax(dim=-1, keepdim=True)"},
    ("softmax", "wrong_axis"): {"numpy": "axis=axis, keepdims=True", "jax": "axis=axis, keepdims=True",
                                "torch": "dim=axis, keepdim=True"},
}
#: ideas whose facts name another framework's type (a JAX array returned by a NumPy file)
NAMES_THE_RETURNED_TYPE = {"jax_array"}
#: ideas that say which framework the file was graded in and why (NumPy code given torch
#: tensors: only a torch-graded file meets it, and the words name torch and NumPy's .astype)
NAMES_THE_GRADED_FRAMEWORK = {"numpy_code_given_tensors"}

PACK = ("softmax", "layer_norm", "scaled_dot_product_attention", "rms_norm", "gelu", "kl_divergence", "cross_entropy", "conv1d")
IDEAS = [(module, idea) for module in ("tied_lm_head", "masked_mean_pool", "embedding_lookup", *PACK, None)
         for idea in (words.TABLES[module] if module else words.GENERIC)]


def _check(framework: str) -> None:
    for module, idea in IDEAS:
        text = words.render(Hint(idea=idea, facts=FACTS), framework, module)
        assert text, (module, idea)
        for token in FOREIGN[framework]:
            if idea in NAMES_THE_RETURNED_TYPE and token in (r"\bjax", r"jnp\."):
                continue
            if idea in NAMES_THE_GRADED_FRAMEWORK:    # it names NumPy's and torch's idiom, for a torch-graded file
                continue
            assert not re.search(token, text), (framework, module, idea, token, text)
        own = OWN.get((module, idea))
        if own:
            assert own[framework] in text, (framework, module, idea, text)
    jax_only = words.render(Hint(idea="lower_precision", facts=FACTS), framework, "tied_lm_head")
    assert ("jax_enable_x64" in jax_only) == (framework == "jax")


def test_a_numpy_learner_reads_only_numpy_code():
    _check("numpy")


def test_a_jax_learner_reads_only_jax_code():
    _check("jax")


def test_a_torch_learner_reads_only_torch_code():
    _check("torch")


@pytest.mark.parametrize("module", ["tied_lm_head", "masked_mean_pool", "embedding_lookup", *PACK])
def test_every_idea_a_bundled_module_records_has_words(module):
    """Every id a bundled hint module can return is in its table or the generic one."""
    import ast
    from pathlib import Path

    import grader.hints as hints_pkg
    folder = Path(hints_pkg.__file__).parent
    ids = set()
    for path in [folder / f"{module}.py", folder / "generic.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg in ("idea", "id") and isinstance(node.value, ast.Constant):
                ids.add(node.value.value)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "const" and node.args:
                ids.add(node.args[0].value)
    missing = sorted(i for i in ids if words.wording(i, module) is None)
    assert missing == []


@pytest.mark.parametrize("framework,cast", [("numpy", "x.astype(np.float32)"), ("jax", "x.astype(jnp.float32)"),
                                            ("torch", "x.to(torch.float32)")])
def test_the_second_mistake_is_worded_in_the_learners_code(framework, cast):
    """A hint with ``also_computed_in`` (two mistakes at once) adds a clause in the learner's
    own code; JAX's ``jax_enable_x64`` only to a JAX learner."""
    facts = {"d": 9, "also_computed_in": "float32", "on_grid": True, "dtype": "float64", "first": "x"}
    text = words.render(Hint(idea="unbiased_variance", facts=facts), framework, "layer_norm")
    plain = words.render(Hint(idea="unbiased_variance", facts={"d": 9}), framework, "layer_norm")
    assert text.startswith(plain + "; ") and cast in text and "compute in float64" in text, text
    assert ("jax_enable_x64" in text) == (framework == "jax"), text
    for token in FOREIGN[framework]:
        assert not re.search(token, text), (framework, token, text)


@pytest.mark.parametrize("idea", ["bool_ids", "float_ids"])
def test_a_torch_learner_is_told_where_its_runtime_error_came_from(idea):
    """A newcomer's ``F.embedding`` lost a point for torch's own RuntimeError on float and bool
    IDs and was not told why: the torch wording says so; nobody else's names torch."""
    raised = {"dtype": "float32", "raise": "TypeError or ValueError or IndexError", "raised": "RuntimeError"}
    for framework in ("numpy", "jax", "torch"):
        text = words.render(Hint(idea=idea, facts=raised), framework, "embedding_lookup")
        assert ("F.embedding refuse such IDs with RuntimeError" in text) == (framework == "torch"), (framework, text)
        other = words.render(Hint(idea=idea, facts={**raised, "raised": "KeyError"}), framework, "embedding_lookup")
        assert "F.embedding" not in other


def test_a_feature_dropped_in_cases_of_several_sizes_is_summed_up_with_their_range():
    """A newcomer's summary read "one of the d_model = 33 columns" for 43 cases of d_model 33 to
    4096: the summary gives the range, not one case's number."""
    mine = [{"params": {"which": "last", "d_model": n}} for n in (33, 57, 42, 4096)]
    for framework in ("numpy", "jax", "torch"):
        text = words.combined("feature_dropped", mine, framework, "tied_lm_head")
        assert text is not None and "d_model 33, 42, 57, 4096 in these cases" in text and "= 33" not in text
    assert words.combined("feature_dropped", mine[:1] * 3, "numpy", "tied_lm_head") is None   # one size: the case's words


def test_a_torch_learners_type_failure_says_tensor():
    """A newcomer's trial: a torch file returning a list read "the function returned list, not an
    array" above the hint "return a tensor, not a list"; the line says tensor for torch now."""
    from grader.results import Failure
    for framework, noun in (("torch", "a tensor"), ("numpy", "an array"), ("jax", "an array")):
        failure = Failure(kind="type", message="the function returned list, not an array",
                          data={"returned": "list", "wanted": "array"})
        words.render_failure(failure, framework, None)
        assert failure.message == f"the function returned list, not {noun}", framework


def test_a_jax_result_promoted_to_float64_is_told_about_x64():
    """A newcomer's jnp.zeros without dtype= was float64 in the grader (x64 on) and float32 in
    their kernel, and the hint said only "promoted to float64"; a JAX learner reads why now, in
    the problem's own wording and the generic one, per case and in the summary."""
    facts = {"got": "float64", "want": "float32", "how": "promoted", "like": "hidden"}
    for module in ("tied_lm_head", None):
        jax_text = words.render(Hint(idea="promoted", facts=facts), "jax", module)
        assert "jax_enable_x64 on: jnp.zeros, jnp.ones, jnp.arange" in jax_text, module
        assert "jax_enable_x64" not in words.render(Hint(idea="promoted", facts=facts), "numpy", module)
        assert "jax_enable_x64" not in words.render(Hint(idea="promoted", facts={**facts, "got": "float32",
                                                                                  "want": "float16"}), "jax", module)
    mine = [{"id": "promoted", "params": facts, "dtype": dt} for dt in ("float16", "float32")]
    assert "jax_enable_x64 on" in words.combined("promoted:float64", mine, "jax")
