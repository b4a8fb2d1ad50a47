"""``grader serve``'s hook for the exercise page: its flags (:func:`add_arguments`) and the
start of its HTTP server as a child process (:func:`start`), whose URL is serve's first line.

The page's server is a process of its own, not a thread of the fork server: the fork server
forks checks and must have one thread when it does. It is started with a random token (in its
environment, not on its command line, where other users could read it), binds 127.0.0.1, and
dies with ``grader serve`` (its parent-death signal).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

#: the environment variable that hands the token to the page's server
TOKEN_ENV = "GRADER_WEB_TOKEN"
#: run by ``python -I -c``: the grader's folder (argv[1]) on sys.path, then the page's server
BOOT = ("import sys; root = sys.argv.pop(1); root in sys.path or sys.path.insert(0, root); "
        "from grader.web.server import main; sys.exit(main(sys.argv[1:]))")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``grader serve``'s flags of the exercise page."""
    parser.add_argument("--port", type=int, default=0, metavar="N",
                        help="the exercise page's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--open", action="store_true", help="open the exercise page in the default browser")
    parser.add_argument("--no-web", action="store_true", help="no exercise page: the fork server only")


def _parent_death_signal() -> None:
    """In the child before exec: SIGTERM when ``grader serve`` ends (Linux ``PR_SET_PDEATHSIG``)."""
    import signal
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def start(args: Any, socket_path: Path) -> subprocess.Popen[bytes] | None:
    """Start the page's server for ``grader serve`` (None with ``--no-web``) and print its URL
    as this process's first stdout line.

    Raises:
        GraderError: the server did not start (the port is taken, say; its reason is on stderr).
    """
    from ..errors import GraderError
    if getattr(args, "no_web", False):
        return None
    if not 0 <= args.port <= 65535:
        raise GraderError(f"--port {args.port}: give a port from 1 to 65535 (0 or none: a free one)")
    root = str(Path(__file__).resolve().parents[2])
    argv = [sys.executable, "-I", "-c", BOOT, root, "--port", str(args.port), "--socket", str(socket_path)]
    if getattr(args, "problems_dir", None):
        argv += ["--problems-dir", os.path.abspath(args.problems_dir)]
    if args.open:
        argv.append("--open")
    env = dict(os.environ)
    env[TOKEN_ENV] = secrets.token_hex(24)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env, cwd="/",
                            preexec_fn=_parent_death_signal)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    proc.stdout.close()
    if not line.startswith(b"http://"):
        proc.kill()
        proc.wait()
        said = line.decode("utf-8", "replace").strip()
        raise GraderError(said[len("error: "):] if said.startswith("error: ") else
                          "the exercise page did not start (see above); --no-web serves without it")
    sys.stdout.write(line.decode())
    sys.stdout.flush()
    return proc
