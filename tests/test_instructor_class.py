"""Issue 37's acceptance: a class with a roster of 12 and 10 submissions (an empty folder, a
crash, a notebook, a copy of another's file with its variables renamed, a learner's Git
repository), graded twice with a spec change between (a copy of the problems folder) and a file
changed by one learner. The gradebook has 12 rows; summary.html, opened in headless Chromium
(its DOM read after its script ran, and a screenshot kept in tests/artifacts/ or
$GRADER_TEST_ARTIFACTS), shows the grid, the reasons, the times and lateness, the two learners
with no submission and the score changes of the second run; similarity.html shows the copied
pair, and only it.

Cost: two `grader grade` runs of 12 learners (NumPy, --max-examples 2, no shrinking): real
processes, since a crash and a sandboxed notebook are part of what is measured."""
from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .conftest import ROOT, SUBMISSIONS, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("GRADER_TEST_ARTIFACTS") or ROOT / "tests" / "artifacts")
FAST = ["--problem", "tied_lm_head", "--max-examples", "2", "--no-shrink", "--jobs", "2"]
DEADLINE = "2026-01-10T12:00"
ROSTER = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lee"]

ANN = '''"""Ann's tied head."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    hidden_states = np.asarray(hidden)
    table = np.asarray(embedding_matrix)
    width = hidden_states.shape[-1]
    flat = hidden_states.reshape(-1, width)
    logits = np.matmul(flat, table.T)
    vocab = table.shape[0]
    return logits.reshape(hidden_states.shape[:-1] + (vocab,))
'''
BOB = (ANN.replace("Ann's tied head.", "Bob's own work.").replace("hidden_states", "h").replace("table", "w")
       .replace("width", "d").replace("flat", "rows").replace("logits", "scores").replace("vocab", "v"))
STARTER = '''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    """Return the logits of the tied head."""
    raise NotImplementedError
'''


def _at(path: Path, when: str) -> None:
    from datetime import datetime, timezone
    t = datetime.fromisoformat(when).replace(tzinfo=timezone.utc).timestamp()
    os.utime(path, (t, t))


def _notebook(path: Path) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Ivy's lesson"), nbformat.v4.new_code_cell("import numpy as np"),
                nbformat.v4.new_code_cell("def tied_lm_head(hidden, embedding_matrix):\n"
                                          "    return hidden @ embedding_matrix.T")]
    nbformat.write(nb, str(path))


def _git(folder: Path, when: str) -> None:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "Gus", "GIT_AUTHOR_EMAIL": "g@x", "GIT_COMMITTER_NAME": "Gus",
           "GIT_COMMITTER_EMAIL": "g@x"}
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "hand in"]):
        subprocess.run(["git", "-C", str(folder), *argv], check=True, env=env, capture_output=True)


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    """The class graded twice into one folder: (tmp, out, first run, second run)."""
    tmp = tmp_path_factory.mktemp("instructor")
    klass = tmp / "class"
    for name in ROSTER[:10]:
        (klass / name).mkdir(parents=True)
    files = {"ann": ANN, "bob": BOB, "cat": (SUBMISSIONS / "correct_numpy.py").read_text(),
             "dan": (SUBMISSIONS / "wrong_crash_abort.py").read_text(),
             "fay": (SUBMISSIONS / "wrong_tolerance_softmax.py").read_text(),
             "gus": (SUBMISSIONS / "wrong_dtype_float32.py").read_text(),
             "hal": (SUBMISSIONS / "wrong_shape_atleast_2d.py").read_text(),
             "jon": (SUBMISSIONS / "wrong_mutation.py").read_text()}
    for name, text in files.items():
        (klass / name / "lm.py").write_text(text)
        _at(klass / name / "lm.py", "2026-01-10T11:00:00")                  # on time
    _at(klass / "fay" / "lm.py", "2026-01-10T14:30:00")                     # 2 h 30 min late
    _notebook(klass / "ivy" / "lesson.ipynb")
    _at(klass / "ivy" / "lesson.ipynb", "2026-01-09T09:00:00")
    _git(klass / "gus", "2026-01-12T08:00:00+00:00")                        # a repository: its commit's time
    # eve's folder stays empty; kim and lee are on the roster only
    (tmp / "roster.csv").write_text("learner\n" + "\n".join(ROSTER) + "\n")
    (tmp / "starter.py").write_text(STARTER)
    problems = tmp / "problems"   # a copy, to change the spec between the runs
    problems.mkdir()
    shutil.copy(ROOT / "problems" / "tied_lm_head.yaml", problems)
    shutil.copytree(ROOT / "reference", problems / "reference")
    out = tmp / "out"
    args = ["grade", str(klass), "--roster", str(tmp / "roster.csv"), "--out", str(out), "--problems-dir",
            str(problems), "--deadline", DEADLINE, "--starter", str(tmp / "starter.py"), *FAST]
    first = run_grader(*args, timeout=600)
    assert first.code == 1, first.stderr
    first_book = (out / "gradebook.csv").read_text()
    # the instructor fixes the spec (the shapes group is worth 4 points, not 2); jon hands in again
    spec = problems / "tied_lm_head.yaml"
    text = spec.read_text()
    assert "  shapes: {points: 2," in text
    spec.write_text(text.replace("  shapes: {points: 2,", "  shapes: {points: 4,"))
    (klass / "jon" / "lm.py").write_text(files["jon"] + "# handed in again\n")
    _at(klass / "jon" / "lm.py", "2026-01-10T11:30:00")
    second = run_grader(*args, timeout=600)
    assert second.code == 1, second.stderr
    return tmp, out, first, second, first_book


def test_the_gradebook_has_every_roster_learner_and_the_first_run_is_kept(twice):
    tmp, out, first, second, first_book = twice
    with open(out / "gradebook.csv", newline="") as fh:
        rows = {r["learner"]: r for r in csv.DictReader(fh)}
    assert sorted(rows) == ROSTER                                           # 12 rows
    assert rows["kim"]["score"] == rows["lee"]["score"] == "0" and "no submission" in rows["kim"]["message"]
    assert rows["ann"]["passed"] == rows["bob"]["passed"] == rows["ivy"]["passed"] == "true"   # the notebook too
    assert "crash" in rows["dan"]["kinds"] and rows["eve"]["passed"] == "false"
    assert rows["ann"]["max_score"] == "12"                                 # the new spec's
    kept = [p for p in (out / "history").iterdir() if p.is_dir()]
    assert len(kept) == 1 and (kept[0] / "gradebook.csv").read_text() == first_book
    assert "held a previous run: kept in" in second.stderr and "held a previous run" not in first.stderr


def chromium(url: str, tmp: Path, *flags: str) -> str:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
            f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=5000", *flags, url]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def browser(twice):
    if not Path(CHROMIUM).exists():
        if os.environ.get("GRADER_REQUIRE_CHROMIUM"):
            pytest.fail(f"GRADER_REQUIRE_CHROMIUM is set and {CHROMIUM} is missing")
        pytest.skip("needs Chromium at /usr/bin/chromium (.ci/run installs it)")
    return twice


def _table(dom: str, ident: str) -> list[list[str]]:
    start = dom.index(f'id="{ident}"')
    start = dom.rindex("<table", 0, start)
    end = dom.index("</table>", start) + len("</table>")
    table = ET.fromstring(dom[start:end].replace("&nbsp;", " "))
    return [["".join(cell.itertext()).strip() for cell in tr if cell.tag in ("td", "th")] for tr in table.iter("tr")]


def _rgb(hsl: str) -> tuple[int, int, int]:
    import colorsys
    h, s, lum = (float(v) for v in re.findall(r"[\d.]+", hsl))
    return tuple(round(255 * c) for c in colorsys.hls_to_rgb(h / 360, lum / 100, s / 100))


def test_summary_html_in_chromium_shows_grid_reasons_times_missing_and_changes(browser):
    from grader.reports.classview import cell_colour
    tmp, out, *_ = browser
    dom = html.unescape(chromium((out / "summary.html").as_uri(), tmp, "--dump-dom"))
    assert 'title="sort"' in dom                                            # its script ran (sortable)
    grid = _table(dom, "learners")
    head, body = grid[0], {r[0]: dict(zip(grid[0], r)) for r in grid[1:]}
    assert head[:8] == ["Learner", "Score", "examples", "shapes", "exact", "values", "real_size", "generated"]
    assert {"Reason", "Submitted", "Late", "Change"} <= set(head) and sorted(body) == ROSTER
    # the grid: cases passed of those run per group; a crash's unrun groups say so
    assert body["ann"]["examples"] == body["ann"]["shapes"].split("/")[1] + "/" + body["ann"]["shapes"].split("/")[1] \
        or body["ann"]["examples"].split("/")[0] == body["ann"]["examples"].split("/")[1]
    assert body["dan"]["generated"] == "not run" and body["kim"]["examples"] == "not run"
    # the reasons
    assert re.search(r"crash in \d+ cases?; \d+ cases were not run", body["dan"]["Reason"]), body["dan"]["Reason"]
    assert body["fay"]["Reason"].startswith("tolerance in") and "hint:" in body["fay"]["Reason"]
    assert "holds no .py or .ipynb file" in body["eve"]["Reason"] and "not run" not in body["eve"]["Reason"]
    assert body["kim"]["Reason"] == body["lee"]["Reason"] == "no submission"
    assert body["ann"]["Reason"] == "passed"
    # the times: the file's, the notebook's, the Git commit's; lateness against --deadline
    assert body["ann"]["Submitted"] == "2026-01-10 11:00 UTC" and body["ann"]["Late"] == "on time"
    assert body["fay"]["Late"] == "2 h 30 min late" and body["ivy"]["Late"] == "on time"
    assert body["gus"]["Submitted"] == "2026-01-12 08:00 UTC (git)" and body["gus"]["Late"] == "1 d 20 h late"
    assert body["kim"]["Submitted"] == "" and body["eve"]["Submitted"] == ""
    # the learners with no submission, named above the grid
    words = " ".join(re.sub(r"<[^>]+>", "", dom).split())
    assert "No submission (no file found for them): eve, kim, lee."   # eve: an empty folder in words
    assert "12 learners: 4 passed, 5 failed, 3 submitted nothing" in words
    # the second run's changes: who, by how much, why
    changed = {r[0]: r for r in _table(dom, "changed")[1:]}
    assert changed["ann"][1:4] == ["10", "12", "+2"] and changed["ann"][4] == "spec changed"
    assert "spec changed" in changed["jon"][4] and "file changed" in changed["jon"][4]
    assert "kim" not in changed and "dan" not in changed                      # 0 before and after
    assert body["ann"]["Change"] == "+2"
    assert 'href="similarity.html"' in dom
    # the screenshot, kept: the grid is drawn in its colours
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "instructor-summary.png"
    shot.unlink(missing_ok=True)
    chromium((out / "summary.html").as_uri(), tmp, "--window-size=1400,1700", f"--screenshot={shot}")
    from PIL import Image
    pixels = set(Image.open(shot).convert("RGB").getdata())
    for share in (1.0, 0.0, None):
        want = _rgb(cell_colour(share)) if share is not None else (0xd0, 0xd7, 0xde)
        assert any(all(abs(a - b) <= 2 for a, b in zip(p, want)) for p in pixels), (share, want)


PROBE = """<script>
var box = document.querySelector('input.filter');
box.value = 'late'; box.dispatchEvent(new Event('input'));
var rows = Array.from(document.querySelectorAll('#learners tr')).slice(1);
var shown = rows.filter(function(r){return r.style.display !== 'none';}).map(function(r){return r.children[0].textContent.trim();});
box.value = ''; box.dispatchEvent(new Event('input'));
document.querySelectorAll('#learners th')[1].click();
var order = Array.from(document.querySelectorAll('#learners tr')).slice(1).map(function(r){return r.children[0].textContent.trim();});
document.body.insertAdjacentHTML('beforeend', '<pre id="probe">' + shown.join(',') + '|' + order.join(',') + '</pre>');
</script>"""


def test_the_grid_filters_and_sorts_in_chromium(browser):
    """The page's own script, run by Chromium: typing "late" leaves the late learners; a click on
    Score sorts by the number. (A copy of the page without its CSP carries the probe script.)"""
    tmp, out, *_ = browser
    page = (out / "summary.html").read_text()
    probe = out / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", PROBE + "</body>"))
    dom = chromium(probe.as_uri(), tmp, "--dump-dom")
    shown, order = re.findall(r'<pre id="probe">([^<]*)</pre>', dom)[-1].split("|")   # not the script's text
    assert {"fay", "gus"} <= set(shown.split(",")) and "ann" not in shown.split(",")
    order = order.split(",")
    assert sorted(order) == ROSTER and set(order[:5]) == {"dan", "eve", "fay", "kim", "lee"}   # 0 points first
    assert set(order[-4:]) == {"ann", "bob", "cat", "ivy"}                              # 12 of 12 last


def test_the_similarity_page_shows_the_copied_pair_and_only_it(browser):
    tmp, out, *_ = browser
    dom = html.unescape(chromium((out / "similarity.html").as_uri(), tmp, "--dump-dom"))
    pairs = _table(dom, "pairs")[1:]
    assert [(r[1], r[2]) for r in pairs] == [("ann", "bob")], pairs
    assert all(int(r[3].rstrip("%")) >= 70 and int(r[4].rstrip("%")) >= 70 for r in pairs)
    assert 'class="m"' in dom and "rows = h.reshape(-1, d)" in dom and "flat = hidden_states.reshape(-1, width)" in dom
    marked = re.findall(r'<span class="m">\s*\d+\s+(.*?)</span>', dom)
    assert "rows = h.reshape(-1, d)" in marked and "import numpy as np" not in marked   # the starter's lines never
    assert "the starter code (starter.py) is left out" in " ".join(re.sub(r"<[^>]+>", "", dom).split())
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "instructor-similarity.png"
    chromium((out / "similarity.html").as_uri(), tmp, "--window-size=1400,1100", f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000
