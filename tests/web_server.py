"""A real ``grader serve`` with its exercise page, for tests/test_web_api.py and
tests/test_web_browser.py: a private socket folder, a temporary data folder (the attempts'
history) and the page's URL, read from serve's first stdout line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{48})$")


@dataclass
class Served:
    """A running ``grader serve``: the page's URL, its base and token, the data folder."""

    url: str
    base: str
    token: str
    data: Path
    socket: Path
    proc: subprocess.Popen


@contextmanager
def grader_serve(folder: Path, *extra: str) -> Iterator[Served]:
    """Run ``grader serve --problem tied_lm_head`` with its socket and data under ``folder``;
    stop it (SIGTERM) on exit."""
    private = folder / "private"
    private.mkdir(mode=0o700)
    data = folder / "data"
    sock = private / "serve.sock"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    err = open(folder / "serve.stderr", "w")   # a file, not a pipe nobody reads
    proc = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--socket", str(sock), "--problem", "tied_lm_head",
                             *extra], stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                            stdin=subprocess.DEVNULL)
    err.close()
    errors = lambda: (folder / "serve.stderr").read_text()  # noqa: E731
    try:
        first = proc.stdout.readline().strip()
        match = URL.match(first)
        assert match, (first, errors())
        deadline = time.monotonic() + 120
        while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert sock.exists(), errors()
        yield Served(first, f"http://127.0.0.1:{match.group(1)}", match.group(2), data, sock, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
