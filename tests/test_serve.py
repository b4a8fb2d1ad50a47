"""``grader serve`` (issue 33): a fork server that ``grader check`` asks first.

One server is started for the module (a real ``grader serve`` process on a socket in a private
temporary folder); the checks through it must give the reports a cold check gives, apart from
timings and ``environment.served``, and fall back to the cold path whenever the server cannot be
trusted or reached (no server, a stale socket, a folder others may enter, ``GRADER_SERVE=0``).
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import forkserver

from .conftest import SUBMISSIONS

FAST = ["--max-examples", "4", "--no-shrink", "--timeout", "10"]
GRADER = [sys.executable, "-m", "grader"]


def _check(sock: Path, *args: str, serve: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, forkserver.SOCKET_ENV: str(sock), forkserver.SERVE_ENV: "1" if serve else "0"}
    return subprocess.run([*GRADER, "check", *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=cwd)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve") / "private"
    folder.mkdir(mode=0o700)
    sock = folder / "serve.sock"
    # --no-web: the fork server alone (the exercise page's URL would be the first line; tests/test_web_api.py)
    proc = subprocess.Popen([*GRADER, "serve", "--socket", str(sock), "--problem", "tied_lm_head", "--no-web"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert sock.exists(), (first, proc.stderr.read() if proc.poll() is not None else "")
    yield sock, first
    proc.terminate()
    proc.wait(timeout=30)


def _comparable(report: dict) -> dict:
    """A report without what differs between two runs of the same check: timings and the path."""
    env = {k: v for k, v in report["environment"].items()
           if k not in ("served", "child", "memory_limit", "sandbox_layers")}
    cases = [{k: v for k, v in c.items() if k != "seconds"} for c in report["cases"]]
    return {**report, "environment": env, "cases": cases, "seconds": None}


def test_a_served_check_reports_what_a_cold_one_does(server, tmp_path):
    sock, first = server
    assert first.startswith("grader serve: listening on ") and str(sock) in first
    for name in ("correct_numpy.py", "wrong_tolerance_softmax.py"):
        served = _check(sock, str(SUBMISSIONS / name), "--format", "json", *FAST)
        cold = _check(sock, str(SUBMISSIONS / name), "--format", "json", *FAST, serve=False)
        assert served.returncode == cold.returncode == (0 if name.startswith("correct") else 1), served.stderr
        a, b = json.loads(served.stdout), json.loads(cold.stdout)
        assert a["environment"]["served"] == "pool" and b["environment"]["served"] == "cold"
        assert a["environment"].get("child") == "spare" and "child" not in b["environment"]   # started ahead
        assert _comparable(a) == _comparable(b)


def test_a_served_check_has_the_clients_folder_streams_and_exit_codes(server, tmp_path):
    sock, _ = server
    (tmp_path / "mine.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    out = _check(sock, "mine.py", "--problem", "tied_lm_head", "--output", "r.json", "--format", "json", *FAST,
                 cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["environment"]["served"] == "pool"
    bad = _check(sock, "missing.py", "--problem", "tied_lm_head", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "missing.py" in bad.stderr
    usage = _check(sock, "mine.py", "--no-such-flag", cwd=tmp_path)
    assert usage.returncode == 2 and "grader: error:" in usage.stderr


def test_a_second_server_on_the_same_socket_is_refused(server):
    sock, _ = server
    out = subprocess.run([*GRADER, "serve", "--socket", str(sock)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "already running" in out.stderr and out.stderr.count("\n") == 1


def test_no_server_a_stale_socket_or_an_open_folder_means_a_cold_check(tmp_path):
    private = tmp_path / "p"
    private.mkdir(mode=0o700)
    assert forkserver.connect(private / "none.sock") is None
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(private / "stale.sock"))
    stale.close()                                   # a socket file nobody listens on
    assert forkserver.connect(private / "stale.sock") is None
    open_folder = tmp_path / "o"
    open_folder.mkdir(mode=0o755)
    os.chmod(open_folder, 0o755)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(open_folder / "s.sock"))
    listening.listen(1)
    try:   # someone else could have put it there, or swap it: never asked
        assert forkserver.connect(open_folder / "s.sock") is None
    finally:
        listening.close()
    with pytest.raises(Exception, match="not a private folder"):
        forkserver.private_folder(open_folder, create=True)
    out = _check(private / "stale.sock", str(SUBMISSIONS / "correct_numpy.py"), "--format", "json", *FAST)
    assert out.returncode == 0 and json.loads(out.stdout)["environment"]["served"] == "cold"


def test_the_servers_socket_is_this_users_alone(server):
    sock, _ = server
    st = os.lstat(sock)
    assert st.st_mode & 0o777 == 0o600 and os.lstat(sock.parent).st_mode & 0o777 == 0o700
    assert st.st_uid == os.geteuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_another_user_gets_nothing():
    """A connection whose peer is another uid (SO_PEERCRED) is closed before a byte is read: a
    request is a grader run as the server's user, so only that user may ask. The socket is
    opened to everyone here only to reach that check."""
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="grader-serve-test-")
    try:
        os.chmod(folder, 0o711)
        path = os.path.join(folder, "s.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o666)
        listener.listen(4)
        zygote = forkserver.Zygote(listener=listener)
        code = ("import socket, sys\n"
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                "s.connect(sys.argv[1])\n"
                "s.settimeout(20)\n"
                "print(repr(s.recv(100)))\n")
        client = subprocess.Popen(["/usr/bin/python3", "-I", "-c", code, path], user=65534, group=65534,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
        listener.settimeout(20)
        zygote._on_accept()
        assert zygote.connections == {}
        out, err = client.communicate(timeout=30)
        assert out.strip() == "b''", err            # closed without a word
        listener.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_notebook_warm_grader_forwards_to_the_server(server, monkeypatch):
    """``check(fn)``'s warm grader (``grader._warm_server``) asks the user's server first, with
    the check's output caught for the notebook, and runs the check itself when none answers."""
    from grader import _warm_server
    sock, _ = server
    argv = ["check", str(SUBMISSIONS / "correct_numpy.py"), "--format", "json", *FAST]
    monkeypatch.setenv(forkserver.SOCKET_ENV, str(sock))
    monkeypatch.setenv(forkserver.SERVE_ENV, "1")
    code, out, err = _warm_server._served(argv)
    assert code == 0 and json.loads(out)["environment"]["served"] == "pool", err
    monkeypatch.setenv(forkserver.SERVE_ENV, "0")
    assert _warm_server._served(argv) is None


def test_check_fn_asks_the_server_itself_from_a_neutral_folder(server, monkeypatch, tmp_path):
    """``check(fn)`` with a server running: the check is forked by the server (``served: pool``)
    and no warm grader of the kernel's own is started; the check's working folder is a neutral
    one, not the kernel's (which holds the learner's files). Without a server
    (``GRADER_SERVE=0``) the warm grader runs it."""
    from grader import notebook_check

    sock, _ = server
    monkeypatch.setenv(forkserver.SOCKET_ENV, str(sock))
    monkeypatch.setenv(forkserver.SERVE_ENV, "1")
    monkeypatch.chdir(tmp_path)
    started = []
    monkeypatch.setattr(notebook_check.WarmGrader, "start", lambda self: started.append(self))
    folders = []
    real = forkserver.send_request

    def spy(sock_, argv, env, cwd, fds):
        folders.append(cwd)
        return real(sock_, argv, env, cwd, fds)

    import grader.forkserver_client as client
    monkeypatch.setattr(client, "send_request", spy)

    def tied_lm_head(hidden, embedding_matrix):
        return hidden @ embedding_matrix.T

    result = notebook_check.check(tied_lm_head, max_examples=4)
    assert result.passed and result.report["environment"]["served"] == "pool"
    assert started == [] and folders and all(os.path.realpath(f) != os.path.realpath(tmp_path) for f in folders)
    monkeypatch.setenv(forkserver.SERVE_ENV, "0")
    assert notebook_check._served(["check", str(SUBMISSIONS / "correct_numpy.py"), *FAST]) is None


def test_memos_stand_while_the_file_is_unchanged(tmp_path, monkeypatch):
    """The server's in-memory specs and case sets (``grader.memo``) are read again once their
    file changes: an instructor's edit reaches the next served check."""
    from grader import memo
    monkeypatch.setattr(memo, "ENABLED", True)
    memo.clear()
    f = tmp_path / "spec.yaml"
    f.write_text("a")
    made = []
    read = lambda: made.append(f.read_text()) or f.read_text()  # noqa: E731
    assert memo.remembered("t", str(f), memo.stamp(f), read) == "a"
    assert memo.remembered("t", str(f), memo.stamp(f), read) == "a" and len(made) == 1
    f.write_text("bb")
    assert memo.remembered("t", str(f), memo.stamp(f), read) == "bb" and len(made) == 2
    # the same size rewritten and its modification time set back (attack round 34): the change
    # time, which no user sets, still tells
    before = f.stat()
    f.write_text("cc")
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert f.stat().st_mtime_ns == before.st_mtime_ns and f.stat().st_size == before.st_size
    assert memo.remembered("t", str(f), memo.stamp(f), read) == "cc" and len(made) == 3
    memo.clear()


def test_grade_forks_its_checks_from_its_own_server_with_the_same_rows(tmp_path):
    """``grader grade`` starts one fork server for the batch and forks each learner's check from
    it (``environment.served: pool``); ``GRADER_FORKSERVER=0`` starts a process per learner.
    The rows are the same either way, a timeout included."""
    klass = tmp_path / "class"
    klass.mkdir()
    for name in ("correct_numpy.py", "wrong_tolerance_softmax.py", "wrong_timeout_loop.py"):
        (klass / name).write_text((SUBMISSIONS / name).read_text())
    rows = {}
    for mode in ("1", "0"):
        out = tmp_path / f"out{mode}"
        run = subprocess.run([*GRADER, "grade", str(klass), "--problem", "tied_lm_head", "--jobs", "2", "--out",
                              str(out), "--timeout", "2", *FAST[:3]], capture_output=True, text=True, timeout=300,
                             env={**os.environ, forkserver.FORKSERVER_ENV: mode})
        assert run.returncode == 1, run.stderr
        served = {json.loads(p.read_text())["environment"].get("served") for p in (out / "reports").glob("*.json")}
        assert served == ({"pool"} if mode == "1" else {"cold"})
        with open(out / "gradebook.csv", newline="") as fh:
            import csv
            rows[mode] = sorted((r["learner"], r["passed"], r["score"], r["kinds"]) for r in csv.DictReader(fh))
    assert rows["1"] == rows["0"] and len(rows["1"]) == 3


def _raw(sock_path: Path, line: bytes) -> list[dict]:
    """Send one request line (with this process's three standard streams) and read the answers."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(sock_path))
    with open(os.devnull, "r+b") as null:
        socket.send_fds(s, [b"R"], [null.fileno()] * 3)
    s.sendall(line)
    s.settimeout(30)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    answers = [json.loads(x) for x in data.splitlines() if x.strip()]
    assert answers and answers[0] == {"grader": forkserver.identity()}, answers[:1]   # its greeting first
    return answers[1:]


def test_a_check_of_another_install_is_refused_and_a_bad_line_costs_only_its_connection(server, tmp_path):
    """An attacker's copy of the grader (another install, other code) on the default socket
    answered this install's checks with its own verdicts; the server now runs only its own
    install's checks (the client sends ``forkserver.identity``). And a request line nested
    200,000 deep raised RecursionError and stopped the server with every check in flight."""
    sock, _ = server
    request = {"argv": ["check", str(SUBMISSIONS / "correct_numpy.py")], "env": dict(os.environ), "cwd": "/"}
    answers = _raw(sock, json.dumps({**request, "grader": "0" * 64}).encode() + b"\n")
    assert answers and "another grader install" in answers[0].get("refused", "")
    assert _raw(sock, b"[" * 200000 + b"\n")[0].get("refused")
    served = _check(sock, str(SUBMISSIONS / "correct_numpy.py"), "--format", "json", *FAST)
    assert served.returncode == 0 and json.loads(served.stdout)["environment"]["served"] == "pool"


def test_a_quick_checks_end_read_with_its_start_is_its_exit_code():
    """grade's fork server: a check that ends at once (a syntax error) can send its start and its
    end in one read; its exit code was dropped and the row read 'killed by signal SIGKILL and
    wrote no report' (seen once in the suite, under load)."""
    mine, theirs = socket.socketpair()
    theirs.sendall(b'{"pid": 4242}\n{"code": 1}\n')
    theirs.close()
    check = forkserver.ForkedCheck(mine)
    assert check.pid == 4242 and check.poll() == 1 and check.wait(timeout=5) == 1


_SIGNAL_IN_A_DESTRUCTOR = r'''
import gc, signal, socket, sys
from grader import forkserver

# as forkserver.main does before serving: SIGTERM raises KeyboardInterrupt
signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

class Dying:
    def __del__(self):
        signal.raise_signal(signal.SIGTERM)   # the signal lands while a destructor runs

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(1)
zygote = forkserver.Zygote(None, listener)
select = zygote.selector.select
calls = []

def select_and_collect(timeout=None):
    calls.append(timeout)
    if len(calls) == 1:
        Dying()              # collected at once: its destructor raises the signal
    if len(calls) > 5:       # the loop went on after the signal: it would never end
        print("still serving", flush=True)
        sys.exit(3)
    return select(timeout=0.01)

zygote.selector.select = select_and_collect
print("stopped", zygote.serve(), len(calls), flush=True)
'''


def test_sigterm_stops_the_server_even_when_it_lands_in_a_destructor(tmp_path):
    """A handler's exception raised inside ``__del__`` is printed and dropped by Python: the
    server must stop on a flag, not on that exception (CI once waited 30 s for it to end)."""
    out = subprocess.run([sys.executable, "-c", _SIGNAL_IN_A_DESTRUCTOR, str(tmp_path / "s.sock")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split()[:2] == ["stopped", "0"], (out.stdout, out.stderr)
    assert int(out.stdout.split()[2]) <= 2   # it stopped at the select after the signal


def test_the_identity_covers_the_python_environment(monkeypatch):
    """A kernel of another virtual environment sharing this editable install is another grader
    to the server (attack round 34): its check is not run with the server's Python and libraries."""
    stamp = forkserver.code_stamp()
    mine = forkserver.identity(stamp)
    assert forkserver.identity(stamp) == mine
    monkeypatch.setattr(sys, "prefix", sys.prefix + "-other-venv")
    assert forkserver.identity(stamp) != mine


def test_a_served_check_writes_in_its_clients_encoding(server, tmp_path):
    """The fork wrote with the server's stdout encoding (attack round 41): a client under
    PYTHONIOENCODING=ascii got UTF-8 served and exit 2 cold for a learner's non-ASCII file name.
    Both now write it escaped, and the check is still served."""
    sock, _ = server
    (tmp_path / "s\u00f6lution.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    args = ["s\u00f6lution.py", "--problem", "tied_lm_head", *FAST]
    env = {**os.environ, "PYTHONIOENCODING": "ascii", forkserver.SOCKET_ENV: str(sock)}
    for serve in ("1", "0"):
        out = subprocess.run([*GRADER, "check", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env={**env, forkserver.SERVE_ENV: serve})
        assert out.returncode == 0 and "s\\xf6lution.py" in out.stdout, (serve, out.stdout, out.stderr)
    report = subprocess.run([*GRADER, "check", *args, "--format", "json"], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path, env={**env, forkserver.SERVE_ENV: "1"})
    assert json.loads(report.stdout)["environment"]["served"] == "pool"


def test_a_served_check_runs_in_its_clients_cgroup(server, tmp_path):
    """Attack round 43: a served check ran in the server's cgroup (its spare had started there),
    so a client near its cgroup's process limit passed served and failed cold. The check now
    joins its client's cgroups: while it runs, the client's cgroup holds more than the client."""
    from .test_serve_round41 import _pids_cgroup
    sock, _ = server
    folder = _pids_cgroup(f"grader-serve-test-{os.getpid()}")
    if folder is None:
        pytest.skip("no pids cgroup can be made here")
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(2)\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                                      "    return hidden @ embedding_matrix.T\n")

    def enter() -> None:
        (folder / "cgroup.procs").write_text(str(os.getpid()))
    env = {**os.environ, forkserver.SOCKET_ENV: str(sock), forkserver.SERVE_ENV: "1"}
    client = subprocess.Popen([*GRADER, "check", "slow.py", "--problem", "tied_lm_head", "--format", "json", *FAST],
                              cwd=tmp_path, env=env, preexec_fn=enter, stdout=subprocess.PIPE, text=True)
    try:
        most = 0
        deadline = time.monotonic() + 60
        while client.poll() is None and time.monotonic() < deadline:
            most = max(most, len((folder / "cgroup.procs").read_text().split()))
            time.sleep(0.05)
        out, _ = client.communicate(timeout=60)
        assert json.loads(out)["environment"]["served"] == "pool"
        assert most > 1      # the fork and its child joined the client's cgroup
    finally:
        client.kill()
        client.wait()
        with contextlib.suppress(OSError):
            folder.rmdir()


_SERVER_THAT_CANNOT_JOIN = r'''
import sys
from grader import cli, forkserver

# a client's cgroup whose cgroup.procs the server may open for writing but the kernel refuses
# to move into (cgroup v2: no write access to the common ancestor's cgroup.procs): /dev/full
# opens for writing and fails every write
forkserver.cgroup_joins = lambda pid: ["/dev/full"]
sys.exit(cli.main(["serve", "--socket", sys.argv[1], "--problem", "tied_lm_head", "--no-web", "--spares", "none"]))
'''


def test_a_check_the_server_cannot_move_into_its_clients_cgroup_runs_cold(tmp_path):
    """Attack round 44: under cgroup v2 delegation the file's mode said the server could move
    its check into the client's cgroup and the kernel refused; the fork had already been
    announced, so the check ended in exit 2 with nothing said (the error in the server's log).
    The server now moves the fork before it runs anything and refuses the request when that
    fails: the client runs its own check, and it passes."""
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    sock = folder / "serve.sock"
    proc = subprocess.Popen([sys.executable, "-c", _SERVER_THAT_CANNOT_JOIN, str(sock)], cwd=Path(__file__).parents[1],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert sock.exists(), proc.stderr.read() if proc.poll() is not None else ""
        run = _check(sock, str(SUBMISSIONS / "correct_numpy.py"), "--format", "json", *FAST)
        assert run.returncode == 0, (run.stdout, run.stderr)
        assert json.loads(run.stdout)["environment"]["served"] == "cold"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
