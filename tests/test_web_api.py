"""The exercise page's JSON API (issue 36) against a real ``grader serve``: the token, each bad
input as a 4xx with one clear line (never a 500 or a hang), the report of ``POST /api/check``
as ``grader check --format json`` gives it, the history, the heat map; and two Runs of one page
at once (the earlier cancelled, never both running), on the app itself."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from .web_server import grader_serve

GOOD = "import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n"
TRANSPOSE = "import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix\n"
LARGE_ONLY = ("import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
              "    return hidden @ embedding_matrix.T + (hidden.shape[-1] > 16)\n")
SLOW = ("import time\nimport numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
        "    time.sleep(5)\n    return hidden @ embedding_matrix.T\n")
WAIT = 300   # seconds: a check on a busy machine; a hang fails the test at this bound


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with grader_serve(tmp_path_factory.mktemp("web")) as s:
        yield s


@pytest.fixture(scope="module")
def client(served):
    with httpx.Client(base_url=served.base, headers={"Authorization": f"token {served.token}"}, timeout=WAIT) as c:
        yield c


def _one_line_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    message = response.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message
    return message


def _comparable(report: dict) -> dict:
    """A report without what differs between two runs of one check: timings, how it was served."""
    env = {k: v for k, v in report["environment"].items() if k not in ("served", "child", "memory_limit", "sandbox_layers")}
    cases = [{k: v for k, v in c.items() if k != "seconds"} for c in report["cases"]]
    return {**report, "environment": env, "cases": cases, "seconds": None}


def test_the_first_line_is_the_url_and_every_url_needs_the_token(served):
    assert served.url == f"{served.base}/?token={served.token}"
    for path in ("/", "/problems/tied_lm_head", "/api/problems", "/static/page.js", "/static/editor.js", "/nowhere"):
        assert httpx.get(served.base + path).status_code == 403, path
        assert httpx.get(served.base + path, params={"token": "0" * 48}).status_code == 403, path
        assert httpx.get(served.base + path, headers={"Authorization": "token wrong"}).status_code == 403, path
    denied = httpx.post(served.base + "/api/check", json={"problem": "tied_lm_head", "framework": "numpy", "source": GOOD})
    assert "token" in _one_line_error(denied, 403)
    page = httpx.get(served.url, follow_redirects=True)
    assert page.status_code == 200 and page.url.path == "/problems/tied_lm_head"
    assert "Tied LM head" in page.text and "<strong>tied embeddings</strong>" in page.text   # the Markdown, rendered
    assert "https://" not in page.text.split("<body>")[1]      # offline: no CDN
    assert "script-src" not in page.headers["content-security-policy"]   # default-src 'self': no inline script
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert httpx.get(served.base + "/static/editor.js", params={"token": served.token}).status_code == 200
    assert httpx.get(served.base + "/api/problems", headers={"Authorization": f"token {served.token}"}).status_code == 200


def test_problems_are_listed_with_their_installed_frameworks(client):
    problems = client.get("/api/problems").json()
    ids = [p["id"] for p in problems]
    assert ids[:3] == ["tied_lm_head", "embedding_lookup", "masked_mean_pool"]   # the lesson first
    tied = problems[0]
    assert tied["function"] == "tied_lm_head" and {"numpy", "jax"} <= set(tied["frameworks"])
    detail = client.get("/api/problems/tied_lm_head").json()
    assert "def tied_lm_head(hidden, embedding_matrix):" in detail["stubs"]["numpy"]
    assert detail["stubs"]["jax"].startswith("import jax.numpy as jnp")
    assert {"name": "hidden", "shape": "(..., d_model)", "dtype": "the graded float dtype"} in detail["parameters"]
    assert "    returns: (..., vocab_size)\n" in detail["stubs"]["numpy"]
    # a result of a fixed dtype says it (a newcomer's top_k_indices starter left out int64)
    assert "    returns: (..., k), int64\n" in client.get("/api/problems/top_k_indices").json()["stubs"]["numpy"]
    _one_line_error(client.get("/api/problems/nope"), 404)


@pytest.mark.parametrize("body, status, words", [
    ({"problem": "no_such_problem", "framework": "numpy", "source": GOOD}, 404, "unknown problem"),
    ({"problem": "tied_lm_head", "framework": "numpy"}, 422, "source"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": "   \n"}, 422, "source"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": 42}, 422, "source"),
    ({"framework": "numpy", "source": GOOD}, 422, "problem"),
    ({"problem": "tied_lm_head", "framework": "cuda", "source": GOOD}, 422, "framework"),
    ({"problem": "tied_lm_head", "source": GOOD}, 422, "framework"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": "x = 1\n" * (1 << 18)}, 413, "bytes"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": "# \x00\n"}, 422, "NUL"),
    ([1, 2], 400, "JSON object"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": GOOD, "shrink": "no"}, 422, "shrink"),
    ({"problem": "tied_lm_head", "framework": "numpy", "source": GOOD, "shrink": 0}, 422, "shrink"),
])
def test_a_bad_check_request_is_one_clear_line(client, body, status, words):
    assert words in _one_line_error(client.post("/api/check", json=body), status)


def test_a_body_not_utf8_not_json_or_of_a_mebibyte_is_refused(client):
    assert "UTF-8" in _one_line_error(client.post("/api/check", content=b'{"source": "\xff\xfe"}'), 400)
    assert "JSON" in _one_line_error(client.post("/api/check", content=b"source=1"), 400)
    mib = json.dumps({"problem": "tied_lm_head", "framework": "numpy", "source": "#" * (1 << 20)}).encode()
    assert "1 MiB" in _one_line_error(client.post("/api/check", content=mib), 413)
    # a body with no length, streamed in chunks, is cut at the limit too
    chunks = (b"#" * 65536 for _ in range(24))
    assert "1 MiB" in _one_line_error(client.post("/api/check", content=chunks), 413)
    assert client.get("/api/problems").status_code == 200   # the server is still there


def test_a_check_is_the_learner_report_of_grader_check_of_that_file(client, served, tmp_path):
    response = client.post("/api/check", json={"problem": "tied_lm_head", "framework": "numpy", "source": GOOD})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["passed"] is True and report["score"] == report["max_score"]
    assert report["environment"]["served"] == "pool"     # forked by this serve's warm grader
    assert response.headers["X-Grader-Path"] == "forked"  # asked by the page's server itself
    (tmp_path / "submission.py").write_text(GOOD)
    cold = subprocess.run([sys.executable, "-m", "grader", "check", "submission.py", "--problem", "tied_lm_head",
                           "--framework", "numpy", "--format", "json", "--audience", "learner"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=WAIT,
                          env={**os.environ, "GRADER_SERVE": "0"})
    assert cold.returncode == 0, cold.stderr
    assert _comparable(report) == _comparable(json.loads(cold.stdout))
    attempt = int(response.headers["X-Grader-Attempt"])
    stored = client.get(f"/api/attempts/{attempt}").json()
    assert stored["source"] == GOOD and stored["report"] == report and stored["framework"] == "numpy"
    history = client.get("/api/history", params={"problem": "tied_lm_head"}).json()
    assert history[0]["id"] == attempt and history[0]["passed"] is True
    assert (served.data / "grader" / "history.sqlite3").is_file()


def test_the_transpose_mistake_fails_with_its_hint_and_a_heat_map(client):
    response = client.post("/api/check", json={"problem": "tied_lm_head", "framework": "numpy", "source": TRANSPOSE})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["passed"] is False
    assert any("shapes do not line up" in h for h in report["hints"])
    assert any("not transposed" in h for h in report["hints"])
    tolerance = next(c for c in report["cases"] if (c.get("failure") or {}).get("kind") == "tolerance")
    attempt = response.headers["X-Grader-Attempt"]
    png = client.get(f"/api/attempts/{attempt}/heatmap", params={"case": tolerance["name"]})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    _one_line_error(client.get(f"/api/attempts/{attempt}/heatmap", params={"case": "nope"}), 404)
    _one_line_error(client.get("/api/attempts/999999"), 404)


def test_shrink_false_skips_the_search_for_a_smaller_failing_case(client):
    """``"shrink": false`` is ``grader check --no-shrink``: a mistake fails alike, without the
    shrunk cases the default run adds (one wrong only beyond d_model 16: a mistake a small fixed
    case shows is not searched for a smaller example)."""
    body = {"problem": "tied_lm_head", "framework": "numpy", "source": LARGE_ONLY}
    default = client.post("/api/check", json=body).json()
    quick = client.post("/api/check", json={**body, "shrink": False}).json()
    assert default["passed"] is quick["passed"] is False
    assert any(c.get("shrunk") for c in default["cases"])
    assert not any(c.get("shrunk") for c in quick["cases"])
    assert quick["counts"] == default["counts"] and quick["hints"] == default["hints"]


def _strict_json(text: str):
    """``text`` parsed as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_non_finite_values_are_strict_json_strings(client):
    """A function returning NaN and infinities: the report (and the attempt stored) stay valid
    JSON, with each non-finite number as the string "nan", "inf" or "-inf" (docs/formats.md)."""
    source = ("import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
              "    out = hidden @ embedding_matrix.T\n"
              "    out[..., 0] = np.nan\n"
              "    out[..., -1] = np.inf\n"
              "    return out\n")
    response = client.post("/api/check", json={"problem": "tied_lm_head", "framework": "numpy", "source": source,
                                               "shrink": False})
    assert response.status_code == 200, response.text
    report = _strict_json(response.text)
    assert report["passed"] is False
    case = next(c for c in report["cases"] if (c.get("failure") or {}).get("kind") == "non_finite" and c.get("values"))
    flat = json.dumps(case["values"]["got"])
    assert '"nan"' in flat and '"inf"' in flat
    stored = client.get(f"/api/attempts/{response.headers['X-Grader-Attempt']}")
    assert _strict_json(stored.text)["report"] == report


def test_progress_tells_the_phase_and_the_case_while_a_check_runs(client):
    """``GET /api/progress`` of a page (its ``X-Grader-Session``): ``starting``, ``import`` (the
    child starting), then ``cases`` with ``done`` of ``total`` visible cases as they run (the
    import phase is short and not always seen); a second Run of the page meanwhile
    cancels the first (409) and the progress is the new one's; nothing runs afterwards."""
    headers = {"X-Grader-Session": "progress-page"}
    slow = ("import time\nimport numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
            "    time.sleep(0.2)\n    return hidden @ embedding_matrix.T\n")
    assert client.get("/api/progress", headers=headers).json() == {"running": False, "queued": 0}
    results: dict[str, httpx.Response] = {}
    thread = threading.Thread(target=lambda: results.update(first=client.post(
        "/api/check", headers=headers, json={"problem": "tied_lm_head", "framework": "numpy", "source": slow})))
    thread.start()
    seen = []
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and thread.is_alive():
        p = client.get("/api/progress", headers=headers).json()
        seen.append(p)
        if p.get("phase") == "cases" and p["done"] >= 2:
            break
        time.sleep(0.1)
    assert seen[-1]["running"] is True and seen[-1]["phase"] == "cases", seen[-3:]
    assert 2 <= seen[-1]["done"] < seen[-1]["total"] and seen[-1]["seconds"] > 0
    assert all(p.get("phase") in ("starting", "import", "cases") for p in seen if p["running"])
    second = client.post("/api/check", headers=headers,
                         json={"problem": "tied_lm_head", "framework": "numpy", "source": GOOD, "shrink": False})
    thread.join(WAIT)
    assert "cancelled" in _one_line_error(results["first"], 409)
    assert second.status_code == 200 and second.json()["passed"] is True
    assert client.get("/api/progress", headers=headers).json() == {"running": False, "queued": 0}
    timing = second.headers["Server-Timing"]
    assert [part.split(";")[0] for part in timing.split(", ")] == [
        "parse", "check", "check-plan", "check-import", "check-cases", "check-finish", "history", "encode"]


def test_a_checks_time_is_split_by_its_progress_lines():
    """checks.phase_split: the plan until "import", the child's start and import until the first
    case, the visible cases, the shrink search, and the rest (hidden cases, report, exit)."""
    from grader.web.checks import last_progress, phase_split
    lines = ["grader: note: something else", "grader: progress: import 0 0 10.5",
             "grader: progress: cases 0 3 11.0", "grader: progress: cases 1 3 11.1", "grader: progress: cases 3 3 11.4",
             "grader: progress: shrink 0 0 11.5", "grader: progress: hidden 0 7 12.5", "a last line"]
    split = phase_split("\n".join(lines).encode(), 10.0, 13.0)
    assert split == pytest.approx({"plan": 0.5, "import": 0.5, "cases": 0.4, "shrink": 1.0, "finish": 0.6})
    assert phase_split(b"grader: progress: import 0 0 10.5\n", 10.0, 11.0) == pytest.approx({"plan": 0.5, "import": 0.5})
    assert phase_split(b"no progress at all", 10.0, 11.0) == {"plan": 1.0}
    import tempfile
    with tempfile.TemporaryFile() as f:
        assert last_progress(f) is None
        f.write("\n".join(lines).encode())
        f.seek(0)
        assert last_progress(f) == ("hidden", 0, 7) and f.tell() == 0


def test_a_learners_exception_is_a_report_not_an_error(client):
    broken = "def tied_lm_head(hidden, embedding_matrix)\n    return 1\n"    # a syntax error
    response = client.post("/api/check", json={"problem": "tied_lm_head", "framework": "numpy", "source": broken})
    assert response.status_code == 200, response.text
    assert response.json()["passed"] is False


def test_two_runs_of_one_page_at_once_the_first_is_cancelled(client):
    """Against the real server: the first Run (a slow function) answers 409 as soon as the
    second starts; the second gives its report."""
    results: dict[str, httpx.Response] = {}
    headers = {"X-Grader-Session": "page-1"}

    def first():
        results["first"] = client.post("/api/check", headers=headers,
                                       json={"problem": "tied_lm_head", "framework": "numpy", "source": SLOW})
        results["first_done"] = time.monotonic()    # type: ignore[assignment]

    thread = threading.Thread(target=first)
    thread.start()
    time.sleep(2.0)     # the first check is running (each call of it sleeps 5 s)
    second = client.post("/api/check", headers=headers,
                         json={"problem": "tied_lm_head", "framework": "numpy", "source": GOOD})
    second_done = time.monotonic()
    thread.join(WAIT)
    assert "cancelled" in _one_line_error(results["first"], 409)
    assert second.status_code == 200 and second.json()["passed"] is True
    assert results["first_done"] < second_done     # type: ignore[operator]


def test_two_runs_at_once_never_both_run(tmp_path):
    """On the app itself, with a stand-in check of 1.5 s: the second Run of a page cancels the
    first and starts only once it has ended (at most one check of the page ever runs); another
    page's Run is not held up."""
    from grader.web.app import create_app
    from grader.web.checks import Checker
    from grader.web.history import History

    class Stand(Checker):
        def command(self, problem, framework, shrink=True):
            return [sys.executable, "-c", "import time, json; time.sleep(1.5); print(json.dumps({'passed': True}))"]

    checker = Stand(direct=False)
    app = create_app("t" * 48, checker=checker, history=History(tmp_path / "h.sqlite3"))

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1",
                                     headers={"Authorization": "token " + "t" * 48}) as c:
            body = {"problem": "tied_lm_head", "framework": "numpy", "source": GOOD}

            async def run(session, delay):
                await asyncio.sleep(delay)
                return await c.post("/api/check", json=body, headers={"X-Grader-Session": session})

            return await asyncio.gather(run("a", 0), run("a", 0.5), run("a", 0.7), run("b", 0.1))

    first, second, third, other = asyncio.run(scenario())
    assert [first.status_code, second.status_code, third.status_code, other.status_code] == [409, 409, 200, 200]
    assert checker.peak == {"a": 1, "b": 1}


def test_port_and_open_and_a_taken_port(served, tmp_path):
    """--port N serves there and --open sends the default browser ($BROWSER here) to the page
    through a file only this user can read (0600 in a 0700 folder, removed when serve stops):
    the browser's command line, which every local user reads in /proc, holds no token (round
    twenty-six: it held the URL with its token). A port already taken is one clear line and
    exit 2, not a traceback."""
    import socket as socketlib
    with socketlib.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    opened = tmp_path / "opened.txt"
    browser = f"{sys.executable} -c \"import sys; open({str(opened)!r}, 'w').write(sys.argv[1])\" %s"
    os.environ["BROWSER"], saved = browser, os.environ.get("BROWSER")
    try:
        (tmp_path / "one").mkdir()
        with grader_serve(tmp_path / "one", "--port", str(port), "--open") as s:
            assert s.base == f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline:
                time.sleep(0.1)
            given = opened.read_text()
            assert s.token not in given and given.startswith("file:///"), given
            page = Path(given[len("file://"):])
            assert page.stat().st_mode & 0o777 == 0o600 and page.parent.stat().st_mode & 0o777 == 0o700
            html = page.read_text()
            assert f'content="0;url={s.url}"' in html and f"window.location.replace({json.dumps(s.url)})" in html
        deadline = time.monotonic() + 60   # the page's server stops on serve's death signal, after it
        while page.parent.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not page.parent.exists()
    finally:
        if saved is None:
            os.environ.pop("BROWSER")
        else:
            os.environ["BROWSER"] = saved
    folder = tmp_path / "two"
    folder.mkdir(mode=0o700)
    taken = served.base.rsplit(":", 1)[1]
    out = subprocess.run([sys.executable, "-m", "grader", "serve", "--socket", str(folder / "s.sock"), "--port", taken],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"grader: error: the exercise page cannot listen on 127.0.0.1:{taken}")
    assert out.stderr.count("\n") == 1


def test_the_history_is_kept_across_restarts_in_the_data_folder(tmp_path, monkeypatch):
    from grader.web.history import History, data_folder
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_folder() == tmp_path / "xdg" / "grader"
    first = History()
    attempt = first.add("tied_lm_head", "jax", GOOD, {"passed": True, "score": 10.0, "max_score": 10.0}, 1.25)
    again = History()      # a new server's
    assert again.path == tmp_path / "xdg" / "grader" / "history.sqlite3"
    assert [row["id"] for row in again.list("tied_lm_head")] == [attempt] and again.list("softmax") == []
    assert again.get(attempt)["source"] == GOOD and again.get(attempt)["report"]["passed"] is True
    # a run that could not grade (its own failure: import, timeout...) is listed as such, for the
    # page's ERROR (a newcomer's import error was listed as FAIL)
    broken = again.add("tied_lm_head", "numpy", "def", {"passed": False, "score": 0, "max_score": 10.0,
                                                       "failure": {"kind": "import"}}, 0.5)
    listed = {row["id"]: row["failure"] for row in again.list("tied_lm_head")}
    assert listed == {attempt: None, broken: "import"}
    # round 62: a data folder the user had made 0755 left the file (and SQLite's -wal and -shm,
    # which take its mode) readable by every local user: the folder and the files become private
    import stat
    loose = tmp_path / "loose" / "grader"
    loose.mkdir(parents=True, mode=0o755)
    loose.chmod(0o755)
    (loose / "history.sqlite3").touch(mode=0o644)
    (loose / "history.sqlite3").chmod(0o644)
    History(loose / "history.sqlite3").save_draft("tied_lm_head", "numpy", "# before")
    loose.chmod(0o755)
    (loose / "history.sqlite3").chmod(0o644)
    reader = open(loose / "history.sqlite3", "rb")      # another user who opened the loose file (round 63)
    kept = History(loose / "history.sqlite3")
    kept.save_draft("tied_lm_head", "numpy", GOOD)
    assert kept.drafts("tied_lm_head") == {"numpy": GOOD}
    import sqlite3
    with sqlite3.connect(loose / "history.sqlite3") as db:   # the log into the file the path names now
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    reader.seek(0)
    assert b"hidden @ embedding_matrix" not in reader.read()   # a new file: the old handle sees none of it
    reader.close()
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
    assert [p.name for p in loose.iterdir() if stat.S_IMODE(p.stat().st_mode) & 0o077] == []
    elsewhere = tmp_path / "elsewhere.sqlite3"
    (loose / "linked.sqlite3").symlink_to(elsewhere)
    with pytest.raises(OSError):      # a link is never followed (ELOOP, or refused)
        History(loose / "linked.sqlite3")
    assert not elsewhere.exists()
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_folder() == tmp_path / "home" / ".local" / "share" / "grader"


@pytest.mark.parametrize("problem, frameworks", [("embedding_lookup", ("numpy",)),
                                                 ("masked_mean_pool", ("numpy", "torch"))])
def test_the_other_lesson_problems_pass_through_the_page(client, problem, frameworks):
    """The lesson's other two problems: a correct file (submissions/<problem>/) sent as the page
    sends it passes (PyTorch once: its checks are the slowest); the stub fails with a report,
    not an error."""
    from .conftest import SUBMISSIONS
    detail = client.get(f"/api/problems/{problem}").json()
    assert "<code>" in detail["statement_html"] and "Example" in detail["statement"]
    for framework in frameworks:
        source = (SUBMISSIONS / problem / f"correct_{framework}.py").read_text()
        response = client.post("/api/check", json={"problem": problem, "framework": framework, "source": source})
        assert response.status_code == 200, response.text
        assert response.json()["passed"] is True, (framework, response.json()["hints"])
    stub = client.post("/api/check", json={"problem": problem, "framework": "numpy", "source": detail["stubs"]["numpy"]})
    assert stub.status_code == 200 and stub.json()["passed"] is False


def _page_config(client, problem: str) -> dict:
    """The page's config (its one JSON script) as the browser reads it."""
    import html
    import re
    text = client.get(f"/problems/{problem}").text
    found = re.search(r'<script id="config" type="application/json">(.*?)</script>', text, re.S)
    assert found, text[:500]
    return json.loads(html.unescape(found.group(1)))


def test_drafts_are_kept_by_the_server_behind_the_token(client, served):
    """Attack round 61: the drafts were in the browser's storage of 127.0.0.1:PORT, which another
    local user read by listening on that port once grader serve stopped. Now ``PUT
    /api/drafts/{problem}/{framework}`` keeps one in the user's data folder (behind the token),
    and the page's config carries its problem's drafts; bad requests are one clear line."""
    draft = "import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n    # ALICE-DRAFT <\\/script>\n"
    assert client.put("/api/drafts/tied_lm_head/numpy", json={"source": draft}).status_code == 204
    assert _page_config(client, "tied_lm_head")["drafts"] == {"numpy": draft}
    assert client.put("/api/drafts/tied_lm_head/numpy", json={"source": GOOD}).status_code == 204   # replaced
    assert _page_config(client, "tied_lm_head")["drafts"] == {"numpy": GOOD}
    assert _page_config(client, "embedding_lookup")["drafts"] == {}
    denied = httpx.put(f"{served.base}/api/drafts/tied_lm_head/numpy", json={"source": "stolen"})
    assert "token" in _one_line_error(denied, 403)
    assert "unknown problem" in _one_line_error(client.put("/api/drafts/nope/numpy", json={"source": ""}), 404)
    assert "not graded" in _one_line_error(client.put("/api/drafts/tied_lm_head/cobol", json={"source": ""}), 404)
    assert "JSON" in _one_line_error(client.put("/api/drafts/tied_lm_head/numpy", content=b"source=1"), 400)
    assert "string" in _one_line_error(client.put("/api/drafts/tied_lm_head/numpy", json={"source": 3}), 400)
    lone = b'{"source": "x = 1  # \\ud800"}'                 # round 62: a 500 with a traceback
    assert "surrogate" in _one_line_error(client.put("/api/drafts/tied_lm_head/numpy", content=lone), 422)
    assert "1 MiB" in _one_line_error(client.put("/api/drafts/tied_lm_head/numpy",
                                                 json={"source": "#" * (1 << 20)}), 413)
    assert _page_config(client, "tied_lm_head")["drafts"] == {"numpy": GOOD}   # none of those changed it
