"""An input changed in place is a mutation whatever changed: its values, or only its shape,
strides or dtype (the bytes then stay the same). Through the sandboxed child, as a learner's
submission runs: the child compares the arrays and the arguments it gave before and after."""
from __future__ import annotations

import importlib.util

import pytest

from grader.check import CheckOptions, check_submission
from grader.spec import find_problem, load_problem

PROBLEM = load_problem(find_problem("tied_lm_head"))
NUMPY_RESHAPES = """\
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = hidden @ embedding_matrix.T
    if hidden.ndim > 1 and hidden.size:
        hidden.shape = (-1, hidden.shape[-1])   # the caller's array now has other axes
    return out
"""
TORCH_TRANSPOSES = """\
import torch

def tied_lm_head(hidden, embedding_matrix):
    out = hidden @ embedding_matrix.T
    embedding_matrix.t_()                        # transposes the caller's tensor in place
    return out
"""


def kinds(tmp_path, source: str, framework: str) -> set[str]:
    sub = tmp_path / "sub.py"
    sub.write_text(source)
    report = check_submission(sub, PROBLEM, CheckOptions(max_examples=2, shrink=False, framework=framework))
    return {c.failure.kind for c in report.cases if c.failure}


def test_a_numpy_input_reshaped_in_place_is_a_mutation(tmp_path):
    assert "mutation" in kinds(tmp_path, NUMPY_RESHAPES, "numpy")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_a_torch_input_transposed_in_place_is_a_mutation(tmp_path):
    assert "mutation" in kinds(tmp_path, TORCH_TRANSPOSES, "torch")


def test_a_correct_function_is_no_mutation(tmp_path):
    assert kinds(tmp_path, "def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n",
                 "numpy") == set()
