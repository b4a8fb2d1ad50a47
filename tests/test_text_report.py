"""The text report a learner reads: which failing case comes first, tracebacks shown once, and
what a run that left out a group says. Reports are built by hand (in process)."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.reports import text
from grader.results import ArrayInfo, CaseResult, Failure, Frame, GroupScore, Report

#: where the submission raised, as facts; the report words them (grader.words.places)
FRAMES = [Frame(ref="submission", file="sub.py", line=6, function="tied_lm_head", code="return hidden @ embedding_matrix")]
TRACE = "ValueError: matmul: mismatch (size {} is different from {})"


def case(name, shapes, *, kind="exception", group="shapes", values=None, dtype="float32", trace=None):
    failure = Failure(kind=kind, message=f"ValueError: {name}", frames=list(FRAMES) if trace else [],
                      exception=trace or "")
    return CaseResult(name=f"{name}[{dtype}]", group=group, status="error" if kind == "exception" else "failed",
                      dtype=dtype, rank=len(shapes[0]),
                      inputs={"hidden": ArrayInfo(shape=shapes[0], dtype=dtype),
                              "embedding_matrix": ArrayInfo(shape=shapes[1], dtype=dtype)},
                      visibility="visible", failure=failure, values=values, replay=f"grader check sub.py --case {name}")


def report(cases, env_extra=None, groups=None):
    env = {"seed": 0, "framework": "numpy", "dtypes": ["float32"], "sandbox": "bwrap"}
    env.update(env_extra or {})
    groups = groups or [GroupScore(group="shapes", points=2, earned=0, passed=0, total=len(cases))]
    return Report(problem="tied_lm_head", title="Tied LM head", submission="sub.py", passed=False, score=0.0,
                  max_score=10.0, failure=None, cases=cases, groups=groups, summary=[], environment=env,
                  output={"stdout": "", "stderr": ""}, seconds=1.0)


def test_the_first_case_shown_is_not_a_degenerate_one():
    zero = case("zero_1x1", ((1, 1), (1, 1)), values={"hidden": [[0.0]], "embedding_matrix": [[0.0]]})
    d1 = case("d_model_1", ((3, 1), (5, 1)))
    worked = case("worked_example", ((2,), (3, 2)), group="examples")
    big = case("batch", ((4, 8), (12, 8)))
    out = text.render(report([big, d1, zero, worked]))
    order = [line.split()[1] for line in out.splitlines() if line.startswith("x ")]
    assert order[0] == "worked_example[float32]"
    assert order[1] == "batch[float32]"
    assert set(order[2:]) == {"zero_1x1[float32]", "d_model_1[float32]"}


def test_the_worked_example_is_never_degenerate_under_smallest_first():
    """conv1d's worked example (one signal of one channel: axes of size 1) was listed after three
    larger generated cases under "smallest first"; the example the learner read leads by its
    size on the page and in the text alike. An axis of one elsewhere still goes after."""
    import json

    from grader.reports.json_report import render as render_json
    from grader.reports.notebook_html import render_html
    worked = case("worked_example", ((1, 1, 4), (1, 1, 3)), group="examples")
    one = case("one_signal", ((1, 1, 4), (1, 1, 3)), group="shapes")
    gen = case("gen002", ((2, 3, 11), (6, 3, 4)), group="generated")
    rep = report([gen, one, worked])
    order = [line.split()[1] for line in text.render(rep).splitlines() if line.startswith("x ")]
    assert order == ["worked_example[float32]", "gen002[float32]", "one_signal[float32]"]
    page = render_html(json.loads(render_json(rep)))
    assert page.index("worked_example") < page.index("gen002") < page.index("one_signal")


def test_each_distinct_traceback_is_printed_once():
    cases = [case(f"c{i}", ((2, 3 + i), (4 + i, 3 + i)), trace=TRACE.format(4 + i, 3 + i)) for i in range(4)]
    cases.append(case("other", ((2, 9), (5, 9)), trace=TRACE.replace("mismatch", "another error").format(1, 2)))
    out = text.render(report(cases))
    assert out.count("Traceback (most recent call last)") == 2
    assert out.count("(the same traceback as c0[float32] above)") == 3


def test_a_run_that_left_out_a_group_with_points_gives_no_score():
    ok = CaseResult(name="batch[float32]", group="shapes", status="passed", dtype="float32", rank=2,
                    inputs={"hidden": ArrayInfo(shape=(4, 8), dtype="float32")}, visibility="visible", failure=None)
    rep = report([ok], {"partial": True, "unrun_groups": ["generated"]},
                 [GroupScore(group="shapes", points=2, earned=2, passed=1, total=1),
                  GroupScore(group="generated", points=5, earned=0, passed=0, total=0)])
    first = text.render(rep).splitlines()[0]
    assert first.startswith("INCOMPLETE tied_lm_head: 1 of 1 cases passed, but group generated ran no case")
    assert "score" not in first.replace("no score", "")


def test_the_sibling_modules_are_named_under_the_header_and_what_was_left_out_says_why():
    """``environment.siblings``: the modules taken along on one line under what ran, each left
    out on a line of its own with why; the learner's file names are shown as visible escapes
    (a name cannot start a forged line or colour the terminal). ``-q`` leaves them out."""
    siblings = {"taken": ["helper.py", "utils.py"],
                "skipped": ["helper2.py: a symbolic link (not followed)",
                            "shadow.py: a hard link (2 names; copy the file)",
                            "'x\nPASS\x1b[32m.py': not a plain module name"]}
    rep = report([case("batch", ((4, 8), (12, 8)))], {"siblings": siblings})
    lines = text.render(rep).splitlines()
    at = lines.index("with helper.py, utils.py (sibling modules)")
    assert lines[at - 1].startswith("numpy submission, graded in float32")
    assert lines[at + 1] == "not taken: helper2.py: a symbolic link (not followed)"
    assert lines[at + 2] == "not taken: shadow.py: a hard link (2 names; copy the file)"
    assert lines[at + 3] == "not taken: 'x\\nPASS\\x1b[32m.py': not a plain module name"
    assert not any(line.startswith("PASS") for line in lines) and "\x1b" not in "".join(lines)
    # in colour, only the label is painted: the name's escape stays visible text
    painted = text.render(rep, color=True)
    assert "\x1b[33mnot taken\x1b[0m: helper2.py" in painted and "\\x1b[32m" in painted
    verbose = text.render(rep, verbosity=text.VERBOSE)
    assert "with helper.py, utils.py (sibling modules)" in verbose and "not taken: helper2.py" in verbose
    quiet = text.render(rep, verbosity=text.QUIET)
    assert "sibling" not in quiet and "not taken" not in quiet
    # one module: singular; none taken but one left out: the reason only; no siblings: no line
    one = text.render(report([], {"siblings": {"taken": ["helper.py"], "skipped": []}}))
    assert "with helper.py (sibling module)\n" in one and "not taken" not in one
    left = text.render(report([], {"siblings": {"taken": [], "skipped": ["json.py: shadows json; rename it"]}}))
    assert "with " not in left and "not taken: json.py: shadows json; rename it" in left
    assert "sibling" not in text.render(report([]))


def test_the_failing_cases_heading_says_what_each_count_counts():
    """An instructor read "5 of 36 shown; all 66 failing case runs" beside "tolerance: 64 cases"
    as three counts of one thing: the heading says a case is listed once for all its dtypes and
    the JSON has one run per case and dtype."""
    runs = [case("batch", ((4, 8), (12, 8)), dtype=dt) for dt in ("float16", "float32", "float64")]
    runs.append(case("single", ((1, 8), (12, 8))))
    heading = next(line for line in text.render(report(runs)).splitlines() if line.startswith("Failing cases"))
    assert heading == ("Failing cases (smallest first; 2 of 2 shown, each once for all the dtypes it fails in; "
                       "4 failing graded runs in all, one per case and dtype):")


def test_the_heading_counts_graded_runs_only_never_a_shrunk_case():
    """"0 of 3 cases passed" and "4 failing runs" once sat on one screen: the shrunk case,
    extra feedback, was counted as a failing run."""
    import dataclasses
    runs = [case("batch", ((4, 8), (12, 8)), dtype=dt) for dt in ("float16", "float32", "float64")]
    small = dataclasses.replace(case("small", ((1, 2), (3, 2))), name="shrunk:batch[float16]", group="shrunk",
                                shrunk=True)
    out = text.render(report(runs + [small]))
    heading = next(line for line in out.splitlines() if line.startswith("Failing cases"))
    assert "3 failing graded runs in all" in heading and "0 of 3 cases passed" in out


def test_the_smallest_failing_input_leads_even_with_an_axis_of_one():
    """A learner's trial: the shrunk case (1, 1, 2) counted as degenerate (an axis of 1), so six
    larger cases came first and it was not among the five shown. Found failing by the search,
    it is the most telling example: it leads its kind."""
    import dataclasses
    runs = [case(f"batch{i}", ((4, 8 + i), (12, 8 + i))) for i in range(6)]
    small = dataclasses.replace(case("small", ((1, 1, 2), (3, 2))), name="shrunk:batch0[float32]", group="shrunk",
                                shrunk=True)
    out = text.render(report(runs + [small]))
    shown = [line.split()[1] for line in out.splitlines() if line.startswith("x ")]
    assert shown[0] == "shrunk:batch0[float32]" and len(shown) == text.MAX_CASES, shown


def test_a_stubs_must_raise_cases_come_after_its_own_failure(tmp_path):
    """A newcomer's finding: a ``raise NotImplementedError`` stub's list of failing cases began
    with the must-raise cases (the smallest: "raised NotImplementedError, not one of IndexError")
    before any case that said to write the body. Kinds ``raises`` and ``unearned`` are listed
    after the others, in the text report and the notebook's HTML."""
    from grader.batch.gradebook import report_from_json
    from grader.reports import reporter
    from tests.conftest import grade_function_in_process
    stub = tmp_path / "stub.py"
    stub.write_text("def embedding_lookup(token_ids, embedding_matrix):\n    raise NotImplementedError('TODO')\n")
    code, data = grade_function_in_process(stub, "--problem", "embedding_lookup", "--no-shrink", "--max-examples", "4")
    assert code == 1 and {c["failure"]["kind"] for c in data["cases"]} == {"exception", "raises"}
    text = reporter("text").render(report_from_json(data), audience="learner")
    listed = text.split("Failing cases", 1)[1]
    assert listed.index("exception: NotImplementedError") < listed.index("raises")
    from grader.reports.notebook_html import render_html
    page = render_html(data)
    assert page.index("NotImplementedError") < page.index("not one of")


def test_a_scalar_input_is_shown_by_its_value_not_as_an_empty_shape():
    """A newcomer read ``axis () int64`` as an empty array: a 0-d input is ``axis = 1`` when the
    report has its value, else ``axis (int64 scalar)``."""
    from grader.reports.text import _shapes
    from grader.results import ArrayInfo, CaseResult
    case = CaseResult(name="c[float16]", group="g", status="failed", dtype="float16", rank=3,
                      inputs={"logits": ArrayInfo(shape=(2, 5, 3), dtype="float16"),
                              "axis": ArrayInfo(shape=(), dtype="int64")}, values={"logits": [], "axis": 1})
    assert _shapes(case) == "logits (2, 5, 3) float16, axis = 1"
    case.values = None
    assert _shapes(case) == "logits (2, 5, 3) float16, axis (int64 scalar)"


def test_the_html_feedback_shows_a_scalar_input_by_its_value_too():
    """The same in the HTML feedback page (a newcomer read ``temperature () float64`` there while
    the text report said ``temperature = 0.5``)."""
    from grader.reports.notebook_html import render_html
    case = {"name": "c[float32]", "group": "g", "status": "failed", "dtype": "float32", "rank": 1,
            "inputs": {"logits": {"shape": [3], "dtype": "float32"}, "temperature": {"shape": [], "dtype": "float64"}},
            "values": {"logits": [1.0, 2.0, 3.0], "temperature": 0.5},
            "failure": {"kind": "tolerance", "message": "3 / 3 elements are outside the tolerance", "data": {}}}
    data = {"problem": "p", "title": "P", "submission": "s.py", "passed": False, "score": 0, "max_score": 1,
            "cases": [case], "groups": [], "summary": [], "environment": {}, "output": {}}
    page = render_html(data)
    assert "logits (3,) float32, temperature = 0.5" in page and "temperature ()" not in page
    case["values"] = None
    assert "temperature (float64 scalar)" in render_html(data)


def test_a_jax_reports_header_says_jax_enable_x64_once():
    """A learner's trial: "jax_enable_x64 on" closed the header line and opened the note under it
    (tied_lm_head's JAX note says it); a problem whose note does not still gets it in the header."""
    from grader.spec import load_problem
    from .conftest import PROBLEMS
    note = load_problem(PROBLEMS / "tied_lm_head.yaml").framework_notes["jax"]
    assert "jax_enable_x64" in note
    for framework_note in (note, ""):
        out = text.render(report([case("c", ((2,), (3, 2)), kind="tolerance")],
                                 env_extra={"framework": "jax", "framework_note": framework_note}))
        assert out.count("jax_enable_x64") == 1, out[:400]


def test_a_case_failing_in_another_dtype_with_another_hint_is_not_the_same_way():
    """A learner's trial: "(the same case fails the same way in float16, float64)" where
    float64's hint said the opposite of float32's."""
    import dataclasses
    first, same, other = (case("batch", ((4, 8), (12, 8)), kind="tolerance", dtype=dt) for dt in
                          ("float32", "float16", "float64"))
    first.failure.hint = same.failure.hint = "promoted to float64"
    other = dataclasses.replace(other, failure=dataclasses.replace(other.failure, hint="demoted to float32"))
    out = text.render(report([first, same, other]))
    assert "(the same case fails the same way in float32)" in out   # (float16 is listed first, by name)
    assert "(in float64 it fails as tolerance too, with another hint: demoted to float32)" in out


def test_a_hint_only_large_cases_carry_is_shown_among_the_five():
    """A newcomer's masked_mean_pool file divided by the count (NaN in every small case) and
    summed in float16 (an overflow only two long cases reach): the five smallest cases all said
    NaN and the overflow's hint was in the JSON alone. The smallest case of each hint id is
    shown first; the cases shown are still listed smallest first."""
    import dataclasses

    def hinted(name, n, idea):
        c = case(name, ((n, 8), (12, 8)), kind="non_finite")
        return dataclasses.replace(c, failure=dataclasses.replace(
            c.failure, hint=f"the {idea} hint", data={"hint_id": idea}))
    runs = [hinted(f"small{i}", 2 + i, "nan_where_zero") for i in range(7)]
    runs += [hinted("long_a", 500, "half_sum_overflow"), hinted("long_b", 600, "half_sum_overflow")]
    out = text.render(report(runs))
    shown = [line.split()[1] for line in out.splitlines() if line.startswith("x ")]
    assert shown == ["small0[float32]", "small1[float32]", "small2[float32]", "small3[float32]",
                     "long_a[float32]"], shown
    assert "the half_sum_overflow hint" in out
    heading = next(line for line in out.splitlines() if line.startswith("Failing cases"))
    assert heading.startswith("Failing cases (smallest first, each hint and kind at least once; 5 of 9 shown")
    # with one hint only, the five smallest, and the heading as before
    out = text.render(report(runs[:7]))
    assert [line.split()[1] for line in out.splitlines() if line.startswith("x ")] == \
        [f"small{i}[float32]" for i in range(5)]
    assert "each hint and kind at least once" not in out


def test_a_shape_failure_of_an_axis_of_one_and_a_zero_shrunk_case_lead_and_each_kind_is_shown():
    """A learner's trial (layer_norm without keepdims): the one shape failure, x (4, 1) giving
    (4, 4), came 13th (an axis of 1 counted as degenerate) and the shrunk (2, 3) case, all
    zeros, was not shown; five cases of one exception filled the list. A shape failure is not
    put back for its axes, a shrunk case not for its zeros, and each failure kind is shown."""
    import dataclasses
    d1 = case("d_1", ((4, 1), (1, 1)), kind="shape")
    zeros = {"hidden": [[0.0, 0.0, 0.0]] * 2, "embedding_matrix": [[0.0, 0.0, 0.0]] * 3}
    small = dataclasses.replace(case("small", ((2, 3), (3, 3)), values=zeros), name="shrunk:gen0[float16]",
                                group="shrunk", shrunk=True)
    many = [case(f"gen{i}", ((5, 13 + i), (7, 13 + i)), group="generated") for i in range(1, 8)]
    order = [line.split()[1] for line in text.render(report([*many, d1, small])).splitlines()
             if line.startswith("x ")]
    assert order[:2] == ["d_1[float32]", "shrunk:gen0[float16]"], order
    big = case("huge", ((64, 1024), (512, 1024)), kind="shape")      # the only shape failure, the largest case
    order = [line.split()[1] for line in text.render(report([*many, big])).splitlines() if line.startswith("x ")]
    assert len(order) == text.MAX_CASES and "huge[float32]" in order, order


def test_one_hint_idea_with_other_numbers_in_other_dtypes_is_the_same_way():
    """A trial: "constant factor of 0.2001" in bfloat16, then three lines "(in float16 it fails
    as tolerance too, with another hint: ... 0.2)": one hint id is one way of failing."""
    cases = []
    for dtype, factor in (("bfloat16", "0.2001"), ("float16", "0.2"), ("float32", "0.2")):
        c = case("all_valid", ((3, 4), (5, 4)), kind="tolerance", dtype=dtype)
        c.failure.hint = f"looks like the whole result was multiplied by a constant factor of {factor}"
        c.failure.data = {"hint_id": "constant_factor"}
        cases.append(c)
    other = case("all_valid", ((3, 4), (5, 4)), kind="tolerance", dtype="float64")
    other.failure.hint, other.failure.data = "compute in float64", {"hint_id": "float32_compute"}
    out = text.render(report([*cases, other]))
    assert "(the same case fails the same way in float16, float32)" in out, out
    assert "another hint: compute in float64" in out and out.count("another hint") == 1, out


def test_a_tolerance_explanation_is_said_once_then_referred_to():
    """A helper's trial: the same long derivation of the allowance under every failing case. The
    text report says it once per wording, then refers to the case that said it."""
    from grader.reports.text import _case_lines
    from grader.results import ArrayInfo, CaseResult, Failure
    why = "tolerance: derived from the reference in float32 (unit roundoff 5.96e-08): 4 x (...) there"

    def case(name, explanation):
        return CaseResult(name=name, group="g", dtype="float32", status="failed", rank=1,
                          inputs={"x": ArrayInfo(shape=(3,), dtype="float32")},
                          failure=Failure(kind="tolerance", message="1 / 3 elements are outside the tolerance",
                                          details=["worst at index (0,): ...", explanation]))
    seen: dict = {}
    first = [t for t, _, _ in _case_lines(case("a[float32]", why), seen)]
    second = [t for t, _, _ in _case_lines(case("b[float32]", why), seen)]
    other = [t for t, _, _ in _case_lines(case("c[float32]", why.replace("float32", "float64")), seen)]
    assert f"    {why}" in first and f"    {why}" not in second
    assert "    (tolerance: as for a[float32] above)" in second
    assert any("float64" in t for t in other)    # another wording is said in full


SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"


#: masked_mean_pool's sum kept in float16: a float16 generated case fails and is shrunk
HALF_SUM = """import numpy as np

def masked_mean_pool(embeddings, mask):
    m = mask[..., None].astype(embeddings.dtype)
    total = (embeddings * m).sum(axis=-2, dtype=embeddings.dtype)
    return total / np.maximum(m.sum(axis=-2, dtype=embeddings.dtype), 1)
"""


@pytest.mark.parametrize("name", ["wrong_exception_stub.py", "half_sum.py"])
def test_the_text_report_and_the_feedback_page_count_the_same_failing_cases(name, tmp_path):
    """A class's feedback said "5 of 29 shown" in the .txt and "5 of 27" in the .html: the page
    listed a shrunk case with the case it was shrunk from, and one error of the run once. Both
    count entries alike now (common.entry_key); the text leads with the shrunk case and names
    the other cases with the same error once each, without dtypes."""
    import re

    from markupsafe import escape

    from grader.batch.gradebook import report_from_json
    from grader.reports import notebook_html
    from tests.conftest import grade_function_in_process

    path, problem = SUBMISSIONS / name, "tied_lm_head"
    if name == "half_sum.py":
        path, problem = tmp_path / name, "masked_mean_pool"
        path.write_text(HALF_SUM)
    _, data = grade_function_in_process(path, "--problem", problem, "--max-examples", "8", "--audience", "learner")
    report = report_from_json(data)
    txt = text.render(report, audience="learner")
    page = notebook_html.feedback_page(report, audience="learner")
    counts = re.findall(r"(\d+) of (\d+) shown", txt)
    html_counts = re.findall(r"(\d+) of (\d+) shown", page)
    assert counts and html_counts and counts[0] == html_counts[0], (counts, html_counts)
    if name == "wrong_exception_stub.py":   # one NotImplementedError in every case: one entry
        assert counts[0] == ("1", "1") and re.search(r"\(\d+ more cases fail with the same message, in \d+ graded runs: "
                                                     r"[a-z_0-9]+, ", txt), txt
    else:                                   # the shrunk case stands for its original, listed once
        assert any(c.get("shrunk") for c in data["cases"])
        verbose = text.render(report, audience="learner", verbosity=text.VERBOSE)
        entries = re.findall(r"^x (\S+)", verbose, re.M)
        shrunk = [e for e in entries if e.startswith("shrunk:")]
        assert shrunk and not [e for e in shrunk if e.removeprefix("shrunk:") in entries], entries
        # with a hint, its own or else its original's, the one the page shows for it (the .txt gave
        # none, the .html one); which depends on the input hypothesis shrank to (NumPy sums a
        # float16 axis in float32 where it is contiguous: the sum is then rounded once, not kept)
        block = verbose.split(f"x {shrunk[0]}", 1)[1].split("\nx ", 1)[0]
        own = next(c for c in data["cases"] if c["name"] == shrunk[0])["failure"].get("hint")
        original = next(c for c in data["cases"] if c["name"] == shrunk[0].removeprefix("shrunk:"))
        told = own or original["failure"]["hint"]
        assert told and f"hint: {told}" in block, block
        card = page.split(shrunk[0], 1)[1].split("border-left", 1)[0]
        assert str(escape(told)) in card, card
        # the page's heat map is of a case it lists
        pictured = re.search(r"Where the output is off, in ([^ ]+) \(", page)
        assert pictured is None or pictured.group(1) in page.split("Where the output is off")[0], pictured


def test_a_learner_who_submitted_nothing_reads_so_on_the_page_too():
    """The .txt said 'score 0 / 10  (no submission)', the .html '(0 of 0 cases passed)' with a
    table of groups of 0 of 0 (an instructor's trial)."""
    from grader.batch.roster import NO_SUBMISSION
    from grader.batch.gradebook import placeholder_report
    from grader.reports import notebook_html
    from grader.results import Failure
    from grader.spec import find_problem, load_problem
    report = placeholder_report(load_problem(find_problem("masked_mean_pool", None)), "",
                                Failure(kind="missing", message=NO_SUBMISSION), 0.0)
    page = notebook_html.feedback_page(report, audience="learner")
    assert "(no submission)" in page and "0 of 0" not in page
    assert "(no submission)" in text.render(report, audience="learner")


def test_a_replay_of_thousands_of_characters_is_named_not_printed_unless_verbose():
    """A shrunk case's ``--replay`` literal of a (3, 3, 52) and an (11, 52) input filled about
    3,000 characters of the default report (a newcomer's finding): it is named with its length
    and where to find it; -v prints it whole, and a short one is printed as before."""
    long = case("shrunk:gen002", ((3, 3, 52), (11, 52)), group="")
    long.replay = "grader check sub.py --replay '" + "0.0, " * 700 + "'"
    short = case("gen003", ((2, 4), (3, 4)))
    out = text.render(report([long, short]))
    assert long.replay not in out and f"{len(long.replay):,} characters long" in out
    assert short.replay in out
    assert long.replay in text.render(report([long, short]), verbosity=text.VERBOSE)
