"""The JUnit files as their consumers read them: junitparser and xunitparser parse the single
and the batch documents (xunitparser merges a document's suites and rejects a property name it
has seen, and checks the totals of the root); every testcase carries the submission's file and
the function's line, where the GitHub test-report actions anchor their annotations; a fault of
the submission's run is an <error>, a wrong value a <failure>."""
from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import junitparser
import pytest
import xunitparser

from grader.reports import junit
from tests.test_report_formats import REPORTS, STAMP
from tests.test_report_view import one_report


class FileCase(junitparser.TestCase):
    """junitparser's custom-attribute way of reading a testcase's ``file`` and ``line``."""

    file = junitparser.Attr("file")
    line = junitparser.IntAttr("line")


def _single(name, audience):
    return junit.render(REPORTS[name](), audience=audience, timestamp=STAMP)


def _batch(audience):
    pairs = [("alice", REPORTS["passing"]()), ("bob", REPORTS["failing"]()), ("carol", REPORTS["hidden"]()),
             ("dave", REPORTS["import"]()), ("erin", one_report())]
    return junit.render_many(pairs, audience=audience, timestamp=STAMP)


def _testcases(text):
    return list(ET.fromstring(text).iter("testcase"))


@pytest.mark.parametrize("audience", ["learner", "instructor"])
@pytest.mark.parametrize("name", list(REPORTS) + ["batch"])
def test_junitparser_and_xunitparser_read_it(name, audience):
    text = _batch(audience) if name == "batch" else _single(name, audience)
    expected = _testcases(text)
    # junitparser
    xml = junitparser.JUnitXml.fromstring(text)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    cases = [FileCase.fromelem(c) for s in suites for c in s]
    assert len(cases) == len(expected) > 0
    for case, el in zip(cases, expected):
        assert case.file == el.get("file") and case.file.endswith(".py") and case.line >= 1
        assert case.is_passed == (not list(el))
    if name == "batch":
        root = ET.fromstring(text)
        assert int(root.get("tests")) == len(expected) == sum(s.tests for s in suites)
        assert int(root.get("failures")) == sum(s.failures for s in suites)
        assert int(root.get("errors")) == sum(s.errors for s in suites)
        assert int(root.get("skipped")) == sum(s.skipped for s in suites)
    # xunitparser (raises on a repeated property name; asserts the root's totals)
    ts, tr = xunitparser.parse(io.StringIO(text))
    assert tr.testsRun == len(expected)
    assert len(tr.failures) == sum(el.find("failure") is not None for el in expected)
    assert len(tr.errors) == sum(el.find("error") is not None for el in expected)


def test_every_testcase_points_at_the_function():
    for text in [_batch("learner"), _batch("instructor")] + [_single(n, "learner") for n in REPORTS]:
        for tc in _testcases(text):
            assert tc.get("file") == "submissions/softmax.py" or tc.get("file") == "sub.py"
            assert tc.get("line") in ("3", "4")  # the fixtures' environment.function_line


def test_run_faults_are_errors_and_wrong_values_failures():
    suite = ET.fromstring(junit.render(REPORTS["failing"](), timestamp=STAMP))
    by_name = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert by_name["large_logits"].find("error").get("type") == "exception"
    assert by_name["empty_row"].find("failure").get("type") == "tolerance"
    imp = ET.fromstring(junit.render(REPORTS["import"](), timestamp=STAMP)).find("testcase")
    assert imp.find("error") is not None and imp.find("failure") is None


def test_batch_property_names_are_unique():
    root = ET.fromstring(_batch("instructor"))
    names = [p.get("name") for p in root.iter("property")]
    assert len(names) == len(set(names))
    bob = root.findall("testsuite")[1]
    assert {p.get("name"): p.get("value") for p in bob.iter("property")}["bob.learner"] == "bob"


def test_a_line_is_given_without_a_function_line():
    rep = REPORTS["import"]()
    del rep.environment["function_line"]
    rep.environment["syntax_error_line"] = 7
    assert ET.fromstring(junit.render(rep, timestamp=STAMP)).find("testcase").get("line") == "7"
    del rep.environment["syntax_error_line"]
    assert ET.fromstring(junit.render(rep, timestamp=STAMP)).find("testcase").get("line") == "1"


@pytest.mark.parametrize("name", ["failing", "import", "batch"])
def test_junit2html_renders_it(tmp_path, name):
    """junit2html (its command line, as a CI step would run it) renders the single-check file and
    the batch junit.xml: every testcase, the suite naming the learner's file, and the failures."""
    import html
    import subprocess
    import sys

    pytest.importorskip("junit2htmlreport")
    text = _batch("instructor") if name == "batch" else _single(name, "instructor")
    (tmp_path / "junit.xml").write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, "-I", "-m", "junit2htmlreport", "junit.xml", "junit.html"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    page = html.unescape((tmp_path / "junit.html").read_text(encoding="utf-8"))
    root = ET.fromstring(text)
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        assert suite.get("name") in page  # "<learner>: <problem> (<the learner's file>)"
        assert any(tc.get("file") in suite.get("name") for tc in suite.iter("testcase"))
    for tc in root.iter("testcase"):
        assert tc.get("name") in page and tc.get("classname") in page
        for outcome in ("failure", "error"):
            el = tc.find(outcome)
            if el is not None and el.get("message"):
                assert el.get("message") in page
    assert sum(1 for _ in root.iter("testcase")) > 0


def test_failure_message_carries_the_hint_on_one_line():
    """dorny/test-reporter, mikepenz/action-junit-report and EnricoMi's publisher title a failure
    with its ``message`` attribute alone: the hint goes there, after the message, on one line."""
    r = REPORTS["failing"]()
    r.cases[1].failure.message = "3 / 10 elements are outside\nthe tolerance"
    by_name = {tc.get("name"): tc for tc in ET.fromstring(junit.render(r, timestamp=STAMP)).iter("testcase")}
    message = by_name["worked_example[bfloat16]"].find("failure").get("message")
    assert message == "3 / 10 elements are outside\\nthe tolerance \u2014 hint: looks like softmax over axis 0"
    assert "hint" not in by_name["empty_row"].find("failure").get("message")  # no hint: the message alone
    imp = ET.fromstring(junit.render(REPORTS["import"](), timestamp=STAMP)).find("testcase/error")
    assert imp.get("message") == "SyntaxError: invalid syntax (softmax.py, line 4) \u2014 hint: a missing colon"


def test_file_is_relative_to_the_repository_root_under_actions(tmp_path, monkeypatch):
    """Under GitHub Actions (``GITHUB_WORKSPACE`` set) ``file=`` names the submission from the
    repository root, whatever folder the grader ran in or path it was given; a file outside the
    workspace, or a run outside Actions, keeps the path as given to grader check (whoever ran it
    typed it); a report whose caller named the file (``--shown``: grader grade, the platform
    templates) gives the learner its name (round 4: no path of the grading machine)."""
    (tmp_path / "repo" / "hw" / "sub").mkdir(parents=True)
    r = REPORTS["failing"]()

    def files(submission):
        r.submission = submission
        return {tc.get("file") for tc in _testcases(junit.render(r, timestamp=STAMP))}

    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    absolute = str(tmp_path / "repo" / "hw" / "softmax.py")
    assert files(absolute) == {absolute}
    r.environment = {**r.environment, "named_by": "--shown"}
    assert files(absolute) == {"softmax.py"}
    r.environment = {k: v for k, v in r.environment.items() if k != "named_by"}
    r.submission = absolute
    assert {tc.get("file") for tc in _testcases(junit.render(r, audience="instructor", timestamp=STAMP))} == {absolute}
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "repo"))
    assert files(absolute) == {"hw/softmax.py"}
    monkeypatch.chdir(tmp_path / "repo" / "hw")
    assert files("softmax.py") == {"hw/softmax.py"}
    outside = str(tmp_path / "elsewhere" / "softmax.py")
    assert files(outside) == {outside}


def test_an_exception_points_at_the_line_that_raised():
    """An ``exception`` case's testcase and annotation point at the deepest frame of the
    submission's file in its traceback (here line 9, under a helper of the file), not at the
    ``def`` (line 3); a frame of another file (a library) is passed over; a case with no
    traceback keeps the ``def`` line."""
    from grader.reports import github
    from grader.results import Failure, Frame, GroupScore
    from tests.test_report_formats import case, report

    frames = [Frame(ref="submission", file="softmax.py", line=4, function="softmax", code="return helper(x)"),
              Frame(ref="submission", file="softmax.py", line=9, function="helper", code="return np.take(x, 99)"),
              Frame(ref="outside", file="/usr/lib/numpy/core.py", line=190, function="take", code="raise IndexError")]
    cases = [case("raises", "edge", "error", Failure(kind="exception", message="IndexError: index 99 is out of bounds",
                                                     frames=frames, exception="IndexError: index 99 is out of bounds")),
             case("wrong", "edge", "failed",
                  Failure(kind="tolerance", message="2 / 3 elements are outside the tolerance"))]
    r = report(cases, [GroupScore(group="edge", points=3, earned=0, passed=0, total=2)])
    lines = {tc.get("name"): tc.get("line") for tc in _testcases(junit.render(r, timestamp=STAMP))}
    assert lines == {"raises": "9", "wrong": "3"}
    errors = [x for x in github.render(r).splitlines() if x.startswith("::error")]
    assert [x.split(",title=")[0].rsplit("line=", 1)[1] for x in errors] == ["9", "3"]
    r.cases[0].failure.frames = frames[2:]   # no frame of the graded file (a library's only): the def line
    assert {tc.get("line") for tc in _testcases(junit.render(r, timestamp=STAMP))} == {"3"}


def test_the_failure_body_carries_the_hint_its_message_has():
    """A reader that shows the body (raw output: mikepenz's raw_details, EnricoMi's) lacked the
    hint of 13 of 90 failures: the pattern's hint was in ``message=`` only."""
    r = REPORTS["failing"]()
    # the summary found a hint for the tolerance pattern that empty_row itself does not carry
    r.summary = [{"kind": "tolerance", "text": "tolerance: 2 cases", "hint": {"text": "accumulate in float32",
                                                                          "count": 2, "of": 2}}]
    checked = 0
    for tc in ET.fromstring(junit.render(r, timestamp=STAMP)).iter("testcase"):
        el = tc.find("failure")
        if el is not None and " — hint: " in el.get("message"):
            hint = el.get("message").split(" — hint: ", 1)[1]
            assert f"hint: {hint}" in (el.text or ""), tc.get("name")
            checked += 1
    assert checked == 2  # worked_example[bfloat16] (its own hint) and empty_row (the pattern's)
