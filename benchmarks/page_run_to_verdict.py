"""Run -> verdict on the exercise page (issue 36's acceptance figure), without the JAX half of
tests/test_web_browser.py: start ``grader serve --problem tied_lm_head``, open the page in
Debian's Chromium (Playwright), type the correct NumPy tied_lm_head, Run once (the first),
then ROUNDS more with the spares warm. Each Run is measured by Playwright (the click to the
verdict seen) and in the page (``window.graderLastRun``), with the server's Server-Timing split
of the request (parse, the check's plan / import / cases / finish, history, encode).

Prints one line per Run, the medians, and the load average before and after.

    .venv/bin/python benchmarks/page_run_to_verdict.py [ROUNDS] [--pause SECONDS]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web_server import grader_serve  # noqa: E402

CORRECT = "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\nreturn hidden @ embedding_matrix.T"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def timing(header: str) -> dict[str, float]:
    """A Server-Timing header as ``{name: milliseconds}``."""
    out = {}
    for part in (header or "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        if name and dur:
            out[name] = float(dur)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("rounds", type=int, nargs="?", default=7)
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between Runs (the spare is refilled)")
    parser.add_argument("--json", help="write the record here")
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="grader-bench-page-") as tmp, grader_serve(Path(tmp)) as served, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(served.url)
        page.get_by_role("radio", name="NumPy").check()
        editor = page.get_by_role("textbox", name="Code editor")
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.type(CORRECT)
        for i in range(args.rounds + 1):
            old = page.locator("#verdict").count() and page.locator("#verdict").element_handle()
            time.sleep(args.pause)
            start = time.monotonic()
            page.get_by_role("button", name="Run", exact=True).click()
            if old:
                page.wait_for_function("el => !el.isConnected", arg=old, timeout=300_000)
            expect(page.locator("#verdict")).to_have_text("PASS", timeout=300_000)
            seen = time.monotonic() - start
            last = page.evaluate("window.graderLastRun")
            split = timing(last["serverTiming"])
            runs.append({"playwright_s": seen, "in_page_s": last["ms"] / 1000, "render_ms": last["renderMs"],
                         "server_ms": split, "load1": os.getloadavg()[0]})
            label = "first" if i == 0 else f"warm {i}"
            parts = " ".join(f"{k}={v:.0f}" for k, v in split.items())
            print(f"{label:8s} playwright {seen:.3f} s, in page {last['ms'] / 1000:.3f} s "
                  f"(render {last['renderMs']:.0f} ms); server ms: {parts}", flush=True)
        browser.close()
    warm = runs[1:]
    load_after = os.getloadavg()
    med = lambda key: statistics.median(r[key] for r in warm)  # noqa: E731
    names = sorted({k for r in warm for k in r["server_ms"]}, key=lambda k: list(warm[-1]["server_ms"]).index(k)
                   if k in warm[-1]["server_ms"] else 99)
    split = {k: statistics.median(r["server_ms"].get(k, 0.0) for r in warm) for k in names}
    print(f"median of {len(warm)} warm Runs: playwright {med('playwright_s'):.3f} s, in page {med('in_page_s'):.3f} s; "
          "server ms " + " ".join(f"{k}={v:.0f}" for k, v in split.items()))
    print(f"load average before {', '.join(f'{x:.2f}' for x in load_before)}; after "
          f"{', '.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} cores")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "load_before": load_before, "load_after": load_after,
                                               "median_playwright_s": med("playwright_s"),
                                               "median_in_page_s": med("in_page_s"), "median_server_ms": split},
                                              indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
