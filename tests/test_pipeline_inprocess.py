"""The pipeline without a process: load -> plan -> InProcessExecutor -> grade -> every format.

These tests exercise the verdict logic (judging, scoring, stopping, shrinking, mutation, hints)
and the report formats through ``grader.run.inprocess.InProcessExecutor``, which calls a
function in this process. The sandboxed child is tested elsewhere (test_security*,
test_protocol, the CLI tests); here nothing is started, so each test takes milliseconds once the
reference values are cached.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from grader import grading
from grader.check import grade_plan
from grader.options import CheckOptions
from grader.plan import make_plan
from grader.reports import FORMATS, reporter
from grader.results import CallOutcome, ImportOutcome, Report
from grader.run.inprocess import InProcessExecutor
from grader.spec import find_problem, load_problem

PROBLEM = load_problem(find_problem("tied_lm_head"))
NO_SANDBOX = lambda request: ("none", None)  # noqa: E731 - the tier a plan records; nothing is started


def right(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T


def plan_for(tmp_path: Path, source: str = "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
             "    return hidden @ embedding_matrix.T\n", **options):
    sub = tmp_path / "sub.py"
    sub.write_text(source)
    opts = CheckOptions(**{"max_examples": 6, "shrink": False, "sandbox": "none", **options})
    return make_plan(sub, PROBLEM, opts, NO_SANDBOX)


def graded(tmp_path: Path, fn, **options) -> tuple[Report, InProcessExecutor]:
    executor = InProcessExecutor(fn)
    return grade_plan(plan_for(tmp_path, **options), executor), executor   # the values cached for the next test


def test_a_right_function_passes_every_case_and_scores_full_marks(tmp_path):
    report, executor = graded(tmp_path, right)
    assert report.passed and report.failure is None
    assert report.score == report.max_score == 10
    assert len(executor.calls) == len(report.cases) > 20
    assert all(c.status == "passed" for c in report.cases)


def test_visible_cases_run_before_hidden_ones_and_results_keep_the_cases_order(tmp_path):
    plan = plan_for(tmp_path)
    for case in plan.cases[:3]:   # the first cases hidden (as a spec's hidden group would make them)
        case.visibility = "hidden"
    executor = InProcessExecutor(right)
    report = grading.grade(plan, executor)
    seen = [c.visibility for c in executor.calls]
    assert seen == ["visible"] * (len(seen) - 3) + ["hidden"] * 3
    assert [c.name for c in report.cases] == [c.name for c in plan.cases]


def test_an_offset_fails_on_tolerance_with_a_replay_command_and_partial_score(tmp_path):
    report, _ = graded(tmp_path, lambda h, e: h @ e.T + np.asarray(0.5, dtype=h.dtype))
    assert not report.passed
    kinds = {c.failure.kind for c in report.cases if c.failure}
    assert "tolerance" in kinds
    failing = next(c for c in report.cases if c.failure)
    assert failing.replay_facts and "--case" in failing.replay_facts.words() and failing.status == "failed"
    assert report.score < report.max_score


@pytest.mark.filterwarnings("ignore:Setting the strides:DeprecationWarning")
@pytest.mark.parametrize("change", ["values", "shape", "strides"])
def test_an_input_changed_in_place_is_a_mutation(tmp_path, change):
    def mutate(hidden, embedding_matrix):
        out = hidden @ embedding_matrix.T
        if change == "values" and hidden.size:
            hidden[...] = 0
        elif change == "shape":
            hidden.shape = (-1,) if hidden.ndim > 1 and hidden.size else hidden.shape + (1,)
        elif change == "strides":
            hidden.strides = hidden.strides[::-1] if hidden.ndim > 1 else (0,) * hidden.ndim
        return out

    report, _ = graded(tmp_path, mutate)
    assert "mutation" in {c.failure.kind for c in report.cases if c.failure}, change


def test_a_timeout_stops_the_run_and_the_rest_are_skipped(tmp_path):
    calls = []

    def slow(hidden, embedding_matrix):
        calls.append(1)
        if len(calls) == 3:
            return CallOutcome(status="timeout", message="the call used more than 10 s of CPU time", limit="cpu")
        return hidden @ embedding_matrix.T

    report, _ = graded(tmp_path, slow)
    statuses = [c.status for c in report.cases]
    assert statuses.count("timeout") == 1 and len(calls) == 3
    assert set(statuses) == {"passed", "timeout", "skipped"}
    timeout = next(c for c in report.cases if c.status == "timeout")
    assert timeout.failure.data == {"limit": "cpu"} and "endless loop" in timeout.failure.hint


def test_four_crashes_end_the_run(tmp_path):
    report, executor = graded(tmp_path, lambda h, e: CallOutcome(status="crash", message="killed by SIGSEGV"))
    statuses = [c.status for c in report.cases]
    assert statuses[:4] == ["error"] * 4 and set(statuses[4:]) == {"skipped"}
    assert executor.restarts == 3


def test_an_exception_is_an_error_with_its_traceback(tmp_path):
    def raises(hidden, embedding_matrix):
        raise ValueError("shapes do not match")

    report, _ = graded(tmp_path, raises)
    case = report.cases[0]
    assert case.status == "error" and case.failure.kind == "exception"
    assert case.failure.message == "ValueError: shapes do not match"
    assert case.failure.exception == "ValueError: shapes do not match"
    assert case.failure.frames[-1].code == 'raise ValueError("shapes do not match")'
    assert case.failure.frames[-1].function == "raises" and case.failure.frames[-1].ref == "outside"


def test_a_failed_import_is_the_whole_runs_failure(tmp_path):
    plan = plan_for(tmp_path)
    report = grading.grade(plan, InProcessExecutor(
        right, import_outcome=ImportOutcome(status="import_error", message="NameError: name 'np' is not defined")))
    assert report.failure is not None and report.failure.kind == "import" and report.cases == []
    assert report.score == 0 and not report.passed


def test_a_syntax_error_needs_no_executor(tmp_path):
    plan = plan_for(tmp_path, source="def tied_lm_head(hidden, embedding_matrix)\n    return 1\n")
    assert plan.cannot_run is not None and plan.cases == []
    report = grading.grade(plan, None)
    assert report.failure.kind == "import" and report.failure.message.startswith("SyntaxError")


def test_a_list_result_is_a_type_failure(tmp_path):
    report, _ = graded(tmp_path, lambda h, e: (h @ e.T).tolist())
    assert {c.failure.kind for c in report.cases if c.failure} == {"type"}


def test_the_judge_is_the_one_judge_of_shrink_and_check(tmp_path):
    """A shrunk case is judged by the same function as the graded ones: same kind, and no points.
    (Wrong only beyond d_model 16: a mistake a small fixed case already shows is not searched.)"""
    report, _ = graded(tmp_path, lambda h, e: h @ e.T + np.asarray(0.5 * (h.shape[-1] > 16), dtype=h.dtype),
                       shrink=True)
    shrunk = [c for c in report.cases if c.shrunk]
    assert shrunk and all(c.failure.kind == "tolerance" and c.group == "shrunk" for c in shrunk)
    assert all(c.replay_facts.literal is not None and "--replay" in c.replay_facts.words() for c in shrunk)
    assert "shrunk" not in {g.group for g in report.groups}


@pytest.fixture(scope="module")
def doubled(tmp_path_factory):
    """One failing report (every logit doubled), shared by the format tests."""
    report, _ = graded(tmp_path_factory.mktemp("doubled"), lambda h, e: h @ e.T * np.asarray(2, dtype=h.dtype))
    return report


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("audience", ["learner", "instructor"])
def test_every_format_renders_a_failing_report_and_round_trips_through_json(doubled, fmt, audience):
    report = doubled
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert again.to_json() == report.to_json()
    # JUnit stamps the render time: fix it, or two renders straddling a second differ
    stamp = {"timestamp": "2026-01-01T00:00:00"} if fmt == "junit" else {}
    text = reporter(fmt).render(again, audience=audience, **stamp)
    assert text == reporter(fmt).render(report, audience=audience, **stamp)
    if fmt in ("json", "gradescope"):
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(text)
    assert "tolerance" in text or "2" in text


def test_every_compared_case_records_how_much_of_its_allowance_it_used(tmp_path):
    """``CaseResult.margin``: worst error / allowance at the full allowance; under 1 for a right
    function, the failure's own ratio for an offset one, None for an exact case; kept by JSON and
    left out of a learner's hidden cases."""
    ok, _ = graded(tmp_path, right)
    compared = [c for c in ok.cases if c.margin is not None]
    assert compared and all(0 <= c.margin < 1 for c in compared)
    assert all(c.margin is None for c in ok.cases if c.group == "exact")
    off, _ = graded(tmp_path, lambda h, e: h @ e.T + np.asarray(0.5, dtype=h.dtype))
    failing = [c for c in off.cases if c.failure and c.failure.kind == "tolerance" and c.group != "exact"]
    assert failing and all(c.margin >= (c.failure.data["ratio"] or float("inf")) * 0.999 > 1 for c in failing)
    again = Report.from_json(json.loads(json.dumps(off.to_json())))
    assert [c.margin for c in again.cases] == [pytest.approx(c.margin, rel=1e-3) if c.margin is not None else None
                                                for c in off.cases]
    for case in off.cases[:2]:
        case.visibility = "hidden"
    learner = json.loads(reporter("json").render(off, audience="learner"))
    assert {c["name"] for c in learner["cases"]} == {c.name for c in off.cases[2:]}


def test_a_trusted_file_runs_in_process_as_the_child_would_run_it(tmp_path):
    """``for_file``: a 0-d result stays 0-d (np.ascontiguousarray made it 1-d), a Python float is
    passed on as one, a missing function is an import outcome, and nothing is written beside
    the file (no __pycache__ in problems/)."""
    from grader.cases import Case
    from grader.run.inprocess import for_file

    sub = tmp_path / "mean.py"
    sub.write_text("import numpy as np\n"
                   "def mean(x):\n    return np.mean(x) if x.size > 1 else float(x.ravel()[0])\n")
    executor = for_file(sub, "mean", "numpy")
    assert executor.start().status == "ok"
    case = Case(name="c", group="g", dtype="float64", inputs={"x": np.arange(4.0)}, sizes={})
    zero_d = executor.call(case)
    assert zero_d.status == "ok" and zero_d.result.shape == () and float(zero_d.result) == 1.5
    one = executor.call(Case(name="d", group="g", dtype="float64", inputs={"x": np.array([2.0])}, sizes={}))
    assert one.result_type == "float" and float(one.result) == 2.0
    assert for_file(sub, "absent", "numpy").start().status == "import_error"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mean.py"]


def test_the_groups_scores_add_up_to_the_score_rounded_once():
    """Three groups of a third of a point each: 0.3333 three times beside a score of 1 (every
    format that lists groups showed both); the largest remainders get the last units."""
    from grader.grading import apportion
    assert apportion([1 / 3, 1 / 3, 1 / 3]) == [0.3334, 0.3333, 0.3333]
    assert sum(apportion([1 / 3, 2 / 3, 1 / 3, 1 / 3, 1 / 3, 4 / 3])) == pytest.approx(round(10 / 3, 4), abs=1e-12)
    assert apportion([0.5, 0.25, 0.0]) == [0.5, 0.25, 0.0]
    assert apportion([]) == []


def test_a_reports_score_is_the_sum_of_its_groups(tmp_path):
    report, _ = graded(tmp_path, lambda h, e: h @ e.T + np.asarray(0.5, dtype=h.dtype))
    assert 0 < report.score < report.max_score
    assert round(sum(g.earned for g in report.groups), 4) == report.score


def test_progress_is_told_per_visible_case_and_once_for_the_hidden_ones(tmp_path):
    """``CheckOptions.progress`` (``grader check --progress``, the exercise page's "case k of
    n"): ("import", 0, 0) as the child starts, ("cases", 0, n) when the calls begin, one call per visible case, one for the shrink
    search of a failure, and the hidden phase as one line (a line per hidden case would time it)."""
    seen: list[tuple[str, int, int]] = []
    plan = plan_for(tmp_path, progress=lambda *a: seen.append(a))
    for case in plan.cases[:3]:
        case.visibility = "hidden"
    visible = len(plan.cases) - 3
    grade_plan(plan, InProcessExecutor(right))
    assert seen == [("import", 0, 0)] + [("cases", k, visible) for k in range(visible + 1)] + [("hidden", 0, 3)]

    seen.clear()
    plan = plan_for(tmp_path, progress=lambda *a: seen.append(a), shrink=True)
    visible = sum(c.visibility != "hidden" for c in plan.cases)
    grade_plan(plan, InProcessExecutor(lambda hidden, embedding_matrix: hidden @ embedding_matrix.T + 1.0))
    assert seen[-1] == ("shrink", 0, 0) or seen[-1][0] == "hidden" and seen[-2] == ("shrink", 0, 0)
    assert [a for a in seen if a[0] == "cases"] == [("cases", k, visible) for k in range(visible + 1)]


def test_an_input_changed_while_the_result_is_converted_is_a_mutation(tmp_path):
    """An attacker's finding: a result whose conversion runs the function's code (a tuple
    subclass's ``__len__``) changed an input after the mutation check: the check now runs after
    the conversion (the child and the fake alike, grader.protocol.mutated_inputs)."""
    import numpy as np
    from grader.cases import Case
    from grader.run.inprocess import for_file

    sub = tmp_path / "late.py"
    sub.write_text("import numpy as np\n\n\nclass Late(tuple):\n    def __len__(self):\n"
                   "        self.x[...] = 0\n        return tuple.__len__(self)\n\n\n"
                   "def step(x):\n    out = Late((x * 2, x + 1))\n    out.x = x\n    return out\n")
    executor = for_file(sub, "step", "numpy")
    outcome = executor.call(Case(name="c", group="g", dtype="float64", inputs={"x": np.arange(1.0, 5.0)}, sizes={}))
    assert outcome.mutated == ["x"], outcome


def test_parameters_named_otherwise_than_the_statement_are_noted(tmp_path):
    """A newcomer's trial: renamed parameters passed 10/10 in masked_mean_pool and lost 3 points in
    layer_norm, only in the cases that pass eps by name. The report notes the two lists wherever
    they differ, passing or not; the statement's names, or *args, get no note."""
    from tests.conftest import grade_function_in_process
    body = ("    m = {mask}[..., None]\n    e = {emb}.astype(np.float32) if {emb}.dtype.itemsize < 4 else {emb}\n"
            "    return ((e * m).sum(axis=-2) / np.maximum(m.sum(axis=-2), 1)).astype({emb}.dtype)\n")
    for params, noted in (("x, attention_mask", True), ("embeddings, mask", False), ("*args", False)):
        emb, mask = ("args[0]", "args[1]") if params == "*args" else params.split(", ")
        path = tmp_path / f"mmp_{len(params)}.py"
        path.write_text(f"import numpy as np\n\n\ndef masked_mean_pool({params}):\n"
                        + body.format(mask=mask, emb=emb))
        code, report = grade_function_in_process(path, "--problem", "masked_mean_pool", "--no-shrink")
        note = report["environment"].get("parameters_note")
        assert code == 0, (params, report["summary"])
        assert bool(note) == noted, (params, note)
        if noted:
            assert note == ("masked_mean_pool here takes (x, attention_mask); the statement names its parameters "
                            "(embeddings, mask): a call that passes one by name fails")
