"""The instructor's view of a class (issue 37), piece by piece and in process: submission times
(Gradescope's metadata, a Git commit's time, the file's time) and lateness; the
changes since the previous run and why; the similarity report (copydetect's winnowing) with the
starter code left out; the grid's reasons and cases not run; one row per mistake in the
commonest hints whatever its numbers. tests/test_instructor_class.py grades a whole class."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from grader.batch import gradebook, history, times
from grader.batch.discovery import Submission
from grader.errors import GraderError
from grader.reports import json_report
from grader.reports.classview import lateness
from grader.results import ArrayInfo, CaseResult, Failure, GroupScore, Report


def test_deadline_parses_iso_8601_and_bad_input_is_one_clear_error():
    assert times.parse_deadline("2026-12-05T23:59") == datetime(2026, 12, 5, 23, 59, tzinfo=timezone.utc)
    assert times.parse_deadline("2026-12-05T23:59-05:00").utcoffset().total_seconds() == -5 * 3600
    with pytest.raises(GraderError, match="not an ISO 8601"):
        times.parse_deadline("next friday")
    assert lateness(None) == "" and lateness(-5) == "on time" and lateness(0) == "on time"
    assert lateness(30) == "1 min late" and lateness(2 * 3600 + 5 * 60) == "2 h 5 min late"
    assert lateness(3 * 86400 + 4 * 3600) == "3 d 4 h late"


def test_submission_time_from_gradescope_git_or_the_file(tmp_path):
    """Gradescope's created_at first, then a Git repository's HEAD commit, then the file's mtime;
    a learner with no file has no time (an empty folder's own time is no submission's)."""
    import subprocess

    deadline = datetime(2026, 1, 10, tzinfo=timezone.utc)
    gs = tmp_path / "gs" / "submission"
    gs.mkdir(parents=True)
    (gs / "a.py").write_text("x = 1\n")
    (tmp_path / "gs" / "submission_metadata.json").write_text(json.dumps(
        {"id": 1, "created_at": "2026-01-09T14:22:32.365935-07:00", "users": []}))  # Gradescope's documented example form
    git = tmp_path / "gitlearner"
    git.mkdir()
    (git / "a.py").write_text("x = 2\n")
    when = "2026-01-11T08:00:00+00:00"
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "L", "GIT_AUTHOR_EMAIL": "l@x", "GIT_COMMITTER_NAME": "L", "GIT_COMMITTER_EMAIL": "l@x"}
    for argv in (["init", "-q"], ["add", "a.py"], ["commit", "-q", "-m", "hand in"]):
        subprocess.run(["git", "-C", str(git), *argv], check=True, env=env, capture_output=True)
    plain = tmp_path / "plain.py"
    plain.write_text("x = 3\n")
    os.utime(plain, (deadline.timestamp() - 60, deadline.timestamp() - 60))
    empty = tmp_path / "empty"
    empty.mkdir()
    subs = [Submission("gs", gs / "a.py", siblings=True), Submission("git", git / "a.py", siblings=True),
            Submission("plain", plain), Submission("empty", None, note="no file", folder=str(empty))]
    out = tmp_path / "out"
    out.mkdir()
    recorded = times.record(out, subs, deadline, given=[gs, tmp_path])  # gs/submission given as Gradescope's layout
    assert recorded["gs"].source == "gradescope" and recorded["gs"].at == "2026-01-09T21:22:32+00:00"
    assert recorded["gs"].late_seconds < 0
    assert recorded["git"].source == "git" and recorded["git"].at == "2026-01-11T08:00:00+00:00"
    assert lateness(recorded["git"].late_seconds) == "1 d 8 h late"
    assert recorded["plain"].source == "mtime" and lateness(recorded["plain"].late_seconds) == "on time"
    assert "empty" not in recorded
    deadline_read, read_back = times.read(out)
    assert deadline_read == "2026-01-10T00:00:00+00:00" and read_back == recorded


def _report(score: float, digest: str, passed: bool = False) -> Report:
    env = {"submission_sha256": digest, "seed": 0, "framework": "numpy"}
    return Report(problem="p", title="P", submission="a.py", passed=passed, score=score, max_score=10.0, failure=None,
                  cases=[], groups=[GroupScore(group="g", points=10, earned=score, passed=0, total=1)], summary=[],
                  environment=env,
                  output={"stdout": "", "stderr": ""}, seconds=1.0)


def _run(out: Path, scores: dict[str, tuple[float, str]], settings: dict) -> list[gradebook.Row]:
    from grader.batch.settings import write_settings
    rows = []
    for learner, (score, digest) in scores.items():
        rep = _report(score, digest)
        path = gradebook.report_path(out, learner)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json_report.render(rep, audience="instructor"))
        rows.append(gradebook.Row.of_report(learner, rep, 1.0))
    gradebook.write_gradebook(out / gradebook.GRADEBOOK, rows)
    write_settings(out, settings)
    return rows


def test_changes_since_the_previous_run_say_how_much_and_why(tmp_path):
    out = tmp_path / "out"
    base = {"problem": "p", "spec": "aaa", "grader": "1", "seed": 0, "seed_secret": False, "max_examples": 5}
    _run(out, {"ann": (10, "d1"), "bob": (5, "d2"), "cat": (4, "d3")}, base)
    kept = history.archive(out)
    assert kept.parent.name == "history" and (kept / "gradebook.csv").is_file() and (kept / "reports").is_dir()
    assert not (out / "gradebook.csv").exists()
    # same spec and seed; bob changed his file; cat's score moved with nothing recorded changed
    rows = _run(out, {"ann": (10, "d1"), "bob": (8, "d2b"), "cat": (4.5, "d3")}, base)
    name, changed = history.changes(out, rows)
    assert name == kept.name
    assert [(c.learner, c.before, c.after, c.why) for c in changed] == [
        ("bob", 5, 8, ["file changed"]),
        ("cat", 4, 4.5, ["nothing recorded changed (timing or randomness in the submission)"])]
    # a spec change and a seed change are said for everyone whose score moved
    history.archive(out)
    rows = _run(out, {"ann": (9, "d1"), "bob": (8, "d2b"), "cat": (4.5, "d3")}, {**base, "spec": "bbb", "seed": 3})
    _, changed = history.changes(out, rows)
    assert [(c.learner, c.delta, c.why) for c in changed] == [("ann", -1, ["spec changed", "seed changed"])]


def test_no_history_no_changes(tmp_path):
    assert history.changes(tmp_path, []) == (None, [])


ORIGINAL = '''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    """Logits of the tied head."""
    hidden_states = np.asarray(hidden)
    table = np.asarray(embedding_matrix)
    width = hidden_states.shape[-1]
    flat = hidden_states.reshape(-1, width)
    logits = np.matmul(flat, table.T)
    vocab = table.shape[0]
    return logits.reshape(hidden_states.shape[:-1] + (vocab,))
'''
RENAMED = (ORIGINAL.replace("hidden_states", "hs").replace("table", "w").replace("width", "d")
           .replace("flat", "rows").replace("logits", "scores").replace("vocab", "v")
           .replace("Logits of the tied head.", "my own work, honest"))
OTHER = '''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    """Logits of the tied head."""
    out = np.einsum("...d,vd->...v", hidden, embedding_matrix)
    return out.astype(np.result_type(hidden, embedding_matrix))
'''
STARTER = '''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    """Logits of the tied head."""
    raise NotImplementedError
'''


def test_similarity_finds_a_copy_with_renamed_variables_and_leaves_out_the_starter():
    from grader.reports.similarity import similar_pairs
    pairs = similar_pairs({"ann": ORIGINAL, "bob": RENAMED, "cat": OTHER}, [STARTER], threshold=0.5)
    assert [(p.a, p.b) for p in pairs] == [("ann", "bob")]
    assert pairs[0].share >= 0.8
    matched = [text.strip() for text, hit in pairs[0].lines_b if hit]
    assert "rows = hs.reshape(-1, d)" in matched and "scores = np.matmul(rows, w.T)" in matched
    # the handed-out lines alone are never a match: two learners who only filled in one line
    one = STARTER.replace("raise NotImplementedError", "return hidden @ embedding_matrix.T")
    assert similar_pairs({"x": one, "y": one.replace("hidden @", "(hidden) @")}, [STARTER], 0.5) == []


def test_a_copy_declared_in_another_source_encoding_is_still_a_copy(tmp_path):
    """Round eleven of issue 32: ORIGINAL re-encoded under ``# coding: utf-7`` (or
    ``unicode_escape``) imports and passes as Python decodes it, but similarity read it as UTF-8
    and saw ``+AGk-`` blocks (or ``\\xNN``): the copy was in no pair. It is read as Python reads it."""
    from grader.reports.similarity import code_of, similar_pairs
    utf7 = tmp_path / "mallory.py"
    utf7.write_bytes(b"# coding: utf-7\n" + ORIGINAL.encode("utf-7"))
    escaped = tmp_path / "trent.py"
    escaped.write_bytes(b"# coding: unicode_escape\n" + "".join(f"\\x{ord(c):02x}" for c in ORIGINAL).encode())
    sources = {"ann": ORIGINAL, "mallory": code_of(utf7), "trent": code_of(escaped)}
    assert ORIGINAL in sources["mallory"] and ORIGINAL in sources["trent"]
    pairs = {(p.a, p.b) for p in similar_pairs(sources, [STARTER], threshold=0.5)}
    assert {("ann", "mallory"), ("ann", "trent")} <= pairs, pairs


def test_similarity_page_escapes_code_and_links_back(tmp_path):
    from grader.reports import similarity
    evil = ORIGINAL.replace("Logits of the tied head.", "</pre><script>alert(1)</script>")
    pairs = similarity.similar_pairs({"<b>ann</b>": evil, "bob": RENAMED}, [], threshold=0.3)
    page = similarity.render(pairs, learners=2, threshold=0.3, starters=[], title="Similar: p", links={})
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;ann&lt;/b&gt;" in page and 'href="summary.html"' in page
    assert "default-src 'none'" in page and "<script" not in page


def _case(group: str, status: str, kind: str | None = None, hint: str | None = None) -> CaseResult:
    failure = Failure(kind=kind, message="off", hint=hint) if kind else None
    return CaseResult(name=f"{group}{status}[float32]", group=group, status=status, dtype="float32", rank=1,
                      inputs={"x": ArrayInfo(shape=(2,), dtype="float32")}, failure=failure)


def _class_report(submission: str, passed: bool, score: float, cases: list, groups: list[tuple], *,
                  problem: str = "p", title: str = "P", environment: dict | None = None) -> Report:
    """A learner's report of ``cases`` with ``groups`` as (name, points, earned, passed, total);
    its maximum is the groups' points."""
    scores = [GroupScore(group=g, points=pts, earned=e, passed=n, total=t) for g, pts, e, n, t in groups]
    return Report(problem=problem, title=title, submission=submission, passed=passed, score=score,
                  max_score=float(sum(g.points for g in scores)), failure=None, cases=cases, groups=scores,
                  summary=[], environment=environment or {}, output={}, seconds=1.0)


def test_grid_says_why_and_how_many_cases_were_not_run():
    from grader.reports import classview
    full = _class_report("a.py", True, 4.0,
                         [_case("a", "passed")] * 3 + [_case("b", "passed")] * 2,
                         [("a", 2, 2, 3, 3), ("b", 2, 2, 2, 2)])
    crashed = _class_report("c.py", False, 0.0,
                            [_case("a", "error", "crash", "it died")] + [_case("a", "skipped")] * 2
                            + [_case("b", "skipped")] * 2,
                            [("a", 2, 0, 0, 3), ("b", 2, 0, 0, 2)])
    nothing = gradebook.placeholder_report(type("P", (), {"groups": {}, "id": "p", "title": "P", "max_score": 4.0})(),
                                           "", Failure(kind="missing", message="no submission: nothing was found"), 0.0)
    reports = {"ann": full, "dan": crashed, "kim": nothing}
    rows = [gradebook.Row.of_report(k, v, 1.0) for k, v in reports.items()]
    grid = classview.grid(rows, reports)
    assert grid.kind == "group" and grid.columns == ["a", "b"]
    lines = {line.learner: line for line in grid.lines}
    assert [c.text for c in lines["ann"].cells] == ["3/3", "2/2"] and lines["ann"].status == "passed"
    assert [c.text for c in lines["dan"].cells] == ["0/1", "not run"] and lines["dan"].not_run == 4
    assert lines["dan"].reason.startswith("crash in 1 case") and "4 cases were not run" in lines["dan"].reason
    assert [c.share for c in lines["dan"].cells] == [0.0, None]
    assert lines["kim"].status == "no submission" and lines["kim"].reason == "no submission"


def test_a_learner_graded_in_fewer_dtypes_has_no_cases_not_run():
    """An instructor read "19 cases were not run" on NumPy rows where every case ran: the class's
    largest case set (JAX's, with bfloat16) was counted as each learner's. Only a learner's own
    skipped cases are 'not run'."""
    from grader.reports import classview
    jax = _class_report("j.py", False, 2.0,
                        [_case("a", "passed")] * 3 + [_case("b", "failed")] * 2,
                        [("a", 2, 2, 3, 3), ("b", 2, 0, 0, 2)])
    numpy = _class_report("n.py", False, 2.0,
                          [_case("a", "passed")] * 2 + [_case("b", "failed")],
                          [("a", 2, 2, 2, 2), ("b", 2, 0, 0, 1)])
    reports = {"jo": jax, "nu": numpy}
    rows = [gradebook.Row.of_report(k, v, 1.0) for k, v in reports.items()]
    lines = {line.learner: line for line in classview.grid(rows, reports).lines}
    assert lines["nu"].not_run == 0 and "not run" not in lines["nu"].reason
    assert [c.title for c in lines["nu"].cells] == ["2 of 2 cases passed", "0 of 1 cases passed"]


def test_one_mistake_is_one_hint_row_whatever_its_numbers():
    """Issue 37: summary.html counted "offset of 1" and "offset of 0.999" as two hints."""
    from grader.reports import classview

    def rep(hint: str) -> Report:
        return Report(problem="p", title="P", submission="a.py", passed=False, score=0.0, max_score=1.0,
                      failure=Failure(kind="tolerance", message="off", hint=hint), cases=[],
                      groups=[GroupScore(group="a", points=1, earned=0, passed=0, total=1)], summary=[],
                      environment={}, output={}, seconds=1.0)
    reports = {"ann": rep("the output has a constant offset of 1"), "ben": rep("the output has a constant offset of 0.999"),
               "cat": rep("work in float16 for the output")}
    rows = [gradebook.Row.of_report(k, v, 1.0) for k, v in reports.items()]
    found = classview.common_hints(rows, reports)
    assert [len(who) for _, who in found] == [2, 1]
    assert "float16" in found[1][0]  # a number inside a word is not a value


def test_a_feedback_page_agrees_with_its_full_report_and_names_the_cases_not_run():
    """Issue 37: a feedback page's counts disagreed with its own full report and did not say
    that cases were not run after a crash."""
    import html
    import re

    from grader.reports.notebook_html import feedback_page
    crashed = _class_report("c.py", False, 0.0,
                            [_case("a", "passed"), _case("a", "error", "crash", "it died")]
                            + [_case("a", "skipped")] * 2 + [_case("b", "skipped")] * 2,
                            [("a", 2, 0.5, 1, 4), ("b", 2, 0, 0, 2)])
    page = html.unescape(feedback_page(crashed))
    counts = re.findall(r"(\d+ of \d+) cases passed", page)
    assert len(counts) >= 2 and set(counts) == {"1 of 6"}, counts   # the header and the full report
    assert "4 cases were not run" in page.split("full report")[0]    # said above the fold too
    assert 'id="group-a"' in page and 'id="group-b"' in page         # the grid's links land


def test_an_assignments_missing_function_is_not_graded_rather_than_one_failing_case():
    """Issue 37: in an assignment a missing function was a group "100 % failing" and a learner
    missing a 3-point problem read "171 of 172 cases passed"."""
    import html

    from grader.reports import classview, common, summary_md, view
    from grader.reports.notebook_html import feedback_page

    missing = Failure(kind="import", message="the submission defines no function 'pool'")
    stand_in = CaseResult(name="pool", group="pool", status="error", dtype="", rank=0, inputs={}, failure=missing)
    good = [dataclasses_replace(_case("a", "passed"), name=f"head/a{i}[float32]", group="head/a") for i in range(3)]
    env = {"assignment": {"id": "lesson", "problems": [
        {"problem": "head", "points": 1, "score": 1.0, "passed": True, "failure": None},
        {"problem": "pool", "points": 3, "score": 0.0, "passed": False, "failure": "import"}]}}
    ann = _class_report("a.py", False, 1.0,
                        good + [stand_in],
                        [("head/a", 1, 1, 3, 3), ("pool", 3, 0, 0, 1)],
                        problem="lesson", title="L", environment=env)
    pool_cases = [dataclasses_replace(_case("b", "passed"), name=f"pool/b{i}[float32]", group="pool/b") for i in range(5)]
    env_bob = {"assignment": {"id": "lesson", "problems": [
        {"problem": "head", "points": 1, "score": 1.0, "passed": True, "failure": None},
        {"problem": "pool", "points": 3, "score": 3.0, "passed": True, "failure": None}]}}
    bob = _class_report("b.py", True, 4.0,
                        good + pool_cases,
                        [("head/a", 1, 1, 3, 3), ("pool/b", 3, 3, 5, 5)],
                        problem="lesson", title="L", environment=env_bob)
    assert view.build(ann, common.INSTRUCTOR).counts_text == "3 of 4 cases passed; not graded: pool (import)"
    assert "3 of 4 cases passed; not graded: pool (import)" in html.unescape(feedback_page(ann))
    reports = {"ann": ann, "bob": bob}
    rows = [gradebook.Row.of_report(k, v, 1.0) for k, v in reports.items()]
    groups, _ = summary_md.failure_rates(rows, reports)
    assert [g for g, _, _ in groups] == ["head/a", "pool/b"]    # no "pool" group 100 % failing
    line = next(line for line in classview.grid(rows, reports).lines if line.learner == "ann")
    assert line.reason.startswith("pool not graded (import: the submission defines no function 'pool')")
    assert "5 cases were not run" in line.reason and "in 1 case" not in line.reason


def dataclasses_replace(obj, **changes):
    import dataclasses
    return dataclasses.replace(obj, **changes)


def test_merge_joins_the_shards_submission_times(tmp_path):
    """grader merge's summary.html keeps the times and the deadline its shards recorded."""
    from datetime import timezone as tz
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "m"
    for folder, name, when in ((a, "ann", 1_700_000_000), (b, "bob", 1_700_090_000)):
        folder.mkdir()
        (folder / f"{name}.py").write_text("x = 1\n")
        os.utime(folder / f"{name}.py", (when, when))
        times.record(folder, [Submission(name, folder / f"{name}.py")], datetime(2023, 11, 15, tzinfo=tz.utc))
    out.mkdir()
    times.merge(out, [a, b])
    deadline, merged = times.read(out)
    assert deadline == "2023-11-15T00:00:00+00:00" and sorted(merged) == ["ann", "bob"]
    assert merged["bob"].late_seconds > merged["ann"].late_seconds
    empty = tmp_path / "e"
    empty.mkdir()
    times.merge(empty, [tmp_path / "nowhere"])
    assert not (empty / times.TIMES).exists()


def test_the_similarity_page_shows_at_most_max_pairs_and_counts_the_rest():
    from grader.reports import similarity
    sources = {f"l{i:03d}": RENAMED.replace("scores", f"s{i}") for i in range(16)}   # 120 pairs, all alike
    pairs = similarity.similar_pairs(sources, [STARTER], threshold=0.5)
    assert len(pairs) == 120
    page = similarity.render(pairs, learners=16, threshold=0.5, starters=[], title="t", links={})
    assert page.count("<details") == similarity.MAX_PAIRS and "20 more pairs" in page


def test_nothing_of_a_link_fifo_or_hard_link_is_read_for_similarity_or_times(tmp_path):
    """The hostile class of tests/test_hostile_inputs.py holds a FIFO and a link to a secret: the
    similarity check must neither wait on the one nor show the other (it reads as the check does,
    grader.siblings.read_no_follow), nor may a learner's .git or Gradescope metadata be a FIFO."""
    from grader.reports.similarity import code_of
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET = 1\n")
    (tmp_path / "link.py").symlink_to(secret)
    os.mkfifo(tmp_path / "pipe.py")
    os.link(secret, tmp_path / "hard.py")
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert [code_of(tmp_path / n) for n in ("link.py", "pipe.py", "hard.py", "ok.py")] == [None, None, None, "x = 1\n"]
    learner = tmp_path / "learner"
    (learner / ".git").mkdir(parents=True)
    os.mkfifo(learner / ".git" / "HEAD")
    os.mkfifo(learner / times.METADATA)
    (learner / "a.py").write_text("x = 1\n")
    when, source = times.submission_time(learner / "a.py", learner)   # returns: no hang
    assert source == "mtime"


def test_a_copy_moved_into_a_helper_module_is_still_a_copy(tmp_path):
    """Round sixteen of issue 32: ORIGINAL copied into ``pooling.py`` (the function renamed)
    behind a one-line main file that imports it passed 10/10 and was in no pair: similarity read
    the main file only. A learner's file is compared with the modules its check takes along."""
    from grader.batch.outputs import write_similarity
    for learner, files in {"ann": {"solution.py": ORIGINAL}, "cat": {"solution.py": OTHER},
                           "bob": {"pooling.py": ORIGINAL.replace("def tied_lm_head", "def head"),
                                   "solution.py": "import pooling\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                                                  "    return pooling.head(hidden, embedding_matrix)\n"}}.items():
        (tmp_path / "class" / learner).mkdir(parents=True)
        for name, text in files.items():
            (tmp_path / "class" / learner / name).write_text(text)
    sources = {k: tmp_path / "class" / k / "solution.py" for k in ("ann", "bob", "cat")}
    out = tmp_path / "out"
    out.mkdir()
    write_similarity(out, sources, [], 0.5, "tied_lm_head", helpers={"ann", "bob", "cat"})
    page = (out / "similarity.html").read_text()
    assert "bob" in page and "ann" in page and "cat" not in page.split("<table", 1)[-1]
    write_similarity(out, sources, [], 0.5, "tied_lm_head")   # the main files alone: bob is no copy
    assert "bob" not in (out / "similarity.html").read_text().split("<table", 1)[-1]


def test_the_grid_reason_says_how_many_of_its_cases_are_hidden():
    """The grid counts hidden cases, which the learner's gradebook message leaves out: an
    instructor read "dtype in 21 cases" in summary.html and "dtype: 19 cases" in the gradebook.
    The grid says how many of them are hidden."""
    import dataclasses

    from grader.reports import classview
    hidden = dataclasses.replace(_case("h", "failed", "dtype"), visibility="hidden", name="h[float32]")
    rep = _class_report("d.py", False, 1.0, [_case("a", "failed", "dtype")] * 2 + [hidden, _case("b", "passed")],
                        [("a", 2, 0, 0, 2), ("h", 1, 0, 0, 1), ("b", 1, 1, 1, 1)])
    rows = [gradebook.Row.of_report("dee", rep, 1.0)]
    line = classview.grid(rows, {"dee": rep}).lines[0]
    assert line.reason.startswith("dtype in 3 cases (1 hidden)"), line.reason


def test_a_helper_module_edited_later_moves_the_submission_time(tmp_path):
    """A learner's folder of a main file and a helper: the helper edited after the deadline left
    the submission time at the main file's (an instructor's trial); the latest .py counts now,
    never through a link, and a file among other learners' files keeps its own time."""
    from grader.batch import times
    learner = tmp_path / "leo"
    learner.mkdir()
    (learner / "pool.py").write_text("import masking\n")
    (learner / "masking.py").write_text("X = 1\n")
    (learner / "notes.txt").write_text("later\n")
    (tmp_path / "elsewhere.py").write_text("")
    (learner / "link.py").symlink_to(tmp_path / "elsewhere.py")
    os.utime(learner / "pool.py", (1_700_000_000, 1_700_000_000))
    os.utime(learner / "masking.py", (1_700_000_500, 1_700_000_500))
    os.utime(learner / "notes.txt", (1_800_000_000, 1_800_000_000))
    os.utime(tmp_path / "elsewhere.py", (1_900_000_000, 1_900_000_000))
    when, source = times.submission_time(learner / "pool.py", learner)
    assert source == "mtime" and when.timestamp() == 1_700_000_500
    assert times.submission_time(learner / "pool.py", None)[0].timestamp() == 1_700_000_000
