"""Assignments: several problems from one learner file (grader/assignment.py), their combined
report in every format, and a class graded with ``grader grade --assignment``.

The combining and the formats are tested in process on hand-made reports; one class of six
(NumPy files and notebooks) goes through ``grader grade`` for the gradebook, the feedback pages
and summary.html, which is opened in headless Chromium.
"""
from __future__ import annotations

import csv
import dataclasses
import html
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.assignment import Assignment, Part, combine, load_assignment
from grader.batch.gradebook import Row, read_gradebook, write_gradebook
from grader.errors import GraderError, SpecError
from grader.reports import github, gradescope, json_report, junit, text
from grader.results import SHRUNK_PREFIX, ArrayInfo, CaseResult, Failure, Frame, GroupScore, Report
from grader.spec import find_problem, load_problem

from .conftest import ROOT, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

LESSON = ROOT / "problems" / "assignments" / "lesson1.yaml"


def _problem(pid):
    return load_problem(find_problem(pid))


def _report(pid, cases, groups, failure=None, line=5):
    """A report of one problem as grading makes it: ``groups`` of (name, points, passed, total)."""
    from grader.grading import apportion
    gs = [GroupScore(group=n, points=p, earned=0.0, passed=k, total=t) for n, p, k, t in groups]
    for g, e in zip(gs, apportion([g.points * g.passed / g.total if g.total and not failure else 0.0 for g in gs])):
        g.earned = e
    return Report(problem=pid, title=pid, submission="hw.py", passed=failure is None and all(c.status == "passed" for c in cases),
                  score=round(sum(g.earned for g in gs), 4), max_score=float(sum(p for _, p, _, _ in groups)),
                  failure=failure, cases=cases, groups=gs, summary=[], output={"stdout": "", "stderr": ""},
                  environment={"framework": "numpy", "dtypes": ["float32"], "function_line": line,
                               "cases_digest": pid + "-digest"})


def _case(name, group, ok=True, kind="tolerance", hidden=False):
    return CaseResult(name=name, group=group, status="passed" if ok else "failed", dtype="float32", rank=2,
                      inputs={"x": ArrayInfo(shape=(2, 3), dtype="float32")}, visibility="hidden" if hidden else "visible",
                      failure=None if ok else Failure(kind=kind, message=f"{name} is off by 3 ULP", hint=f"fix {name}"))


def _assignment(*parts):
    return Assignment(id="hw1", title="Homework 1", path=LESSON,
                      parts=tuple(Part(problem=_problem(pid), points=pts, visibility=vis) for pid, pts, vis in parts))


def test_the_bundled_assignment_loads_its_three_problems():
    a = load_assignment("lesson1")
    assert [p.problem.id for p in a.parts] == ["embedding_lookup", "masked_mean_pool", "tied_lm_head"]
    assert a.max_score == 10 and a.functions == ["embedding_lookup", "masked_mean_pool", "tied_lm_head"]
    assert load_assignment(str(LESSON)).parts == a.parts        # by path as well as by name
    # the groups a placeholder report gets are the problems' groups scaled to the assignment's points
    assert sum(g.points for g in a.groups.values()) == pytest.approx(10)
    assert "tied_lm_head/generated" in a.groups


@pytest.mark.parametrize("body, says", [
    ("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, pints: 3}\n", "problems[0]"),
    ("id: hw\ntitle: T\nproblems:\n  - {problem: sofmax, points: 3}\n", "unknown problem 'sofmax'"),
    ("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, points: 3}\n  - {problem: softmax, points: 1}\n",
     "named twice"),
    ("id: hw\ntitle: T\nproblems: []\n", "problems"),
    ("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, points: .nan}\n", "points must be a finite number"),
    ("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, points: .inf}\n", "points must be a finite number"),
    ("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, points: 0}\n", "every problem is worth 0 points"),
])
def test_a_bad_assignment_names_the_field_and_line(tmp_path, body, says):
    path = tmp_path / "hw.yaml"
    path.write_text(body)
    with pytest.raises(SpecError) as err:
        load_assignment(str(path))
    assert says in str(err.value) and str(path) in str(err.value)


def test_an_unknown_assignment_lists_the_known_ones():
    with pytest.raises(GraderError, match="lesson1"):
        load_assignment("lesson2")


def test_a_full_group_of_scaled_points_passes_in_gradescope():
    """0.3 x 4 points was 1.2000000000000002, of which 1.2 earned: Gradescope showed the full
    group as failed."""
    a = _assignment(("softmax", 4, "visible"), ("gelu", 6, "visible"))
    assert 3 * (4 / 10) == 1.2000000000000002
    soft = _report("softmax", [_case(f"c{i}", "values") for i in range(12)] + [_case("o", "other")],
                   [("values", 3, 12, 12), ("other", 7, 1, 1)])
    r = combine(a, "hw.py", [soft, _report("gelu", [_case("g", "g")], [("g", 1, 1, 1)])])
    tests = {t["name"]: t for t in gradescope.results(r)["tests"]}
    assert tests["softmax/values"]["status"] == "passed"
    from grader.reports.common import GroupView
    assert GroupView(group="g", points=1.2000000000000002, earned=1.2, passed=3, total=3, hidden=False,
                     failing=[], tallies=[]).ok


def test_combine_scales_each_problem_to_its_points_and_rounds_once():
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "visible"))
    soft = _report("softmax", [_case("a", "basic"), _case("b", "basic", ok=False), _case("c", "more")],
                   [("basic", 2, 1, 2), ("more", 1, 1, 1)])
    gelu = _report("gelu", [_case("a", "g"), _case("b", "g"), _case("c", "g", ok=False)], [("g", 1, 2, 3)], line=12)
    r = combine(a, "hw.py", [soft, gelu])
    # softmax: 2/3 of 3 points = 2; gelu: 2/3 of 7 points
    assert r.score == round(2 + 14 / 3, 4) and r.max_score == 10 and not r.passed
    assert sum(g.earned for g in r.groups) == pytest.approx(r.score, abs=1e-12)   # apportioned, not each rounded
    assert [g.group for g in r.groups] == ["softmax/basic", "softmax/more", "gelu/g"]
    assert [g.points for g in r.groups] == [2, 1, 7]
    assert [c.name for c in r.cases][:2] == ["softmax/a", "softmax/b"] and r.cases[3].group == "gelu/g"
    parts = r.environment["assignment"]["problems"]
    assert [(p["problem"], p["score"], p["points"]) for p in parts] == [("softmax", 2.0, 3.0), ("gelu", 4.6667, 7.0)]
    assert [p["function_line"] for p in parts] == [5, 12] and "cases_digest" not in r.environment
    assert Report.from_json(r.to_json()) == r     # stored and read back by grader grade


def test_a_missing_function_fails_its_problem_only():
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "visible"))
    soft = _report("softmax", [_case("a", "basic")], [("basic", 3, 1, 1)])
    missing = Failure(kind="import", message="the submission defines no function 'gelu' (it defines: softmax)")
    gelu = _report("gelu", [], [("g", 1, 0, 0)], failure=missing)
    r = combine(a, "hw.py", [soft, gelu])
    assert r.failure is None and r.score == 3 and not r.passed
    lost = [c for c in r.cases if c.name == "gelu"]
    assert len(lost) == 1 and lost[0].failure.kind == "import" and lost[0].status == "error"
    assert [(g.group, g.points, g.earned) for g in r.groups][-1] == ("gelu", 7, 0)
    lines = text.render(r)
    assert "FAIL gelu: 0 / 7  import: the submission defines no function 'gelu'" in lines
    assert "PASS softmax: 3 / 3" in lines


def test_a_file_that_does_not_import_fails_the_whole_assignment_once():
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "visible"))
    broken = Failure(kind="import", message="SyntaxError: expected ':' (hw.py:1)", hint="fix the syntax error")
    r = combine(a, "hw.py", [_report("softmax", [], [("basic", 3, 0, 0)], failure=broken),
                             _report("gelu", [], [("g", 1, 0, 0)], failure=broken)])
    assert r.failure == broken and r.cases == [] and r.score == 0
    assert [g.group for g in r.groups] == ["softmax/basic", "gelu/g"]
    assert text.render(r).count("SyntaxError") == 1


def test_a_hidden_problem_is_concealed_from_learners_and_shrunk_cases_keep_their_prefix():
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "hidden"))
    shrunk = _case(SHRUNK_PREFIX + "gen001", "shrunk", ok=False)
    shrunk.shrunk = True
    soft = _report("softmax", [_case("gen001", "basic", ok=False), shrunk], [("basic", 3, 0, 1)])
    gelu = _report("gelu", [_case("secret_case", "g", ok=False)], [("g", 1, 0, 1)])
    r = combine(a, "hw.py", [soft, gelu])
    small = next(c for c in r.cases if c.shrunk)
    assert small.name == "shrunk:softmax/gen001" and small.group == "shrunk"
    assert [c.visibility for c in r.cases if c.name.startswith("gelu/")] == ["hidden"]
    learner = json_report.to_dict(r, audience="learner")
    assert "secret_case" not in json.dumps(learner)
    assert "secret_case" in json.dumps(json_report.to_dict(r, audience="instructor"))


def test_a_hidden_problems_run_keeps_no_jax_compilation(monkeypatch):
    """A hidden part's cases are concealed in combine(), after its run: the run itself must keep
    no JAX compilation, which can carry the inputs it saw and which a later run can read (an
    attack read the secret-seeded hidden inputs back at import, from the shared cache)."""
    import grader.check
    from grader.assignment import check_assignment
    from grader.options import CheckOptions
    seen = {}

    def fake(submission, problem, opts):
        seen[problem.id] = opts.jax_cache
        yield
        return _report(problem.id, [_case("c", "g")], [("g", 1, 1, 1)])

    monkeypatch.setattr(grader.check, "check_steps", fake)
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "hidden"))
    opts = CheckOptions(jax_cache=None)
    check_assignment("hw.py", a, opts)
    assert seen == {"softmax": None, "gelu": ""} and opts.jax_cache is None  # the caller's options untouched


def test_every_format_groups_the_tests_by_problem():
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "visible"))
    soft = _report("softmax", [_case("a", "basic", ok=False)], [("basic", 3, 0, 1)], line=4)
    gelu = _report("gelu", [_case("a", "g", ok=False)], [("g", 7, 0, 1)], line=9)
    r = combine(a, "hw.py", [soft, gelu])

    suite = ET.fromstring(junit.render(r))
    cases = {(tc.get("classname"), tc.get("name"), tc.get("line")) for tc in suite.iter("testcase")}
    assert ("softmax/basic", "softmax/a", "4") in cases and ("gelu/g", "gelu/a", "9") in cases
    assert any("— hint: fix a" in f.get("message") for f in suite.iter("failure"))    # the hint is in message=

    results = gradescope.results(r)
    names = [t["name"] for t in results["tests"]]
    assert len(names) == 2 and "softmax/basic" in names[0] and "gelu/g" in names[1], names
    assert sum(t["max_score"] for t in results["tests"]) == 10

    # two problems failing alike are two annotations, each at its own function
    errors = [line for line in github.render(r).splitlines() if line.startswith("::error")]
    assert len(errors) == 2 and {e.split("line=")[1].split(",")[0] for e in errors} == {"4", "9"}

    lines = text.render(r)
    assert "softmax/basic 0/3" in lines and "gelu/g 0/7" in lines
    # titles name the problem; the properties are JSON a tool can parse
    assert {e.split("title=")[1].split("::")[0].replace("%3A", ":") for e in errors} == {"softmax: tolerance: 1 case failed",
                                                                    "gelu: tolerance: 1 case failed"}
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert [x["problem"] for x in json.loads(props["assignment.problems"])] == ["softmax", "gelu"]


def test_a_hidden_problems_counts_and_an_import_failure_point_at_their_own_lines():
    """The learner's annotation of a hidden problem's counts once sat on the first problem's
    ``def``; an import failure on a ``def`` instead of the import that raised."""
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "hidden"))
    soft = _report("softmax", [_case("a", "basic")], [("basic", 3, 1, 1)], line=4)
    gelu = _report("gelu", [_case("a", "g", ok=False, hidden=True)], [("g", 7, 0, 1)], line=9)
    r = combine(a, "hw.py", [soft, gelu])
    hidden = [l for l in github.render(r, audience="learner").splitlines() if "hidden cases failed" in l]
    assert hidden and all("line=9," in l for l in hidden)
    tally = next(tc for tc in ET.fromstring(junit.render(r, audience="learner")).iter("testcase")
                 if tc.get("classname") == "gelu/g")
    assert tally.get("line") == "9"
    broken = Failure(kind="import", message="ModuleNotFoundError: No module named 'nump'",
                     frames=[Frame(ref="submission", file="hw.py", line=2, function="<module>", code="import nump")],
                     exception="ModuleNotFoundError: No module named 'nump'")
    both = combine(a, "hw.py", [_report("softmax", [], [("basic", 3, 0, 0)], failure=broken, line=4),
                                _report("gelu", [], [("g", 7, 0, 0)], failure=broken, line=9)])
    assert both.failure is not None
    first = next(l for l in github.render(both).splitlines() if l.startswith("::error"))
    assert "line=2," in first


def test_the_gradebook_has_a_column_per_problem_and_reads_back(tmp_path):
    book = tmp_path / "gradebook.csv"
    rows = [Row(learner="bob", submission="bob.py", passed=False, score=3.5, max_score=10, kinds=["import"],
                seconds=1.0, message="m", problems={"softmax": 3.5, "gelu": 0.0}),
            Row(learner="amy", submission="amy.py", passed=True, score=10, max_score=10, kinds=[], seconds=2.0,
                message="ok", problems={"softmax": 3, "gelu": 7})]
    write_gradebook(book, rows, ["softmax", "gelu"])
    table = list(csv.reader(book.open()))
    assert table[0][-2:] == ["softmax", "gelu"] and table[1][0] == "amy" and table[1][-2:] == ["3", "7"]
    assert [r.problems for r in read_gradebook(book)] == [{"softmax": 3, "gelu": 7}, {"softmax": 3.5, "gelu": 0}]
    # a problem id that is a gradebook column already gets a prefix
    write_gradebook(book, [Row(learner="x", submission="x.py", passed=True, score=1, max_score=1, kinds=[],
                               seconds=0, problems={"score": 1})])
    assert next(csv.reader(book.open()))[-1] == "problem:score"
    assert read_gradebook(book)[0].problems == {"score": 1}


def test_check_refuses_an_assignment_with_problem_or_case_in_one_line(tmp_path):
    f = tmp_path / "hw.py"
    f.write_text("def softmax(x):\n    return x\n")
    for extra in (["--problem", "softmax"], ["--case", "a"]):
        run = run_grader("check", str(f), "--assignment", "lesson1", *extra)
        assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: hw\ntitle: T\nproblems:\n  - {problem: softmax, pionts: 3}\n")
    run = run_grader("check", str(f), "--assignment", str(bad))
    assert run.code == 2 and "pionts" in run.stderr and "bad.yaml:4" in run.stderr and "Traceback" not in run.stderr


def _notebook(path: Path, source: str) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson 1"), nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, str(path))


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of six graded with ``grader grade --assignment lesson1``: the output folder."""
    subs = ROOT / "submissions"
    correct = "\n\n".join((subs / p / "correct_numpy.py").read_text()
                          for p in ("embedding_lookup", "masked_mean_pool")) + "\n\n" + \
        (subs / "correct_numpy.py").read_text()
    no_head = "\n\n".join((subs / p / "correct_numpy.py").read_text() for p in ("embedding_lookup", "masked_mean_pool"))
    wrong_pool = correct.replace("np.maximum(count, 1)", "count")
    klass = tmp_path_factory.mktemp("class")
    (klass / "alice.py").write_text(correct)
    _notebook(klass / "carol.ipynb", correct)
    (klass / "bob.py").write_text(no_head)                                   # tied_lm_head missing
    (klass / "dan").mkdir()
    _notebook(klass / "dan" / "lesson1.ipynb", wrong_pool)                    # 0/0 where no token is valid
    (klass / "erin.py").write_text("def embedding_lookup(token_ids, embedding_matrix)\n    return 1\n")
    (klass / "fay").mkdir()
    (klass / "fay" / "notes.txt").write_text("nothing here")
    out = tmp_path_factory.mktemp("out") / "grades"
    run = run_grader("grade", str(klass), "--assignment", "lesson1", "--out", str(out), "--jobs", "2",
                     timeout=900)
    assert run.code == 1, run.stderr
    return out


def test_a_class_gradebook_has_a_column_per_problem_and_the_total(graded_class):
    rows = {r["learner"]: r for r in csv.DictReader((graded_class / "gradebook.csv").open())}
    assert list(rows) == ["alice", "bob", "carol", "dan", "erin", "fay"]
    cols = ("score", "embedding_lookup", "masked_mean_pool", "tied_lm_head")
    got = {name: tuple(float(row[c]) for c in cols) for name, row in rows.items()}
    assert got["alice"] == got["carol"] == (10, 3, 3, 4)                    # a .py file and a notebook alike
    assert got["bob"] == (6, 3, 3, 0) and "tied_lm_head 0/4: import: the submission defines no function" in rows["bob"]["message"]
    assert got["dan"][1] == 3 and got["dan"][3] == 4 and got["dan"][2] < 3  # only the pool loses points
    assert got["erin"] == (0, 0, 0, 0) and rows["erin"]["kinds"] == "import"
    assert got["fay"] == (0, 0, 0, 0)                                        # no file at all
    for name, row in rows.items():
        assert float(row["score"]) == pytest.approx(sum(float(row[c]) for c in cols[1:]), abs=1e-3), name


def test_each_learner_has_a_feedback_page_and_summary_html_a_learner_table(graded_class):
    from grader.batch.gradebook import feedback_html_name
    page = (graded_class / "feedback" / feedback_html_name("bob")).read_text()
    assert "defines no function 'tied_lm_head'" in html.unescape(page) and "<script" not in page
    assert "Content-Security-Policy" in page
    # the feedback names dan's notebook as dan has it, not by the instructor's class folder
    from grader.batch.gradebook import feedback_name
    dan = (graded_class / "feedback" / feedback_name("dan")).read_text()
    assert "grader check lesson1.ipynb --problem masked_mean_pool" in dan and "/dan/" not in dan
    assert "docs/" not in dan and "--format json" not in dan   # nothing the learner does not have
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (.ci/run installs it)")
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          (graded_class / "summary.html").as_uri()], capture_output=True, text=True, timeout=120).stdout
    table = ET.fromstring(dom[dom.index('<table class="sortable grid" id="learners"'):dom.index("</table>", dom.index('id="learners"')) + 8])
    head = [th.text for th in table.iter("th")]
    assert head[:5] == ["Learner", "Score", "embedding_lookup", "masked_mean_pool", "tied_lm_head"]
    assert all(th.get("title") == "sort" for th in table.iter("th"))   # its script ran: the CSP allows it by hash
    body = [[("".join(td.itertext())) for td in tr.iter("td")] for tr in table.iter("tr")][1:]
    assert [r[0] for r in body] == ["alice", "bob", "carol", "dan", "erin", "fay"]
    assert body[1][1:5] == ["6 / 10", "3", "3", "0"]
    links = [a.get("href") for a in table.iter("a")]
    assert f"feedback/{feedback_html_name('bob')}" in links
    assert all((graded_class / href.partition("#")[0]).is_file() for href in links)
    # a problem's cell links to that problem's first group in the learner's feedback page
    cell = next(h for h in links if h.startswith(f"feedback/{feedback_html_name('bob')}#"))
    assert f'id="{cell.partition("#")[2]}"' in (graded_class / cell.partition("#")[0]).read_text()
    assert "group-embedding_lookup-" in cell


def test_a_class_reports_group_by_problem(graded_class):
    from grader.batch.gradebook import load_report, report_path
    bob = load_report(report_path(graded_class, "bob"))
    assert bob.problem == "lesson1" and bob.environment["assignment"]["id"] == "lesson1"
    suites = ET.parse(graded_class / "junit.xml").getroot()
    classnames = {tc.get("classname") for tc in suites.iter("testcase")}
    assert {"bob.tied_lm_head", "bob.embedding_lookup/examples", "alice.masked_mean_pool/masks"} <= classnames


def test_parts_with_hidden_cases_run_last_and_learners_get_no_part_digest(monkeypatch):
    """Round four, class 3 (a third attacker's pass): an assignment checked its parts in order, so
    a visible part after a hidden one timed the hidden calls (20-23 s of sleeps between two
    visible parts' timestamps); parts with nothing hidden run first and hidden parts last, the
    report in the assignment's order. And each part's cases_digest (a hidden part's hashes its
    inputs) was in the learner's environment.assignment.problems."""
    from grader import assignment as amod
    from grader import check as cmod
    ran = []

    def fake(submission, problem, opts):
        ran.append(problem.id)
        yield
        return _report(problem.id, [_case(f"{problem.id}/c", "examples")], [("examples", 1, 1, 1)])

    monkeypatch.setattr(cmod, "check_steps", fake)
    a = _assignment(("embedding_lookup", 3, "visible"), ("tied_lm_head", 4, "hidden"), ("masked_mean_pool", 3, "visible"))
    from grader.options import CheckOptions
    report = amod.check_assignment("hw.py", a, CheckOptions())
    assert ran == ["embedding_lookup", "masked_mean_pool", "tied_lm_head"]
    parts = report.environment["assignment"]["problems"]
    assert [p["problem"] for p in parts] == ["embedding_lookup", "tied_lm_head", "masked_mean_pool"]
    assert all(p.get("cases_digest") for p in parts)                          # the instructor's
    learner = json.loads(json_report.render(report, audience="learner"))
    assert not any("cases_digest" in p for p in learner["environment"]["assignment"]["problems"])
    assert "cases_digest" not in json.dumps(learner)


def test_a_hidden_problems_run_reports_one_progress_line_not_one_per_case(monkeypatch):
    """Round seventeen of issue 32: a wholly hidden part's cases are visible within its own
    check, so ``--progress`` printed a line with a clock after each of its calls, and a
    submission that slept on one sort of input read the sign of all 93 hidden inputs. The part
    now says ``hidden`` once; a visible part keeps its per-case lines."""
    import grader.check
    from grader.assignment import check_assignment
    from grader.options import CheckOptions
    lines = []

    def fake(submission, problem, opts):
        for k in range(3):
            opts.progress("cases", k, 3)
        yield
        return _report(problem.id, [_case("c", "g")], [("g", 1, 1, 1)])

    monkeypatch.setattr(grader.check, "check_steps", fake)
    a = _assignment(("softmax", 3, "visible"), ("gelu", 7, "hidden"))
    check_assignment("hw.py", a, CheckOptions(progress=lambda *event: lines.append(event)))
    assert lines == [("cases", 0, 3), ("cases", 1, 3), ("cases", 2, 3), ("hidden", 0, 0)]


def test_every_parts_visible_cases_run_before_any_hidden_case(monkeypatch):
    """Round four, class 3 (the residual of the fourth pass): in an assignment of two visible parts
    that each hold a hidden group, the second part's visible cases ran after the first part's
    hidden ones, so a visible case that read a clock timed them. Every part's visible phase now
    runs first (each check pauses before its first hidden case), a wholly hidden part after them."""
    from grader import assignment as amod
    from grader import check as cmod
    from grader.options import CheckOptions
    from grader.spec import Group
    events = []

    def fake(submission, problem, opts):
        events.append(("visible", problem.id))
        yield
        events.append(("hidden", problem.id))
        return _report(problem.id, [_case(f"{problem.id}/c", "examples")], [("examples", 1, 1, 1)])

    monkeypatch.setattr(cmod, "check_steps", fake)
    a = _assignment(("embedding_lookup", 3, "visible"), ("tied_lm_head", 4, "hidden"), ("masked_mean_pool", 3, "visible"))
    parts = []
    for part in a.parts:   # a hidden group in each part
        groups = dict(part.problem.groups)
        name = next(iter(groups))
        groups[name] = dataclasses.replace(groups[name], visibility="hidden")
        parts.append(dataclasses.replace(part, problem=dataclasses.replace(part.problem, groups=groups)))
    a = dataclasses.replace(a, parts=tuple(parts))
    assert isinstance(next(iter(a.parts[0].problem.groups.values())), Group)
    report = amod.check_assignment("hw.py", a, CheckOptions())
    assert events == [("visible", "embedding_lookup"), ("visible", "masked_mean_pool"),
                      ("hidden", "embedding_lookup"), ("hidden", "masked_mean_pool"),
                      ("visible", "tied_lm_head"), ("hidden", "tied_lm_head")]
    assert [p["problem"] for p in report.environment["assignment"]["problems"]] == \
        ["embedding_lookup", "tied_lm_head", "masked_mean_pool"]


def test_a_paused_run_does_not_count_the_wait_against_its_time_limit():
    """While a part waits for the other parts' visible phases, its --total-timeout is not running:
    grading_steps moves the plan's and the executor's deadlines by the time it was paused."""
    import time as _time

    from grader.grading import grading_steps
    from grader.run.inprocess import InProcessExecutor
    from grader.plan import make_plan
    from grader.options import CheckOptions

    problem = load_problem(find_problem("softmax"))
    postponed = []

    class Executor(InProcessExecutor):
        def postpone(self, seconds):
            postponed.append(seconds)

    import numpy as np

    def softmax(logits, axis=-1):
        e = np.exp(logits - logits.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    plan = make_plan(ROOT / "problems" / "alternatives" / "softmax" / "np_picogpt.py", problem,
                     CheckOptions(max_examples=2, shrink=False, sandbox="none"), lambda _: ("none", None))
    steps = grading_steps(plan, Executor(softmax))
    next(steps)
    before = plan.deadline
    _time.sleep(0.2)
    try:
        next(steps)
    except StopIteration as stop:
        report = stop.value
    assert report.passed
    assert postponed and postponed[0] >= 0.2 and plan.deadline - before >= 0.2


def test_the_classroom_result_does_not_time_a_hidden_group():
    """A third attacker's pass: GitHub Classroom's per-test execution_time summed a hidden group's
    calls (a submission that slept |x0| s told the hidden inputs' sizes)."""
    cases = [_case("a", "examples"), _case("h1", "secret", hidden=True), _case("h2", "secret", hidden=True)]
    cases[1].seconds = cases[2].seconds = 7.5
    rep = _report("tied_lm_head", cases, [("examples", 1, 1, 1), ("secret", 1, 2, 2)])
    out = github.classroom_result(rep, audience="learner")
    assert "15" not in json.dumps(out) and "7.5" not in json.dumps(out)
