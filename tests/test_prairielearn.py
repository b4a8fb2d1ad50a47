"""PrairieLearn external-grader results.json (``--format prairielearn``): validated against the
schema transcribed from PrairieLearn's "External Grading" page, score in [0, 1], one test per
case group with its points, hidden cases as counts for learners, and a file that cannot be
loaded marked not gradable (no attempt used). Reports are built by hand (tests/test_report_formats.py)."""
from __future__ import annotations

import json

import jsonschema
import pytest

from grader.reports import prairielearn
from tests.test_report_formats import AUDIENCES, REPORTS, SECRET, failing, hidden, import_failure, passing

SCHEMA = json.loads(prairielearn.SCHEMA.read_text())


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("audience", AUDIENCES)
def test_results_validate_and_points_add_up(name, audience):
    r = REPORTS[name]()
    data = json.loads(prairielearn.render(r, audience=audience))
    jsonschema.validate(data, SCHEMA)
    if name == "import":
        return
    assert data["gradable"] is True and 0 <= data["score"] <= 1
    assert data["score"] == pytest.approx(r.score / r.max_score, abs=1e-6)
    assert sum(t["points"] for t in data["tests"]) == pytest.approx(r.score)
    assert sum(t["max_points"] for t in data["tests"]) == pytest.approx(r.max_score)


def test_the_schema_rejects_what_the_page_does_not_document():
    data = prairielearn.results(failing())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "score": 7.5}, SCHEMA)  # a fraction, not points
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "tests": [{**data["tests"][0], "score": 1}]}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"gradable": True, "message": "no score"}, SCHEMA)


def test_groups_are_tests_with_their_failing_cases_and_hint():
    data = prairielearn.results(failing())
    assert [(t["name"], t["points"], t["max_points"]) for t in data["tests"]] == [("examples", 1, 2), ("edge", 0, 3)]
    first = data["tests"][0]
    assert first["message"].startswith("1 of 2 cases passed (1 of 2 points); hint: looks like softmax")
    assert "worked_example[bfloat16]" in first["output"] and "grader replay worked_example" in first["output"]
    assert data["message"].startswith("FAIL: score 1 of 5 points") and "hint: looks like softmax" in data["message"]
    assert data["output"].startswith("FAIL softmax")  # the whole text report
    assert prairielearn.results(passing())["message"].startswith("PASS")


def test_hidden_cases_are_counts_for_learners_and_listed_for_instructors():
    learner = json.dumps(prairielearn.results(hidden(), audience="learner"))
    assert SECRET not in learner and "hidden cases: 12 of 14 passed" in learner
    assert SECRET in json.dumps(prairielearn.results(hidden(), audience="instructor"))


def test_a_file_that_cannot_be_loaded_is_not_gradable():
    data = prairielearn.results(import_failure())
    assert data["gradable"] is False and "score" not in data and "tests" not in data
    # one error (PrairieLearn shows each entry as a red "Error"; the hint was a second one)
    assert data["format_errors"] == ["import: SyntaxError: invalid syntax (softmax.py, line 4)\nhint: a missing colon"]


def test_a_run_fault_is_gradable_with_no_points():
    import dataclasses
    from grader.results import Failure
    r = dataclasses.replace(import_failure(),
                            failure=Failure(kind="timeout", message="the submission took longer than 60 s"))
    data = prairielearn.results(r)
    assert data["gradable"] is True and data["score"] == 0
    assert "could not be graded: timeout" in data["message"]


def test_a_huge_report_is_cut_to_prairielearns_limit(monkeypatch):
    whole = len(prairielearn.render(failing(), audience="instructor"))
    monkeypatch.setattr(prairielearn, "MAX_BYTES", whole - 300)
    text = prairielearn.render(failing(), audience="instructor")
    assert len(text) <= whole - 300 and "cut to fit PrairieLearn's 1 MB limit" in text
    jsonschema.validate(json.loads(text), SCHEMA)
