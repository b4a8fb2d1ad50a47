"""``check(fn)`` in a notebook (grader.notebook_check): the source builder in process, one
subprocess-graded pass and fail, and one run in a real Jupyter kernel (nbclient)."""
from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import textwrap
from math import sqrt

import numpy as np
import pytest

from grader.notebook_check import CheckResult, build_source, check
from grader.reports.notebook_html import render_html

SCALE = 1.0
NAME = "logits"
SHAPE = (2, (3, None))
TABLE = np.ones(3)


def _transpose(m):
    return m.T


def _helper_of_helper(m):
    return _transpose(m) * SCALE


def head_with_helpers(hidden, embedding_matrix):
    return np.matmul(hidden, _helper_of_helper(embedding_matrix))


def uses_table(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T + TABLE


def uses_from_import(x):
    return sqrt(x) + math.pi


def uses_constants(x):
    return (x, NAME, SHAPE, SCALE)


def _traced(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@_traced
def decorated(x):
    return x * SCALE


def _run_source(source: str, name: str):
    namespace: dict = {}
    exec(compile(source, "<built>", "exec"), namespace)
    return namespace[name]


def test_modules_helpers_and_constants_become_source():
    source = build_source(head_with_helpers)
    assert "import numpy as np" in source
    assert "SCALE = 1.0" in source
    assert "def _transpose(m):" in source and "def _helper_of_helper(m):" in source
    # helpers come before the function, and the whole thing runs on its own
    assert source.index("def _transpose") < source.index("def _helper_of_helper") < source.index("def head_with")
    fn = _run_source(source, "head_with_helpers")
    h, e = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(fn(h, e), h @ e.T)


def test_from_imports_and_tuple_constants():
    source = build_source(uses_from_import)
    assert "from math import sqrt" in source and "import math" in source
    assert _run_source(source, "uses_from_import")(4.0) == 2.0 + math.pi
    source = build_source(uses_constants)
    assert "NAME = 'logits'" in source and "SHAPE = (2, (3, None))" in source
    assert _run_source(source, "uses_constants")(1) == (1, "logits", (2, (3, None)), 1.0)


def imports_inside(x):
    from math import erf
    import math as m
    return erf(x) + m.pi


def test_a_name_the_function_imports_itself_is_no_global():
    """``from math import erf`` inside the function was refused ("uses the name 'erf', which
    is not defined in the notebook"), though the error for a global ufunc advises exactly that."""
    source = build_source(imports_inside)
    assert _run_source(source, "imports_inside")(0.0) == math.pi


def test_a_decorated_function_is_sent_with_its_decorator():
    source = build_source(decorated)
    assert "import functools" in source and "def _traced(f):" in source and "@_traced" in source
    assert "SCALE = 1.0" in source
    assert _run_source(source, "decorated")(2) == 2.0


def test_an_unsendable_global_is_named():
    with pytest.raises(ValueError, match=r"'TABLE' \(ndarray\).*cannot send"):
        build_source(uses_table)


def test_lambdas_closures_and_unsendable_defaults_are_refused():
    with pytest.raises(ValueError, match="lambda"):
        build_source(lambda x: x)

    def outer():
        k = 2

        def inner(x):
            return x * k
        return inner
    with pytest.raises(ValueError, match=r"enclosing|defined in \(k\)|\(k\)"):
        build_source(outer())
    namespace: dict = {}
    exec("def made_by_exec(x, table=object()):\n    return x\n", namespace)
    with pytest.raises(ValueError, match="default of type object"):   # no source, and a default not sendable
        build_source(namespace["made_by_exec"])
    with pytest.raises(ValueError, match="def"):
        build_source(np.matmul)


def test_grader_check_is_one_callable_object_whatever_was_imported_first():
    # in a fresh interpreter each way round: the package attribute, the module and the import agree
    for first in ("from grader import check", "import grader.check", "from grader.check import check_submission"):
        code = (f"{first}\nimport grader, grader.check as m\nfrom grader import check\n"
                "assert check is m is grader.check and callable(check)\n"
                "assert check.check_submission and check.load_submission\n"
                "print(check.__call__.__doc__.split()[0])")
        out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == "Grade", (first, out.stderr[-2000:])


def test_help_of_check_shows_check_fn_first():
    """``help(check)`` (a learner trial: it showed only the module grader.check's text) opens with
    check(fn)'s signature and documentation, then the module's."""
    import pydoc
    from grader import check as imported
    text = pydoc.render_doc(imported, renderer=pydoc.plaintext)
    head = text[:text.index("(check is also the module grader.check")]
    assert "check(fn, problem=None, *, seed=0" in head and "Grade the function ``fn``" in head
    assert "check_submission" in text[len(head):]


def test_html_shows_verdict_hint_worst_and_a_picture():
    case = {"name": "batch[float32]", "group": "shapes", "status": "failed", "visibility": "visible",
            "inputs": {"hidden": {"shape": [2, 3], "dtype": "float32"}},
            "failure": {"kind": "tolerance", "message": "6 / 6 elements are outside the tolerance",
                        "hint": "looks like <softmax>", "data": {"worst_index": [1, 2]},
                        "details": ["worst at index (1, 2): got 1, expected 0, error 1, allowed 1e-06"]},
            "values": {"got": [[1, 1, 1], [1, 1, 1]], "expected": [[0, 0, 0], [0, 0, 0]]}}
    report = {"problem": "tied_lm_head", "passed": False, "score": 1.0, "max_score": 10.0,
              "cases": [case], "summary": [], "environment": {"framework": "numpy", "dtypes": ["float32"]},
              "counts": {"passed": 0, "total": 1}}
    page = render_html(report, source="def f(x):\n    return x < 1\n")
    assert "   2      return x &lt; 1" in page  # the graded source, numbered as tracebacks count
    assert "FAIL" in page and "1 / 10" in page
    assert "looks like &lt;softmax&gt;" in page and "<softmax>" not in page
    assert "worst at index (1, 2)" in page
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "<img" not in page
    else:
        assert page.count('src="data:image/png;base64,') == 1
        # the caption's words come from the facts: the error is the multiple, not the allowance
        assert "the framed element is the worst" in page
        case["failure"]["data"].update(error=1.0, allowed=1e-06, ratio=1e6)
        assert "the framed worst one is off by 1, 1e+06x its allowance of 1e-06" in render_html(report)
    assert CheckResult({**report, "passed": True}).passed and CheckResult(report).score == 1.0
    # a partial run (check(fn, case=...)) has no score, as its report says: None, not 0.0 (a trial)
    partial = {**report, "score": 0.0, "environment": {**(report.get("environment") or {}), "partial": True}}
    assert CheckResult(partial).score is None


# -- graded in a subprocess ------------------------------------------------------------------

def tied_lm_head(hidden, embedding_matrix):
    return np.matmul(hidden, _transpose(embedding_matrix))


def softmax_head(hidden, embedding_matrix):
    z = hidden @ embedding_matrix.T
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(hidden.dtype)


def test_html_cases_give_their_replay_and_a_repeated_traceback_once():
    """A learner's trial: the HTML's case cards had no replay line (only the folded text report
    did) and repeated the whole traceback for every case, where the text report says "the same
    traceback as ... above"."""
    frames = [{"ref": "submission", "file": "s.py", "line": 3, "function": "f", "code": "return h @ e"}]

    def case(name, n):
        return {"name": name, "group": "shapes", "status": "error", "dtype": "float32", "rank": 2,
                "inputs": {"hidden": {"shape": [2, n], "dtype": "float32"}}, "visibility": "visible",
                "failure": {"kind": "exception", "message": f"ValueError: size {n} differs", "details": [],
                            "frames": frames, "exception": f"ValueError: size {n} differs",
                            "traceback": f"Traceback (most recent call last):\n  File \"s.py\", line 3, in f\n"
                                         f"ValueError: size {n} differs\n"},
                "replay": f"grader check s.py --case {name}"}
    report = {"problem": "tied_lm_head", "passed": False, "score": 0, "max_score": 10,
              "cases": [case("a[float32]", 3), case("b[float32]", 4)], "environment": {}}
    html = render_html(report, "")
    assert html.count("Traceback (most recent call last)") == 1
    assert "(the same traceback as a[float32] above)" in html
    assert "replay: <code>grader check s.py --case a[float32]</code>" in html
    assert "replay: <code>grader check s.py --case b[float32]</code>" in html


def test_check_passes_a_correct_function_and_fails_a_wrong_one_with_its_hint():
    good = check(tied_lm_head, max_examples=3)
    assert good.passed and good.score == good.max_score == 10.0, good.text()
    assert good.text().startswith("PASS tied_lm_head")
    assert "PASS" in good._repr_html_()
    bad = check(softmax_head, problem="tied_lm_head", max_examples=3)
    assert not bad.passed and bad.score < 10.0
    assert "softmax" in repr(bad) and "FAIL tied_lm_head" in str(bad)
    assert bad.report["summary"][0]["kind"] == "tolerance"
    assert "/grader-nb-" not in json.dumps(bad.report)  # the temporary file's folder is not shown
    assert bad.report["submission"] == "softmax_head.py"
    assert "hint" in bad._repr_html_()


def test_a_failing_case_says_the_call_that_runs_it_again_and_that_call_does():
    """A learner's trial: check(fn)'s report had no replay lines (its file is temporary). Each
    failing case now names the check() call that runs it alone, and that call grades that one
    case, failing the same way."""
    bad = check(softmax_head, problem="tied_lm_head", max_examples=3)
    failing = [c for c in bad.report["cases"] if c["status"] == "failed" and not c.get("shrunk")]
    first = failing[0]
    assert first["replay"] == f"check(softmax_head, 'tied_lm_head', case={first['name']!r}, max_examples=3)"
    assert f"replay: {first['replay']}" in bad.text()
    import grader   # the call as the learner makes it: grader.check, the callable module
    assert "case=None" in str(__import__("inspect").signature(grader.check))
    again = grader.check(softmax_head, "tied_lm_head", case=first["name"], max_examples=3)
    assert [(c["name"], c["status"]) for c in again.report["cases"]] == [(first["name"], "failed")]
    assert again.report["cases"][0]["failure"]["kind"] == first["failure"]["kind"]


def test_check_refuses_an_unknown_problem_in_the_kernel():
    with pytest.raises(ValueError, match="no single problem"):
        check(softmax_head)


# -- a real Jupyter kernel -------------------------------------------------------------------

def test_check_in_a_jupyter_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # a kernelspec of this interpreter, found through JUPYTER_PATH only (no install, no network)
    spec_dir = tmp_path / "jupyter" / "kernels" / "grader-test"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "grader test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    cells = [
        "import os, signal, subprocess, sys, jax\nx64_before = jax.config.jax_enable_x64\n"
        "sigint_before = signal.getsignal(signal.SIGINT)\nenv_before = dict(os.environ)\n"
        "other = subprocess.Popen([sys.executable, '-I', '-c', 'import time; time.sleep(120)'])",
        "import numpy as np\nfrom grader import check",
        "def tied_lm_head(hidden, embedding_matrix):\n    return np.matmul(hidden, embedding_matrix.T)",
        "check(tied_lm_head, max_examples=3)",
        textwrap.dedent("""\
            def softmax_head(hidden, embedding_matrix):
                z = hidden @ embedding_matrix.T
                e = np.exp(z - z.max(axis=-1, keepdims=True))
                return (e / e.sum(axis=-1, keepdims=True)).astype(hidden.dtype)"""),
        "check(softmax_head, problem='tied_lm_head', max_examples=3)",
        "print(jax.config.jax_enable_x64 == x64_before, signal.getsignal(signal.SIGINT) is sigint_before,\n"
        "      dict(os.environ) == env_before, other.poll() is None)\n"
        "other.kill(); other.wait()",
        # a traceback through two cells names them as IPython does (In[8], In[9]), not the built file
        "def scale(x):\n    y = x\n    raise ValueError('in a helper cell')",
        "def raising_head(hidden, embedding_matrix):\n    return scale(hidden)",
        "print(check(raising_head, problem='tied_lm_head', max_examples=2))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, kernel_name="grader-test", timeout=300,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()

    def html_of(cell):
        return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)

    good, bad = html_of(nb.cells[3]), html_of(nb.cells[5])
    assert 'class="grader-report"' in good  # check()'s own HTML, not a plain repr
    assert "PASS" in good and "FAIL" not in good.split("full report")[0]
    assert "FAIL" in bad and "hint" in bad and "softmax" in bad
    printed = "".join(o.get("text", "") for o in nb.cells[6].outputs)
    # x64, SIGINT's handler, the environment, the kernel's other child: as they were
    assert printed.split() == ["True"] * 4, printed
    raised = "".join(o.get("text", "") for o in nb.cells[9].outputs)
    assert "Cell In[9], line 2, in raising_head" in raised and "Cell In[8], line 3, in scale" in raised, raised[:1500]


def test_a_function_whose_source_python_did_not_keep_is_sent_as_its_code():
    """A plain ``python`` console or a script read from stdin keeps no source (inspect.getsource
    raises OSError): check() raised "the source ... cannot be found". Its compiled code goes
    instead, with the imports its globals need and its defaults; the grader still sees a def."""
    import ast

    from grader.notebook_check import build_source

    scope: dict = {"__name__": "__main__"}
    exec(compile("import numpy as np\nSCALE = 1.0\n"
                 "def tied_lm_head(hidden, embedding_matrix, *, scale=SCALE):\n"
                 "    return np.matmul(hidden, embedding_matrix.T) * scale\n", "<stdin>", "exec"), scope)
    source = build_source(scope["tied_lm_head"])
    assert "import numpy as np" in source
    tree = ast.parse(source)
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["tied_lm_head"]
    fresh: dict = {}
    exec(compile(source, "built.py", "exec"), fresh)  # noqa: S102 - the test's own function
    h, e = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(fresh["tied_lm_head"](h, e), h @ e.T)
    assert fresh["tied_lm_head"].__kwdefaults__ == {"scale": 1.0}


def test_a_function_is_graded_in_the_framework_its_notebook_uses():
    """Issue 33: check(fn) decided the framework from names in the function's body, so a correct
    PyTorch function that never names torch was graded as NumPy and got 0/10. The notebook's
    globals decide now (then the kernel's imports), and ``framework=`` overrides."""
    import types

    from grader import notebook_check as nc
    torch_like = types.ModuleType("torch")
    scope = {"torch": torch_like}
    exec("def tied_lm_head(hidden, embedding_matrix):\n    return hidden.matmul(embedding_matrix.t())\n", scope)
    fn = scope["tied_lm_head"]
    assert nc.framework_of(fn, "def tied_lm_head(h, e): ...") == "torch"
    assert nc.framework_of(fn, "import jax.numpy as jnp\ndef tied_lm_head(h, e): ...") is None   # the CLI's
    both = {"torch": torch_like, "jax": types.ModuleType("jax")}
    exec("def f(h, e):\n    return h\n", both)
    assert nc.framework_of(both["f"], "def f(h, e): ...") is None    # both bound: NumPy, as the CLI
    # a NumPy function in a notebook that imported JAX for something else stays NumPy
    assert nc.framework_of(both["f"], "import numpy as np\ndef f(h, e): ...") is None
    # a newcomer's: a NumPy function of methods only (.astype, axis=) in a notebook that imports
    # torch too was graded as PyTorch, 0/10; NumPy's idioms and none of torch's keep it NumPy
    numpy_methods = ("def masked_mean_pool(embeddings, mask):\n    m = mask[..., None].astype(embeddings.dtype)\n"
                     "    return (embeddings * m).sum(axis=-2) / m.sum(axis=-2)\n")
    exec(numpy_methods, scope)
    assert nc.framework_of(scope["masked_mean_pool"], numpy_methods) is None
    torch_methods = numpy_methods.replace(".astype(embeddings.dtype)", ".to(embeddings.dtype)")
    exec(torch_methods, scope)
    assert nc.framework_of(scope["masked_mean_pool"], torch_methods) == "torch"     # .to and axis=: both, torch's
    assert nc.framework_of(fn, "def tied_lm_head(h, e):\n    return h.matmul(e.t())\n") == "torch"


def test_check_grades_a_torch_function_that_never_names_torch():
    torch = pytest.importorskip("torch")
    scope = {"torch": torch}
    exec("def tied_lm_head(hidden, embedding_matrix):\n    return hidden.matmul(embedding_matrix.t())\n", scope)
    import linecache
    source = "def tied_lm_head(hidden, embedding_matrix):\n    return hidden.matmul(embedding_matrix.t())\n"
    scope["tied_lm_head"].__code__ = compile(source, "<nb-cell-torch>", "exec").co_consts[0]
    linecache.cache["<nb-cell-torch>"] = (len(source), None, source.splitlines(True), "<nb-cell-torch>")
    from grader import check
    result = check(scope["tied_lm_head"], max_examples=2)
    assert result.passed, result.report.get("failure") or [c["failure"] for c in result.report["cases"] if c["failure"]][:2]
    assert result.report["environment"]["framework"] == "torch"


def test_a_function_graded_otherwise_than_its_notebooks_hand_in_says_so():
    """A newcomer's JAX notebook: a function of np calls passed 10/10 as NumPy under check(fn),
    and the handed-in notebook (it imports jax) failed 7.5/10 as JAX; the only sign was the word
    numpy. The report's note says which framework a hand-in gets, and how to check in it."""
    import types
    np_source = ("import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                 "    return np.asarray(hidden) @ np.asarray(embedding_matrix).T\n")
    scope = {"jax": types.ModuleType("jax")}
    exec(np_source, scope)
    import linecache
    scope["tied_lm_head"].__code__ = next(c for c in compile(np_source, "<nb-cell-np-jax>", "exec").co_consts
                                          if isinstance(c, types.CodeType))
    linecache.cache["<nb-cell-np-jax>"] = (len(np_source), None, np_source.splitlines(True), "<nb-cell-np-jax>")
    from grader import check
    result = check(scope["tied_lm_head"], max_examples=2, shrink=False)
    env = result.report["environment"]
    assert result.passed and env["framework"] == "numpy"
    assert ("Graded as NumPy, the framework the function's own code uses; the notebook imports JAX, so a hand-in "
            "of it is graded as JAX: check(fn, framework='jax') grades it so.") in env["framework_note"]
    assert "a hand-in of it is graded as JAX" in str(result)
    same = check(scope["tied_lm_head"], max_examples=2, shrink=False, framework="numpy")   # said outright: no note
    assert "hand-in" not in (same.report["environment"].get("framework_note") or "")


def test_a_kernel_parses_each_spec_once_and_again_only_when_it_changes(monkeypatch):
    """check(fn) matches the function's name against every spec: a kernel keeps what it parsed
    (0.15 s of YAML a call otherwise) and reads a spec again when its stamp changes."""
    from grader import memo, notebook_check, spec

    monkeypatch.setattr(memo, "_store", {})
    loads: list[str] = []
    real = spec.load_problem

    def counting(path):
        loads.append(str(path))
        return real(path)

    monkeypatch.setattr(spec, "load_problem", counting)
    first = notebook_check._functions_of_problems()
    assert first["tied_lm_head"] == "tied_lm_head" and len(loads) == len(spec.available_problems())
    loads.clear()
    assert notebook_check._functions_of_problems() == first and loads == []
    edited = str(spec.available_problems()["softmax"])
    real_stamp = memo.stamp
    monkeypatch.setattr(memo, "stamp", lambda p: (0, 0, 0, 1, 1) if str(p) == edited else real_stamp(p))
    assert notebook_check._functions_of_problems() == first and loads == [edited]


def test_the_problem_of_a_function_is_found_by_its_name():
    from grader.notebook_check import _problem_of

    def tied_lm_head(hidden, embedding_matrix):
        return hidden @ embedding_matrix.T

    def no_such_problem(x):
        return x

    assert _problem_of(tied_lm_head, None) == ("tied_lm_head", "tied_lm_head")
    with pytest.raises(ValueError, match="no single problem has a function named 'no_such_problem'"):
        _problem_of(no_such_problem, None)


NEG_INF = float("-inf")
NOT_A_NUMBER = float("nan")
LIMITS = (0.5, float("inf"))


def masks_with_constants(x):
    return x if NEG_INF < LIMITS[1] and NOT_A_NUMBER != NOT_A_NUMBER else None


def test_infinite_and_nan_constants_are_sent_as_values_that_read_back():
    """Attack round 47: ``NEG_INF = -np.inf`` (a common mask constant) was sent as ``NEG_INF =
    -inf``, and a correct function failed with NameError at a line the learner never wrote."""
    source = build_source(masks_with_constants)
    scope: dict = {}
    exec(compile(source, "<sent>", "exec"), scope)   # noqa: S102 - the test's own function
    assert scope["NEG_INF"] == float("-inf") and scope["LIMITS"] == (0.5, float("inf"))
    assert scope["NOT_A_NUMBER"] != scope["NOT_A_NUMBER"]
    assert scope["masks_with_constants"](3) == 3


def test_check_takes_shrink_as_the_cli_takes_no_shrink():
    """A long search's line tells a learner to skip it with ``shrink=False`` in check(): check
    passes it on as ``--no-shrink`` (no shrunk case), and searches by default."""
    from grader import check
    scope: dict = {"np": np}
    # wrong only past 40 features: no small visible case shows it, so the search has work
    exec("def tied_lm_head(hidden, embedding_matrix):\n    out = hidden @ embedding_matrix.T\n"
         "    return out + 0.5 if embedding_matrix.shape[-1] > 40 else out\n", scope)
    off = check(scope["tied_lm_head"], max_examples=4, shrink=False)
    assert not off.passed and not [c for c in off.report["cases"] if c.get("shrunk")]
    on = check(scope["tied_lm_head"], max_examples=4)
    assert [c for c in on.report["cases"] if c.get("shrunk")]
