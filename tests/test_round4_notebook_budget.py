"""Security issue round four, class 4: work before any limit. A notebook's conversion mapped each
cell to its line with one scan of the whole file per cell (a 1 MiB notebook of 22,303 empty raw
cells: 5.4 CPU-s per conversion), done twice per ``grader check`` and once more in ``grader
grade``'s discovery, all before ``--total-timeout`` started (``--total-timeout 5`` took 12-13 s
here, 47-58 s on the attacker's machine).

Each test counts work, never wall-clock time: how often the file is indexed, how many characters
the cell-line matching searches, how many conversions a check makes, whether nbformat is reached,
and from which read the check's clock runs."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import grader.notebook as notebook
import grader.submission as submission
from grader.batch import discovery
from grader.notebook import MAX_CELLS, NotebookError, convert

CORRECT = ["import numpy as np\n", "\n", "def tied_lm_head(hidden, embedding_matrix):\n",
           "    return hidden @ embedding_matrix.T\n"]


def _empty_raw_cells(count: int) -> bytes:
    """The attack's notebook: ``count`` empty raw cells, one to a line (22,303 fill 1 MiB)."""
    cell = '{"cell_type":"raw","metadata":{},"source":[]}'
    return ('{"metadata":{},"nbformat":4,"nbformat_minor":5,"cells":[\n' + ",\n".join([cell] * count)
            + "\n]}\n").encode()


def _pretty(cells: list[dict]) -> bytes:
    """Cells written as Jupyter writes them (indent 1, a source as a list of its lines)."""
    return json.dumps({"metadata": {}, "nbformat": 4, "nbformat_minor": 5, "cells": cells}, indent=1).encode()


def _code(lines: list[str]) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": lines}


@pytest.fixture
def conversions(monkeypatch):
    """Every call of ``grader.notebook.convert`` (the load path imports it at call time)."""
    calls: list[float] = []
    original = notebook.convert

    def counted(data: bytes):
        calls.append(time.monotonic())
        return original(data)

    monkeypatch.setattr(notebook, "convert", counted)
    return calls


def test_the_attack_notebook_is_refused_before_nbformat_reads_it(monkeypatch):
    data = _empty_raw_cells(22_303)
    assert len(data) <= submission.MAX_SUBMISSION_BYTES
    import nbformat

    def not_reached(*args, **kwargs):
        raise AssertionError("nbformat read a notebook over the cell cap")

    monkeypatch.setattr(nbformat, "reads", not_reached)
    with pytest.raises(NotebookError, match=r"it has 22,303 cells; at most 2,000 are graded"):
        convert(data)
    # nbformat 3 keeps its cells in worksheets: counted all the same
    v3 = json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                     "worksheets": [{"cells": [{"cell_type": "raw", "source": ""}] * (MAX_CELLS // 2 + 1)}] * 2})
    with pytest.raises(NotebookError, match=f"it has {MAX_CELLS + 2:,} cells"):
        convert(v3.encode())
    # and a decoy empty list of cells beside them changes nothing
    decoy = dict(json.loads(v3), cells=[])
    with pytest.raises(NotebookError, match=f"it has {MAX_CELLS + 2:,} cells"):
        convert(json.dumps(decoy).encode())


def test_cells_are_mapped_to_lines_with_one_index_of_the_file(monkeypatch):
    """At the cap, every cell a code cell: the file is indexed once, not scanned once per cell."""
    indexed: list[int] = []
    original = notebook.line_starts

    def counted(text: str) -> list[int]:
        indexed.append(len(text))
        return original(text)

    monkeypatch.setattr(notebook, "line_starts", counted)
    cells = [_code([f"x{i} = {i}\n", "y = x\n"]) for i in range(MAX_CELLS - 1)] + [_code(CORRECT)]
    data = _pretty(cells)
    nb = convert(data)
    assert nb.code_cells == MAX_CELLS and indexed == [len(data.decode())]
    # the map is still exact: the def of the last cell sits on the file line holding it
    line = nb.source.split("\n").index("def tied_lm_head(hidden, embedding_matrix):") + 1
    assert nb.where(line) == f"cell {MAX_CELLS}, line 3"
    assert data.decode().split("\n")[nb.file_line(line) - 1].strip() == json.dumps(CORRECT[2]) + ","
    assert len(convert(_empty_raw_cells(MAX_CELLS)).source) == 1      # exactly the cap: converted


def test_matching_cell_lines_searches_no_more_than_the_file(monkeypatch):
    """Cells whose lines are packed on one line of the file, so that each compares a cell line
    with the lines after its own, up to one long line: every cell near it searched the whole of
    it (200 cells x 200 KB here). Matching a cell line now looks at a file line only when it is
    about as long as the cell line's JSON string (before: 35 million characters searched for
    this 390 KB file, 104 million for 1 MiB)."""
    searched = [0, 0]   # characters searched in all, the longest line searched

    class Counted(str):
        def __contains__(self, sub: object) -> bool:
            searched[0], searched[1] = searched[0] + len(self), max(searched[1], len(self))
            return super().__contains__(sub)

    original = notebook._holds
    monkeypatch.setattr(notebook, "_holds", lambda line, part: original(Counted(line), part))
    lines = ['{"metadata":{},"nbformat":4,"nbformat_minor":5,"cells":[']
    for _ in range(200):
        lines += ['{"cell_type":"code","metadata":{},"outputs":[],"execution_count":null,"source":[',
                  ",".join(['"a"'] * 200) + "]},"]
    lines += ['{"cell_type":"raw","metadata":{},"source":["' + '\\"a' * 70_000 + '"]}', "]}"]
    text = "\n".join(lines)
    nb = convert(text.encode())
    assert nb.code_cells == 200
    assert searched[1] <= len('"a"') + notebook._LINE_SLACK and searched[0] <= len(text), searched


def test_a_check_converts_once_and_its_clock_runs_from_the_first_read(tmp_path, monkeypatch, conversions):
    """``grader check`` reads the file to choose the problem, then plans: the plan reuses that
    conversion (same bytes read again) and its deadline counts from that first read."""
    from grader import check as check_module
    from grader.check import read_submission
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.spec import find_problem, load_problem

    path = tmp_path / "lesson.ipynb"
    path.write_bytes(_pretty([{"cell_type": "markdown", "metadata": {}, "source": ["# head"]}, _code(CORRECT)]))
    problem = load_problem(find_problem("tied_lm_head"))
    opts = CheckOptions(total_timeout=5.0)
    before = time.monotonic()
    source, tree, _ = read_submission(str(path))
    plan = make_plan(str(path), problem, opts, lambda _: ("none", None))
    assert len(conversions) == 1 and plan.loaded.tree is tree and plan.loaded.source == source
    assert before <= plan.started <= conversions[0] and plan.deadline == plan.started + 5.0
    # the hand-off reaches the next load only: a second plan reads, converts and clocks afresh
    again = make_plan(str(path), problem, opts, lambda _: ("none", None))
    assert len(conversions) == 2 and again.started >= conversions[0]
    # changed bytes between the two reads: converted again, what the plan grades is what it read
    read_submission(str(path))
    path.write_bytes(_pretty([_code(CORRECT + ["\n", "EXTRA = 1\n"])]))
    changed = make_plan(str(path), problem, opts, lambda _: ("none", None))
    assert len(conversions) == 4 and "EXTRA = 1" in changed.loaded.source
    # a record left behind longer ago than HANDOFF_SECONDS moves no later check's clock
    monkeypatch.setattr(submission, "HANDOFF_SECONDS", -1.0)
    read_submission(str(path))
    late = make_plan(str(path), problem, opts, lambda _: ("none", None))
    assert len(conversions) == 6 and late.started >= conversions[-1] - 1e-3
    assert check_module.read_submission is read_submission


def test_the_attack_through_grader_check_is_a_report_exit_1_with_one_conversion(tmp_path, capsys, conversions):
    from grader.cli import main

    path = tmp_path / "raw.ipynb"
    path.write_bytes(_empty_raw_cells(22_303))
    out = tmp_path / "report.json"
    code = main(["check", str(path), "--problem", "tied_lm_head", "--total-timeout", "5", "--format", "json",
                 "--output", str(out)])
    report = json.loads(out.read_text())
    assert code == 1 and len(conversions) == 1
    assert report["failure"]["kind"] == "import"
    assert "has 22,303 cells; at most 2,000 are graded" in report["failure"]["message"]
    assert "Traceback" not in capsys.readouterr().err


def test_discovery_converts_a_notebook_over_the_cap_without_reaching_nbformat(tmp_path, monkeypatch, conversions):
    import nbformat

    reads: list[int] = []
    original = nbformat.reads
    monkeypatch.setattr(nbformat, "reads", lambda text, **kw: reads.append(len(text)) or original(text, **kw))
    eve = tmp_path / "class" / "eve"
    eve.mkdir(parents=True)
    (eve / "a.ipynb").write_bytes(_empty_raw_cells(22_303))
    (eve / "b.ipynb").write_bytes(_empty_raw_cells(15_000))
    (eve / "solution.py").write_text("".join(CORRECT))
    (tmp_path / "class" / "bob.py").write_text("".join(CORRECT))
    found = {s.learner: s for s in discovery.discover([str(tmp_path / "class")], ["tied_lm_head"])}
    assert found["eve"].path == eve / "solution.py" and found["eve"].note is None
    assert len(conversions) == 2 and reads == []
