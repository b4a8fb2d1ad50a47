"""``grader grade`` and ``grader merge``: a small class graded end to end (each submission in
its own ``grader check`` process), a batch killed midway and resumed, a hung check stopped at
its hard limit, shards and their merge, and bad calls (exit 2, one error line).

Kept fast: numpy submissions only, ``--max-examples 4 --no-shrink --timeout 2``, two jobs.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from grader import cli
from grader.batch import discovery, gradebook, pool
from grader.batch.settings import SETTINGS
from grader.reports import json_report
from grader.results import Failure

from .conftest import ROOT, SUBMISSIONS, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
SOFTMAX = (SUBMISSIONS / "wrong_tolerance_softmax.py").read_text()
AS_LIST = (SUBMISSIONS / "wrong_type_list.py").read_text()
SYNTAX = (SUBMISSIONS / "wrong_import_syntax.py").read_text()
LOOP = (SUBMISSIONS / "wrong_timeout_loop.py").read_text()
HELPER = "def scale(x):\n    return 2 * x\n"
FAST = ["--max-examples", "4", "--no-shrink", "--timeout", "2"]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def grade(*argv: str):
    return run_grader("grade", *argv, timeout=120)


def rows_of(out: Path) -> list[dict[str, str]]:
    with open(out / "gradebook.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def leftovers(marker: str, wait: float = 5.0) -> list[str]:
    """Command lines of live processes mentioning ``marker``, after waiting up to ``wait`` s for none."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmd and state != "Z":
                found.append(cmd)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.fixture(scope="module")
def hidden_spec(tmp_path_factory) -> Path:
    """The bundled problem with its ``generated`` group made hidden (to see the audience at work)."""
    root = tmp_path_factory.mktemp("spec")
    spec = yaml.safe_load((ROOT / "problems" / "tied_lm_head.yaml").read_text())
    spec["groups"]["generated"]["visibility"] = "hidden"
    write(root / "problems" / "tied_lm_head.yaml", yaml.safe_dump(spec, sort_keys=False))
    (root / "reference").mkdir()
    shutil.copy(ROOT / "reference" / "tied_lm_head.py", root / "reference" / "tied_lm_head.py")
    return root / "problems"


@pytest.fixture(scope="module")
def graded(tmp_path_factory, hidden_spec):
    """One batch over a class of every kind of learner, shared by the tests that read its output."""
    tmp = tmp_path_factory.mktemp("class")
    klass = tmp / "class"
    write(klass / "alice.py", CORRECT)
    write(klass / "bob.py", SOFTMAX)
    write(klass / "carol.py", SYNTAX)
    write(klass / "eve.py", LOOP)
    write(klass / "frank.py", b"\xff\xfe not utf-8 \x00")
    write(klass / "dave" / "solution.py", CORRECT)          # a learner's folder: the file defining the function
    write(klass / "dave" / "helpers.py", HELPER)
    write(klass / "dave" / "test_solution.py", CORRECT)     # test files are never submissions
    write(klass / "gina" / "notes.py", HELPER)               # a learner's folder with no submission
    write(klass / "gina" / "util.py", HELPER)
    write(klass / "__pycache__" / "alice.cpython-311.py", CORRECT)
    write(tmp / "late" / "alice.py", AS_LIST)                # a second "alice": must become alice-2
    out = tmp / "out"
    started = time.monotonic()
    result = grade(str(klass), str(tmp / "late" / "alice.py"), "--jobs", "2", "--out", str(out),
                   "--problems-dir", str(hidden_spec), *FAST)
    return result, out, klass, time.monotonic() - started


def test_batch_rows_verdicts_and_exit_code(graded):
    result, out, klass, _ = graded
    assert result.code == 1, result.stderr
    # no seed secret: said once, plainly (round four, class 7: learners can tabulate the cases)
    assert result.stderr.count("no seed secret") == 1 and "can tabulate them" in result.stderr
    rows = rows_of(out)
    by = {r["learner"]: r for r in rows}
    assert [r["learner"] for r in rows] == sorted(by) == ["alice", "alice-2", "bob", "carol", "dave", "eve",
                                                          "frank", "gina"]
    assert (by["alice"]["passed"], by["alice"]["score"], by["alice"]["max_score"], by["alice"]["kinds"]) == \
        ("true", "10", "10", "")
    assert by["dave"]["passed"] == "true" and by["dave"]["submission"].endswith("dave/solution.py")
    assert by["alice-2"]["submission"].endswith("late/alice.py") and by["alice-2"]["kinds"] == "type"
    assert by["bob"]["passed"] == "false" and "tolerance" in by["bob"]["kinds"].split(";")
    assert by["carol"]["kinds"] == "import"
    assert by["eve"]["kinds"] == "timeout"
    assert by["frank"]["kinds"] == "import" and by["frank"]["score"] == "0"  # not UTF-8: the file's fault
    assert by["gina"]["kinds"] == "import" and by["gina"]["submission"].endswith("gina")
    assert all(float(r["seconds"]) >= 0 for r in rows)
    # could not be graded: the whole-submission failures (carol, gina, frank: import)
    assert "graded 8 submissions: 2 passed, 6 failed (3 could not be graded)" in result.stdout


def test_batch_reports_are_the_instructors_by_default(graded):
    _, out, _, _ = graded
    reports = {r["learner"]: json.loads(gradebook.report_path(out, r["learner"]).read_text()) for r in rows_of(out)}
    assert {p.name for p in (out / "reports").glob("*.json")} == {gradebook.report_name(name) for name in reports}
    for row in rows_of(out):
        assert reports[row["learner"]]["passed"] == (row["passed"] == "true")
        assert reports[row["learner"]]["score"] == float(row["score"])
    hidden = [c for c in reports["alice"]["cases"] if c["visibility"] == "hidden"]
    assert hidden and all(c["group"] == "generated" and not c["name"].startswith("hidden-") and c["inputs"]
                          for c in hidden)
    frank = reports["frank"]["failure"]
    # a file that is not UTF-8 is the submission's fault, reported as such (it was a "crash" of the
    # grader's check process, exit 2, until an attacker's latin-1 comment showed it blamed the grader)
    assert frank["kind"] == "import" and "not UTF-8" in frank["message"] and "exit 2" not in frank["message"]
    assert frank["hint"].startswith("save the file as UTF-8 text")
    assert "defines tied_lm_head" in reports["gina"]["failure"]["message"]


def test_batch_junit_has_a_suite_per_learner_and_fits_the_schemas(graded):
    _, out, _, _ = graded
    root = ET.parse(out / "junit.xml").getroot()
    assert root.tag == "testsuites"
    # property names start with the learner id (xunitparser rejects a name repeated across suites)
    suites = {p.get("value"): s for s in root for p in s.iter("property") if p.get("name") == f"{p.get('value')}.learner"}
    assert sorted(suites) == sorted(r["learner"] for r in rows_of(out))
    alice = json.loads(gradebook.report_path(out, "alice").read_text())
    assert int(suites["alice"].get("tests")) == len(alice["cases"]) and suites["alice"].get("failures") == "0"
    assert int(suites["bob"].get("failures")) > 0
    assert suites["frank"].find("testcase").get("classname") == "frank.submission"
    from .test_report_formats import xsd_valid  # the XSDs but for file, line and the root's totals
    for name in ("JUnit.xsd", "junit-10.xsd"):
        xsd_valid(name, (out / "junit.xml").read_text())
    assert all(tc.get("file") and int(tc.get("line")) >= 1 for tc in root.iter("testcase"))


def test_batch_summary(graded):
    _, out, _, _ = graded
    text = (out / "summary.md").read_text()
    assert "8 learners: **2 passed**, 6 failed (3 could not be graded)." in text
    assert "| 10 (full marks) | 2 | ██ |" in text
    link = {name: f"[{name}](reports/{gradebook.report_name(name)})" for name in ("eve", "carol", "frank")}
    assert f"| timeout | 1 | {link['eve']} |" in text
    assert f"| import | 3 | {link['carol']} |" in text
    ungraded = text.split("## Could not be graded")[1].split("## ")[0]
    assert link["frank"] in ungraded and link["carol"] in ungraded and link["eve"] not in ungraded
    slowest = text.split("## Slowest submissions")[1]
    assert slowest.index("| eve |") < slowest.index("| carol |")  # the endless loop took longest of those


def test_batch_writes_summary_html_and_learner_feedback(graded):
    _, out, _, _ = graded
    page = (out / "summary.html").read_text()
    assert page.count('src="data:image/png;base64,') >= 4 and page.count("<script") == 1  # hints: if any; the one script sorts the learner table
    names = {gradebook.feedback_name(r["learner"]) for r in rows_of(out)}
    assert {p.name for p in (out / "feedback").glob("*.txt")} == names and len(names) == 8
    alice = (out / "feedback" / gradebook.feedback_name("alice")).read_text()
    assert "hidden cases:" in alice and "gen0" not in alice  # the learner audience: hidden cases as counts
    assert "gen0" in gradebook.report_path(out, "alice").read_text()  # (the instructor's report names them)


def test_batch_progress_is_plain_lines_off_a_terminal(graded):
    result, _, _, _ = graded
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 8 and lines[-1].startswith("[8/8] ")
    assert "\r" not in result.stderr  # no progress bar redraws in a CI log


def test_killed_batch_resumes_without_regrading(tmp_path):
    klass = tmp_path / "class"
    for name, text in (("a_ok", CORRECT), ("b_syntax", SYNTAX), ("c_list", AS_LIST), ("d_ok", CORRECT)):
        write(klass / f"{name}.py", text)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "grader", "grade", str(klass), "--jobs", "1", "--out", str(out), *FAST]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ((out / "gradebook.csv").exists() and len(rows_of(out)) >= 1):
        assert proc.poll() is None and time.monotonic() < deadline, "the batch ended before a row appeared"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not leftovers(str(klass)), "checks outlived the killed batch"
    before = {r["learner"]: r for r in rows_of(out)}
    assert 1 <= len(before) < 4
    mtimes = {name: gradebook.report_path(out, name).stat().st_mtime_ns for name in before}

    result = grade(str(klass), "--jobs", "2", "--out", str(out), "--resume", *FAST)
    assert result.code == 1, result.stderr
    assert f"({len(before)} graded before: kept unless their files changed" in result.stderr
    lines = (out / "gradebook.csv").read_text().splitlines()
    after = rows_of(out)
    assert len(lines) == 5 and [r["learner"] for r in after] == ["a_ok", "b_syntax", "c_list", "d_ok"]
    for name, row in before.items():
        assert gradebook.report_path(out, name).stat().st_mtime_ns == mtimes[name], f"{name} was regraded"
        assert next(r for r in after if r["learner"] == name) == row
    assert {r["learner"]: r["passed"] for r in after} == {"a_ok": "true", "b_syntax": "false",
                                                          "c_list": "false", "d_ok": "true"}


def _tree_of(root: int) -> dict[int, str]:
    """``root``'s descendants (pid -> start time), from /proc."""
    children: dict[int, list[int]] = {}
    started: dict[int, str] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        started[int(entry)] = fields[19]
    out, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out[pid] = started.get(pid, "")
        todo += children.get(pid, [])
    return out


def _alive(pid: int, start: str) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] != "Z"


@pytest.mark.parametrize("forkserver", ["1", "0"], ids=["forked", "processes"])
def test_sigterm_stops_the_batch_and_its_checks(tmp_path, forkserver):
    klass = tmp_path / "class"
    write(klass / "loop.py", LOOP)
    proc = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(klass), "--out", str(tmp_path / "out"),
                             "--timeout", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "GRADER_FORKSERVER": forkserver})
    deadline = time.monotonic() + 30
    # the check's sandboxed child is running: three levels below the batch when forked (server,
    # check, child), two otherwise (check, child)
    while True:
        tree = _tree_of(proc.pid)
        depth_ok = any(_tree_of(p) for p in tree) and (forkserver == "0" or
                                                      any(_tree_of(q) for p in tree for q in _tree_of(p)))
        if depth_ok:
            break
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)
    tree = _tree_of(proc.pid)
    tree.update({q: t for p in list(tree) for q, t in _tree_of(p).items()})
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 130
    assert "interrupted" in proc.stderr.read()
    end = time.monotonic() + 10
    while any(_alive(p, t) for p, t in tree.items()) and time.monotonic() < end:
        time.sleep(0.05)
    assert not [p for p, t in tree.items() if _alive(p, t)]
    assert not leftovers(str(klass))


def test_a_check_past_its_hard_limit_costs_only_its_row(tmp_path):
    """The hung check is stopped by --hard-timeout (1 s), not by its 30 s call limit: its row says
    so (a crash "stopped at the hard limit of 1 s", not a timeout), the batch's other outputs are
    written and no process of it is left. (No stopwatch: that failed at load 13-17.)"""
    write(tmp_path / "class" / "slow.py", LOOP)  # its check would take 30 s: the call limit
    result = grade(str(tmp_path / "class" / "slow.py"), "--out", str(tmp_path / "out"), "--timeout", "30",
                   "--hard-timeout", "1", "--jobs", "1")
    assert result.code == 1, result.stderr
    assert " with 1 job into " in result.stderr
    assert "graded 1 submission: 0 passed, 1 failed (1 could not be graded)" in result.stdout
    [row] = rows_of(tmp_path / "out")
    assert (row["learner"], row["passed"], row["kinds"]) == ("slow", "false", "crash")
    failure = json.loads(gradebook.report_path(tmp_path / "out", "slow").read_text())["failure"]
    assert "stopped at the hard limit of 1 s" in failure["message"]
    assert not leftovers(str(tmp_path / "class"))


def test_shards_are_disjoint_their_union_is_the_class_and_merge(tmp_path, hidden_spec):
    klass = tmp_path / "class"
    names = ["ok"] + [f"s{i}" for i in range(1, 8)]
    for name in names:
        write(klass / f"{name}.py", CORRECT if name == "ok" else SYNTAX)
    shards = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        result = grade(str(klass), "--shard", f"{i}/2", "--jobs", "2", "--out", str(out), "--audience", "learner",
                       "--problems-dir", str(hidden_spec), *FAST)
        assert result.code in (0, 1), result.stderr
        shards.append({r["learner"] for r in rows_of(out)})
    assert shards[0] and shards[1], "both shards should hold learners for this class"
    assert shards[0].isdisjoint(shards[1]) and shards[0] | shards[1] == set(names)

    merged = tmp_path / "merged"
    result = run_grader("merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "--out", str(merged))
    assert result.code == 1, result.stderr  # some merged learners failed, as grader grade says
    rows = rows_of(merged)
    assert [r["learner"] for r in rows] == sorted(names)
    assert {p.name for p in (merged / "reports").glob("*.json")} == {gradebook.report_name(n) for n in names}
    assert len(ET.parse(merged / "junit.xml").getroot()) == len(names)
    assert "8 learners: **1 passed**, 7 failed (7 could not be graded)." in (merged / "summary.md").read_text()
    # --audience learner: hidden cases are redacted in the learner's report
    ok = json.loads(gradebook.report_path(merged, "ok").read_text())
    assert not [c for c in ok["cases"] if c["visibility"] == "hidden"] and ok["hidden"]
    assert all(set(t) == {"group", "passed", "total"} for t in ok["hidden"])

    shutil.copytree(tmp_path / "shard1", tmp_path / "again")
    result = run_grader("merge", str(tmp_path / "shard1"), str(tmp_path / "again"), "--out", str(tmp_path / "m2"))
    assert result.code == 2 and result.stderr.count("\n") == 1 and "shard 1/2 is given twice" in result.stderr
    # folders with no settings record (an older grader's) are still told apart by their learners
    for name in ("shard1", "again"):
        shutil.copytree(tmp_path / name, tmp_path / "old" / name)
        (tmp_path / "old" / name / SETTINGS).unlink()
    result = run_grader("merge", str(tmp_path / "old" / "shard1"), str(tmp_path / "old" / "again"),
                        "--out", str(tmp_path / "m2"))
    assert result.code == 2 and result.stderr.count("\n") == 1 and "is in both" in result.stderr


def test_merge_exit_code_is_grades_and_a_folder_given_twice_is_refused(tmp_path, capsys):
    """merge exits 0 when every merged learner passed and 1 when one failed (the README's codes,
    as for grade); a folder named twice, by any path to it, is one line and exit 2, nothing written."""
    from .test_classview import _small_class, _write_class
    reports = _small_class()
    _write_class(tmp_path / "s1", {"ok": reports["ok"]})
    _write_class(tmp_path / "s2", {"imp": reports["imp"], "crashy": reports["crashy"]})
    s1, s2 = str(tmp_path / "s1"), str(tmp_path / "s2")

    assert cli.main(["merge", s1, "--out", str(tmp_path / "m1")]) == 0
    assert cli.main(["merge", s1, s2, "--out", str(tmp_path / "m2")]) == 1
    out = capsys.readouterr().out
    assert "merged 3 submissions: 1 passed, 2 failed (1 could not be graded) from 2 folders" in out
    assert [r.learner for r in gradebook.read_gradebook(tmp_path / "m2" / "gradebook.csv")] == ["crashy", "imp", "ok"]

    os.symlink(tmp_path / "s1", tmp_path / "link")
    for again in (s1, f"{s1}/../s1", str(tmp_path / "link")):
        dest = tmp_path / "m3"
        assert cli.main(["merge", s1, s2, again, "--out", str(dest)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "are the same folder" in err and not dest.exists()


def test_grade_forwards_check_options_and_defaults_to_the_instructor():
    parse = cli.build_parser().parse_args
    args = parse(["grade", "x.py", "--seed", "3", "--timeout", "2", "--no-shrink", "--problems-dir", "P"])
    assert pool.check_flags(args, "tied_lm_head") == [
        "--problem", "tied_lm_head", "--problems-dir", "P", "--seed", "3", "--timeout", "2.0",
        "--audience", "instructor", "--no-shrink"]
    assert pool.check_flags(parse(["grade", "x.py", "--audience", "learner"]), "p") == ["--problem", "p"]
    assert parse(["check", "x.py"]).audience == "learner"  # check's own default is untouched


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_in_shard_partitions_any_class(count):
    ids = [f"learner{i:04d}" for i in range(700)] + ["ü", "", "a b", "x-2"]
    owners = [[i for i in range(1, count + 1) if discovery.in_shard(learner, i, count)] for learner in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(o == [i] for o in owners) for i in range(1, count + 1)]
    assert max(sizes) - min(sizes) < 0.25 * len(ids) / count  # roughly balanced


def test_discover_layouts(tmp_path):
    write(tmp_path / "class" / "zed.py", CORRECT)
    write(tmp_path / "class" / "amy.py", SYNTAX)              # a learner's file, whatever it holds
    write(tmp_path / "class" / "bo" / "main.py", CORRECT)     # a learner's folder: the file defining the function
    write(tmp_path / "class" / "bo" / "extra" / "util.py", HELPER)
    write(tmp_path / "class" / "cy" / "a.py", CORRECT)        # two files define it: cannot tell which
    write(tmp_path / "class" / "cy" / "b.py", CORRECT)
    write(tmp_path / "class" / "di" / "tests" / "test_it.py", CORRECT)  # test files are not submissions
    write(tmp_path / "class" / ".git" / "hook.py", CORRECT)
    write(tmp_path / "class" / "conftest.py", CORRECT)
    write(tmp_path / "one" / "src" / "answer.py", AS_LIST)   # a folder holding one .py file is a learner's
    found = discovery.discover([str(tmp_path / "class"), str(tmp_path / "one"), str(tmp_path / "class" / "zed.py"),
                            str(tmp_path / "one" / "src" / "answer.py")], ["tied_lm_head"])
    got = {s.learner: str(s.path.relative_to(tmp_path)) if s.path else s.note for s in found}
    # a file given twice (directly and through its folder) is one learner, under the id found first
    assert got == {"amy": "class/amy.py", "bo": "class/bo/main.py", "zed": "class/zed.py",
                   "one": "one/src/answer.py",
                   "cy": f"several .py files in the learner's folder {tmp_path}/class/cy define tied_lm_head "
                         "(a.py, b.py)",
                   "di": f"no submission: the learner's folder {tmp_path}/class/di holds no .py or .ipynb file but files "
                         "named as tests (test_it.py), which are never graded as the submission"}
    assert [s.learner for s in found] == ["amy", "bo", "cy", "di", "zed", "one"]
    # di submitted nothing (kind "missing" in the gradebook); cy's files cannot be told apart ("import")
    assert [s.learner for s in found if s.missing] == ["di"]
    # a folder of tests only (a starter's tests/, or a solution named test_solution.py): nothing
    # submitted, and the note names the files passed over instead of saying there is none
    write(tmp_path / "class2" / "erin" / "test_solution.py", CORRECT)
    write(tmp_path / "class2" / "fay" / "solution.py", CORRECT)
    write(tmp_path / "class2" / "gus" / "solution.py", CORRECT)
    erin, _, _ = discovery.discover([str(tmp_path / "class2")], ["tied_lm_head"])
    assert erin.missing and erin.path is None and "named as tests (test_solution.py)" in erin.note, erin


def test_discover_disambiguates_repeated_ids(tmp_path):
    paths = [write(tmp_path / d / "x.py", CORRECT) for d in ("a", "b", "c")] + [write(tmp_path / "x-2.py", CORRECT)]
    found = discovery.discover([str(p) for p in paths], ["tied_lm_head"])
    assert [s.learner for s in found] == ["x", "x-3", "x-4", "x-2"]


def test_gradebook_drops_torn_lines(tmp_path):
    rows = [gradebook.Row("b", "b.py", False, 2.5, 10, ["shape", "dtype"], 1.25),
            gradebook.Row("a,1", "dir/a.py", True, 10, 10, [], 3)]
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, rows)
    with open(book, "a") as fh:
        fh.write('c,c.py,tr')  # a batch killed in the middle of a line
    assert gradebook.read_gradebook(book) == sorted(rows, key=lambda r: r.learner)
    assert book.read_text().splitlines()[:3] == [
        "learner,submission,passed,score,max_score,kinds,seconds,message",
        '"a,1",dir/a.py,true,10,10,,3.00,',
        "b,b.py,false,2.5,10,shape;dtype,1.25,"]
    # a gradebook written before the message column is still read (--resume, merge)
    book.write_text("learner,submission,passed,score,max_score,kinds,seconds\nb,b.py,false,2.5,10,shape,1.25\n")
    assert gradebook.read_gradebook(book) == [gradebook.Row("b", "b.py", False, 2.5, 10, ["shape"], 1.25)]


def test_report_json_round_trip():
    from grader.spec import find_problem, load_problem
    problem = load_problem(find_problem("tied_lm_head"))
    report = gradebook.placeholder_report(problem, "x.py", Failure(kind="crash", message="gone", details=["line"]), 1.5)
    assert gradebook.report_from_json(json.loads(json_report.render(report))).to_json() == report.to_json()


@pytest.fixture
def one_file(tmp_path) -> Path:
    return write(tmp_path / "a.py", CORRECT)


BAD_CALLS = [
    (["grade"], "the following arguments are required: PATH"),
    (["grade", "{tmp}/nowhere"], "does not exist"),
    (["grade", "{tmp}/notes.txt"], "is not a .py file"),
    (["grade", "{tmp}/used"], "holds no .py or .ipynb file; give submissions (.py files or .ipynb notebooks)"),
    (["grade", "{tmp}/a.py", "--jobs", "0"], "argument --jobs: '0' must be 1 or more"),
    (["grade", "{tmp}/a.py", "--shard", "3/2"], "I must be between 1 and N"),
    (["grade", "{tmp}/a.py", "--shard", "two"], "is not I/N"),
    (["grade", "{tmp}/a.py", "--hard-timeout", "0"], "must be greater than 0"),
    (["grade", "{tmp}/a.py", "--problem", "tied_lm_heda"], "unknown problem 'tied_lm_heda'"),
    (["grade", "{tmp}/a.py", "--deadline", "friday"], "--deadline 'friday' is not an ISO 8601 date and time"),
    (["grade", "{tmp}/a.py", "--starter", "{tmp}/nowhere.py"], "is not a file"),
    (["grade", "{tmp}/a.py", "--similarity", "nan"], "argument --similarity: 'nan' is not a share of 0 or more"),
    (["grade", "{tmp}/a.py", "--out", "{tmp}/notes.txt"], "is a file"),
    (["merge", "{tmp}"], "the following arguments are required: --out"),
    (["merge", "{tmp}/nowhere", "--out", "{tmp}/m"], "holds no gradebook.csv"),
    (["merge", "{tmp}/used", "--out", "{tmp}/m"], "is missing; finish that run"),
]


@pytest.mark.parametrize("argv,message", BAD_CALLS, ids=[" ".join(a) for a, _ in BAD_CALLS])
def test_bad_calls_exit_2_with_one_error_line(argv, message, tmp_path, one_file, capsys):
    write(tmp_path / "notes.txt", "not python")
    gradebook.write_gradebook(tmp_path / "used" / "gradebook.csv",
                          [gradebook.Row("gone", "gone.py", True, 1, 1, [], 1)])  # its report is missing
    try:
        code = cli.main([a.format(tmp=tmp_path) for a in argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("grader: error: ")]
    assert code == 2 and len(errors) == 1 and message in errors[0] and err.endswith(errors[0] + "\n"), err
    assert "Traceback" not in err


def test_a_class_whose_files_do_not_parse_gets_failed_rows(tmp_path):
    """Without --problem, a file with a syntax error still names its function (a tolerant scan),
    so the batch grades it as a failed ``import`` row instead of stopping with exit 2."""
    write(tmp_path / "class" / "bob" / "solution.py", "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix)\n"
          "    return hidden @ embedding_matrix.T\n")
    write(tmp_path / "class" / "carol" / "solution.py", "import numpy as np\n\ndef tied_lm_head(hidden\n")
    run = run_grader("grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--max-examples", "1")
    assert run.code == 1, run.stderr
    rows = gradebook.read_gradebook(tmp_path / "out" / "gradebook.csv")
    assert sorted((r.learner, r.passed, r.kinds) for r in rows) == [("bob", False, ["import"]), ("carol", False, ["import"])]


def test_a_broken_draft_beside_a_good_solution_does_not_hide_it(tmp_path):
    """A learner folder with a correct solution.py and an old draft that does not parse: the
    parsed file that defines the function is graded; the draft counts only when it is the one
    file that defines it."""
    write(tmp_path / "class" / "alice" / "solution.py", CORRECT)
    write(tmp_path / "class" / "alice" / "old_draft.py", "def tied_lm_head(hidden, embedding_matrix:\n    pass\n")
    write(tmp_path / "class" / "bob" / "notes.py", "X = 1\n")
    write(tmp_path / "class" / "bob" / "solution.py", "def tied_lm_head(hidden, embedding_matrix:\n    pass\n")
    run = run_grader("grade", str(tmp_path / "class"), "--problem", "tied_lm_head", "--out", str(tmp_path / "out"),
                     "--max-examples", "1")
    assert run.code == 1, run.stderr
    rows = {r.learner: r for r in gradebook.read_gradebook(tmp_path / "out" / "gradebook.csv")}
    assert rows["alice"].passed and rows["alice"].submission.endswith("solution.py")
    assert not rows["bob"].passed and rows["bob"].kinds == ["import"] and rows["bob"].submission.endswith("solution.py")


# -- discovery within a budget; one learner's fault is one row (in process, with a stand-in check) --

#: a stand-in for ``grader check``: writes a passing report for the file it is given (no case
#: is run), so that a batch of many learners takes a second; the batch around it is the real one
FAKE_CHECK = r'''
import sys
root = sys.argv.pop(1)
sys.path.insert(0, root)
args = sys.argv[1:]
from grader.batch import gradebook
from grader.reports import json_report
from grader.spec import find_problem, load_problem
problem = load_problem(find_problem(args[args.index("--problem") + 1]))
shown = next(a.split("=", 1)[1] for a in args if a.startswith("--shown="))
report = gradebook.placeholder_report(problem, shown, None, 0.0)
report.passed, report.score = True, problem.max_score
with open(args[args.index("--output") + 1], "w", encoding="utf-8") as fh:
    fh.write(json_report.render(report, audience="instructor"))
'''
#: a file under 1 MiB that defines the function (so discovery must parse it to know) and parses fast
JUNK = "def tied_lm_head(hidden, embedding_matrix):\n    return hidden\n\nJUNK = '" + "x" * ((1 << 20) - 200) + "'\n"


@pytest.fixture
def fake_checks(monkeypatch):
    """Checks are the stand-in (``FAKE_CHECK``); returns the list of learners whose check started, in order."""
    root = str(ROOT)
    monkeypatch.setattr(pool, "grader_command", lambda: [sys.executable, "-I", "-c", FAKE_CHECK, root])
    started: list[str] = []
    real = pool._Grader.start

    def start(self, sub):
        started.append(sub.learner)
        return real(self, sub)

    monkeypatch.setattr(pool._Grader, "start", start)
    return started


@pytest.fixture
def parses(monkeypatch):
    """Every parse of learner source in this process, in order: (file name, how many checks had started)."""
    from grader import submission
    seen: list[str] = []
    real = submission.parse_python

    def parse(source, filename="<unknown>"):
        seen.append(str(filename))
        return real(source, filename)

    monkeypatch.setattr(submission, "parse_python", parse)
    return seen


def big_class(root: Path) -> Path:
    """A class of two good learners after three whose folders are over the discovery budget:
    ``aaa_many`` (64 files of the function), ``aab_big`` (20 files of 1 MiB), ``aac_slow``
    (10 files whose parsing a test's clock makes slow)."""
    klass = root / "class"
    for i in range(64):
        write(klass / "aaa_many" / f"junk{i:02d}.py", JUNK[:4000] + "'\n")
    for i in range(20):
        write(klass / "aab_big" / f"junk{i:02d}.py", JUNK)
    for i in range(10):
        write(klass / "aac_slow" / f"junk{i:02d}.py", JUNK[:4000] + "'\n")
    write(klass / "bob" / "solution.py", CORRECT)
    write(klass / "bob" / "helper.py", HELPER)
    write(klass / "carl.py", CORRECT)
    return klass


def slow_clock(monkeypatch, parses: list[str], folder: str, step: float = 3.0) -> None:
    """``discovery._clock`` advances ``step`` seconds for each file of ``folder`` parsed so far."""
    monkeypatch.setattr(discovery, "_clock", lambda: step * sum(f"/{folder}/" in f for f in parses), raising=False)


def test_a_learners_folder_over_the_budget_costs_only_its_row(tmp_path, monkeypatch, fake_checks, parses, capsys):
    """Learners whose folders are over the discovery budget (too many files, too many bytes, too
    slow) come first: each is looked through within the budget (no file of a folder of 64 read;
    4 of 20 files of 1 MiB; 2 files of the slow one), and gets a row whose note says why, with
    the files considered; the good learners are graded. (Before: every file of every folder was
    parsed before the first check started.)"""
    klass = big_class(tmp_path)
    slow_clock(monkeypatch, parses, "aac_slow")
    out = tmp_path / "out"
    code = cli.main(["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "1", *FAST])
    assert code == 1, capsys.readouterr().err
    of = lambda name: [f for f in parses if f"/{name}/" in f]  # noqa: E731
    assert (len(of("aaa_many")), len(of("aab_big")), len(of("aac_slow"))) == (0, 4, 2), parses
    assert fake_checks == ["bob", "carl"]  # one job: bob's check started after the three were looked through
    # bob's solution.py: parsed by the discovery, then once more for similarity.html (the modules
    # its check takes along are compared too: round sixteen); helper.py names no function: never parsed
    assert [f.rsplit("/", 1)[-1] for f in of("bob")] == ["solution.py", "solution.py"] and not of("carl")
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["bob"].passed and rows["carl"].passed and rows["bob"].submission.endswith("bob/solution.py")
    budget = discovery.DISCOVERY_BUDGET.describe()
    for name, why in (("aaa_many", "it holds more than 32 .py files"), ("aab_big", "hold more than 4 MiB"),
                      ("aac_slow", "took more than 5 s")):
        row = rows[name]
        assert (row.passed, row.kinds) == (False, ["import"]) and row.submission.endswith(name)
        assert "stopped looking for the submission" in row.message and why in row.message, row.message
        assert "considered: junk00.py, junk01.py" in row.message, row.message
        failure = json.loads(gradebook.report_path(out, name).read_text())["failure"]
        assert why in failure["message"] and budget in failure["message"], failure["message"]
        assert "submit only the file that defines tied_lm_head" in failure["message"]
    assert "junk03.py" in rows["aab_big"].message and "junk04.py" not in rows["aab_big"].message


def test_choosing_the_problem_by_votes_stays_within_the_budget(tmp_path, monkeypatch, parses):
    """Without --problem (three problems known), the votes read each learner's file within the
    same budget: no file of the folder of 64 is parsed, 4 of the big one, 2 of the slow one."""
    klass = big_class(tmp_path)
    slow_clock(monkeypatch, parses, "aac_slow")
    for name in ("dan", "eve", "fay"):
        write(klass / f"{name}.py", CORRECT)
    args = cli.build_parser().parse_args(["grade", str(klass)])
    assert pool._problem(args).id == "tied_lm_head"
    of = lambda name: [f for f in parses if f"/{name}/" in f]  # noqa: E731
    assert (len(of("aaa_many")), len(of("aab_big")), len(of("aac_slow"))) == (0, 4, 2), parses
    # bob, carl, dan, eve: four votes against none; fay's file is not read (nothing could change)
    assert not [f for f in parses if f.endswith("fay.py")]


def test_one_learners_failure_in_the_batch_costs_only_their_row(tmp_path, monkeypatch, fake_checks, capsys):
    """With --jobs 2, an exception while choosing a learner's file, starting their check or
    reading its outcome: that learner's row says so (kind crash), the others are graded, and
    every output is written. (Before: the exception ended the batch, exit 2, no summary.md.)"""
    klass = tmp_path / "class"
    for name in ("ann", "ben", "cat", "dov"):
        write(klass / f"{name}.py", CORRECT)
    write(klass / "eli" / "solution.py", CORRECT)
    write(klass / "eli" / "notes.py", HELPER)
    real_start, real_finish = pool._Grader.start, pool._Grader.finish
    real_choose = getattr(pool, "choose", lambda sub, *args, **kwargs: sub)

    def start(self, sub):
        if sub.learner == "cat":
            raise OSError(24, "Too many open files")
        return real_start(self, sub)

    def finish(self, job):
        if job.sub.learner == "ben":
            raise RuntimeError("the report vanished")
        return real_finish(self, job)

    def choose(sub, *args, **kwargs):
        if sub.learner == "eli":
            raise MemoryError("folder too odd")
        return real_choose(sub, *args, **kwargs)

    monkeypatch.setattr(pool._Grader, "start", start)
    monkeypatch.setattr(pool._Grader, "finish", finish)
    monkeypatch.setattr(pool, "choose", choose, raising=False)
    out = tmp_path / "out"
    code = cli.main(["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "2", *FAST])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["ann"].passed and rows["dov"].passed
    for name, what in (("ben", "RuntimeError: the report vanished"), ("cat", "Too many open files"),
                       ("eli", "MemoryError: folder too odd")):
        assert rows[name].kinds == ["crash"] and what in rows[name].message, rows[name].message
    assert all((out / f).is_file() for f in ("summary.md", "junit.xml", "summary.html"))
    assert len(list((out / "feedback").glob("*.txt"))) == 5
    assert "graded 5 submissions: 2 passed, 3 failed (3 could not be graded)" in captured.out


def test_a_regrade_starts_the_longest_checks_of_the_last_run_first(tmp_path, fake_checks, capsys):
    """Graded again into the same --out, learners start in the order of the last run's check
    times, longest first (a learner new since then counts as the median: 5 s here, after bob's
    9 s and, keeping the folder's order among equals, after carl's 5 s); the gradebook is sorted
    by learner all the same. A first run keeps the folder's order. (Before: always the folder's
    order, so a learner whose code loops until --timeout could start last and end the batch
    alone: issue 33's grade of 50 learners.)"""
    klass = tmp_path / "class"
    for name in ("ann", "bob", "carl", "dave"):
        write(klass / f"{name}.py", CORRECT)
    out = tmp_path / "out"
    argv = ["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "1", *FAST]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert fake_checks == ["ann", "bob", "carl", "dave"]
    last = [gradebook.Row(learner=name, submission=f"{name}.py", passed=True, score=10, max_score=10, kinds=[],
                          seconds=seconds, message="") for name, seconds in (("ann", 1.0), ("bob", 9.0), ("carl", 5.0))]
    gradebook.write_gradebook(out / "gradebook.csv", last)
    fake_checks.clear()
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert fake_checks == ["bob", "carl", "dave", "ann"]
    assert [r.learner for r in gradebook.read_gradebook(out / "gradebook.csv")] == ["ann", "bob", "carl", "dave"]


def test_a_first_run_starts_the_jax_and_torch_files_first(tmp_path):
    """Without a last run's times the JAX and PyTorch files start first (their children start
    slower: 1.5 s against 0.3 s for a NumPy check of tied_lm_head), the others keeping the
    folder's order (test_a_regrade_starts_the_longest_checks_of_the_last_run_first grades a
    NumPy class in it). A link is not followed to guess (fay's links to a JAX file), and a
    learner without a file counts as NumPy."""
    from grader.batch.history import cost_guess, longest_first
    klass = tmp_path / "class"
    jax_code = "import jax.numpy as jnp\n\ndef tied_lm_head(h, e):\n    return jnp.einsum('...d,vd->...v', h, e)\n"
    torch_code = "import torch\n\ndef tied_lm_head(h, e):\n    return h @ e.T\n"
    for name, code in (("ann", CORRECT), ("bob", jax_code), ("carl", CORRECT), ("dora", torch_code), ("eve", CORRECT)):
        write(klass / f"{name}.py", code)
    write(tmp_path / "elsewhere.py", jax_code)
    (klass / "fay.py").symlink_to(tmp_path / "elsewhere.py")
    paths = {p.stem: p for p in klass.iterdir()} | {"gus": None}
    learners = ["ann", "bob", "carl", "dora", "eve", "fay", "gus"]
    order = longest_first(learners, tmp_path / "out", (), lambda name: cost_guess(paths[name]))
    assert order == ["bob", "dora", "ann", "carl", "eve", "fay", "gus"]
    assert longest_first(learners, tmp_path / "out") == learners     # no guess: the folder's order


def test_a_first_run_starts_a_file_that_may_loop_until_its_time_limit_first(tmp_path):
    """An endless loop runs until the call's time limit (10 s); started last (the 49th of 50), it
    ran alone for those 10 s at the end of a first grade with two jobs. A ``while True:`` loop
    now counts as the longest guess, before JAX; ``while x:`` or a loop in a string does not."""
    from grader.batch.history import cost_guess, has_open_loop, longest_first
    klass = tmp_path / "class"
    jax_code = "import jax.numpy as jnp\n\ndef tied_lm_head(h, e):\n    return h @ e.T\n"
    files = {"ann": CORRECT, "bob": jax_code, "cy": (ROOT / "submissions" / "wrong_timeout_loop.py").read_text(),
             "di": CORRECT.replace("return", "while 1:\n        break\n    return"),
             "ed": CORRECT + "\nDOC = 'while True: pass'\n", "flo": "def f(:\n    while True: pass\n"}
    for name, code in files.items():
        write(klass / f"{name}.py", code)
    paths = {name: klass / f"{name}.py" for name in files}
    assert [has_open_loop(paths[n].read_bytes()) for n in files] == [False, False, True, True, False, False]
    order = longest_first(list(files), tmp_path / "out", (), lambda name: cost_guess(paths[name]))
    assert order == ["cy", "di", "bob", "ann", "ed", "flo"]


def test_each_learners_feedback_is_written_as_their_check_ends(tmp_path, fake_checks, monkeypatch, capsys):
    """Feedback files are written as each check ends, while the next ones run, and not again at
    the end (the 50-learner grade spent its last 3.8 s writing all of them after the last check:
    issue 33); the index and every file are there all the same."""
    from grader.batch import outputs
    klass = tmp_path / "class"
    for name in ("ann", "bob", "cat"):
        write(klass / f"{name}.py", CORRECT)
    calls: list[tuple[str, int]] = []
    real = outputs.write_feedback

    def spy(out, learner, report):
        calls.append((learner, len(fake_checks)))
        return real(out, learner, report)

    monkeypatch.setattr(outputs, "write_feedback", spy)
    monkeypatch.setattr(pool, "write_feedback", spy)
    out = tmp_path / "out"
    assert cli.main(["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "1", *FAST]) == 0, \
        capsys.readouterr().err
    assert calls == [("ann", 1), ("bob", 2), ("cat", 3)]   # each before the next check started; once each
    index = (out / "feedback" / "index.csv").read_text().splitlines()
    assert len(index) == 4 and all((out / "feedback" / line.split(",")[2]).is_file() for line in index[1:])


def test_a_check_that_cannot_start_for_want_of_processes_waits_instead_of_failing(tmp_path, monkeypatch,
                                                                                 fake_checks, capsys):
    """Attack round 57: one learner's threads held the user's free processes, and the correct
    files started meanwhile got "crash 0/10" rows (the fork's BlockingIOError). A check that
    cannot start for want of processes or memory starts again once another ends (or after a
    pause); only one that never can gets the could-not-be-graded row."""
    klass = tmp_path / "class"
    for name in ("ann", "bob", "cat"):
        write(klass / f"{name}.py", CORRECT)
    real_start, real_finish = pool._Grader.start, pool._Grader.finish
    refused = {"bob": 2, "cat": 99}
    events: list[tuple[str, str]] = []

    def start(self, sub):
        events.append(("start", sub.learner))
        if refused.get(sub.learner, 0) > 0:
            refused[sub.learner] -= 1
            events.append(("refused", sub.learner))
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_start(self, sub)

    def finish(self, job):
        events.append(("end", job.sub.learner))
        return real_finish(self, job)

    monkeypatch.setattr(pool._Grader, "start", start)
    monkeypatch.setattr(pool._Grader, "finish", finish)
    monkeypatch.setattr(pool, "RETRY_PAUSE", 0.01)
    out = tmp_path / "out"
    code = cli.main(["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "2", *FAST])
    assert code == 1, capsys.readouterr().err
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["ann"].passed and rows["bob"].passed, rows["bob"].message
    assert rows["cat"].kinds == ["crash"] and "Resource temporarily unavailable" in rows["cat"].message
    assert refused["cat"] == 99 - 1 - pool.START_RETRIES     # tried once and START_RETRIES times again
    # bob, refused while ann's check ran, was tried again only once it had ended (round 58: six
    # tries in 0.3 s while the learner holding the processes held them for 30 s)
    first = events.index(("refused", "bob"))
    again = events.index(("start", "bob"), first)
    assert ("end", "ann") in events[first:again], events


def test_a_check_whose_submission_process_could_not_start_is_graded_again(tmp_path, monkeypatch, capsys):
    """Attack round 58's class: a check that started while another learner's threads held the
    user's processes could not start its submission's process; that was a crash verdict for an
    innocent file. The check tries again, then exits 2 saying the machine has no process left
    (no verdict); ``grader grade`` grades that learner again after another check ends."""
    from grader import runner
    real = runner.subprocess.Popen
    refused = {"n": 0}

    def popen(argv, *args, **kwargs):
        if any(str(a).endswith("_child.py") for a in argv) and refused["n"] < runner.SPAWN_RETRIES + 1:
            refused["n"] += 1          # every try of the first check: its process never starts
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    monkeypatch.setattr(runner, "SPAWN_PAUSE", 0.01)
    code = cli.main(["check", str(SUBMISSIONS / "correct_numpy.py"), *FAST])
    err = capsys.readouterr().err
    assert code == 2 and runner.RESOURCES_SPENT in err and err.count("\n") == 1, err
    # one refusal, then the process starts: the check passes as if nothing happened
    refused["n"] = runner.SPAWN_RETRIES
    assert cli.main(["check", str(SUBMISSIONS / "correct_numpy.py"), *FAST]) == 0
    assert refused["n"] == runner.SPAWN_RETRIES + 1


#: the stand-in check, which says the machine's processes are spent (exit 2) the first time it
#: checks a learner whose name starts with "spent", and passes every check after
SPENT_CHECK = r"""
import os, sys
shown = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--shown="))
marker = sys.argv[-1]
if os.path.basename(shown).startswith("spent") and not os.path.exists(marker):
    open(marker, "w").close()
    sys.stderr.write("grader: error: RESOURCES to start the submission's process (EAGAIN)\n")
    sys.stderr.flush()
    if "pthread_create" in "RESOURCES":   # XLA's own abort in the grader's process (round 60)
        os.abort()
    sys.exit(2)
sys.argv.pop()
exec(compile(FAKE, "fake", "exec"))
"""


@pytest.mark.parametrize("said", ["RESOURCES", "RuntimeError: can't start new thread",
                                  "Check failed: ret == 0 (11 vs. 0) Thread creation via pthread_create() failed"])
def test_grade_grades_a_learner_again_whose_check_found_no_process_left(tmp_path, monkeypatch, capsys, said):
    """The batch's side of the test above: a check that exits 2 saying the machine has no process
    left (or that it could not start a thread of its own: round 58) is that learner's check
    started again after another ends, not a could-not-be-graded row."""
    from grader import runner
    klass = tmp_path / "class"
    for name in ("ann", "spent_bob"):
        write(klass / f"{name}.py", CORRECT)
    marker = str(tmp_path / "refused-once")
    script = SPENT_CHECK.replace("RESOURCES", said.replace("RESOURCES", runner.RESOURCES_SPENT)).replace(
        "exec(compile(FAKE,", "exec(compile(" + repr(FAKE_CHECK) + ",")
    monkeypatch.setattr(pool, "grader_command", lambda: [sys.executable, "-I", "-c", script, str(ROOT)])
    monkeypatch.setattr(pool, "check_flags", lambda *a, **k: ["--problem", "tied_lm_head", marker])
    out = tmp_path / "out"
    code = cli.main(["grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "2", *FAST])
    assert code == 0, capsys.readouterr().err
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["ann"].passed and rows["spent_bob"].passed and os.path.exists(marker)
