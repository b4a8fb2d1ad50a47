"""Frameworks (issue 11): detection from imports, torch's conversions, hints in torch words, a
missing or starved torch, and the torch corpus (tests/corpus-frameworks) graded through the CLI.

The in-process tests run in milliseconds (the conversions import torch once, a few seconds).
The corpus is graded once per session, two files at a time, with one generated case per dtype
(``--max-examples 4 --no-shrink``): ``import torch`` costs seconds per submission process.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import PROBLEMS, check_like_cli

from grader import frameworks
from grader.check import CheckOptions, check_submission, detect_framework
from grader.spec import find_problem, load_problem

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus-frameworks"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text())
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (pip install 'grader[torch]')")


# -- detection ---------------------------------------------------------------------------------
@pytest.mark.parametrize("source, framework", [
    ("import numpy as np\ndef f(x): return x", "numpy"),
    ("import torch\n", "torch"),
    ("import torch.nn.functional as F\n", "torch"),
    ("from torch import einsum\n", "torch"),
    ("from torch.nn import functional\n", "torch"),
    ("import numpy as np\ndef f(x):\n    import torch\n    return x", "torch"),
    ("import jax.numpy as jnp\nimport torch\n", "jax"),       # the first framework import wins
    ("import torch\nimport jax\n", "torch"),
    ("# import torch\nx = 'import torch'\n", "numpy"),        # comments and strings do not count
    ("from .torch import helper\n", "numpy"),                 # a relative import is the learner's
    ("import torchvision\n", "numpy"),                        # another package, not torch
])
def test_framework_is_detected_from_import_statements(source, framework):
    assert detect_framework(ast.parse(source)) == framework
    assert frameworks.detect(ast.parse(source)) == framework


@pytest.mark.parametrize("source,framework", [
    ("import torch\n\ndef tied_lm_head(hidden, embedding_matrix)\n    return hidden\n", "torch"),
    ("import numpy as np, torch.nn as nn\nx = (\n", "torch"),
    ("from jax import numpy as jnp\ndef f(:\n", "jax"),
    ("def f(x):\n    import jax.numpy as jnp\n  return (\n", "jax"),
    ("# import torch\nimport numpy as np\nx = (\n", "numpy"),     # a comment is no import
    ("from .torch import helper\nx = (\n", "numpy"),               # nor a relative import
    ("import torchvision\nx = (\n", "numpy"),
])
def test_a_file_that_does_not_parse_is_given_the_framework_it_imports(source, framework):
    """A newcomer's PyTorch file with a syntax error was reported as "numpy submission, graded in
    float16, float32, float64": without an AST, its import lines are scanned."""
    with pytest.raises(SyntaxError):
        ast.parse(source)
    assert detect_framework(None, source) == framework


def test_a_torch_file_with_a_syntax_error_is_reported_as_torch(tmp_path):
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.spec import load_problem
    sub = tmp_path / "solution.py"
    sub.write_text("import torch\n\ndef tied_lm_head(hidden, embedding_matrix)\n    return hidden\n")
    plan = make_plan(sub, load_problem(PROBLEMS / "tied_lm_head.yaml"), CheckOptions(), lambda request: ("none", None))
    assert plan.framework == "torch"
    assert plan.loaded.tree is None


def test_every_framework_has_a_module_the_child_can_load_by_path():
    for name in frameworks.FRAMEWORKS:
        path = frameworks.FOLDER / f"{name}.py"
        assert path in frameworks.CHILD_FILES
        spec = importlib.util.spec_from_file_location(f"_probe_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)       # importing it never imports the framework
        assert module.NAME == name and callable(module.setup) and callable(module.to_numpy)
    from grader.sandbox import CHILD_FILES
    assert set(frameworks.CHILD_FILES) <= set(CHILD_FILES)   # the sandbox shows them


# -- hints in the submission's framework --------------------------------------------------------
def test_every_framework_writes_the_same_code_templates():
    """Each framework's CODE (grader.words fills it) has the same keys, so a wording works for all."""
    keys = set(frameworks.get("numpy").CODE)
    for name in frameworks.FRAMEWORKS:
        assert set(frameworks.get(name).CODE) == keys, name
    from grader.hints import Hint
    from grader.words import render
    promoted = Hint(idea="promoted", facts={"got": "float32", "want": "float16"})
    assert render(promoted, "torch", "tied_lm_head").endswith("(e.g. .to(hidden.dtype))")
    assert render(promoted, "numpy", "tied_lm_head").endswith("(e.g. .astype(hidden.dtype))")
    listed = Hint(idea="not_array", facts={"returned": "list"})
    assert "torch.as_tensor" in render(listed, "torch") and "jnp.asarray" in render(listed, "jax")


# -- torch's conversions (the child's code, run here) -------------------------------------------
def _torch_module():
    spec = importlib.util.spec_from_file_location("_fw_torch", frameworks.FOLDER / "torch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    versions = module.setup({})
    assert versions["torch"] and "+" not in versions["torch"]
    return module


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64", "int32", "int64", "bool"])
def test_torch_inputs_share_memory_and_results_come_back_bit_exact(dtype):
    import ml_dtypes
    import torch
    fw = _torch_module()
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    a = (np.arange(-3, 3).reshape(2, 3) % 2 == 0) if dtype == "bool" else \
        np.array([[1.5, -2.25, 3.0], [0.0, -0.0, 65504.0 if dtype != "bfloat16" else 3e38]]).astype(np_dtype)
    t = fw.to_framework(a)
    assert isinstance(t, torch.Tensor) and t.device.type == "cpu"
    assert str(t.dtype) == f"torch.{dtype}"
    back, kind = fw.to_numpy(t)
    assert kind == "torch.Tensor" and back.dtype == a.dtype
    assert back.tobytes() == a.tobytes()
    if dtype != "bool":
        t.view(-1)[0] = 7                       # an in-place change reaches the array: mutation is seen
        assert float(np.asarray(a, dtype=np.float64).reshape(-1)[0]) == 7.0


@needs_torch
def test_torch_results_requires_grad_zero_d_and_unsupported_dtypes():
    import torch
    fw = _torch_module()
    w = torch.ones(2, 3, dtype=torch.float32, requires_grad=True)
    out, _ = fw.to_numpy(w * 2)
    assert out.dtype == np.float32 and out.tolist() == [[2.0] * 3] * 2
    out, _ = fw.to_numpy(torch.tensor(3.5, dtype=torch.float64))
    assert out.shape == () and float(out) == 3.5
    out, _ = fw.to_numpy(torch.arange(6.0).reshape(2, 3).T)   # not contiguous
    assert out.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert fw.to_numpy([1.0, 2.0]) is None and fw.to_numpy(np.zeros(2)) is None
    torch.use_deterministic_algorithms(False)  # torch 2.1 cannot fill float8 under deterministic algorithms
    try:
        odd = torch.zeros(2, dtype=getattr(torch, "float8_e4m3fn", torch.complex32))
    finally:
        torch.use_deterministic_algorithms(True)
    with pytest.raises(TypeError, match="array of dtype torch.complex32|array of dtype torch.float8"):
        fw.to_numpy(odd)


# -- without torch, and with too little memory for it ---------------------------------------------
def test_a_torch_submission_without_torch_installed_is_one_clear_failure(monkeypatch):
    """The grading machine lacks torch: a report (exit 1 from the CLI) whose one line says what to
    install; nothing is started."""
    monkeypatch.setattr(frameworks, "installed", lambda name: name != "torch")
    problem = load_problem(find_problem("tied_lm_head", None))
    report = check_submission(ROOT / "submissions" / "correct_torch.py", problem, CheckOptions(sandbox="none"))
    assert not report.passed and not report.cases
    assert report.failure.kind == "import"
    assert report.failure.message.startswith("ModuleNotFoundError: this is a PyTorch submission")
    assert "PyTorch is not installed where the grader runs" in report.failure.message
    assert "pip install 'grader[torch]'" in report.failure.message
    assert "\n" not in report.failure.message
    assert report.environment["framework"] == "torch"


def test_a_torch_older_than_it_needs_is_the_machines_fault_not_a_failed_float16(monkeypatch):
    """torch 2.1 has no float16 matmul on the CPU: every correct submission failed its 18 float16
    cases there. Below MIN_VERSION the run is one import line saying what to install, as when
    torch is missing (read from the package's metadata, torch never imported)."""
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "2.1.0+cu121" if dist == "torch" else real(dist))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())  # as if torch were there
    assert frameworks.too_old("torch") == "2.1.0+cu121" and not frameworks.installed("torch")
    problem = load_problem(find_problem("tied_lm_head", None))
    report = check_submission(ROOT / "submissions" / "correct_torch.py", problem, CheckOptions(sandbox="none"))
    assert not report.passed and not report.cases and report.failure.kind == "import"
    assert report.failure.message.startswith("this is a PyTorch submission (it imports torch), but PyTorch "
                                             "2.1.0+cu121 is installed where the grader runs, older than the 2.2")
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "2.2.0" if dist == "torch" else real(dist))
    assert frameworks.too_old("torch") is None


@needs_torch
def test_too_little_memory_for_torch_says_so():
    """RLIMIT_AS of 512 MiB is too little for torch: the import fails with a MemoryError or an
    ImportError (the child names the memory limit) or aborts in C++ (the grader's hint does)."""
    from .conftest import run_grader   # in process: the limit is the sandboxed child's
    run = run_grader("check", str(ROOT / "submissions" / "correct_torch.py"), "--memory-mb", "512",
                     "--case", "worked_example[float32]", "--format", "json", timeout=300,
                     env={"GRADER_SANDBOX_TIER": "rlimits"})
    assert run.code == 1, run.stderr[-500:]
    failure = run.json()["failure"]
    assert failure["kind"] == "import"
    said = f"{failure['message']} {failure['hint']}"
    assert ("importing PyTorch ran out of memory" in said or "importing PyTorch needs about 736 MiB" in said), said
    assert "--memory-mb" in said


# -- the torch corpus -----------------------------------------------------------------------------
FILES = sorted(EXPECTED)
FAST = ["--max-examples", "4", "--no-shrink"]


def _grade(rel: str, out_dir: Path) -> tuple[int, dict | None, str]:
    """``grader check FILE --format json --audience instructor`` (``check_like_cli``: the CLI's
    parser and options, the check in this process, the submission in its sandboxed child)."""
    problem = EXPECTED[rel].get("problem", "tied_lm_head")
    code, report = check_like_cli(str(CORPUS / rel), "--problem", problem, "--audience", "instructor", *FAST)
    return code, report, ""


@pytest.fixture(scope="module")
def graded() -> dict[str, Future]:
    """Every corpus file graded, two at a time; the first test to ask starts them all."""
    out_dir = Path(tempfile.mkdtemp(prefix="corpus-frameworks-"))
    pool = ThreadPoolExecutor(2, thread_name_prefix="grade-torch")
    futures = {rel: pool.submit(_grade, rel, out_dir) for rel in FILES}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _texts(report: dict) -> str:
    """The summary lines and every failure's hint, lower case."""
    parts = [s["text"] for s in report["summary"]] + [h["text"] for s in report["summary"] for h in s["hints"]]
    parts += [c["failure"]["hint"] or "" for c in report["cases"] if c["failure"]]
    return "\n".join(parts).lower()


@needs_torch
@pytest.mark.parametrize("rel", FILES)
def test_torch_corpus_verdict(rel, graded):
    code, report, stderr = graded[rel].result()
    want = EXPECTED[rel]
    assert report is not None, f"no report; exit {code}; {stderr[-500:]}"
    env = report["environment"]
    assert env["framework"] == "torch" and env["torch"], env
    assert env["dtypes"] == ["bfloat16", "float16", "float32", "float64"]
    failing = [(c["name"], c["failure"]["kind"], c["failure"]["message"][:120]) for c in report["cases"] if c["failure"]]
    if want["verdict"] == "pass":
        assert report["passed"] and code == 0 and not failing, (report["failure"], failing[:5])
        assert {c["dtype"] for c in report["cases"]} == set(env["dtypes"])     # every dtype ran
        return
    assert not report["passed"] and code == 1
    first = report["failure"]["kind"] if report["failure"] else failing[0][1]
    assert first in want["kinds"], failing[:5]
    if want.get("hint"):
        assert want["hint"].lower() in _texts(report), _texts(report)
    assert ".astype(" not in _texts(report)          # hints name torch code, not NumPy's
