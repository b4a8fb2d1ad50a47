"""A traceback as facts (issue 34): ``grader.protocol.exception_facts`` gives the frames of what a
submission raised (no sentence, no path of the grading machine), ``grader.words.places`` words
them once for the reader, and nothing rewrites a finished message afterwards."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from grader.protocol import exception_facts
from grader.results import Failure, Frame, Report, frames_of
from grader.words.places import file_name, traceback_text


def _raise_from(folder, files: dict[str, str], main: str, call: str) -> BaseException:
    """Write ``files`` into ``folder``, import ``main`` from it and evaluate ``call`` in it: the
    exception raised (importing or calling)."""
    for name, text in files.items():
        (folder / name).write_text(text)
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location("frames_main", folder / main)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            eval(call, vars(module))  # noqa: S307 - the test's own code
        except BaseException as exc:  # noqa: BLE001
            return exc
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("frames_helper", None)
    raise AssertionError("nothing raised")


def test_frames_start_at_the_submission_and_name_its_folder_by_relative_names(tmp_path):
    exc = _raise_from(tmp_path, {
        "solution.py": "from frames_helper import boom\n\n\ndef f(x):\n    return boom(x)\n",
        "frames_helper.py": "def boom(x):\n    raise ValueError(f'bad {x}')\n"}, "solution.py", "f(3)")
    facts = exception_facts(exc, str(tmp_path / "solution.py"))
    assert facts["exception"] == "ValueError: bad 3"
    assert [(f["file"], f["line"], f["function"], f["code"]) for f in facts["frames"]] == [
        ("solution.py", 5, "f", "return boom(x)"), ("frames_helper.py", 2, "boom", "raise ValueError(f'bad {x}')")]
    frames = frames_of(facts["frames"], "solution.py")
    assert [f.ref for f in frames] == ["submission", "sibling"]
    assert str(tmp_path) not in repr(facts)   # the folder's own path: never in the facts


def test_a_syntax_error_is_its_place_and_no_frame_of_the_importer(tmp_path):
    exc = _raise_from(tmp_path, {"solution.py": "def f(x:\n    return x\n"}, "solution.py", "0")
    facts = exception_facts(exc, str(tmp_path / "solution.py"))
    assert facts["frames"] == [{"file": "solution.py", "line": 1, "function": "", "code": "def f(x:"}]
    assert facts["exception"].startswith("SyntaxError: ") and str(tmp_path) not in facts["exception"]


def test_a_function_of_no_file_keeps_every_frame_as_python_names_it():
    try:
        int("x")
    except ValueError as exc:
        facts = exception_facts(exc, "")
    assert facts["frames"][-1]["file"] == __file__ and facts["frames"][-1]["function"].startswith("test_")


@pytest.mark.parametrize("raw", [None, "x", [1, {"file": 3}, {"line": 2}], [{"file": "a.py", "line": "2"}]])
def test_forged_frames_are_dropped_or_cleaned(raw):
    frames = frames_of(raw, "solution.py")
    assert all(isinstance(f, Frame) and (f.line is None or isinstance(f.line, int)) for f in frames)
    assert len(frames) == (1 if isinstance(raw, list) and raw and isinstance(raw[-1], dict)
                           and isinstance(raw[-1].get("file"), str) else 0)


FAILURE = Failure(kind="exception", message="ValueError: bad 3", exception="ValueError: bad 3", frames=[
    Frame(ref="submission", file="solution.py", line=5, function="f", code="return boom(x)"),
    Frame(ref="sibling", file="frames_helper.py", line=2, function="boom", code="raise ValueError"),
    Frame(ref="outside", file="/opt/lib/numpy/core.py", line=9, function="g")])


def test_frames_are_worded_for_the_reader_who_has_the_files():
    mine = traceback_text(FAILURE, "class/bob/solution.py")
    assert mine.splitlines() == [
        "Traceback (most recent call last):",
        '  File "class/bob/solution.py", line 5, in f', "    return boom(x)",
        '  File "class/bob/frames_helper.py", line 2, in boom', "    raise ValueError",
        '  File "/opt/lib/numpy/core.py", line 9, in g', "ValueError: bad 3"]
    bobs = traceback_text(FAILURE, "solution.py")   # grader grade's feedback: the view named it by name
    assert '"solution.py", line 5' in bobs and '"frames_helper.py", line 2' in bobs and "class/" not in bobs
    assert file_name(FAILURE.frames[2], "x.py") == "/opt/lib/numpy/core.py"


def test_a_notebooks_frame_is_worded_as_its_cell_and_line():
    cell = Failure(kind="exception", message="", exception="E", frames=[
        Frame(ref="submission", file="nb.ipynb", line=40, function="f", code="x", cell=3, cell_line=2)])
    assert 'File "nb.ipynb", cell 3, line 2, in f' in traceback_text(cell, "nb.ipynb")


def test_the_words_are_made_by_the_view_and_never_read_back_as_facts():
    from grader.reports.view import build
    report = Report(problem="p", title="t", submission="class/bob/solution.py", passed=False, score=0,
                    max_score=1, failure=FAILURE, cases=[], groups=[], summary=[], environment={}, output={},
                    seconds=0.0)
    assert FAILURE.traceback == "" and "traceback" not in FAILURE.to_json()
    shown = build(report, "instructor").report.failure
    assert 'File "class/bob/solution.py", line 5' in shown.traceback and shown.shown_details[-1] == shown.traceback
    again = Failure.from_json(shown.to_json())   # a report read back: the facts, not the words
    assert again.traceback == "" and again.frames == FAILURE.frames and again.exception == FAILURE.exception


def _raised(make):
    try:
        make()
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("nothing raised")


class _NoStr(Exception):
    def __str__(self):
        raise RuntimeError("no")


@pytest.mark.parametrize("make", [
    lambda: (_ for _ in ()).throw(SyntaxError("nope", (123, 4, 5, 6))),          # a number for its file
    lambda: (_ for _ in ()).throw(SyntaxError("nope", ("solution.py", "7", 5, 12345))),  # text not a string
    lambda: (_ for _ in ()).throw(_NoStr()),                                       # __str__ raises
    lambda: eval(compile("1/0", "/x\x00y", "eval")),                               # a NUL in the file name
], ids=["syntax_file_number", "syntax_text_number", "str_raises", "nul_file"])
def test_an_exception_with_fields_python_never_gives_is_still_facts(make):
    """Attack round 31: a SyntaxError built with a number for its file name, or a NUL in a code
    object's file name, made exception_facts raise in the child, which then crashed: the report
    said "crash" and showed the child's own traceback. Now: facts, whatever the fields."""
    facts = exception_facts(_raised(make), "/nowhere/solution.py")
    assert isinstance(facts["exception"], str) and facts["exception"]
    assert all(isinstance(f["file"], str) and (f["line"] is None or isinstance(f["line"], int))
               for f in facts["frames"])


def test_a_learners_view_names_no_folder_of_the_graders_run():
    """Attack round 31: a frame compiled under a made-up name beside the private copy, and a
    function renamed to os.getcwd(), named the run's grader-sub-* and grader-run-* folders in
    grade's feedback. The learner's view names them <private> and <workdir>."""
    import tempfile

    from grader.reports.view import learner_paths
    tmp = tempfile.gettempdir()
    leak = Failure(kind="exception", message="m", exception="E", frames=[
        Frame(ref="outside", file=f"{tmp}/grader-sub-21870-_cf_zbg8/leak_parent.py", line=1,
              function=f"at:{tmp}/grader-run-21870-ab_c9/x|cwd:{tmp}/grader-run-21870-ab_c9")])
    shown = learner_paths(leak, "solution.py")
    assert shown.frames[0].file == "<private>/leak_parent.py"
    assert shown.frames[0].function == "at:<workdir>/x|cwd:<workdir>"
    assert "grader-" not in traceback_text(shown, "solution.py")


def test_pythons_markers_under_the_code_line_are_kept_as_facts_and_only_markers(tmp_path):
    """The format consumers' read: the ``~~~^^^`` lines Python 3.11 writes under a frame's code
    were gone once tracebacks became frames. They are a frame's ``marks`` (spaces, ~ and ^ only:
    anything else a child sends is dropped) and the words put them back under the line."""
    exc = _raise_from(tmp_path, {"solution.py": "CONFIG = {}\n\n\ndef f(x):\n    return x + CONFIG['k']\n"},
                      "solution.py", "f(1)")
    facts = exception_facts(exc, str(tmp_path / "solution.py"))
    frame = frames_of(facts["frames"], "solution.py")[-1]
    assert frame.code == "return x + CONFIG['k']" and frame.marks.strip() and not frame.marks.strip(" ~^")
    at = frame.code.index("CONFIG")
    assert frame.marks.index("~") == at or frame.marks.index("^") == at, (frame.code, frame.marks)
    words = traceback_text(Failure(kind="exception", message="", exception="KeyError: 'k'", frames=[frame]), "solution.py")
    assert f"    {frame.code}\n    {frame.marks}\n" in words
    forged = frames_of([{"file": "solution.py", "line": 1, "marks": "^^\x1b[31m"}], "solution.py")
    assert forged[0].marks == ""


def test_a_report_read_back_keeps_only_fields_of_their_kind():
    """Attack round 32: a hand-edited report's replay seed of Infinity made int() raise
    OverflowError (a graded learner then showed as a crash on --resume), and a cell label with a
    newline wrote its own line into the text report. Read back, each field is of its kind or
    none."""
    from grader.results import Replay
    replay = Replay.from_json({"submission": "s.py", "problem": "p", "case": "c", "seed": float("inf"),
                               "max_examples": "3", "literal": 5})
    assert (replay.seed, replay.max_examples, replay.literal) == (None, None, None)
    frame = Frame.from_json({"ref": "submission", "file": "s.py", "line": "3", "file_line": float("inf"),
                             "cell_label": "In[5], line 1\n::error file=a::x", "cell_line": 2})
    assert (frame.line, frame.file_line, frame.cell_label) == (None, None, None)
    assert Frame.from_json({"ref": "submission", "file": "s.py", "cell_label": "In[12]"}).cell_label == "In[12]"
