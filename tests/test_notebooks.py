"""Notebook submissions (issue 11, part 2): conversion of the code cells, magics and shell escapes
left out and named, positions as "cell N, line M", discovery in ``grader grade``; two notebooks
graded through the CLI (tests/corpus-frameworks/notebook)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.batch.discovery import discover
from grader.check import load_submission
from grader.notebook import NotebookError, convert

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "tests" / "corpus-frameworks" / "notebook"
FAST = ["--max-examples", "4", "--no-shrink"]


def _nb(*cells: tuple[str, str | list[str]]) -> bytes:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": kind, "metadata": {}, "source": src, "id": f"c{i}",
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for i, (kind, src) in enumerate(cells)]}).encode()


def test_code_cells_in_order_with_magics_and_shell_escapes_left_out():
    nb = convert(_nb(("markdown", "# title\nimport os"),
                     ("code", ["%matplotlib inline\n", "import numpy as np\n", "!pip install torch"]),
                     ("code", "files = !ls\nfor i in range(2):\n    %time f(i)\nx = 5 % 3"),
                     ("raw", "raw text"),
                     ("code", "%%bash\necho hi\nexit 1")))
    assert nb.code_cells == 3
    assert "# title" not in nb.source and "import os" not in nb.source        # markdown is not code
    assert "import numpy as np" in nb.source and "x = 5 % 3" in nb.source      # a % inside a line stays
    assert "%matplotlib" not in nb.source and "pip" not in nb.source and "echo" not in nb.source
    assert "    pass" in nb.source                                            # a block still parses
    compile(nb.source, "nb", "exec")
    assert nb.left_out == ["cell 2, line 1: %matplotlib inline", "cell 2, line 3: !pip install torch",
                           "cell 3, line 1: files = !ls", "cell 3, line 3: %time f(i)",
                           "cell 5: the whole cell (%%bash, a cell magic)"]
    assert "left out, as IPython-only: cell 2, line 1: %matplotlib inline" in nb.note()


def test_a_cell_timed_with_percent_percent_time_keeps_its_body():
    """``%%time`` above the cell that defines the function: IPython runs the body as Python, so
    the function exists (the whole cell was dropped: a correct notebook scored 0 with NameError).
    ``%%timeit`` and ``%%writefile`` bodies never reach the namespace: still left out."""
    nb = convert(_nb(("code", "%%time\nimport numpy as np\ndef f(x):\n    return x + 1"),
                     ("code", "%%capture out\ny = f(1)"),
                     ("code", "%%timeit\nz = f(2)"),
                     ("code", "%%writefile helper.py\nw = 3")))
    scope: dict = {}
    exec(compile(nb.source, "nb", "exec"), scope)  # noqa: S102 - the test's own cells
    assert scope["f"](1) == 2 and scope["y"] == 2 and "z" not in scope and "w" not in scope
    assert nb.left_out[:2] == ["cell 1, line 1: %%time (the cell's body is kept: IPython runs it as Python)",
                               "cell 2, line 1: %%capture out (the cell's body is kept: IPython runs it as Python)"]
    assert nb.left_out[2:] == ["cell 3: the whole cell (%%timeit, a cell magic)",
                               "cell 4: the whole cell (%%writefile helper.py, a cell magic)"]
    line = nb.source.splitlines().index("    return x + 1") + 1
    assert nb.where(line) == "cell 1, line 4"


def test_positions_map_back_to_cell_and_line():
    nb = convert(_nb(("markdown", "text"), ("code", "a = 1\nb = 2"), ("code", "c = 3\nraise ValueError(c)")))
    line = nb.source.splitlines().index("raise ValueError(c)") + 1
    assert nb.where(line) == "cell 3, line 2" and nb.cell_of(line) == (3, 2)
    assert nb.where(1) is None and nb.where(10 ** 6) is None                 # a "# cell N" line, out of range
    assert nb.cell_of(None) is None and nb.cell_of(0) is None


def test_cell_runs_give_every_line_its_cell_in_a_few_numbers_a_cell():
    """What the submission's process is given to name a warning's place (``Notebook.cell_runs``):
    one run per cell however long it is, and each run's lines are the lines ``cell_of`` gives."""
    nb = convert(_nb(("code", "a = 1\nb = 2\nc = 3"), ("markdown", "x"), ("code", "\n".join(["d = 4"] * 500))))
    runs = nb.cell_runs()
    assert len(runs) == 2 and [r[2] for r in runs] == [1, 3] and runs[1][1] == 500
    for start, count, cell, first in runs:
        assert all(nb.cell_of(start + k) == (cell, first + k) for k in range(count))
    covered = {start + k for start, count, _, _ in runs for k in range(count)}
    assert covered == {i for i in range(1, len(nb.lines) + 1) if nb.cell_of(i) is not None}


@pytest.mark.parametrize("data, why", [(b"{not json", "nbformat cannot read it"),
                                       (b"\xff\xfe", "not UTF-8"),
                                       (b'{"cells": 3}', "nbformat cannot read it")])
def test_a_broken_notebook_is_a_fault_of_the_submission(tmp_path, data, why):
    path = tmp_path / "sub.ipynb"
    path.write_bytes(data)
    loaded = load_submission(path)
    assert loaded.fault is not None and why in loaded.fault and "cannot be graded" in loaded.fault


def test_load_submission_gives_the_converted_source_and_a_syntax_error_by_cell(tmp_path):
    path = tmp_path / "sub.ipynb"
    path.write_bytes(_nb(("code", "import numpy as np"), ("code", "def tied_lm_head(h, e):\n    return h @ e.T")))
    loaded = load_submission(path)
    assert loaded.tree is not None and loaded.data == loaded.source.encode() and "def tied_lm_head" in loaded.source
    path.write_bytes(_nb(("code", "import numpy as np"), ("code", "x = 1\ndef f(:\n    pass")))
    loaded = load_submission(path)
    assert loaded.syntax_error is not None and loaded.notebook.where(loaded.syntax_error.lineno) == "cell 2, line 2"
    link = tmp_path / "link.ipynb"
    link.symlink_to(path)
    assert "symbolic link" in (load_submission(link).fault or "")          # read without following links


def test_grade_takes_a_learner_folder_holding_a_notebook(tmp_path):
    cls = tmp_path / "class"
    (cls / "ada" / ".ipynb_checkpoints").mkdir(parents=True)
    (cls / "ada" / "solution.ipynb").write_bytes(_nb(("code", "def tied_lm_head(h, e):\n    return h @ e.T")))
    (cls / "ada" / ".ipynb_checkpoints" / "solution-checkpoint.ipynb").write_bytes(b"{}")
    (cls / "bob.ipynb").write_bytes(_nb(("code", "def tied_lm_head(h, e):\n    return h @ e.T")))
    (cls / "cy.py").write_text("def tied_lm_head(h, e):\n    return h @ e.T\n")
    found = {s.learner: s.path for s in discover([str(cls)], ["tied_lm_head"])}
    assert found == {"ada": cls / "ada" / "solution.ipynb", "bob": cls / "bob.ipynb", "cy": cls / "cy.py"}


def _check(name: str) -> tuple[int, dict]:
    from .conftest import run_grader   # in process (the notebook still runs in its sandboxed child)
    run = run_grader("check", str(NOTEBOOKS / name), "--problem", "tied_lm_head", "--format", "json",
                     "--audience", "instructor", *FAST, timeout=300)
    return run.code, run.json()


def test_a_correct_notebook_with_magics_passes_and_says_what_was_left_out():
    code, report = _check("n01_correct_with_magics.ipynb")
    assert code == 0 and report["passed"], report["failure"]
    env = report["environment"]
    assert env["notebook"] == {"code_cells": 3, "left_out": [
        "cell 2, line 1: %matplotlib inline", "cell 2, line 2: !pip install numpy",
        "cell 4, line 1: %%time (the cell's body is kept: IPython runs it as Python)"]}
    assert "left out, as IPython-only" in env["framework_note"]


def test_an_erroring_cell_is_reported_by_cell_and_line():
    code, report = _check("w01_error_in_cell_3.ipynb")
    assert code == 1 and not report["passed"]
    failure = report["failure"]
    assert failure["kind"] == "import"
    # the innermost position on the message's line; the traceback names every cell and line
    assert failure["message"].startswith("ValueError: matmul") and failure["message"].endswith("(cell 3, line 2)")
    assert "cell 3, line 4, in <module>" in failure["traceback"]
    assert "cell 3, line 2, in tied_lm_head" in failure["traceback"]
    assert [(f["cell"], f["cell_line"], f["function"]) for f in failure["frames"]] == \
        [(3, 4, "<module>"), (3, 2, "tied_lm_head")]   # the facts the words come from


def test_lines_map_to_the_ipynb_files_own_lines():
    """A GitHub annotation or JUnit ``line=`` of a notebook names a line of the .ipynb file: the
    ``def`` on line 5 of the converted module sits at line 20-odd of the JSON text (issue 19)."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\ntext"),
                nbformat.v4.new_code_cell("import numpy as np\n\n\ndef f(x):\n    return x"),
                nbformat.v4.new_code_cell("%%time\ny = f(1)\n")]
    text = nbformat.writes(nb)
    converted = convert(text.encode())
    raw = text.split("\n")
    for line, (module_line, file_line) in enumerate(zip(converted.source.split("\n"), converted.file_lines), 1):
        if module_line.strip() and not module_line.startswith("# cell"):
            assert module_line.strip() in json.loads(raw[file_line - 1].strip().rstrip(","))
    assert raw[converted.file_line(5) - 1].strip() == '"def f(x):\\n",'
    # a source written as one string, or a minified file: the line of the cell's "source" key
    one = _nb(("code", "import numpy as np\ndef f(x):\n    return x"))
    assert convert(one).file_line(3) == 1
    pretty = json.dumps(json.loads(one), indent=1).encode()
    key = next(i for i, l in enumerate(pretty.decode().split("\n"), 1) if '"source"' in l)
    assert convert(pretty).file_line(3) == key


def test_a_notebooks_annotations_point_into_the_ipynb(tmp_path):
    import nbformat
    source = (ROOT / "submissions" / "wrong_tolerance_softmax.py").read_text()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson\n\nWrite the head below.\n"), nbformat.v4.new_code_cell(source)]
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, str(path))
    run = subprocess.run([sys.executable, "-I", "-m", "grader", "check", str(path), "--format", "github", *FAST],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    lines = [int(l.split("line=")[1].split(",")[0].split("::")[0]) for l in run.stdout.splitlines() if "line=" in l]
    raw = path.read_text().split("\n")
    assert lines and all("def tied_lm_head" in raw[n - 1] for n in lines), (lines, run.stdout[:500])


def test_a_notebooks_raising_line_is_annotated_at_its_line_of_the_ipynb(tmp_path):
    """A learner's trial: a notebook's exception was annotated at the ``def`` (the frames named
    cells, not lines of the file); a .py file's at the raising line. The frames now carry the
    .ipynb file's line too (``Frame.file_line``), which the annotation names."""
    from grader.reports import github
    from grader.results import Report
    from tests.conftest import check_like_cli
    nb = tmp_path / "raises.ipynb"
    nb.write_bytes(_nb(("markdown", "# lm head"), ("code", "import numpy as np"),
                       ("code", ["def tied_lm_head(hidden, embedding_matrix):\n",
                                 "    scores = hidden @ embedding_matrix\n",
                                 "    return scores"])))
    code, data = check_like_cli(str(nb), "--problem", "tied_lm_head", *FAST)
    assert code == 1
    frame = next(c for c in data["cases"] if c.get("failure"))["failure"]["frames"][-1]
    assert (frame["cell"], frame["cell_line"]) == (3, 2)
    raw = nb.read_text().split("\n")
    assert "scores = hidden @ embedding_matrix" in raw[frame["file_line"] - 1]
    lines = [int(l.split("line=")[1].split(",")[0].split("::")[0])
             for l in github.render(Report.from_json(data)).splitlines() if l.startswith("::error")]
    assert frame["file_line"] in lines, (lines, frame)


def test_a_warning_in_the_captured_output_names_the_cell_and_line(tmp_path):
    """Python prints a warning as ``nb.ipynb:11: RuntimeWarning``, a line of the converted
    module that the learner's notebook does not have; the report gives the cell and line."""
    from tests.conftest import check_like_cli
    nb = tmp_path / "warns.ipynb"
    nb.write_bytes(_nb(("markdown", "# lm head"),
                       ("code", "import numpy as np\nimport warnings"),
                       ("code", ["def tied_lm_head(hidden, embedding_matrix):\n",
                                 "    warnings.warn('careful here', RuntimeWarning)\n",
                                 "    return hidden @ embedding_matrix.T"])))
    code, report = check_like_cli(str(nb), "--problem", "tied_lm_head", "--audience", "instructor", *FAST)
    stderr = report["output"]["stderr"]
    assert code == 0 and "careful here" in stderr, stderr[-500:]
    assert "warns.ipynb, cell 3, line 2: RuntimeWarning" in stderr, stderr[-500:]   # cells counted as Jupyter shows them
