"""Hostile learner inputs to the grader itself (issue 9, classes 1, 4, 5, 10 and 11).

One ``grader grade`` run over a class that holds every hostile name and file at once (learner
modules named like the grader's imports in the working folder and beside the submissions,
symbolic links, a FIFO, a 245-character stem, a non-UTF-8 folder name, a helper file holding a
200,000-term expression, names with newlines, quotes, commas, formulas, escape sequences and
bidi controls, an exception message with a lone surrogate): every learner must get a row, the
outputs must be written, readable back (``--resume``, ``merge``) and free of raw control
characters. The rest is tested in process: reading a submission, the shared ``printable``
helper, the protocol's surrogate decoding and the reporters.
"""
from __future__ import annotations

import ast
import csv
import json
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from grader import check, protocol
from grader.batch import discovery, gradebook, pool
from grader.errors import GraderError
from grader.reports import common, github, gradescope, junit, text
from grader.results import ArrayInfo, CaseResult, Failure, GroupScore, Report

from .conftest import SUBMISSIONS

CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
SOFTMAX = (SUBMISSIONS / "wrong_tolerance_softmax.py").read_text()
FAST = ["--max-examples", "4", "--no-shrink", "--timeout", "5"]
MODULES = ("argparse", "json", "numpy")          # what the grader (and pip) import first
# what must never reach a terminal or spreadsheet raw: ESC, CSI (C1), CR, bidi overrides/isolates
UNSAFE = ["\x1b", "\x9b", "\r", "\u202e", "\u2066", "\u200f", "\x07"]
ESCAPES = '\x1b[2J\x1b[32mPASS 10 of 10\x1b]0;owned\x07\u202e'
SURROGATE = '''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    print("\\x1b[2J\\x1b[1;32mPASS 10/10\\u202e")
    raise ValueError("lone \\ud800 surrogate \\x1b[31m\\u2066")
'''
STEM_245 = "s" * 245


def marker_module(markers: Path, name: str) -> str:
    """A file that records being imported as anything but the submission in its sandbox."""
    return f"if __name__ != 'submission':\n    open({str(markers / name)!r}, 'w').write(__name__)\n"


def unsafe_in(text: str) -> list[str]:
    return [c for c in UNSAFE if c in text]


# -- one batch over every hostile name and file ----------------------------------------------------
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    markers, cwd, klass = tmp / "markers", tmp / "cwd", tmp / "class"
    for d in (markers, cwd, klass):
        d.mkdir()
    for m in MODULES:                                   # class 1: in the folder grade runs in ...
        (cwd / f"{m}.py").write_text(marker_module(markers, m))
    (klass / "argparse.py").write_text(marker_module(markers, "argparse-beside"))  # ... and beside
    (klass / "alice.py").write_text(CORRECT)
    (klass / "bob.py").write_text(SOFTMAX)
    (klass / "bom.py").write_bytes(b"\xef\xbb\xbf" + CORRECT.encode())  # class 4: a UTF-8 BOM
    secret = tmp / "secret.txt"
    secret.write_text("TOPSECRET-93c1 = 1\n")
    (klass / "linked.py").symlink_to(klass / "alice.py")  # class 4: a link to another learner
    (klass / "shadow.py").symlink_to(secret)               # a link to a file the learner may not read
    os.mkfifo(klass / "pipe.py")                           # a FIFO must not hang the batch
    (klass / f"{STEM_245}.py").write_text(CORRECT)         # class 5: a 245-character stem
    bytes_dir = os.path.join(os.fsencode(klass), b"caf\xe9")  # a non-UTF-8 folder name
    os.mkdir(bytes_dir)
    Path(os.fsdecode(os.path.join(bytes_dir, b"solution.py"))).write_text(CORRECT)
    (klass / "deep").mkdir()                               # a helper with a 200,000-term expression
    (klass / "deep" / "solution.py").write_text(CORRECT)
    (klass / "deep" / "helper.py").write_text("x = " + "+".join(["1"] * 200_000) + "\n")
    (klass / 'new\nline, "quoted"').mkdir()                # newline, quotes, comma
    (klass / 'new\nline, "quoted"' / "solution.py").write_text(CORRECT)
    (klass / "=HYPERLINK(1).py").write_text(CORRECT)       # class 11: a formula
    (klass / f"{ESCAPES}.py").write_text(SOFTMAX)          # escape sequences and bidi in the id
    (klass / "sur.py").write_text(SURROGATE)               # class 10: a lone surrogate
    out = tmp / "out"
    run = subprocess.run([sys.executable, "-I", "-m", "grader", "grade", str(klass), "--out", str(out),
                          "--jobs", "2", *FAST], cwd=cwd, capture_output=True, text=True, timeout=600,
                         stdin=subprocess.DEVNULL)
    return run, out, markers, tmp


EXPECTED_IDS = {"alice", "argparse", "bob", "bom", "linked", "shadow", "pipe", STEM_245, "caf\\xe9", "deep",
                'new\\nline, "quoted"', "=HYPERLINK(1)",
                "\\x1b[2J\\x1b[32mPASS 10 of 10\\x1b]0;owned\\x07\\u202e", "sur"}


def rows(out: Path) -> dict[str, gradebook.Row]:
    return {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}


def test_grade_imports_no_learner_module_and_grades_right(hostile):
    """Class 1: learner files named argparse/json/numpy in the working folder and beside the
    submissions are never imported by the grader's own processes."""
    run, out, markers, _ = hostile
    assert run.returncode == 1, run.stderr
    assert sorted(p.name for p in markers.iterdir()) == [], "the grader imported a learner's module"
    book = rows(out)
    assert book["alice"].passed and book["alice"].score == 10
    assert not book["bob"].passed and "tolerance" in book["bob"].kinds
    assert book["argparse"].kinds == ["import"]  # graded as a learner, in its sandbox


def test_every_learner_gets_a_row_and_every_output_is_written(hostile):
    """Class 5: long, non-UTF-8 and odd names and a pathological helper cost nobody their row."""
    run, out, _, _ = hostile
    book = rows(out)
    assert set(book) == EXPECTED_IDS, run.stderr
    for learner in (STEM_245, "caf\\xe9", "deep", 'new\\nline, "quoted"', "=HYPERLINK(1)"):
        assert book[learner].passed, (learner, book[learner])
    suites = ET.parse(out / "junit.xml").getroot().findall("testsuite")
    assert len(suites) == len(EXPECTED_IDS)
    assert (out / "summary.md").read_text().count("\n") > 10
    names = sorted(p.name for p in (out / "reports").iterdir())
    assert names == sorted(gradebook.report_name(learner) for learner in EXPECTED_IDS)
    assert all(len(n) <= 62 and n.replace("-", "").replace("_", "").replace(".", "").isalnum() for n in names)


def test_links_and_special_files_are_faults_never_followed(hostile):
    """Class 4: a link is a row of its own saying so (the learner it points to keeps theirs), its
    target's content is in no output, a FIFO does not hang, a BOM is accepted."""
    run, out, _, tmp = hostile
    book = rows(out)
    for learner, why in (("linked", "symbolic link"), ("shadow", "symbolic link"), ("pipe", "not a regular file")):
        assert book[learner].kinds == ["import"], book[learner]
        assert why in json.loads(gradebook.report_path(out, learner).read_text())["failure"]["message"]
    assert book["alice"].passed and book["bom"].passed
    for path in out.rglob("*"):
        if path.is_file():
            assert "TOPSECRET" not in path.read_text(errors="replace"), path
    assert "TOPSECRET" not in run.stderr + run.stdout


def test_lone_surrogate_is_a_failed_row(hostile):
    """Class 10: the exception message with a lone surrogate is graded (kind exception)."""
    _, out, _, _ = hostile
    assert rows(out)["sur"].kinds == ["exception"]


def test_learner_text_is_neutralised_in_every_output(hostile):
    """Class 11: no raw escape, C1 or bidi character in the progress log, gradebook.csv,
    summary.md or junit.xml; formula cells start with a quote."""
    run, out, _, _ = hostile
    for name in ("gradebook.csv", "summary.md", "junit.xml"):
        assert unsafe_in((out / name).read_text()) == [], name
    assert unsafe_in(run.stderr) == [] and unsafe_in(run.stdout) == []
    assert "\\x1b[2J" in run.stderr  # shown, as a visible escape
    with open(out / "gradebook.csv", newline="") as fh:
        cells = [r[:2] for r in csv.reader(fh)][1:]
    assert all(not c.startswith(("=", "+", "-", "@", "\t", "\r")) for row in cells for c in row)
    assert ["'=HYPERLINK(1)", next(c[1] for c in cells if c[0] == "'=HYPERLINK(1)")] in cells


def test_resume_and_merge_read_the_hostile_gradebook_back(hostile, tmp_path):
    """Class 11: the neutralised gradebook still round-trips: --resume regrades nobody, merge
    keeps every row as it was."""
    run, out, _, tmp = hostile
    before = (out / "gradebook.csv").read_text()
    again = subprocess.run([sys.executable, "-I", "-m", "grader", "grade", str(tmp / "class"), "--out", str(out),
                            "--resume", *FAST], cwd=tmp / "cwd", capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
    assert again.returncode == 1 and "grading 0 learners" in again.stderr, again.stderr
    assert (out / "gradebook.csv").read_text() == before
    merged = tmp_path / "merged"
    done = subprocess.run([sys.executable, "-I", "-m", "grader", "merge", str(out), "--out", str(merged)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr  # merged, and some learners failed (as grade said)
    assert (merged / "gradebook.csv").read_text() == before


# -- the batch's own pieces, in process ------------------------------------------------------------
def test_the_check_command_is_isolated():
    """Class 1: every per-learner check runs ``python -I`` and imports the grader from its own folder."""
    argv = pool.grader_command()
    assert argv[:3] == [sys.executable, "-I", "-c"] and Path(argv[4], "grader", "cli.py").is_file()
    out = subprocess.run([*argv, "--version"], capture_output=True, text=True, cwd="/", timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("grader "), out.stderr


def test_discovery_keeps_both_learners_of_one_file_and_follows_no_link(tmp_path):
    """Class 4: two paths to one file are two learners; a linked folder is a noted row."""
    (tmp_path / "class" / "real").mkdir(parents=True)
    (tmp_path / "class" / "a.py").write_text(CORRECT)
    (tmp_path / "class" / "b.py").symlink_to(tmp_path / "class" / "a.py")
    (tmp_path / "class" / "real" / "solution.py").write_text(CORRECT)
    (tmp_path / "class" / "twin").symlink_to(tmp_path / "class" / "real")
    found = {s.learner: s for s in discovery.discover([str(tmp_path / "class")], ["tied_lm_head"])}
    assert set(found) == {"a", "b", "real", "twin"}
    assert found["b"].path == tmp_path / "class" / "b.py"  # graded, and reported as a link
    assert found["twin"].path is None and "symbolic link" in found["twin"].note


def test_a_thousand_folders_deep_neither_aborts_discovery_nor_stops_the_disk_watch(tmp_path):
    """os.walk recursed once per level: 1,000 nested folders in one learner's folder raised
    RecursionError in discovery (the whole class run exited 2, nobody graded) and would have
    ended the fallback sandbox's disk watch. Both walk without recursion now."""
    from grader.diskwatch import DiskWatch

    (tmp_path / "class" / "ok").mkdir(parents=True)
    (tmp_path / "class" / "ok" / "solution.py").write_text(CORRECT)
    mallory = tmp_path / "class" / "mallory"
    mallory.mkdir()
    (mallory / "solution.py").write_text(CORRECT)
    fd = os.open(mallory, os.O_RDONLY)
    try:
        for _ in range(1200):  # one level at a time, by descriptor: the path would pass PATH_MAX
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("deep.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    try:
        found = {s.learner: s for s in discovery.discover([str(tmp_path / "class")], ["tied_lm_head"])}
        assert set(found) == {"ok", "mallory"} and found["mallory"].path == mallory / "solution.py"
        assert discovery._py_files(mallory) == ([mallory / "solution.py"], None)  # deep.py lies below MAX_DEPTH
        assert DiskWatch(str(mallory), 0, 1 << 40, 10_000).usage()[1] == 1200 + 2  # every entry counted
    finally:
        remove_deep_tree(mallory / "a")  # shutil.rmtree (pytest's tmp cleanup) recurses too


def remove_deep_tree(top: Path) -> None:
    """Remove a chain of nested folders (one ``a`` per level, a file at the bottom) without recursion."""
    fds = [os.open(top, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open("a", os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    for name in os.listdir(fds[-1]):
        os.unlink(name, dir_fd=fds[-1])
    for parent in reversed(fds[:-1]):
        os.close(fds.pop())
        os.rmdir("a", dir_fd=parent)
    os.close(fds.pop())
    os.rmdir(top)


@pytest.mark.parametrize("learner", ["alice", STEM_245 * 4, "caf\\xe9", "=1+1", "..", ".x", "a/b", "", "\u00fc" * 90])
def test_report_names_are_safe_bounded_and_distinct(learner):
    """Class 5: a report's file name is short, plain and distinct whatever the id holds."""
    name = gradebook.report_name(learner)
    assert len(name) <= 62 and not name.startswith(".") and "/" not in name and name.endswith(".json")
    assert name.encode("ascii")
    assert gradebook.report_name(learner + "x") != name


def test_gradebook_cells_round_trip_formulas(tmp_path):
    """Class 11: formula cells are quoted on disk and read back as they were."""
    ids = ["=cmd|' /C calc'!A0", "+1", "-2", "@SUM(1)", "'quoted", "''twice", "plain", "tab\\tx", "a,b\\n\"c\""]
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row(i, f"{i}.py", False, 0, 10, ["import"], 1) for i in ids])
    with open(book, newline="") as fh:
        cells = [c for r in list(csv.reader(fh))[1:] for c in r[:2]]
    assert all(not c.startswith(("=", "+", "-", "@")) for c in cells)
    assert sorted(r.learner for r in gradebook.read_gradebook(book)) == sorted(ids)


# -- reading a submission (class 4, 10) ------------------------------------------------------------
def test_read_submission_refuses_links_and_special_files(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("TOPSECRET = 1\n")
    (tmp_path / "link.py").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo.py")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.py"))
    (tmp_path / "big.py").write_bytes(b"#" * (check.MAX_SUBMISSION_BYTES + 1))
    faults = {name: check.load_submission(tmp_path / name) for name in ("link.py", "fifo.py", "sock.py", "big.py")}
    faults["/dev/zero"] = check.load_submission("/dev/zero")
    sock.close()
    for name, loaded in faults.items():
        assert loaded.fault and loaded.data == b"" and loaded.tree is None, name
        assert "TOPSECRET" not in loaded.fault
    assert "symbolic link" in faults["link.py"].fault and "FIFO" in faults["fifo.py"].fault
    assert "device" in faults["/dev/zero"].fault and "larger than 1 MiB" in faults["big.py"].fault
    assert check.read_submission(tmp_path / "link.py") == ("", None, None)
    with pytest.raises(GraderError, match="does not exist"):
        check.load_submission(tmp_path / "missing.py")
    with pytest.raises(GraderError, match="is a directory"):
        check.load_submission(tmp_path)


def test_a_hard_linked_submission_is_a_fault_and_nothing_of_it_is_read(tmp_path):
    """A submission that is another name of a file outside the learner's folder (``ln
    /etc/shadow solution.py``; a learner's tar unpacked without a filter) passes ``O_NOFOLLOW``
    and is a regular file, but its lines would come back in error messages: it is refused as a
    symbolic link is (a fault of the submission: a report, exit 1), a notebook too, and
    discovery does not choose it in a learner's folder even though it defines the function."""
    secret = tmp_path / "secret.txt"
    secret.write_text("def tied_lm_head(h, e):\n    return 'TOPSECRET_3141'\n")
    klass = tmp_path / "class"
    folder = klass / "mallory"
    folder.mkdir(parents=True)
    os.link(secret, folder / "solution.py")
    os.link(secret, folder / "solution.ipynb")
    for name in ("solution.py", "solution.ipynb"):
        loaded = check.load_submission(folder / name)
        assert loaded.fault and loaded.data == b"" and loaded.tree is None and loaded.syntax_error is None, name
        assert "is a hard link (3 names)" in loaded.fault and "copy the file" in loaded.fault, loaded.fault
        assert "TOPSECRET" not in loaded.fault
    assert check.read_submission(folder / "solution.py") == ("", None, None)
    (folder / "other.py").write_text("X = 1\n")
    (klass / "bob.py").write_text("X = 1\n")
    found = {s.learner: s for s in discovery.discover([str(klass)], ["tied_lm_head"])}
    assert found["mallory"].path is None and "defines tied_lm_head" in found["mallory"].note


def test_read_submission_decodes_as_python_does(tmp_path):
    """A UTF-8 BOM and a coding line are Python; a 200,000-deep expression is the submission's fault."""
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + CORRECT.encode())
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
    (tmp_path / "deep.py").write_text("x = " + "-" * 200_000 + "1\n")
    (tmp_path / "long.py").write_text("x = " + "+".join(["1"] * 200_000) + "\n")
    bom = check.load_submission(tmp_path / "bom.py")
    assert bom.syntax_error is None and "tied_lm_head" in check.defined_functions(bom.tree)
    assert bom.data.startswith(b"\xef\xbb\xbf")  # the child imports these very bytes
    assert check.load_submission(tmp_path / "latin.py").source.endswith("'caf\u00e9'\n")
    for name in ("deep.py", "long.py"):
        loaded = check.load_submission(tmp_path / name)
        assert loaded.fault and "nested too deeply" in loaded.fault, name
    # codecs whose decoding raises a plain UnicodeError (no UnicodeDecodeError): once an internal
    # error, exit 2, that aborted a whole class run when the file lay in a learner's folder
    for codec in ("undefined", "punycode"):
        (tmp_path / f"{codec}.py").write_bytes(f"# coding: {codec}\n".encode() + CORRECT.encode() + b"#-\x1b")
        loaded = check.load_submission(tmp_path / f"{codec}.py")
        assert loaded.fault and "not UTF-8 text" in loaded.fault and loaded.tree is None, codec
        assert "tied_lm_head" in check.scanned_functions(loaded.source)  # still tells its problem


def test_an_error_line_never_carries_a_raw_escape(monkeypatch, capsys):
    """A GraderError's or an internal error's message may hold learner text: one printable line."""
    from grader import cli

    def boom(args):
        raise ValueError("bad byte \x1b[2J in\nname")
    monkeypatch.setattr(cli, "cmd_problems", boom)
    code = cli.main(["problems"])
    err = capsys.readouterr().err
    assert code == 2 and "\x1b" not in err and err.count("\n") == 1 and "internal error: ValueError" in err


def test_the_child_gets_the_checked_bytes_not_what_the_path_holds_later(tmp_path, monkeypatch):
    """Class 4: the submission's process imports a private copy of the bytes the grader read,
    so a link swapped in at the original path afterwards is never followed."""
    from grader.spec import find_problem, load_problem

    sub = tmp_path / "sub.py"
    sub.write_text(CORRECT)
    (tmp_path / "secret.txt").write_text("TOPSECRET = 1\n")
    real_load = check.load_submission
    seen: dict[str, bytes] = {}

    def load_then_swap(path, *args, **kwargs):
        loaded = real_load(path, *args, **kwargs)
        sub.unlink()
        sub.symlink_to(tmp_path / "secret.txt")
        return loaded

    class Stop(Exception):
        pass

    class Session:  # records what the submission's process would be given, then stops the check
        def __init__(self, path, *args, **kwargs):
            seen[str(path)] = Path(path).read_bytes()

        def launch(self):
            pass

        def __getattr__(self, name):
            raise Stop(name)

    from grader import plan as plan_module
    from grader.run import sandboxed
    monkeypatch.setattr(plan_module, "load_submission", load_then_swap)
    monkeypatch.setattr(sandboxed, "_Session", Session)
    problem = load_problem(find_problem("tied_lm_head"))
    with pytest.raises(Stop):
        check.check_submission(sub, problem, check.CheckOptions(max_examples=0, sandbox="none"))
    [(path, data)] = seen.items()
    # round 4: the copy's folder names nothing of the host (grader-sub-*/submission/sub.py)
    assert str(tmp_path) not in path and path.endswith("/submission/sub.py") and data == CORRECT.encode()
    assert not Path(path).exists()  # removed after the run


# -- the protocol and the reporters (classes 10, 11) -----------------------------------------------
def test_protocol_turns_lone_surrogates_into_visible_escapes():
    r, w = os.pipe()
    try:
        protocol.write_frame(w, {"message": "a \ud800 b \U0001f600", "x": [{"k\udcff": ["\udfff"]}]},
                             {"result": np.zeros(2)})
        header, arrays = protocol.read_frame(r)
    finally:
        os.close(r)
        os.close(w)
    assert header["message"] == "a \\ud800 b \U0001f600" and header["x"] == [{"k\\udcff": ["\\udfff"]}]
    json.dumps(header, ensure_ascii=False).encode("utf-8")
    assert arrays["result"].shape == (2,)


@pytest.mark.parametrize("raw,shown", [
    ("\x1b[2J", "\\x1b[2J"), ("\x9b31m", "\\x9b31m"), ("a\rb", "a\\rb"), ("\u202eevil", "\\u202eevil"),
    ("\u2066x\u2069", "\\u2066x\\u2069"), ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
    ("caf\udce9", "caf\\xe9"), ("\ud800", "\\ud800"), ("tab\tand\nline", "tab\tand\nline"), ("é ü 😀", "é ü 😀"),
])
def test_printable(raw, shown):
    assert common.printable(raw) == shown
    assert common.printable(shown) == shown  # idempotent
    assert unsafe_in(common.printable(raw, one_line=True)) == [] and "\n" not in common.printable(raw, one_line=True)


def _hostile_report() -> Report:
    failure = Failure(kind="exception", message=f"ValueError: {ESCAPES} \ud800", hint="\u202ehint",
                      details=["Traceback:\n  File \"x.py\"\x1b[0m", "line\r\x9b2K"])
    case = CaseResult(name="batch[float32]", group="shapes", status="failed", dtype="float32", rank=2,
                      inputs={"hidden": ArrayInfo(shape=(2, 3), dtype="float32")}, failure=failure,
                      replay="grader check x.py")
    return Report(problem="tied_lm_head", title="Tied LM head", submission=f"{ESCAPES}caf\udce9.py", passed=False,
                  score=0.0, max_score=10.0, failure=None, cases=[case],
                  groups=[GroupScore(group="shapes", points=10.0, earned=0.0, passed=0, total=1)], summary=[],
                  environment={"seed": 0, "dtypes": ["float32"]},
                  output={"stdout": ESCAPES + "\n", "stderr": "\x1b[31m", "stdout_bytes": 9, "stderr_bytes": 5,
                   "truncated": False}, seconds=1.0)


@pytest.mark.parametrize("render", [
    lambda r: text.render(r, audience="instructor"),
    lambda r: github.render(r, audience="instructor"),
    lambda r: github.step_summary(r, audience="instructor"),
    lambda r: json.dumps(github.classroom_result(r, audience="instructor"), ensure_ascii=False),
    lambda r: gradescope.render(r, audience="instructor"),
    lambda r: json.dumps(gradescope.results(r, audience="instructor"), ensure_ascii=False),
    lambda r: junit.render(r, audience="instructor"),
    lambda r: junit.render_many([(ESCAPES, r)], audience="instructor"),
], ids=["text", "github", "step_summary", "classroom", "gradescope", "gradescope-decoded", "junit", "junit-many"])
def test_reporters_show_learner_text_as_visible_escapes(render):
    out = render(_hostile_report())
    assert unsafe_in(out) == [] and "x1b" in out
    out.encode("utf-8")  # lone surrogates and non-UTF-8 file names cannot break the output


def test_text_report_lines_cannot_be_forged_by_a_name_or_message():
    """A newline in a file name or message is shown as ``\\n``: no line of its own (a fake verdict)."""
    report = _hostile_report()
    report.submission = "x.py\nPASS tied_lm_head: score 10 / 10"
    report.cases[0].failure.message = "boom\nPASS tied_lm_head: score 10 / 10"
    out = text.render(report, audience="instructor")
    assert [line for line in out.splitlines() if line.startswith("PASS")] == []
    assert "x.py\\nPASS tied_lm_head" in out and "boom\\nPASS" in out


def test_check_text_report_of_a_hostile_submission(tmp_path):
    """Classes 10 and 11 end to end: a lone surrogate and escape sequences give a report (exit 1),
    shown as visible escapes, not exit 2 "internal error"."""
    (tmp_path / "sur.py").write_text(SURROGATE)
    run = subprocess.run([sys.executable, "-I", "-m", "grader", "check", "sur.py", *FAST], cwd=tmp_path,
                         capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    out = run.stdout.decode("utf-8")
    assert run.returncode == 1, run.stderr
    assert unsafe_in(out) == [] and "ValueError: lone \\ud800 surrogate \\x1b[31m\\u2066" in out


def test_parsing_in_threads_never_fails_a_valid_file(tmp_path):
    """CPython 3.11 counts the AST converter's recursion per interpreter: threads parsing at once
    (grader validate grades its mistakes in a thread pool) failed a valid file with "SystemError:
    AST constructor recursion depth mismatch" (CPython gh-106905; it failed test_validate in CI).
    Every parse goes through grader.siblings.parse, one at a time. Here four threads load a large
    valid file while garbage collection runs finalizers, which is what let the threads interleave."""
    import gc
    import threading
    import time

    big = tmp_path / "big.py"
    # the modules of grader/batch/ (once batch.py) as one file: one __future__ import may not stand mid-file
    big.write_text("".join(p.read_text().replace("from __future__ import annotations\n", "")
                           for p in sorted(Path(pool.__file__).parent.glob("*.py"))))

    class Finalized:
        def __del__(self):
            time.sleep(0)

    errors: list[str] = []

    def work():
        for _ in range(25):
            junk = [Finalized() for _ in range(20)]
            junk.append(junk)  # a cycle: only the collector frees it
            try:
                loaded = check.load_submission(big)
                assert loaded.tree is not None
            except SystemError as exc:
                errors.append(str(exc))
                return

    thresholds, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(50, 1, 1)
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(interval)
    assert errors == []
