"""The exercise page in a real Chromium (issue 36's acceptance): open the URL ``grader serve``
printed, pick tied_lm_head and NumPy, type a correct function, run it (Ctrl-Enter), see PASS;
type the transpose mistake, see FAIL with the shape hint; the same in JAX. A screenshot of each
state is kept in test-artifacts/web/ (git ignores it), and the Run -> verdict time of a correct
NumPy function with the pool warm is printed (reported, not asserted).

Playwright drives Debian's /usr/bin/chromium (no browser is downloaded). Where it is
installed these tests run, never skip; without it they skip, or fail if GRADER_REQUIRE_CHROMIUM
is set (.ci/run sets it where it installed Chromium)."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from .conftest import ROOT
from .web_server import grader_serve

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts" / "web"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
WAIT_MS = 300_000   # a check on a busy machine, the first JAX one compiling
WARM_RUNS = 5       # Runs of the correct NumPy function timed with the spares warm

if not CHROMIUM.exists():
    if os.environ.get("GRADER_REQUIRE_CHROMIUM"):
        pytest.fail(f"GRADER_REQUIRE_CHROMIUM is set and {CHROMIUM} is missing", pytrace=False)
    pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402 - after the skip: a test extra

# typed as a learner types: the editor indents after the colon and closes the brackets
NUMPY_OK = "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\nreturn hidden @ embedding_matrix.T"
NUMPY_TRANSPOSE = "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\nreturn hidden @ embedding_matrix"
JAX_OK = "import jax.numpy as jnp\n\ndef tied_lm_head(hidden, embedding_matrix):\nreturn jnp.matmul(hidden, embedding_matrix.T)"
JAX_TRANSPOSE = "import jax.numpy as jnp\n\ndef tied_lm_head(hidden, embedding_matrix):\nreturn jnp.matmul(hidden, embedding_matrix)"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with grader_serve(tmp_path_factory.mktemp("web")) as s:
        yield s


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=str(CHROMIUM), headless=True,
                                                       args=ARGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _type(page, code: str) -> None:
    """Replace the editor's text by typing ``code`` into it, key by key."""
    editor = page.get_by_role("textbox", name="Code editor")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(code)


def _run(page, verdict: str, *, key: bool = True) -> float:
    """Run (Ctrl-Enter, else the Run button) and wait for ``verdict``; the seconds it took."""
    old = page.locator("#verdict").count() and page.locator("#verdict").element_handle()
    start = time.monotonic()
    if key:
        page.keyboard.press("Control+Enter")
    else:
        page.get_by_role("button", name="Run", exact=True).click()
    if old:
        page.wait_for_function("el => !el.isConnected", arg=old, timeout=WAIT_MS)
    expect(page.locator("#verdict")).to_have_text(verdict, timeout=WAIT_MS)
    return time.monotonic() - start


def _record_run_to_verdict(page, served, first: float, warm_runs: int = WARM_RUNS) -> None:
    """Issue 36's acceptance figure, reported, never asserted: Run (the button) -> the verdict
    in the page, for a correct NumPy tied_lm_head with the pool warm, ``warm_runs`` times, each a
    second after the last verdict. Each is measured twice: by Playwright (the click to the
    verdict seen) and in the page
    (``window.graderLastRun``: performance.now() from the Run handler to the verdict in the DOM,
    and to the next frame), with the server's split of the request (its Server-Timing header)
    and the check's own seconds. Printed, and kept as test-artifacts/web/run-to-verdict.json."""
    import json
    import statistics

    import httpx
    runs = []
    for _ in range(warm_runs):
        # a second between Runs, as a learner reads the verdict: the spare the last check used
        # is replaced meanwhile (a Run at once would wait for the new spare's child to start)
        page.wait_for_timeout(1000)
        seconds = _run(page, "PASS", key=False)
        runs.append({"playwright_s": round(seconds, 3), **page.evaluate("window.graderLastRun")})
    auth = {"Authorization": f"token {served.token}"}
    last = httpx.get(f"{served.base}/api/history", headers=auth).json()[0]
    report = httpx.get(f"{served.base}/api/attempts/{last['id']}", headers=auth).json()["report"]
    median = statistics.median(r["playwright_s"] for r in runs)
    in_page = statistics.median(r["ms"] for r in runs) / 1000
    record = {"what": "Run -> verdict, a correct NumPy tied_lm_head, spares warm", "first_s": round(first, 3),
              "median_s": round(median, 3), "median_in_page_s": round(in_page, 3), "runs": runs,
              "last_check": {"seconds_in_server": last["seconds"], "report_seconds": report["seconds"],
                             "child": report["environment"].get("child"),
                             "served": report["environment"].get("served")},
              "load_average": os.getloadavg(), "cores": os.cpu_count(), "time": time.time()}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "run-to-verdict.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nRun -> verdict, a correct NumPy tied_lm_head in Chromium: first {first:.2f} s, warm "
          f"{', '.join(str(r['playwright_s']) for r in runs)} s (median {median:.2f} s; in the page "
          f"{in_page:.2f} s); the last one's server timing {runs[-1]['serverTiming']}, grader check's cases "
          f"{report['seconds']:.2f} s; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores (test-artifacts/web/run-to-verdict.json)")


def test_tied_lm_head_in_numpy_and_jax_pass_and_fail_with_the_shape_hint(served, browser):
    page = browser.new_page()
    page.goto(served.url)
    page.get_by_label("Problem", exact=True).select_option("embedding_lookup")
    with page.expect_navigation():
        page.get_by_role("button", name="Open", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Embedding lookup")
    page.get_by_label("Problem", exact=True).select_option("tied_lm_head")
    with page.expect_navigation():
        page.get_by_role("button", name="Open", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Tied LM head")
    page.get_by_role("radio", name="NumPy").check()
    expect(page.get_by_role("textbox", name="Code editor")).to_contain_text("raise NotImplementedError")  # the stub
    _shot(page, "01-numpy-stub")

    _type(page, NUMPY_OK)
    assert page.get_by_role("textbox", name="Code editor").inner_text().splitlines()[-1] == \
        "    return hidden @ embedding_matrix.T"        # indented by the editor
    first = _run(page, "PASS")
    expect(page.locator("#result-body")).to_contain_text("Score 10 / 10")
    _shot(page, "02-numpy-pass")
    _record_run_to_verdict(page, served, first)


    _type(page, NUMPY_TRANSPOSE)
    _run(page, "FAIL")
    result = page.locator("#result-body")
    expect(result).to_contain_text("the shapes do not line up: the table needs a transpose")
    expect(result).to_contain_text("expected")
    # the failing input's own values, not only its shape (a newcomer could not see which input failed)
    expect(result.locator("dl.values dt", has_text="embedding_matrix").first).to_be_visible()
    expect(page.locator("img.heatmap").first).to_be_visible(timeout=60_000)   # the tolerance case's heat map
    _shot(page, "03-numpy-transpose-fail")

    page.get_by_role("radio", name="JAX").check()
    expect(page.get_by_role("textbox", name="Code editor")).to_contain_text("import jax.numpy as jnp")
    _type(page, JAX_OK)
    jax_first = _run(page, "PASS")
    _shot(page, "04-jax-pass")
    _type(page, JAX_TRANSPOSE)
    jax_fail = _run(page, "FAIL")
    expect(page.locator("#result-body")).to_contain_text("the shapes do not line up")
    expect(page.locator("img.heatmap").first).to_be_visible(timeout=60_000)
    _shot(page, "05-jax-transpose-fail")
    print(f"Run -> verdict in JAX: PASS {jax_first:.2f} s, FAIL {jax_fail:.2f} s")

    history = page.locator("#history li")
    expect(history).to_have_count(4 + WARM_RUNS)    # the first, the warm ones, the transpose, two JAX
    expect(history.first).to_contain_text("FAIL · JAX")
    # newest first, numbered from the oldest: the newest is the highest number (a newcomer read "1")
    assert page.evaluate("document.getElementById('history').reversed") is True
    page.close()


def test_the_page_at_375_and_1920_px_and_by_keyboard(served, browser):
    page = browser.new_page()
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(served.url)
    # nothing wider than the phone's screen: no sideways scrolling
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    _shot(page, "06-375px")
    # keyboard only: Tab reaches the problem list, the framework choice, the editor and Run
    page.keyboard.press("Tab")       # the skip link
    expect(page.get_by_role("link", name="Skip to the editor")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Problem", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Open", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#all-problems summary")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("radio", name="NumPy")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("textbox", name="Code editor")).to_be_focused()
    # arriving by Tab, the cursor is at the end of the code: typing there cannot indent its
    # first line ("import numpy") into a SyntaxError, as a newcomer's second Tab did
    page.keyboard.type("# here")
    lines = page.locator(".cm-content .cm-line").all_text_contents()
    # (the code may be an earlier test's draft, without a last empty line)
    assert lines[-1].endswith("# here") and lines[0].startswith("import"), lines
    page.keyboard.press("Control+z")
    page.keyboard.press("Escape")    # CodeMirror: Esc, then Tab leaves the editor instead of indenting
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("checkbox", name="Find smallest failing case")).to_be_focused()
    # the skip link puts the keyboard in the editor itself
    page.get_by_role("link", name="Skip to the editor").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Code editor")).to_be_focused()
    for control in ("Run", "Reset to the starter code"):
        expect(page.get_by_role("button", name=control, exact=True)).to_be_visible()
    page.set_viewport_size({"width": 1920, "height": 1080})
    box_lesson = page.locator("section.lesson").bounding_box()
    box_work = page.locator("section.work").bounding_box()
    assert box_work["x"] > box_lesson["x"] + box_lesson["width"] - 1   # side by side at 1920
    _shot(page, "07-1920px")
    page.close()


def test_every_problem_has_its_own_open_link_usable_by_keyboard(served, browser):
    """The list of problems: each has an Open link named after it ("Open ID: title"); by
    keyboard, Enter on "All problems" shows the list, Tab reaches a problem's link, Enter opens it."""
    import httpx
    problems = httpx.get(f"{served.base}/api/problems", headers={"Authorization": f"token {served.token}"}).json()
    page = browser.new_page()
    page.goto(served.url)
    links = page.get_by_role("link", name=re.compile(r"^Open "))
    expect(links).to_have_count(0)            # folded: none is shown (nor in the tab order)
    summary = page.locator("#all-problems summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(links).to_have_count(len(problems))
    for p in problems:
        expect(page.get_by_role("link", name=f"Open {p['id']}: {p['title']}", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^Open tied_lm_head: "))).to_have_attribute("aria-current", "page")
    _shot(page, "08-all-problems")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name=re.compile(r"^Open tied_lm_head: "))).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name=re.compile(r"^Open embedding_lookup: "))).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Embedding lookup")
    assert "/problems/embedding_lookup?token=" in page.url
    page.close()


SLOW_NUMPY = ("import time\nimport numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
              "time.sleep(0.15)\nreturn hidden @ embedding_matrix.T")
NAN_NUMPY = ("import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\nout = hidden @ embedding_matrix.T\n"
             "out[..., 0] = np.nan\nout[..., -1] = -np.inf\nreturn out")


def test_a_running_check_shows_its_progress_and_a_second_run_replaces_it(served, browser):
    """While a check runs: a spinner, the seconds so far and "Running case k of n" (from GET
    /api/progress), announced in the status region; Run again meanwhile (Ctrl-Enter) cancels
    it: the page shows the new code's verdict, and only that Run is in the history."""
    import httpx
    auth = {"Authorization": f"token {served.token}"}
    before = len(httpx.get(f"{served.base}/api/history", headers=auth).json())
    page = browser.new_page()
    page.goto(served.url)
    page.get_by_role("radio", name="NumPy").check()
    _type(page, SLOW_NUMPY)
    page.get_by_role("button", name="Run", exact=True).click()
    progress = page.locator("#progress")
    expect(progress).to_be_visible()
    expect(progress.locator(".spinner")).to_be_visible()
    expect(page.locator("#progress-text")).to_have_text(re.compile(r"^Running case \d+ of \d+$"), timeout=WAIT_MS)
    expect(page.locator("#elapsed")).to_have_text(re.compile(r"^\d+\.\d s$"))
    expect(page.get_by_role("status")).to_contain_text("Running the NumPy check")
    shown = page.locator("#elapsed").inner_text()
    expect(page.locator("#elapsed")).not_to_have_text(shown)        # it counts
    bar = page.get_by_role("progressbar", name="Visible cases checked")
    assert int(bar.get_attribute("max")) > 1
    _shot(page, "09-progress")
    _type(page, NUMPY_OK)
    page.keyboard.press("Control+Enter")         # the second Run, while the first still runs
    expect(page.locator("#verdict")).to_have_text("PASS", timeout=WAIT_MS)
    expect(progress).to_be_hidden()
    rows = httpx.get(f"{served.base}/api/history", headers=auth).json()
    assert len(rows) == before + 1 and rows[0]["passed"] is True     # the first was cancelled, not stored
    page.close()


def test_nan_and_inf_are_shown_as_numbers_and_shrink_can_be_turned_off(served, browser):
    """NaN and infinities (strings in the JSON report) are shown as NumPy prints them, never
    quoted; "Find smallest failing case" is on by default, and off the Run asks for no shrink
    search (the report has no shrunk case)."""
    import httpx
    auth = {"Authorization": f"token {served.token}"}
    page = browser.new_page()
    page.goto(served.url)
    page.get_by_role("radio", name="NumPy").check()
    shrink = page.get_by_role("checkbox", name="Find smallest failing case")
    expect(shrink).to_be_checked()
    shrink.uncheck()
    _type(page, NAN_NUMPY)
    _run(page, "FAIL", key=False)
    result = page.locator("#result-body")
    got = result.locator("dl.values dt", has_text="got").first.locator("xpath=following-sibling::dd[1]")
    expect(got).to_contain_text("nan")
    expect(got).to_contain_text("-inf")
    assert '"nan"' not in result.inner_text() and '"-inf"' not in result.inner_text()
    _shot(page, "10-nan-no-shrink")
    last = httpx.get(f"{served.base}/api/history", headers=auth).json()[0]
    report = httpx.get(f"{served.base}/api/attempts/{last['id']}", headers=auth).json()["report"]
    assert not any(c.get("shrunk") for c in report["cases"])
    page.reload()
    expect(page.get_by_role("checkbox", name="Find smallest failing case")).not_to_be_checked()  # remembered
    page.get_by_role("checkbox", name="Find smallest failing case").check()
    page.close()


def test_a_draft_survives_a_reload_and_nothing_of_it_stays_in_the_browser(served, browser):
    """Attack round 61: drafts in the browser's storage of 127.0.0.1:PORT were read by another
    local user who listened on that port after grader serve stopped. The page keeps them on
    the server (behind its token): typed code comes back after a reload. What the browser's
    storage holds under the old keys, every problem's, is removed and never taken as a draft
    (round 62: another user's page on that port had planted code there, which the first fix
    handed to the server as the learner's draft)."""
    import json

    import httpx
    page = browser.new_page()
    url = f"{served.base}/problems/softmax?token={served.token}"
    page.goto(url)
    page.get_by_role("radio", name="NumPy").check()
    page.evaluate("localStorage.setItem('grader:draft:softmax:numpy', '# PLANTED-DRAFT\\n');"
                  "localStorage.setItem('grader:draft:gelu:numpy', '# OTHER-PROBLEM\\n')")
    page.reload()
    editor = page.get_by_role("textbox", name="Code editor")
    expect(editor).to_contain_text("def softmax")
    expect(editor).not_to_contain_text("PLANTED-DRAFT")
    left = "Object.keys(localStorage).filter(k => k.startsWith('grader:draft:'))"
    assert page.evaluate(left) == []
    _type(page, "# TYPED-DRAFT")
    page.wait_for_timeout(1500)        # the editor saves half a second after the last key
    page.reload()
    expect(page.get_by_role("textbox", name="Code editor")).to_contain_text("TYPED-DRAFT")
    assert page.evaluate(left) == []

    def drafts(problem: str) -> dict:
        text = httpx.get(f"{served.base}/problems/{problem}?token={served.token}").text
        return json.loads(text.split('<script id="config" type="application/json">', 1)[1].split("</script>", 1)[0])["drafts"]
    assert "TYPED-DRAFT" in drafts("softmax")["numpy"] and "PLANTED" not in drafts("softmax")["numpy"]
    assert drafts("gelu") == {}
    page.close()


def test_a_service_worker_another_program_left_on_the_port_is_removed(browser, tmp_path_factory):
    """Attack round 63: another local user's page served on a port the learner later runs grader
    serve on registered a service worker there, which then read every URL of the page (its token
    with it) and kept doing so across servers. The browser's update check of that worker gets one
    that unregisters itself: after the learner opens the page, no worker is left."""
    import functools
    import http.server
    import socket
    import threading

    site = tmp_path_factory.mktemp("squatter")
    (site / "index.html").write_text("<!doctype html><title>squatter</title><script>navigator.serviceWorker"
                                     ".register('/sw.js').then(() => navigator.serviceWorker.ready)"
                                     ".then(() => { document.title = 'registered'; });</script>")
    (site / "sw.js").write_text("self.addEventListener('install', () => self.skipWaiting());\n"
                                "self.addEventListener('fetch', (event) => {});\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    page = browser.new_page()
    try:
        page.goto(f"http://127.0.0.1:{port}/index.html")
        expect(page).to_have_title("registered", timeout=30_000)
    finally:
        squatter.shutdown()
        squatter.server_close()
    registrations = "navigator.serviceWorker.getRegistrations().then((r) => r.length)"
    assert page.evaluate(registrations) == 1
    with grader_serve(tmp_path_factory.mktemp("web-sw"), "--port", str(port)) as served:
        page.goto(served.url)
        expect(page.get_by_role("heading", level=1)).to_be_visible(timeout=60_000)
        gone = "navigator.serviceWorker.getRegistrations().then((r) => r.length === 0 && !navigator.serviceWorker.controller)"
        deadline = time.monotonic() + 60
        while True:     # the worker reloads the page once it has unregistered itself
            try:
                if page.evaluate(gone):
                    break
            except Exception:  # noqa: BLE001 - the page was navigating
                pass
            assert time.monotonic() < deadline, "the service worker was never removed"
            page.wait_for_timeout(500)
        page.goto(served.url)       # and it stays gone
        expect(page.get_by_role("heading", level=1)).to_be_visible(timeout=60_000)
        assert page.evaluate(gone)
    page.close()
