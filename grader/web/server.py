"""The exercise page's server process (started by :func:`grader.web.launch.start`): binds
127.0.0.1, prints the page's URL (with its token) as its one stdout line, then serves the app
with uvicorn until SIGTERM or SIGINT."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import sys
import tempfile
from pathlib import Path

from .launch import TOKEN_ENV


def main(argv: list[str]) -> int:
    """``--port N --socket PATH [--problems-dir DIR] [--open]``; the token is in ``$GRADER_WEB_TOKEN``.
    Its first stdout line is the URL, or ``error: ...`` when it cannot listen (exit 2)."""
    parser = argparse.ArgumentParser(prog="grader-web")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--socket", help="the fork server's socket the checks ask")
    parser.add_argument("--problems-dir")
    parser.add_argument("--open", action="store_true")
    args = parser.parse_args(argv)
    token = os.environ.pop(TOKEN_ENV, "")
    if len(token) < 32:
        sys.stderr.write("grader: error: the exercise page needs its token in $GRADER_WEB_TOKEN\n")
        return 2
    import uvicorn

    from .app import create_app
    from .checks import Checker
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        # on stdout, the one line grader serve reads: it says it as its own error
        sys.stdout.write(f"error: the exercise page cannot listen on 127.0.0.1:{args.port}: {exc.strerror}"
                         " (--port another, or none for a free one)\n")
        return 2
    sock.listen(64)
    try:
        app = create_app(token, checker=Checker(socket=args.socket, problems_dir=args.problems_dir),
                         problems_dir=args.problems_dir)
    except (OSError, sqlite3.Error) as exc:   # the data folder: another user's, a link, unwritable
        sys.stdout.write(f"error: the exercise page cannot keep its history: {exc}\n")
        return 2
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    os.dup2(2, 1)   # the one line is said: stdout's pipe is closed by grader serve
    opener = None
    if args.open:
        import threading
        import webbrowser
        opener = redirect_file(url)
        threading.Thread(target=webbrowser.open, args=(opener.as_uri(),), daemon=True).start()
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=3,
                            lifespan="off")
    # uvicorn stops gracefully on SIGTERM (grader serve's death signal) and then raises it again
    # with the handler it found: this one, so that the finally below runs instead of a bare death
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if opener is not None:
            shutil.rmtree(opener.parent, ignore_errors=True)
    return 0


def redirect_file(url: str) -> Path:
    """A page that sends the browser to ``url``, in a new folder only this user can open (mode
    0700, the file 0600); the browser is started with this file's path, never ``url``.

    A browser started with the URL keeps its ``?token=`` in its command line, which every local
    user reads in ``/proc/PID/cmdline`` for the browser's whole life (issue 32, round twenty-six);
    Jupyter opens such a file for the same reason. The folder is removed when the server stops.
    """
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    folder = Path(tempfile.mkdtemp(prefix="grader-open-"))
    page = folder / "open.html"
    html = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                       autoescape=select_autoescape(default=True)).get_template("open.html").render(url=url)
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(html)
    return page
