"""The instructor's class view (issue 12, item 4): summary.html with its charts, the learners'
feedback files, and the gradebook's message column, for a class of 30 built in process
(reports made by hand and written as ``grader grade`` writes them; no submission is run).

summary.html is opened in headless Chromium to check that every chart decodes; that test skips
when /usr/bin/chromium is absent (.ci/run installs it), or fails if GRADER_REQUIRE_CHROMIUM is set.
"""
from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.batch import discovery, gradebook, outputs
from grader.reports import json_report, summary_md
from grader.results import ArrayInfo, CaseResult, Failure, GroupScore, Report

HINT_T = "looks like the embedding matrix was not transposed"
HINT_F = "accumulate in float32, not float16"
SECRET = "Hidden0Case9"
ODD = ["<script>alert(1)</script>", "$x^2$ and $\\alpha$", '=HYPERLINK("http://x","y")', "+1", "-rf", "@sum",
       "..", "../../etc/passwd", " spaced name ", "ü名前", "é", "è", "x" * 300, "a\tb"]
CHROMIUM = "/usr/bin/chromium"


def case(name, group, status="passed", failure=None, visibility="visible", dtype="float32"):
    return CaseResult(name=f"{name}[{dtype}]", group=group, status=status, dtype=dtype, rank=1,
                      inputs={"hidden": ArrayInfo(shape=(3,), dtype=dtype)}, visibility=visibility, failure=failure,
                      seconds=0.01)


def wrong(hint=None, message="12 / 12 elements (100.0%) are outside the tolerance"):
    return Failure(kind="tolerance", message=message, hint=hint, details=["worst at [0, 1]: got 3.5, expected 1.25"])


def learner_report(i: int, learner: str) -> Report:
    """Learner ``i``: a pattern of passing and failing cases that varies with ``i``."""
    fail_t, fail_f, fail_h = i % 3 == 0, i % 4 == 1, i % 5 == 2
    cases = [case("worked_example", "examples"),
             case("batch", "examples", "failed" if fail_t else "passed", wrong(HINT_T) if fail_t else None),
             case("gen000", "random"),
             case("gen001", "random", "failed" if fail_f else "passed",
                  wrong(HINT_F + (f" <b>{learner}</b>" if i == 1 else "")) if fail_f else None, dtype="float16"),
             case(f"{SECRET}0", "secret", "failed" if fail_h else "passed",
                  wrong(None, f"wrong at {SECRET}") if fail_h else None, visibility="hidden"),
             case(f"{SECRET}1", "secret", visibility="hidden")]
    groups = [GroupScore(group="examples", points=2, earned=2 - fail_t, passed=2 - fail_t, total=2),
              GroupScore(group="random", points=2, earned=2 - fail_f, passed=2 - fail_f, total=2),
              GroupScore(group="secret", points=4, earned=4 - 2 * fail_h, passed=2 - fail_h, total=2,
                         visibility="hidden")]
    score = sum(g.earned for g in groups)
    env = {"seed": 7, "framework": "numpy", "dtypes": ["float32", "float16"], "grader": "0.2.0", "function_line": 3}
    return Report(problem="tied_lm_head", title="Tied LM head", submission=f"class/{learner}/solution.py",
                  passed=score == 8, score=score, max_score=8.0, failure=None,
                  cases=cases, groups=groups, summary=[], environment=env, output={"stdout": "", "stderr": "",
                                                                                   "truncated": False},
                  seconds=30.0 if i == 0 else 1.0 + i / 10)  # the <script> learner is the slowest


def crashed_report(learner: str) -> Report:
    return Report(problem="tied_lm_head", title="Tied LM head", submission=f"{learner}.py", passed=False, score=0.0,
                  max_score=8.0,
                  failure=Failure(kind="crash",
                                  message=f"the check of <i>{learner}</i> was stopped at the hard limit"), cases=[],
                  groups=[GroupScore(group="examples", points=2, earned=0, passed=0, total=0)], summary=[],
                  environment={}, output={}, seconds=0.0)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of 30 (the odd names among them) written as grader grade writes it; what
    write_outputs did (gradebook, junit, summary.md, summary.html, feedback): the pictures it
    drew (PNGs saved) and the reports it read, counted."""
    out = tmp_path_factory.mktemp("out")
    names = ODD + [f"learner{i:02d}" for i in range(30 - len(ODD))]
    rows = []
    for i, name in enumerate(names):
        rep = crashed_report(name) if i == len(names) - 1 else learner_report(i, name)
        learner = discovery.learner_id(name)
        path = gradebook.report_path(out, learner)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json_report.render(rep, audience="instructor"))
        rows.append(gradebook.Row.of_report(learner, rep, rep.seconds))
    from matplotlib.figure import Figure
    work = {"pictures": 0, "reports_read": 0}
    save, load = Figure.savefig, outputs.load_report

    def saved(self, *args, **kwargs):
        work["pictures"] += 1
        return save(self, *args, **kwargs)

    def loaded(path):
        work["reports_read"] += 1
        return load(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", saved)
        mp.setattr(outputs, "load_report", loaded)
        outputs.write_outputs(out, rows, "instructor")
    return out, rows, work


class _Page(HTMLParser):
    """The tags, images and text of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[dict[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)


def parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def test_summary_html_has_charts_tables_and_escapes_learner_text(graded_class):
    out, rows, seconds = graded_class
    text = (out / "summary.html").read_text()
    page = parse(text)
    # one script, the table sorter the CSP allows by its hash; learner text is never a script
    from grader.reports import classview
    assert page.tags.count("script") == 1 and f"<script>{classview._SORT_SCRIPT}</script>" in text
    assert "<script>alert" not in text and f"'sha256-{classview._SORT_HASH}'" in text
    assert html.escape("<script>alert(1)</script>") in text
    assert page.tags.count("b") == 1 and "i" not in page.tags  # a hint's and a crash message's, escaped
    assert "&lt;b&gt;" in text and "&lt;i&gt;" in text
    # no per-case chart (issue 37: its rows repeated their group's rate)
    assert [img["alt"] for img in page.images] == ["score histogram", "failure rate per case group",
                                                   "learners per hint", "slowest submissions"]
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.images)
    words = " ".join(page.text)
    assert "30 learners:" in words and "(1 could not be graded)" in words
    for heading in ("Learners by group", "Score distribution", "Failure rates per case group",
                    "Commonest hints", "Could not be graded", "Slowest submissions"):
        assert heading in words
    assert HINT_T in words  # the instructor's view: the hidden group is a column of the grid
    assert re.search(r"<th>Score</th><th>examples</th><th>random</th><th>secret</th><th>Reason</th>", text)
    # every learner link points at that learner's report
    links = re.findall(r'href="([^"]+)"', text)
    assert links and all((out / html.unescape(h).partition("#")[0]).is_file() for h in links)
    # a grid cell links to its group's row of the learner's feedback page
    for h in {html.unescape(h) for h in links if "#" in h}:
        page_path, _, anchor = h.partition("#")
        assert f'id="{anchor}"' in (out / page_path).read_text(), h
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_chart_text_is_not_mathtext(graded_class, monkeypatch):
    """A learner named ``$x^2$ ...`` is drawn as typed: text.parse_math is off for every chart."""
    import matplotlib.text
    drawn = []
    original = matplotlib.text.Text.draw

    def spy(self, renderer):
        if "$" in self.get_text():
            drawn.append((self.get_text(), self.get_parse_math()))
        return original(self, renderer)

    monkeypatch.setattr(matplotlib.text.Text, "draw", spy)
    out, rows, _ = graded_class
    from grader.reports import classview
    reports = {r.learner: gradebook.load_report(gradebook.report_path(out, r.learner)) for r in rows}
    for r in rows:  # make the $ learner the slowest, so its name is a bar label
        if r.learner.startswith("$"):
            r.seconds = 99.0
    classview.render(rows, reports)
    assert drawn and all(parse_math is False for _, parse_math in drawn)


def test_class_view_of_30_does_work_in_proportion_to_the_class(graded_class):
    """What kept the class view fast (it was a 15 s stopwatch, which failed at load 13-17): each
    report read once, and the pictures drawn are the summary's four charts (the flat per-case
    chart is gone, issue 37) and at most one heat map per learner's feedback page, never one per
    case or per chart redraw."""
    _, rows, work = graded_class
    assert work["reports_read"] == len(rows) == 30, work
    assert 4 <= work["pictures"] <= 4 + len(rows), work


def test_feedback_files_are_the_learner_audience_with_safe_distinct_names(graded_class):
    out, rows, _ = graded_class
    files = sorted((out / "feedback").iterdir())
    with open(out / "feedback" / "index.csv", newline="") as fh:
        index = list(csv.DictReader(fh))
    assert len(index) == len(rows) == 30
    names = [r["file"] for r in index]
    pages = [r["page"] for r in index]
    assert len(set(names)) == len(set(pages)) == 30
    assert {p.name for p in files} == set(names) | set(pages) | {"index.csv"}
    for page in pages:   # the same feedback as a page: no script, nothing loaded, hidden cases as counts
        body = (out / "feedback" / page).read_text()
        assert "<script" not in parse(body).tags and "default-src 'none'" in body and SECRET not in body
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*-[0-9a-f]{16}\.txt", name) and len(name) <= 62
    for name in names:
        text = (out / "feedback" / name).read_text()
        assert text.startswith(("PASS ", "FAIL ", "ERROR ")), text[:80]
        assert SECRET not in text  # hidden cases: counts only
    first = (out / "feedback" / gradebook.feedback_name(discovery.learner_id(ODD[0]))).read_text()
    assert "hidden cases:" in first and HINT_T in first
    # the index's learner cells are CSV-injection safe and read back to the ids
    from grader.reports.common import from_csv_cell
    assert sorted(from_csv_cell(r["learner"]) for r in index) == sorted(r.learner for r in rows)
    assert not any(r["learner"].startswith(("=", "+", "-", "@")) for r in index)


def test_gradebook_message_is_one_line_and_no_cell_is_a_formula(graded_class):
    out, rows, _ = graded_class
    lines = (out / "gradebook.csv").read_text().splitlines()
    assert len(lines) == 31  # the header and one physical line per learner: messages are one line
    with open(out / "gradebook.csv", newline="") as fh:
        book = list(csv.DictReader(fh))
    for row in book:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert "\n" not in row["message"] and row["message"]
    assert {r.learner for r in gradebook.read_gradebook(out / "gradebook.csv")} == {r.learner for r in rows}
    by = {r["learner"]: r for r in book}
    assert by["'=HYPERLINK(\"http://x\",\"y\")"]["passed"] in ("true", "false")
    assert SECRET not in (out / "gradebook.csv").read_text()  # the message is the learner's


def test_without_matplotlib_summary_html_is_skipped_with_a_note(tmp_path, graded_class, monkeypatch, capsys):
    import sys
    out, rows, _ = graded_class
    copy = tmp_path / "out"
    shutil.copytree(out / "reports", copy / "reports")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    outputs.write_outputs(copy, rows, "instructor")
    assert not (copy / "summary.html").exists() and (copy / "summary.md").is_file()
    assert "summary.html not written (matplotlib is missing" in capsys.readouterr().err
    assert len(list((copy / "feedback").glob("*.txt"))) == 30


# -- in a browser ---------------------------------------------------------------------------

PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => i.complete + ':' + i.naturalWidth + 'x' + i.naturalHeight);
  const p = document.createElement('pre'); p.id = 'probe'; p.textContent = imgs.join(' ');
  document.body.appendChild(p);
});
</script>"""


def chromium(url: str, *flags: str, tmp: Path) -> str:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=5000",
            *flags, url]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_summary_html_charts_render_in_headless_chromium(graded_class, tmp_path):
    if not Path(CHROMIUM).exists():
        if os.environ.get("GRADER_REQUIRE_CHROMIUM"):
            pytest.fail(f"GRADER_REQUIRE_CHROMIUM is set and {CHROMIUM} is missing")
        pytest.skip("needs Chromium at /usr/bin/chromium (apt-get install chromium; .ci/run installs it)")
    out, _, _ = graded_class
    page = (out / "summary.html").read_text()
    n = len(parse(page).images)
    # the page as written: the browser runs its one script, the table sorter the CSP allows by
    # hash (it marks the learner table's headings), and decodes every chart
    dom = chromium((out / "summary.html").as_uri(), "--dump-dom", tmp=tmp_path)
    assert dom.count("<script") == 1 and 'title="sort"' in dom and len(parse(dom).images) == n
    # a copy with a probe script (and no CSP) reports each image's decoded size
    probe = tmp_path / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", PROBE + "</body>"))
    dom = chromium(probe.as_uri(), "--dump-dom", tmp=tmp_path)
    found = re.search(r'<pre id="probe">([^<]*)</pre>', dom)
    assert found, dom[-2000:]
    sizes = found.group(1).split()
    assert len(sizes) == n == 4
    for s in sizes:
        complete, _, wh = s.partition(":")
        w, h = (int(v) for v in wh.split("x"))
        assert complete == "true" and w >= 300 and h >= 100, sizes
    # a broken chart is caught: a corrupt data URI decodes to nothing
    broken = probe.read_text().replace("data:image/png;base64,iVBOR", "data:image/png;base64,AAAA", 1)
    probe.write_text(broken)
    dom = chromium(probe.as_uri(), "--dump-dom", tmp=tmp_path)
    sizes = re.search(r'<pre id="probe">([^<]*)</pre>', dom).group(1).split()
    assert sizes[0].endswith(":0x0")


def _write_class(out: Path, reports: dict[str, Report]) -> list[gradebook.Row]:
    """Write ``reports`` (by learner) into ``out`` as grader grade does; their rows."""
    rows = []
    for learner, rep in reports.items():
        path = gradebook.report_path(out, learner)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json_report.render(rep, audience="instructor"))
        rows.append(gradebook.Row.of_report(learner, rep, rep.seconds))
    outputs.write_outputs(out, rows, "instructor")
    return rows


def _small_class() -> dict[str, Report]:
    """A learner who passes, one whose import failed (SyntaxError: nothing graded), and one whose
    every case crashed (graded: they failed them; their cases after the crash were skipped)."""
    crash = Failure(kind="crash", message="the submission's process died (signal 11)")
    crashing = learner_report(3, "crashy")
    cases = [case("worked_example", "examples", "error", crash)] + [
        case(c.name.split("[")[0], c.group, "skipped", visibility=c.visibility, dtype=c.dtype)
        for c in crashing.cases[1:]]
    return {
        "ok": learner_report(4, "ok"),
        "imp": Report(problem="tied_lm_head", title="Tied LM head", submission="imp.py", passed=False, score=0.0,
                      max_score=8.0,
                      failure=Failure(kind="import", message="SyntaxError: invalid syntax (imp.py, line 3)"), cases=[],
                      groups=[GroupScore(group="examples", points=2, earned=0, passed=0, total=0)], summary=[],
                      environment={}, output={}, seconds=0.5),
        "crashy": Report(problem="tied_lm_head", title="Tied LM head", submission="crashy.py", passed=False,
                         score=0.0, max_score=8.0, failure=None, cases=cases,
                         groups=crashing.groups, summary=[], environment={}, output={}, seconds=0.5),
    }


def test_could_not_be_graded_means_a_whole_submission_failure_everywhere(tmp_path, capsys):
    """The tally, summary.md and summary.html count the learner whose gradebook message says
    "could not be graded" (the import failure), not the one whose cases crashed."""
    reports = _small_class()
    rows = {r.learner: r for r in _write_class(tmp_path, reports)}
    assert rows["imp"].message.startswith("could not be graded: import: SyntaxError")
    assert "crash" in rows["crashy"].kinds and not rows["crashy"].message.startswith("could not be graded")
    assert [name for name, rep in reports.items() if gradebook.could_not_be_graded(rep)] == ["imp"]
    assert summary_md.tally(list(rows.values()), reports) == "3 submissions: 1 passed, 2 failed (1 could not be graded)"

    md = (tmp_path / "summary.md").read_text()
    assert "3 learners: **" in md and "(1 could not be graded)." in md
    ungraded = md.split("## Could not be graded")[1].split("##")[0]
    assert "SyntaxError" in ungraded and "imp" in ungraded and "crashy" not in ungraded

    words = " ".join(parse((tmp_path / "summary.html").read_text()).text)
    assert "(1 could not be graded)" in words
    ungraded = words.split("Could not be graded")[1].split("Slowest")[0]
    assert "SyntaxError" in ungraded and "crashy" not in ungraded


def test_failure_rates_say_whom_they_count(tmp_path):
    """The crashed learner's skipped cases drop out of the rates; a line under the tables says so."""
    _write_class(tmp_path, _small_class())
    md = (tmp_path / "summary.md").read_text()
    rates = md.split("## Failure rates per case group")[1].split("## Could not be graded")[0]
    assert "of 2 |" in rates and "of 1 |" in rates  # "random" was reached by ok only, "examples" by both
    assert md.count(summary_md.RATE_NOTE) == 2 and "reached the group or case" in summary_md.RATE_NOTE
    page = (tmp_path / "summary.html").read_text()
    assert page.count(html.escape(summary_md.RATE_NOTE)) == 1  # the group table's; no per-case table


def test_one_mistake_is_one_row_of_common_hints_whatever_its_numbers():
    """Issue 37: "Commonest hints" made a row per number in a hint's sentence (six rows for one
    bias: 0.0098, 0.009901, 0.01...), counting a learner several times and pushing other hints
    out. Hints are grouped by the idea that found them (``failure.data.hint_id``)."""
    from grader.reports.classview import common_hints

    def biased(learner, values):
        cases = []
        for k, v in enumerate(values):
            f = wrong(f"looks like a constant offset of {v} was added to every logit (a bias?)")
            f.data["hint_id"] = "constant_offset"
            cases.append(case(f"c{k}", "examples", "failed", f))
        other = wrong("looks like softmax was applied to the logits")
        other.data["hint_id"] = "softmax"
        cases.append(case("s", "examples", "failed", other))
        return Report(problem="tied_lm_head", title="Tied LM head", submission=f"{learner}.py", passed=False,
                      score=0.0, max_score=8.0, failure=None, cases=cases,
                      groups=[GroupScore(group="examples", points=8, earned=0, passed=0, total=len(cases))],
                      summary=[], environment={}, output={}, seconds=0.0)

    reports = {"ann": biased("ann", [0.0098, 0.009901]), "ben": biased("ben", [0.01]),
               "cat": biased("cat", [0.0098])}
    rows = [gradebook.Row(n, f"{n}.py", False, 0, 8, ["tolerance"], 1.0, "") for n in reports]
    found = common_hints(rows, reports)
    assert [learners for _, learners in found] == [["ann", "ben", "cat"], ["ann", "ben", "cat"]]
    texts = [t for t, _ in found]
    assert sum("constant offset" in t for t in texts) == 1 and any("softmax" in t for t in texts)
    # three learners who submitted nothing: their "submit one .py file" is no row (it led a class's list)
    from grader.spec import load_problem
    for n in ("dan", "eve", "fay"):
        problem = load_problem(Path(__file__).resolve().parent.parent / "problems" / "tied_lm_head.yaml")
        reports[n] = gradebook.placeholder_report(problem, f"{n}/", Failure(
            kind="missing", message="no submission found", hint="submit one .py file or .ipynb notebook"), 0.0)
        rows.append(gradebook.Row(n, f"{n}/", False, 0, 8, ["missing"], 0.0, ""))
    assert common_hints(rows, reports) == found
