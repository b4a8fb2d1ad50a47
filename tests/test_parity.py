"""Parity of the two executors (issue 34): the same scripted functions through the in-process fake
(``grader.run.inprocess.InProcessExecutor``, what the verdict, hint, scoring and format tests use)
and through the sandboxed child (``grader._child``) give the same case statuses, failure kinds,
hint ids and score. This is what licenses testing verdicts in process: where the two classify a
call differently, a test of the fake says nothing of what a learner gets.

Each function is graded once each way on tied_lm_head (a few generated cases, no shrinking), the
same plan both ways (``conftest.check_like_cli`` and ``conftest.grade_function_in_process``).
"""
from __future__ import annotations

import pytest

from .conftest import check_like_cli, grade_function_in_process

HEAD = "import numpy as np\n\n\n"
#: scripted functions: what each does that a classifier must name (status, result, mutation, type)
SCRIPTS = {
    "right": "def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n",
    "a_list": "def tied_lm_head(hidden, embedding_matrix):\n    return (hidden @ embedding_matrix.T).tolist()\n",
    "a_tuple": "def tied_lm_head(hidden, embedding_matrix):\n    r = hidden @ embedding_matrix.T\n    return r, r\n",
    "a_python_float": "def tied_lm_head(hidden, embedding_matrix):\n    return float((hidden @ embedding_matrix.T).sum())\n",
    "none": "def tied_lm_head(hidden, embedding_matrix):\n    hidden @ embedding_matrix.T\n",
    "raises": "def tied_lm_head(hidden, embedding_matrix):\n    raise ValueError('no')\n",
    "raises_below": ("def scaled(x):\n    raise ArithmeticError('scaled in ' + str(x.dtype))\n\n\n"
                     "def tied_lm_head(hidden, embedding_matrix):\n    return scaled(hidden) @ embedding_matrix.T\n"),
    "mutates_values": ("def tied_lm_head(hidden, embedding_matrix):\n    r = hidden @ embedding_matrix.T\n"
                       "    hidden *= 2\n    return r\n"),
    "mutates_shape": ("def tied_lm_head(hidden, embedding_matrix):\n    r = hidden @ embedding_matrix.T\n"
                      "    hidden.shape = (-1,)\n    return r\n"),
    "float64_always": "def tied_lm_head(hidden, embedding_matrix):\n    return (hidden.astype(np.float64) @ embedding_matrix.T.astype(np.float64))\n",
    "bool_result": "def tied_lm_head(hidden, embedding_matrix):\n    return (hidden @ embedding_matrix.T) > 0\n",
    "object_array": "def tied_lm_head(hidden, embedding_matrix):\n    return np.array([object()] * 2)\n",
    "subclass": ("class Sub(np.ndarray):\n    pass\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                 "    return (hidden @ embedding_matrix.T).view(Sub)\n"),
    "offset": "def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T + np.asarray(0.5, hidden.dtype)\n",
    "non_finite": ("def tied_lm_head(hidden, embedding_matrix):\n    r = hidden @ embedding_matrix.T\n"
                   "    return r * np.asarray(np.inf, r.dtype)\n"),
}
TORCH_SCRIPTS = {
    "torch_with_grad": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                        "    w = embedding_matrix.clone().requires_grad_(True)\n    return hidden @ w.T\n"),
    "torch_bfloat16_always": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                              "    return (hidden @ embedding_matrix.T).to(torch.bfloat16)\n"),
    # the tensor given changed in place, the NumPy array it shares memory with not in layout: a
    # mutation in both (the fake compared its NumPy copies only and passed it)
    "torch_transposed_in_place": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                                  "    r = hidden @ embedding_matrix.T\n    embedding_matrix.t_()\n    return r\n"),
    "torch_values_in_place": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                              "    r = hidden @ embedding_matrix.T\n    hidden.mul_(2)\n    return r\n"),
    # the tensor's storage swapped or its negative bit set: the NumPy array it shared memory with
    # is untouched in bytes and layout, the caller's tensor reads other values (an attacker's
    # finding: all three passed 10/10 in the child)
    "torch_data_rebound": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                           "    r = hidden @ embedding_matrix.T\n    hidden.data = torch.zeros_like(hidden)\n    return r\n"),
    "torch_set_": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                   "    r = hidden @ embedding_matrix.T\n    hidden.set_(torch.full_like(hidden, 7.0))\n    return r\n"),
    "torch_negative_bit": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                           "    r = hidden @ embedding_matrix.T\n    torch._C._set_neg(hidden, True)\n    return r\n"),
    # a tensor NumPy cannot hold: a type failure in both (it was an exception in the fake)
    "torch_complex32": ("import torch\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                        "    return (hidden @ embedding_matrix.T).float().to(torch.complex32)\n"),
}
ARGS = ("--problem", "tied_lm_head", "--max-examples", "3", "--no-shrink")


def _outcomes(report: dict) -> dict:
    """What both executors must agree on, case by case: status, failure kind, hint id, and where
    and what it raised (the frames as facts: file, line, function, code; the exception)."""
    cases = {c["name"]: (c["status"], (c.get("failure") or {}).get("kind"),
                         ((c.get("failure") or {}).get("data") or {}).get("hint_id"),
                         [(f["ref"], f["file"], f["line"], f["function"], f["code"])
                          for f in (c.get("failure") or {}).get("frames") or []],
                         (c.get("failure") or {}).get("exception")) for c in report["cases"]}
    return {"cases": cases, "score": report["score"], "failure": (report.get("failure") or {}).get("kind")}


def _both(tmp_path, name: str, source: str) -> tuple[dict, dict]:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    child_code, child = check_like_cli(str(path), *ARGS)
    fake = grade_function_in_process(path, *ARGS)
    assert fake is not None, "the fake imports the function"
    fake_code, fake_report = fake
    assert child_code == fake_code, (name, child_code, fake_code)
    return _outcomes(child), _outcomes(fake_report)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_fake_and_the_child_classify_a_call_alike(tmp_path, name):
    child, fake = _both(tmp_path, name, HEAD + SCRIPTS[name])
    assert child == fake
    if name.startswith("raises"):   # the frames the comparison holds: the submission's own, deepest last
        frames = next(iter(child["cases"].values()))[3]
        assert frames and all(f[:2] == ("submission", f"{name}.py") for f in frames), frames
        assert frames[-1][3] == ("scaled" if name == "raises_below" else "tied_lm_head"), frames


@pytest.mark.parametrize("name", sorted(TORCH_SCRIPTS))
def test_the_fake_and_the_child_classify_a_torch_call_alike(tmp_path, name):
    pytest.importorskip("torch")
    child, fake = _both(tmp_path, name, TORCH_SCRIPTS[name])
    assert child == fake
    if name == "torch_complex32":
        assert {c[1] for c in child["cases"].values()} == {"type"}, child["cases"]
    if name.endswith("_in_place") or name in ("torch_data_rebound", "torch_set_", "torch_negative_bit"):
        kinds = {c[1] for c in child["cases"].values()}
        assert "mutation" in kinds, child["cases"]


#: a lookup that zeroes its inputs before raising the error its contract asks for (an attacker's
#: finding: every must-raise case passed, 10/10): a mutation in both, not a pass
LOOKUP_THAT_DAMAGES = """import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    V = embedding_matrix.shape[0]
    if token_ids.dtype.kind not in "iu" or token_ids.dtype == np.bool_:
        embedding_matrix[...] = 0
        raise TypeError("ids")
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= V):
        embedding_matrix[...] = 0
        raise IndexError("range")
    return embedding_matrix[token_ids]
"""


def test_inputs_changed_before_the_required_error_are_a_mutation_in_both(tmp_path):
    path = tmp_path / "damages.py"
    path.write_text(LOOKUP_THAT_DAMAGES)
    args = ("--problem", "embedding_lookup", "--max-examples", "3", "--no-shrink")
    child_code, child = check_like_cli(str(path), *args)
    fake_code, fake = grade_function_in_process(path, *args)
    assert child_code == fake_code == 1
    assert _outcomes(child) == _outcomes(fake)
    raised = [c for c in child["cases"] if (c.get("failure") or {}).get("kind") == "mutation"]
    assert raised and all("before it raised" in c["failure"]["message"] for c in raised), child["cases"]
    assert child["score"] < child["max_score"]
