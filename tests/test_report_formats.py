"""Report formats: JUnit XML (validated against two published XSDs), Gradescope results.json
(validated against the JSON Schema of its documented format), GitHub annotations, step summary
and GitHub Classroom result. Reports are built by hand; see docs/formats.md for the sources."""
from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import xmlschema  # pure Python; a dev/CI dependency (pip install xmlschema)

from grader.reports import common, github, gradescope, junit
from grader.results import ArrayInfo, CaseResult, Failure, Frame, GroupScore, Report

ROOT = Path(__file__).resolve().parents[1]
XSDS = {name: xmlschema.XMLSchema10(ROOT / "tests" / "schemas" / name) for name in ("JUnit.xsd", "junit-10.xsd")}
GS_SCHEMA = json.loads(gradescope.SCHEMA.read_text())
CLASSROOM_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "github_classroom.schema.json").read_text())
STAMP = "2025-01-02T03:04:05"
SECRET = "Secret0Input7"  # appears only in hidden cases' names and details

ENV = {"seed": 1234, "framework": "numpy", "dtypes": ["float32", "bfloat16"], "framework_note": "",
       "python": "3.11.9", "numpy": "2.1.0", "jax": None, "grader": "0.1.0", "sandbox": "subprocess",
       "x64": None, "max_examples": 50, "function_line": 3}  # the shape grader.check builds


def case(name, group, status="passed", failure=None, visibility="visible", dtype="float32", seconds=0.01):
    return CaseResult(name=name, group=group, status=status, dtype=dtype, rank=1,
                      inputs={"x": ArrayInfo(shape=(3,), dtype=dtype)}, visibility=visibility, failure=failure,
                      seconds=seconds, replay=f"grader replay {name}" if status != "passed" else None)


def tol(msg="max abs error 0.5 > allowed 1e-3", hint=None, details=("worst at [2]: got 1.5, expected 1.0",)):
    return Failure(kind="tolerance", message=msg, hint=hint, details=list(details), data={"count": 1})


def report(cases, groups, *, failure=None, output=None, problem="softmax"):
    score = sum(g.earned for g in groups)
    return Report(problem=problem, title="Softmax", submission="submissions/softmax.py",
                  passed=failure is None and all(c.status == "passed" for c in cases),
                  score=score, max_score=sum(g.points for g in groups), failure=failure,
                  cases=cases, groups=groups, summary=[], environment=dict(ENV),
                  output=output or {"stdout": "debug print\n", "stderr": "", "truncated": False},
                  seconds=1.25)


def passing():
    cases = [case("worked_example[float32]", "examples"),
             case("worked_example[bfloat16]", "examples", dtype="bfloat16"),
             case("empty_row", "edge"), case("large_logits", "edge")]
    return report(cases,
                  [GroupScore(group="examples", points=2, earned=2, passed=2, total=2),
                   GroupScore(group="edge", points=3, earned=3, passed=2, total=2)])


def failing():
    cases = [case("worked_example[float32]", "examples"),
             case("worked_example[bfloat16]", "examples", "failed", tol(hint="looks like softmax over axis 0"),
                  dtype="bfloat16"),
             case("empty_row", "edge", "failed", tol("max abs error 2 > allowed 1e-6")),
             case("large_logits", "edge", "error", Failure(
                 kind="exception", message="OverflowError: math range error", exception="OverflowError: math range error",
                 frames=[Frame(ref="submission", file="softmax.py", line=3, function="softmax", code="return math.exp(x)")])),
             case("huge", "edge", "skipped")]
    return report(cases,
                  [GroupScore(group="examples", points=2, earned=1, passed=1, total=2),
                   GroupScore(group="edge", points=3, earned=0, passed=0, total=3)])


def hidden():
    cases = [case("worked_example", "examples")]
    for i in range(14):
        bad = i in (3, 7)
        cases.append(case(f"generated_{i}_{SECRET}" if bad else f"generated_{i}", "generated",
                          "failed" if bad else "passed",
                          tol(f"error at {SECRET}", details=[f"x = {SECRET}"]) if bad else None, visibility="hidden"))
    return report(cases, [GroupScore(group="examples", points=1, earned=1, passed=1, total=1),
                          GroupScore(group="generated", points=4, earned=12 / 14 * 4, passed=12, total=14,
                                     visibility="hidden")],
                  output={"stdout": f"printing {SECRET}\n", "stderr": ""})


def import_failure():
    # a syntax error the grader's own parse found (plan.py): no child ran, so no frames
    f = Failure(kind="import", message="SyntaxError: invalid syntax (softmax.py, line 4)", hint="a missing colon",
                details=["  File \"softmax.py\", line 4", "    def softmax(x)", "                  ^"])
    return report([],
                  [GroupScore(group="examples", points=2, earned=0, passed=0, total=0),
                   GroupScore(group="edge", points=3, earned=0, passed=0, total=0)], failure=f)


REPORTS = {"passing": passing, "failing": failing, "hidden": hidden, "import": import_failure}
AUDIENCES = ("learner", "instructor")


# ---------------------------------------------------------------- JUnit

#: attributes the real consumers read that neither XSD has: a testcase's file and line (pytest's
#: xunit1 family, dorny/test-reporter, mikepenz/action-junit-report, EnricoMi's publisher) and the
#: totals of <testsuites> (junit-10.xsd has all but skipped; windyroad's JUnit.xsd none)
EXTENSIONS = {"JUnit.xsd": {"testcase": {"file", "line"}, "testsuites": {"tests", "failures", "errors", "skipped", "time"}},
              "junit-10.xsd": {"testcase": {"file", "line"}, "testsuites": {"skipped"}}}


def xsd_valid(xsd, text):
    """Validate ``text`` against the XSD named ``xsd``, the documented extension attributes removed."""
    root = ET.fromstring(text)
    for el in root.iter():
        for attr in EXTENSIONS[xsd].get(el.tag, ()):
            el.attrib.pop(attr, None)
    XSDS[xsd].validate(ET.tostring(root, encoding="unicode"))


def counts(suite):
    return {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}


@pytest.mark.parametrize("xsd", XSDS)
@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("audience", AUDIENCES)
def test_junit_validates(xsd, name, audience):
    text = junit.render(REPORTS[name](), audience=audience, timestamp=STAMP)
    xsd_valid(xsd, text)
    suite = ET.fromstring(text)
    assert suite.tag == "testsuite" and suite.get("name") == "softmax (submissions/softmax.py)"
    cases = suite.findall("testcase")
    assert counts(suite) == {"tests": len(cases), "failures": len(suite.findall("testcase/failure")),
                             "errors": len(suite.findall("testcase/error")),
                             "skipped": len(suite.findall("testcase/skipped"))}


def test_junit_counts_and_mapping():
    suite = ET.fromstring(junit.render(failing(), timestamp=STAMP))
    assert counts(suite) == {"tests": 5, "failures": 2, "errors": 1, "skipped": 1}
    by_name = {tc.get("name"): tc for tc in suite.iter("testcase")}
    bf16 = by_name["worked_example[bfloat16]"]
    assert bf16.get("classname") == "examples" and bf16.get("time") == "0.010000"
    fail = bf16.find("failure")
    assert fail.get("type") == "tolerance" and fail.get("message") == "max abs error 0.5 > allowed 1e-3 — hint: looks like softmax over axis 0"
    assert "hint: looks like softmax over axis 0" in fail.text and "replay: grader replay" in fail.text
    assert by_name["large_logits"].find("error").get("type") == "exception"
    assert by_name["huge"].find("skipped") is not None
    assert list(by_name["empty_row"]) and not list(by_name["worked_example[float32]"])
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["seed"] == "1234" and props["numpy"] == "2.1.0" and props["dtypes"] == "float32,bfloat16"
    assert props["score"] == "1" and props["max_score"] == "5"
    assert suite.find("system-out").text == "debug print\n"


def test_junit_import_failure_is_one_error_testcase():
    suite = ET.fromstring(junit.render(import_failure(), timestamp=STAMP))
    assert counts(suite) == {"tests": 1, "failures": 0, "errors": 1, "skipped": 0}  # as pytest: an error
    tc = suite.find("testcase")
    assert (tc.get("classname"), tc.get("name")) == ("submission", "import")
    assert (tc.get("file"), tc.get("line")) == ("submissions/softmax.py", "3")
    assert tc.find("error").get("type") == "import"
    assert "SyntaxError" in tc.find("error").get("message") and "def softmax(x)" in tc.find("error").text


def test_junit_hidden_cases_are_counts_for_learners():
    learner = junit.render(hidden(), audience="learner", timestamp=STAMP)
    assert SECRET not in learner
    suite = ET.fromstring(learner)
    assert counts(suite) == {"tests": 2, "failures": 1, "errors": 0, "skipped": 0}
    agg = suite.findall("testcase")[1]
    assert agg.get("classname") == "generated" and agg.get("name") == "hidden cases: 12 of 14 passed"
    assert suite.find("system-out").text is None  # captured output could echo hidden inputs
    instructor = ET.fromstring(junit.render(hidden(), audience="instructor", timestamp=STAMP))
    assert counts(instructor)["tests"] == 15 and counts(instructor)["failures"] == 2
    assert SECRET in instructor.find("system-out").text
    assert any(SECRET in (tc.get("name") or "") for tc in instructor.iter("testcase"))


def test_junit_render_many():
    text = junit.render_many([("alice", passing()), ("bob@example.org", failing()), ("carol", hidden())],
                             timestamp=STAMP)
    for xsd in XSDS:
        xsd_valid(xsd, text)
    root = ET.fromstring(text)
    suites = root.findall("testsuite")
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == \
        {"tests": "11", "failures": "3", "errors": "1", "skipped": "1"}  # 4 + 5 + 2 testcases
    assert [s.get("id") for s in suites] == ["0", "1", "2"]
    assert suites[1].get("name") == "bob@example.org: softmax (submissions/softmax.py)"
    assert suites[1].get("package") == "softmax"
    classnames = {tc.get("classname") for tc in suites[1].iter("testcase")}
    assert classnames == {"bob@example.org.examples", "bob@example.org.edge"}
    assert counts(suites[1]) == {"tests": 5, "failures": 2, "errors": 1, "skipped": 1}
    assert SECRET not in text


def test_junit_sanitises_characters_xml_cannot_carry():
    r = failing()
    r.cases[1].failure.message = "colour \x1b[31mred\x1b[0m and NUL \x00"
    text = junit.render(r, timestamp=STAMP)
    xsd_valid("junit-10.xsd", text)
    assert "\\x1b[31mred" in ET.fromstring(text).find(".//failure").get("message")


def test_junit_rejects_unknown_audience():
    with pytest.raises(ValueError):
        junit.render(passing(), audience="student")


# ---------------------------------------------------------------- Gradescope

@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("audience", AUDIENCES)
def test_gradescope_validates_and_scores_add_up(name, audience):
    r = REPORTS[name]()
    data = json.loads(gradescope.render(r, audience=audience))
    jsonschema.validate(data, GS_SCHEMA)
    assert data["score"] == pytest.approx(r.score)
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(r.score)
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(r.max_score)
    assert data["extra_data"]["seed"] == 1234
    assert data["extra_data"]["versions"] == {"python": "3.11.9", "numpy": "2.1.0", "grader": "0.1.0"}
    assert data["extra_data"]["environment"]["framework"] == "numpy"
    assert all(t["output_format"] == "md" for t in data["tests"]) and data["output_format"] == "md"
    assert data["test_output_format"] == "md" and data["test_name_format"] == "text"
    assert (data["visibility"], data["stdout_visibility"]) == ("visible", "hidden")


def test_gradescope_schema_rejects_undocumented_values():
    data = gradescope.results(failing())
    bad = json.loads(json.dumps(data))
    bad["tests"][0]["status"] = "pass"  # Gradescope spells it "passed"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, GS_SCHEMA)
    bad = json.loads(json.dumps(data))
    bad["tests"][0]["points"] = 1  # not a documented field
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, GS_SCHEMA)


def test_gradescope_groups_are_tests():
    tests = gradescope.results(failing())["tests"]
    assert [(t["name"], t["number"], t["score"], t["max_score"], t["status"]) for t in tests] == [
        ("examples", "1", 1, 2, "failed"), ("edge", "2", 0, 3, "failed")]
    assert tests[0]["output"].startswith("1 of 2 cases passed (1 of 2 points)")
    assert "worked_example[bfloat16]" in tests[0]["output"] and "hint: looks like softmax" in tests[0]["output"]
    assert tests[1]["tags"] == ["exception", "skipped", "tolerance"]
    assert all(t["status"] == "passed" for t in gradescope.results(passing())["tests"])


def test_gradescope_hidden_group():
    learner = gradescope.results(hidden(), audience="learner")
    assert SECRET not in json.dumps(learner)
    gen = learner["tests"][1]
    assert gen["visibility"] == "after_published" and gen["score"] == pytest.approx(12 / 14 * 4)
    assert "hidden cases: 12 of 14 passed" in gen["output"] and gen["tags"] == []
    assert learner["tests"][0]["visibility"] == "visible"
    instructor = gradescope.results(hidden(), audience="instructor")
    assert instructor["tests"][1]["visibility"] == "hidden" and SECRET in instructor["tests"][1]["output"]


def test_gradescope_summary_says_nothing_of_a_held_back_test_but_its_points():
    """The top-level output is visible at once: a hidden group's counts, kinds and tallies wait
    with its test (the summary once said "generated: hidden cases: 12 of 14 passed")."""
    learner = gradescope.results(hidden(), audience="learner")
    summary = learner["output"]
    assert "12 of 14" not in summary and "hidden cases" not in summary and "generated" not in summary
    visible = learner["tests"][0]
    assert f"of the tests shown now: {visible['score']:g} of {visible['max_score']:g} points" in summary
    assert "4 more points in tests shown once grades are published" in summary
    assert "13 of 15 cases passed" in gradescope.results(hidden(), audience="instructor")["output"]


def test_gradescope_hidden_group_after_due_date(monkeypatch):
    learner = gradescope.results(hidden(), hidden_visibility="after_due_date")
    jsonschema.validate(learner, GS_SCHEMA)
    assert [t["visibility"] for t in learner["tests"]] == ["visible", "after_due_date"]
    monkeypatch.setenv(gradescope.HIDDEN_VISIBILITY_ENV, "after_due_date")
    assert json.loads(gradescope.render(hidden()))["tests"][1]["visibility"] == "after_due_date"
    assert json.loads(gradescope.render(hidden(), audience="instructor"))["tests"][1]["visibility"] == "hidden"
    with pytest.raises(ValueError):
        gradescope.results(hidden(), hidden_visibility="visible")  # would show the hidden counts at once


def test_gradescope_markdown_is_escaped_and_fenced():
    r = failing()
    r.cases[1].failure.message = "<img src=x onerror=alert(1)> ```\n# heading"
    r.cases[1].failure.hint = "use *x* <b>"
    data = gradescope.results(r)
    out = data["tests"][0]["output"]
    assert "hint: use \\*x\\* &lt;b&gt;" in out  # escaped outside the fence
    fence = re.search(r"^(`{4,})text$", out, re.M).group(1)  # longer than the message's ```
    body = out.split(fence + "text\n", 1)[1].split("\n" + fence, 1)[0]
    assert "<img src=x onerror=alert(1)> ```" in body  # verbatim inside the code block only
    assert "<img" not in out.replace(body, "")


def test_gradescope_says_a_case_hint_once_per_case():
    """A case's hint is in its code block (with its message), not again above it; the group's
    hint line above the cases stays."""
    out = gradescope.results(failing())["tests"][0]["output"]
    hint = "hint: looks like softmax over axis 0"
    group_part, case_part = out.split("(bfloat16): tolerance", 1)
    assert group_part.count(hint) == 1 and case_part.count(hint) == 1
    fence = re.search(r"^(`{3,})text$", case_part, re.M).group(1)
    assert hint in case_part.split(fence + "text\n", 1)[1].split("\n" + fence, 1)[0]


def test_gradescope_import_failure():
    data = gradescope.results(import_failure())
    first = data["tests"][0]
    assert first["name"] == "submission: import" and first["status"] == "failed" and first["max_score"] == 0
    assert "SyntaxError" in first["output"] and "hint: a missing colon" in first["output"]
    assert "- hint: a missing colon" in data["output"]
    assert "could not be graded: import" in data["output"] and data["score"] == 0


# ---------------------------------------------------------------- GitHub annotations

def test_escaping_follows_actions_toolkit():
    assert github.escape_data("50%\r\nnext: a, b") == "50%25%0D%0Anext: a, b"
    assert github.escape_property("a: b, 5%\n") == "a%3A b%2C 5%25%0A"
    assert github.command("error", "m", file="f.py", title=None) == "::error file=f.py::m"


def test_annotation_escaping_in_render():
    r = failing()
    r.cases[1].failure.message = "bad: x, y\n100% off"
    r.submission = "sub dir/a,b:c.py"
    lines = github.render(r).splitlines()
    assert all(line.startswith(("::error ", "::notice ")) for line in lines)
    first = lines[0]
    props, message = first[len("::error "):].split("::", 1)
    assert props.startswith("file=sub dir/a%2Cb%3Ac.py,line=3,title=tolerance%3A 1 case failed")
    assert message.startswith("worked_example[bfloat16]: tolerance: bad: x, y%0A100%25 off%0Ahint: ")
    assert "empty_row" not in message  # another pattern (no hint, another message): its own annotation


def test_one_annotation_per_failure_pattern_with_a_count():
    """90 cases failing alike (same kind, hint and message but for its numbers) are one
    annotation that says how many more are like it, not one each; another hint, another
    message or another kind is another annotation; the commonest pattern comes first."""
    alike = [case(f"gen{i:03d}[float16]", "edge", "failed",
                  tol(f"{i + 3} / 300 elements ({i / 3:.1f}%) are outside the tolerance", hint="softmax was applied"))
             for i in range(90)]
    other_hint = [case(f"bias{i}", "edge", "failed", tol("12 / 12 elements (100.0%) are outside the tolerance",
                                                         hint="a constant offset")) for i in range(3)]
    raised = [case(f"raise{i}", "edge", "error", Failure(kind="exception", message=f"IndexError: index {i} is out of bounds"))
              for i in range(2)]
    r = report(other_hint + alike + raised, [GroupScore(group="edge", points=3, earned=0, passed=0, total=95)])
    errors = [line for line in github.render(r).splitlines() if line.startswith("::error")]
    assert len(errors) == 3
    assert "title=tolerance%3A 90 cases failed::gen000[float16]: tolerance: 3 / 300" in errors[0]
    assert "hint: softmax was applied" in errors[0] and "a constant offset" not in errors[0]
    assert "(and 89 more cases like it: gen001[float16], gen002[float16], gen003[float16], gen004[float16], " \
           "gen005[float16], ...)" in errors[0]
    assert "title=tolerance%3A 3 cases failed::bias0:" in errors[1] and "(and 2 more cases like it: bias1, bias2)" in errors[1]
    assert "title=exception%3A 2 cases failed::raise0:" in errors[2] and "(and 1 more case like it: raise1)" in errors[2]


def test_annotations_are_capped_with_one_notice():
    cases = [case(f"c{i}", "edge", "failed", Failure(kind=f"kind{i}", message=f"message {i}")) for i in range(15)]
    r = report(cases, [GroupScore(group="edge", points=3, earned=0, passed=0, total=15)])
    lines = github.render(r).splitlines()
    assert sum(line.startswith("::error") for line in lines) == github.MAX_ANNOTATIONS
    notices = [line for line in lines if line.startswith("::notice")]
    assert len(notices) == 1 and lines[-1] == notices[0]
    assert "0 of 15 cases passed, 15 failed; 5 more annotations left out" in notices[0]
    assert "title=softmax%3A 0 of 3 points" in notices[0]


def test_annotations_passing_import_and_hidden():
    assert github.render(passing()).splitlines() == [
        "::notice file=submissions/softmax.py,line=3,title=softmax%3A 5 of 5 points::4 of 4 cases passed, 0 failed"]
    imp = github.render(import_failure()).splitlines()
    assert imp[0].startswith(
        "::error file=submissions/softmax.py,line=3,title=import%3A the submission could not be graded::SyntaxError")
    assert imp[1].endswith("::no case was run: the submission could not be graded")
    learner = github.render(hidden())
    assert SECRET not in learner and "hidden cases: 12 of 14 passed" in learner
    assert SECRET in github.render(hidden(), audience="instructor")


# ---------------------------------------------------------------- step summary

def test_step_summary():
    text = github.step_summary(failing())
    assert "| Group | Cases passed | Points |" in text
    assert "| examples | 1 of 2 | 1 of 2 |" in text and "| edge | 0 of 3 | 0 of 3 |" in text
    assert "**1 of 5 points**; 1 of 5 cases passed" in text
    assert "| worked\\_example\\[bfloat16\\] | examples | bfloat16 | tolerance |" in text
    learner = github.step_summary(hidden())
    assert SECRET not in learner and "- generated: hidden cases: 12 of 14 passed" in learner
    assert "| generated (hidden) | 12 of 14 |" in learner
    assert SECRET in github.step_summary(hidden(), audience="instructor")
    imp = github.step_summary(import_failure())
    assert "**The submission could not be graded** (import)" in imp and "```text\nhint: a missing colon\n" in imp


def test_step_summary_escapes_markdown_and_html():
    r = failing()
    r.cases[1].failure.message = "a | b <script>\nnext"
    text = github.step_summary(r)
    assert "a \\| b &lt;script&gt; next" in text and "<script>" not in text


# ---------------------------------------------------------------- GitHub Classroom

@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("audience", AUDIENCES)
def test_classroom_result_fields(name, audience):
    r = REPORTS[name]()
    line = github.classroom_output_line(r, audience=audience)
    assert line.startswith("result=") and "\n" not in line
    data = json.loads(base64.b64decode(line[len("result="):], validate=True))
    jsonschema.validate(data, CLASSROOM_SCHEMA)
    assert data == github.classroom_result(r, audience=audience)
    assert data["version"] == 1 and data["max_score"] == pytest.approx(r.max_score)
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(r.score)  # what the reporter sends
    assert data["status"] == {"passing": "pass", "failing": "fail", "hidden": "fail", "import": "error"}[name]


def test_classroom_result_content():
    data = github.classroom_result(failing())
    ex, edge = data["tests"]
    assert (ex["name"], ex["status"], ex["score"], ex["line_no"]) == ("examples", "fail", 1, 3)  # the def line
    assert ex["execution_time"] == "0.020s"
    assert "1 of 2 cases passed" in ex["message"]
    # the reporter prints only "Test code:" for a failing test: the message is there, replays included
    assert ex["test_code"] == ex["message"] and "replay: grader replay worked_example[bfloat16]" in ex["test_code"]
    assert "hint: looks like softmax over axis 0" in ex["test_code"]
    ok = github.classroom_result(passing())["tests"][0]
    assert ok["status"] == "pass" and ok["message"] is None
    imp = github.classroom_result(import_failure())["tests"][0]
    assert imp["status"] == "error" and imp["message"].startswith("SyntaxError")
    assert SECRET not in json.dumps(github.classroom_result(hidden()))
    assert SECRET in json.dumps(github.classroom_result(hidden(), audience="instructor"))


def test_write_github_files(tmp_path):
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    output.write_text("earlier=1\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    assert github.write_github_files(hidden(), environ=env) == [str(summary), str(output)]
    assert summary.read_text() == github.step_summary(hidden())
    lines = output.read_text().splitlines()
    assert lines == ["earlier=1", github.classroom_output_line(hidden())]
    assert SECRET not in summary.read_text()
    assert github.write_github_files(hidden(), environ={}) == []


def test_common_split_and_tallies():
    shown, concealed = common.split_cases(hidden().cases, "learner")
    assert len(shown) == 1 and len(concealed) == 14
    (tally,) = common.hidden_tallies(concealed)
    assert (tally.passed, tally.total, tally.status) == (12, 14, "failed")
    assert common.split_cases(hidden().cases, "instructor")[1] == []


# -- the JSON report (grader check --format json) -----------------------------------------------
def test_json_report_redacts_hidden_cases_and_output_for_learners():
    from grader.reports import json_report

    from grader.summary import summarise

    rep = hidden()
    rep.output = {"stdout": "hidden input: [1, 2, 3]\n", "stderr": "", "truncated": False}
    rep.summary = summarise(rep.cases, ("float32",))
    assert SECRET in json.dumps(rep.summary)  # the full summary names a hidden case
    learner = json.loads(json_report.render(rep, audience="learner"))
    assert SECRET not in json.dumps(learner)
    assert not [c for c in learner["cases"] if c["visibility"] == "hidden"]
    concealed = [c for c in rep.cases if c.visibility == "hidden"]
    assert learner["hidden"] == [{"group": concealed[0].group, "passed": sum(c.status == "passed" for c in concealed),
                                  "total": len(concealed)}]
    assert learner["output"]["stdout"] == "" and learner["output"]["withheld"] == "the report has hidden cases"
    teacher = json.loads(json_report.render(rep, audience="instructor"))
    assert teacher["output"]["stdout"] == "hidden input: [1, 2, 3]\n"
    assert {c["name"] for c in teacher["cases"]} == {c.name for c in rep.cases}


def test_json_report_writes_no_nan():
    from grader.reports import json_report

    rep = failing()
    rep.cases[0].values = {"got": [float("nan"), float("inf"), -float("inf"), 1.0]}
    text = json_report.render(rep, audience="instructor")
    assert json.loads(text)["cases"][0]["values"]["got"] == ["nan", "inf", "-inf", 1.0]


def test_a_case_name_that_carries_its_dtype_is_not_followed_by_it_again():
    """The Classroom result listed "- worked_example[float16] [float16]" (found by a newcomer)."""
    result = github.classroom_result(failing())
    text = "\n".join(t["message"] or "" for t in result["tests"])
    assert "- worked_example[bfloat16]\n" in text + "\n" and "[bfloat16] [bfloat16]" not in text
    assert "- empty_row [float32]" in text  # a name without its dtype still gets it


def test_a_github_annotation_of_a_raise_names_the_exception_not_the_traceback_header():
    """Issue 37: the ::error detail line of a case that raised was the bare "Traceback (most
    recent call last):"; it is the exception raised now."""
    from grader.reports import github
    f = Failure(kind="exception", message="the submission raised ValueError: k out of range",
                exception="ValueError: k out of range",
                frames=[Frame(ref="submission", file="softmax.py", line=4, function="softmax", code="raise ValueError('k')")])
    rep = report([case("worked_example", "examples", "failed", f)],
                 [GroupScore(group="examples", points=2, earned=0, passed=0, total=1)])
    out = github.render(rep, audience="learner")
    assert "ValueError: k out of range" in out and "Traceback (most recent call last):" not in out
