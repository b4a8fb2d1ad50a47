"""One view per audience (grader.reports.view): every format states the same counts and the hint
of one failing report with a hidden group and a shrunk case; shrunk cases are never counted as
graded cases nor shown as a group. Reports are built by hand (in process)."""
from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET

import pytest

from grader.reports import FORMATS, github, gradescope, junit, reporter, view
from grader.results import ArrayInfo, CaseResult, Failure, GroupScore, Report

HINT = "looks like the embedding matrix was not transposed"
SECRET = "Hidden0Case9"
ENV = {"seed": 7, "framework": "numpy", "dtypes": ["float32"], "python": "3.11.9", "numpy": "2.1.0",
       "jax": None, "grader": "0.2.0", "sandbox": "bwrap", "function_line": 4}


def case(name, group, status="passed", failure=None, visibility="visible", shrunk=False, size=3):
    return CaseResult(name=name, group=group, status=status, dtype="float32", rank=1,
                      inputs={"hidden": ArrayInfo(shape=(size,), dtype="float32")}, visibility=visibility,
                      failure=failure,
                      seconds=0.01, replay=f"grader check sub.py --case '{name}'" if status != "passed" else None,
                      shrunk=shrunk)


def wrong(message="12 / 12 elements (100.0%) are outside the tolerance", hint=HINT):
    return Failure(kind="tolerance", message=message, hint=hint, details=["worst at [0, 1]: got 3.5, expected 1.25"])


def one_report() -> Report:
    """9 graded cases (6 pass), 1 shrunk case; groups examples (visible), random (visible),
    secret (hidden)."""
    cases = [case("worked_example[float32]", "examples"),
             case("batch[float32]", "examples", "failed", wrong()),
             case("gen000[float32]", "random"), case("gen001[float32]", "random"),
             case("gen002[float32]", "random", "failed", wrong(hint=None), size=40),
             case(f"{SECRET}0", "secret", visibility="hidden"), case(f"{SECRET}1", "secret", visibility="hidden"),
             case(f"{SECRET}2", "secret", visibility="hidden"),
             case(f"{SECRET}3", "secret", "failed", wrong(f"wrong at {SECRET}"), visibility="hidden"),
             case("shrunk:gen002[float32]", "shrunk", "failed", wrong("2 / 2 elements are outside"), shrunk=True,
                  size=2)]
    groups = [GroupScore(group="examples", points=2, earned=1, passed=1, total=2),
              GroupScore(group="random", points=3, earned=2, passed=2, total=3),
              GroupScore(group="secret", points=4, earned=3, passed=3, total=4, visibility="hidden")]
    return Report(problem="tied_lm_head", title="Tied LM head", submission="sub.py", passed=False, score=6.0,
                  max_score=9.0, failure=None, cases=cases, groups=groups, summary=[], environment=dict(ENV),
                  output={"stdout": "", "stderr": "", "truncated": False}, seconds=2.0)


COUNT = "6 of 9 cases passed"


def test_view_counts_exclude_shrunk_cases():
    v = view.build(one_report(), "learner")
    assert (v.passed, v.failed, v.errors, v.skipped, v.total) == (6, 3, 0, 0, 9)
    assert [g.group for g in v.groups] == ["examples", "random", "secret"]
    assert [c.name for c in v.shrunk] == ["shrunk:gen002[float32]"]
    assert v.shrunk_of["gen002[float32]"].name == "shrunk:gen002[float32]"
    assert v.hints == [HINT] and v.line == 4
    assert [t.text for t in v.tallies] == ["hidden cases: 3 of 4 passed"]
    assert all(SECRET not in c.name for c in v.shown)
    assert view.build(one_report(), "instructor").tallies == []


@pytest.mark.parametrize("audience", ["learner", "instructor"])
def test_every_format_states_the_same_counts_and_the_hint(audience):
    rep = one_report()
    out = {name: reporter(name).render(rep, audience=audience) for name in FORMATS}
    out["step_summary"] = github.step_summary(rep, audience=audience)
    out["classroom"] = json.dumps(github.classroom_result(rep, audience=audience))
    for name, text in out.items():
        assert HINT in text, name
        assert "shrunk 0 of 0" not in text and '"name": "shrunk"' not in text, name
        assert (SECRET in text) == (audience == "instructor"), name
    for name in ("text", "gradescope", "github", "step_summary"):
        if name == "gradescope" and audience == "learner":   # its summary is shown before the held tests
            summary = json.loads(out[name])["output"]
            assert COUNT not in summary and "3 of 5 cases passed" in summary, summary
            continue
        assert COUNT in out[name], name
    data = json.loads(out["json"])
    assert data["counts"] == {"passed": 6, "failed": 3, "errors": 0, "skipped": 0, "total": 9}
    assert HINT in data["hints"]
    suite = ET.fromstring(out["junit"])
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (props["cases_passed"], props["cases_total"]) == ("6", "9")
    assert not [tc for tc in suite.iter("testcase") if "shrunk" in (tc.get("name") or "")]
    if audience == "instructor":
        assert suite.get("tests") == "9" and suite.get("failures") == "3"
    gs = json.loads(out["gradescope"])
    assert [t["name"] for t in gs["tests"]] == ["examples", "random", "secret"]
    assert sum(t["extra_data"]["total"] for t in gs["tests"]) == 9
    classroom = github.classroom_result(rep, audience=audience)
    assert [t["name"] for t in classroom["tests"]] == ["examples", "random", "secret"]
    counted = [re.match(r"(\d+) of (\d+) cases passed", t["message"] or "") for t in classroom["tests"]]
    assert all(counted) and sum(int(m.group(2)) for m in counted) == 9  # every group failed a case
    # the shrunk case is feedback beside the case it came from
    random = next(t for t in gs["tests"] if t["name"] == "random")
    assert "smaller failing input (shrunk:gen002[float32])" in random["output"]


def test_text_counts_match_github_and_gradescope():
    rep = one_report()
    first = reporter("text").render(rep).splitlines()[0]
    assert f"({COUNT})" in first
    notice = [line for line in github.render(rep).splitlines() if line.startswith("::notice")][0]
    assert notice.endswith(f"::{COUNT}, 3 failed")
    assert f"{COUNT}" in gradescope.results(rep, audience="instructor")["output"]
    # every format carries the worst element of a failing case
    for text in (reporter("text").render(rep), github.render(rep), json.dumps(github.classroom_result(rep)),
                 gradescope.render(rep), junit.render(rep, timestamp="2025-01-01T00:00:00")):
        assert "worst at [0, 1]: got 3.5, expected 1.25" in text
    assert "worst at \\[0, 1\\]: got 3.5, expected 1.25" in github.step_summary(rep)  # Markdown-escaped
    assert junit.render(rep, timestamp="2025-01-01T00:00:00").count("shrunk:gen002") >= 1  # as feedback text


def test_classroom_result_stays_small():
    """A report of 2000 failing cases with long messages and tracebacks: the Classroom result
    (base64 in one environment variable, capped at 128 KiB by Linux) stays under 24 KiB and
    still carries each failing group's first case and the hint."""
    long = "x" * 400
    cases = [case(f"gen{i:04d}[float32]", f"group{i % 4}", "failed",
                  Failure(kind="tolerance", message=f"{long} {i}", hint=HINT,
                          details=[f"Traceback line {j} {long}" for j in range(30)]))
             for i in range(2000)]
    groups = [GroupScore(group=f"group{g}", points=1, earned=0, passed=0, total=500) for g in range(4)]
    rep = Report(problem="tied_lm_head", title="Tied LM head", submission="sub.py", passed=False, score=0.0,
                 max_score=4.0, failure=None, cases=cases, groups=groups, summary=[], environment=dict(ENV),
                 output={"stdout": "", "stderr": ""}, seconds=1.0)
    line = github.classroom_output_line(rep)
    assert len(line) < 24 * 1024
    data = json.loads(base64.b64decode(line[len("result="):]))
    assert all(t["status"] == "fail" and "gen" in t["test_code"] and HINT in t["test_code"] for t in data["tests"])
    assert all(t["line_no"] == 4 for t in data["tests"])


def test_feedback_line_is_one_line_for_the_learner():
    line = view.feedback_line(one_report())
    # the hint with how many failing cases it fits: one of the two here (a newcomer read "a constant
    # factor of 4", true of 3 of 15 failing cases, as the whole story)
    assert line.startswith(f"{COUNT}; batch[float32]: tolerance: 12 / 12") and f"hint (1 of 2 cases): {HINT}" in line
    from grader.summary import summarise
    with_summary = one_report()
    with_summary.summary = summarise(with_summary.cases, ("float32",))
    assert view.feedback_line(with_summary).startswith(f"{COUNT}; tolerance: 2 cases, in float32;")
    assert "hidden cases: 3 of 4 passed" in line and SECRET not in line and "\n" not in line
    passing = one_report()
    passing.passed, passing.cases = True, [c for c in passing.cases if c.status == "passed"]
    assert view.feedback_line(passing) == "passed all 6 cases"
    short = view.feedback_line(one_report(), limit=40)
    assert len(short) <= 40 and short.endswith("...") and line.startswith(short[:-3])   # cut at a word's end
    assert short[:-3] + " " in line + " "
    # the withheld notice of a seeded case says nothing in a gradebook: the next hint, or none
    from grader.reports.common import WITHHELD_HINT
    withheld = one_report()
    for c in withheld.cases:
        if c.failure is not None:
            c.failure.hint = WITHHELD_HINT
    assert "withheld" not in view.feedback_line(withheld) and "hint:" not in view.feedback_line(withheld)


def test_gradebook_row_carries_the_message_and_round_trips(tmp_path):
    from grader.batch import gradebook

    row = gradebook.Row.of_report("erin", one_report(), 2.0)
    assert row.message == view.feedback_line(one_report())
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [row])
    assert book.read_text().splitlines()[0].endswith(",seconds,message")
    assert gradebook.read_gradebook(book) == [row]


def test_summary_has_failure_rates_per_group_and_case():
    from grader.batch import gradebook
    from grader.reports import summary_md

    ok = one_report()
    ok.passed, ok.cases = True, [case(c.name, c.group, visibility=c.visibility) for c in ok.cases if not c.shrunk]
    reports = {"erin": one_report(), "finn": ok}
    rows = [gradebook.Row.of_report(name, rep, 1.0) for name, rep in reports.items()]
    text = summary_md.summary_markdown(rows, reports)
    groups = text.split("## Failure rates per case group", 1)[1].split("## Failure rates per case\n", 1)[0]
    assert "| examples | 1 of 2 | 50% | [erin](" in groups and "| secret | 1 of 2 | 50% |" in groups
    cases = text.split("## Failure rates per case\n", 1)[1].split("##", 1)[0]
    # the cases erin alone fails are one row (test_cases_the_same_learners_fail_are_one_row_...)
    row = next(line for line in cases.splitlines() if "batch" in line)
    assert "gen002" in row and "| 1 of 2 | 50% | [erin](" in row
    assert "shrunk" not in cases and "worked\\_example" not in cases  # shrunk: no case; passed by both


def test_failure_rates_per_group_are_sorted_by_rate():
    """Sorted by the count of failing learners, a group's rate could stand between higher and lower
    ones (33% between rows of 40%, found by a newcomer); now by rate, then count."""
    from types import SimpleNamespace

    from grader.reports import summary_md

    def rep(statuses):
        return SimpleNamespace(cases=[case(f"{g}_case[float32]", g, st, wrong() if st == "failed" else None)
                                      for g, st in statuses])

    reports = {f"l{i}": rep([("values", "failed" if i < 2 else "passed"), ("shapes", "failed" if i < 3 else "passed")]
                            + ([("examples", "failed" if i < 2 else "passed")] if i < 3 else []))
               for i in range(5)}
    rows = [SimpleNamespace(learner=name, score=0.0) for name in reports]
    groups, _ = summary_md.failure_rates(rows, reports)  # by count it was shapes 3/5, examples 2/3, values 2/5
    assert [(g, len(who), n) for g, who, n in groups] == [("examples", 2, 3), ("shapes", 3, 5), ("values", 2, 5)]
    # each row's example (its first learner) is the failing learner with the most points: l0 fails
    # everything and was every row's example (an instructor's trial); l2 fails only shapes
    scored = [SimpleNamespace(learner=name, score=float(i)) for i, name in enumerate(reports)]
    groups, _ = summary_md.failure_rates(scored, reports)
    assert {g: who[0] for g, who, _ in groups} == {"examples": "l1", "shapes": "l2", "values": "l1"}


def test_cases_the_same_learners_fail_are_one_row_of_the_failure_rates():
    """A helper's class of four: summary.md listed twelve generated cases, gen000 ... gen011,
    each failed by the same one learner, as twelve rows. Rows the same learners fail are one
    row now, naming the first three cases and how many more; other learner sets keep rows of
    their own."""
    from types import SimpleNamespace

    from grader.batch import gradebook
    from grader.reports import summary_md

    def rep(failing: set[str]):
        names = [f"gen{i:03d}" for i in range(12)] + ["batch"]
        return SimpleNamespace(cases=[case(f"{n}[float32]", "generated" if n != "batch" else "shapes",
                                           "failed" if n in failing else "passed",
                                           wrong() if n in failing else None) for n in names])

    gens = {f"gen{i:03d}" for i in range(12)}
    reports = {"ann": rep(gens | {"batch"}), "bob": rep({"batch"}), "cy": rep(set())}
    rows = [SimpleNamespace(learner=name, score=0.0) for name in reports]
    _, cases = summary_md.failure_rates(rows, reports)
    assert len(cases) == 13
    merged = summary_md.merge_alike(cases)
    assert [(len(names), who) for names, who, _ in merged] == [(1, ["ann", "bob"]), (12, ["ann"])]
    assert summary_md.case_names(merged[1][0]) == "gen000, gen001, gen002 and 9 more (12 cases)"
    assert summary_md.case_names(["a", "b", "c", "d"]) == "a, b, c, d"
    full = [gradebook.Row(learner=name, submission=f"{name}.py", passed=False, score=0, max_score=10, kinds=[],
                          seconds=1.0, message="") for name in reports]
    text = summary_md._failure_rates(full, reports)
    table = [line for line in text[text.index("## Failure rates per case"):] if line.startswith("| ")][2:]
    assert len(table) == 2 and "12 cases" in table[1], table


def test_a_case_a_secret_seed_chose_is_rated_in_its_group_only():
    """Under a secret seed each learner's gen001 had other inputs: an instructor saw "gen001"
    rated across the class as if one case. A seeded case counts in its group, not by name."""
    import dataclasses
    from types import SimpleNamespace

    from grader.reports import summary_md

    def rep(failing):
        seeded = dataclasses.replace(case("gen001[float32]", "generated", "failed" if failing else "passed",
                                          wrong() if failing else None), seeded=True)
        return SimpleNamespace(cases=[seeded, case("worked_example[float32]", "examples", "failed", wrong())])

    reports = {"ann": rep(True), "bob": rep(False)}
    rows = [SimpleNamespace(learner=name, score=0.0) for name in reports]
    groups, cases = summary_md.failure_rates(rows, reports)
    assert ("generated", ["ann"], 2) in groups and ("examples", ["ann", "bob"], 2) in groups
    assert [c for c, _, _ in cases] == ["worked_example"]
    assert "counts in its group only" in summary_md.RATE_NOTE


def test_a_hint_found_for_a_pattern_reaches_each_group_that_shows_it():
    """The transpose hint of a no-transpose file is found for the failure pattern (the summary),
    not on each exception case: every format's group output still carries it."""
    shared = "the table needs a transpose"
    cases = [case("worked_example[float32]", "examples", "error", Failure(kind="exception", message="ValueError: matmul")),
             case("batch[float32]", "shapes", "error", Failure(kind="exception", message="ValueError: matmul"))]
    summary = [{"kind": "exception", "count": 2, "text": "exception: 2 cases, in float32",
                "hints": [{"id": "transpose", "text": shared, "count": 2, "of": 2}]}]
    rep = Report(problem="tied_lm_head", title="Tied LM head", submission="sub.py", passed=False, score=0.0,
                 max_score=3.0, failure=None, cases=cases,
                 groups=[GroupScore(group="examples", points=1, earned=0, passed=0, total=1),
                         GroupScore(group="shapes", points=2, earned=0, passed=0,
                                    total=1)], summary=summary, environment=dict(ENV),
                 output={"stdout": "", "stderr": ""}, seconds=1.0)
    assert all(shared in t["output"] for t in gradescope.results(rep)["tests"])
    assert all(shared in t["test_code"] for t in github.classroom_result(rep)["tests"])
    assert shared in reporter("text").render(rep) and shared in github.step_summary(rep)
    assert all(shared in line for line in github.render(rep).splitlines() if line.startswith("::error"))


# --- learner text that looks like something else (attack round 3) --------------------------------

def test_printable_escapes_every_invisible_format_character():
    """Every Unicode format character (category Cf: zero-width space, BOM, word joiner, tags...)
    is shown as an escape, so ``alice\\u200b`` cannot pass for ``alice`` in a gradebook."""
    import sys
    import unicodedata

    from grader.reports.common import printable
    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 150
    left = [f"U+{ord(c):04X}" for c in cf if printable(f"a{c}b") == f"a{c}b"]
    assert left == []
    assert printable("al\u200bice") == "al\\u200bice" and printable("a\ufeffb") == "a\\ufeffb"
    assert printable("naïve café ✓ 東京") == "naïve café ✓ 東京"  # visible text is untouched


@pytest.mark.parametrize("name", ["=1+1", "  =HYPERLINK(\"http://evil\")", "\u3000=1", "\xa0@SUM(A1)",
                                  "\uff1d1+1", "\uff0b1", "\uff0d1", "\uff20x", "-2", "'quoted"])
def test_csv_cell_quotes_formulas_behind_blanks_and_full_width_forms(name):
    from grader.reports.common import csv_cell, from_csv_cell
    cell = csv_cell(name)
    assert cell.startswith("'") and from_csv_cell(cell) == name


@pytest.mark.parametrize("name", ["alice", "Zoë O'Neil", " bob", "1-2", "a=b"])
def test_csv_cell_leaves_plain_names_alone(name):
    from grader.reports.common import csv_cell
    assert csv_cell(name) == name


def test_markdown_escapes_dollar_so_github_math_cannot_restyle_a_name():
    from grader.reports.github import md
    assert md("$\\color{green}{PASS}$") == "\\$\\\\color{green}{PASS}\\$"


def test_feedback_handed_back_names_no_instructor_path():
    """``grader grade --problems-dir /home/ta/course/problems`` wrote that path into every replay
    command of the learners' feedback (an instructor's exercise); the learner gets the file and
    the problems folder by name only."""
    import dataclasses
    from tests.test_report_formats import REPORTS
    r = REPORTS["failing"]()
    r.submission = "class/bob.py"
    from grader.results import Replay
    r.cases = [dataclasses.replace(c, replay=None, replay_facts=Replay(
        submission="class/bob.py", problem="softmax", problems_dir="/home/ta/my course/problems/", case="x"))
        for c in r.cases]
    r.environment = {**r.environment, "named_by": "--shown"}   # as grader grade names each file
    theirs = view.build(r, "learner").report
    assert theirs.submission == "bob.py"
    assert all(c.replay == "grader check bob.py --problem softmax --problems-dir problems --case x"
               for c in theirs.cases), [c.replay for c in theirs.cases]
    r.submission = "bob.py"                       # already a bare name: the folder is still hidden
    assert all("/home/ta" not in (c.replay or "") for c in view.build(r, "learner").report.cases)


def test_feedback_line_names_the_entry_a_hint_belongs_to():
    """A format consumer's read: "exception: 48 cases ...; hint: looks like a constant offset"
    paired the first summary entry with the tolerance entry's hint. A hint of another entry than
    the one the line names says whose it is."""
    from grader.summary import summarise

    from .test_diagnose import result
    report = one_report()
    report.cases = [result(f"e{i}[float32]", "float32", 2, "exception") for i in range(4)] + \
        [result(f"t{i}[float32]", "float32", 2, "tolerance", "factor") for i in range(2)]
    report.summary = summarise(report.cases, ("float32",))
    line = view.feedback_line(report)
    assert line.startswith("0 of 6 cases passed; exception: 4 cases, in float32;") and \
        line.endswith("hint: for the tolerance cases: h"), line


def test_feedback_line_gives_each_hint_of_the_first_entry(tmp_path):
    """A float32 result for float16 and float64 inputs: one dtype entry with a hint per dtype.
    The gradebook's line gave only the float16 one (an instructor's trial: 'return float16' to a
    learner whose float64 cases failed too); each is given now, with its count."""
    from grader.batch.gradebook import report_from_json
    from tests.conftest import grade_function_in_process
    path = tmp_path / "f32.py"
    path.write_text("import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                    "    return np.matmul(hidden.astype(np.float32), embedding_matrix.astype(np.float32).T)\n")
    _, data = grade_function_in_process(path, "--problem", "tied_lm_head", "--max-examples", "4", "--no-shrink")
    line = view.feedback_line(report_from_json(data))
    assert "dtype:" in line and "return float16" in line and "float64 inputs must give float64" in line, line


def test_feedback_line_says_what_an_error_of_the_run_raised(tmp_path):
    """'exception: 93 cases, in every dtype' told a gradebook's reader nothing of the NameError
    (an instructor's trial): the line gives the message and the import to add."""
    from grader.batch.gradebook import report_from_json
    from tests.conftest import grade_function_in_process
    path = tmp_path / "no_import.py"
    path.write_text("def tied_lm_head(hidden, embedding_matrix):\n    return np.matmul(hidden, embedding_matrix.T)\n")
    _, data = grade_function_in_process(path, "--problem", "tied_lm_head", "--max-examples", "4", "--no-shrink")
    line = view.feedback_line(report_from_json(data))
    assert "exception:" in line and "NameError: name 'np' is not defined" in line and "add import numpy as np" in line


def test_a_shrunk_case_without_a_hint_of_its_own_says_whose_hint_it_shows():
    """A newcomer read "one of the d_model = 57 columns" beside a shrunk (1, 9) input: the hint
    a shrunk case inherits names the case it was shrunk from, whose numbers it holds."""
    rep = one_report()
    big = next(c for c in rep.cases if c.name == "gen002[float32]")
    big.failure.hint = "looks like the last feature (one of the d_model = 40 columns) was left out"
    small = next(c for c in rep.cases if c.shrunk)
    small.failure.hint = None
    v = view.build(rep, "learner")
    assert v.hint_of(small) == ("looks like the last feature (one of the d_model = 40 columns) was left out "
                                "(found on gen002[float32], which this case was shrunk from)")
    assert v.hint_of(big) == big.failure.hint        # the big case's own, as it was
