"""Attack rounds 37 and 38 (issue 33): grader serve's checks take the client's process state (or
the server refuses them), its spares are used only under the same, a hand-over cannot be lost or
turned into exit 0, a client asks only a server of its own install, and the socket's folder
cannot be taken or swapped.

Each finding's test fails on the code before the fix (ac6fd48): a server started under umask 077
or a 1 MiB stack failed a correct file its client's own check passed; a raw request grown past
the spare's limit by re-encoding came back as exit 0; a client read any server of its uid; another
user's /tmp/grader-<uid> stopped grader serve from starting.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader import forkserver, forkserver_client, forkserver_policy
from grader.errors import GraderError

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
GRADER = [sys.executable, "-m", "grader"]
ARGS = ["--problem", "tied_lm_head", "--format", "json", "--max-examples", "2", "--no-shrink"]

#: right only with a few MiB of C stack (recursion through map and sum)
DEEP = '''
import sys
import tempfile
sys.setrecursionlimit(100000)

def depth(n):
    return 0 if n == 0 else 1 + sum(map(depth, [n - 1]))

def tied_lm_head(hidden, embedding_matrix):
    depth(6000)
    return hidden @ embedding_matrix.T
'''


#: the umask and stack limit of an unusual shell (a shell sets them: no preexec_fn in a process with JAX's threads)
NARROW = "umask 077; ulimit -S -s 1024; "


def _in_shell(prefix: str, argv: list[str]) -> list[str]:
    return ["sh", "-c", prefix + 'exec "$@"', "sh", *argv] if prefix else argv


@pytest.fixture(scope="module")
def narrow_server(tmp_path_factory):
    """A grader serve with a NumPy spare, started under umask 077 and a 1 MiB stack."""
    folder = tmp_path_factory.mktemp("narrow") / "private"
    folder.mkdir(mode=0o700)
    sock = folder / "serve.sock"
    proc = subprocess.Popen(_in_shell(NARROW, [*GRADER, "serve", "--socket", str(sock), "--problem", "tied_lm_head",
                                               "--spares", "numpy", "--no-web"]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.readline()
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert sock.exists(), proc.stderr.read() if proc.poll() is not None else ""
    assert oct(sock.stat().st_mode & 0o777) == "0o600"
    yield sock
    proc.terminate()
    proc.wait(timeout=30)


def _run(sock: Path | None, path: Path, shell: str = "") -> dict:
    env = {**os.environ, forkserver.SOCKET_ENV: str(sock or "/nonexistent/s.sock"), forkserver.SERVE_ENV: "1" if sock else "0"}
    out = subprocess.run(_in_shell(shell, [*GRADER, "check", str(path), *ARGS]), capture_output=True, text=True,
                         timeout=180, env=env, cwd="/")
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_a_served_check_runs_under_its_clients_umask_and_limits_not_the_servers(narrow_server, tmp_path):
    """A server started under umask 077 failed every correct file (the sandbox user could not
    open its copy), and one under ulimit -s 1024 failed a file that needs a deeper stack: the
    check now takes its client's umask and limits, and the spare (started under the server's)
    is used only by a client with the same."""
    deep = tmp_path / "deep.py"
    deep.write_text(DEEP)
    deep.chmod(0o644)
    tmp_path.chmod(0o755)
    for path in (SUBMISSIONS / "correct_numpy.py", deep):
        cold, served = _run(None, path), _run(narrow_server, path)
        assert cold["passed"] and served["passed"], (path.name, served["cases"][0].get("failure"))
        assert served["environment"]["served"] == "pool" and "child" not in served["environment"]
    # a client of the server's own umask and stack: its spare, and its copy readable by the sandbox user
    alike = _run(narrow_server, SUBMISSIONS / "correct_numpy.py", shell=NARROW)
    assert alike["passed"] and alike["environment"].get("child") == "spare"
    # and without a server, umask 077 no longer shuts the child out of its own file
    assert _run(None, SUBMISSIONS / "correct_numpy.py", shell=NARROW)["passed"]


def _greeted(sock_path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(sock_path))
    assert forkserver_client._greeting(s) == forkserver.identity()
    return s


def test_a_long_request_reaches_the_spare_whole_and_the_spare_is_refilled(narrow_server):
    """A request of raw UTF-8 under the server's limit grew past the spare's when the server
    re-encoded it: the spare dropped it and exited 0, which the client took for a pass. The spare
    now reads the request's own bytes; and a spare lost in a failed hand-over was never replaced."""
    # sent from a process under the spare's own umask and stack limit (NARROW): the server reads
    # its client's state itself (attack round 42), so the request must be that process's
    sub = str(SUBMISSIONS / "wrong_shape_atleast_2d.py")
    client = f"""
import json, os, socket, sys
sys.path.insert(0, {str(ROOT)!r})
from grader import forkserver, forkserver_client, forkserver_policy
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({str(narrow_server)!r})
assert forkserver_client._greeting(s) == forkserver.identity()
request = {{"argv": ["check", {sub!r}, *{ARGS!r}],
           "env": {{**os.environ, "PADDING": "\u00e9" * 700_000, forkserver.SERVE_ENV: "0"}}, "cwd": "/",
           "grader": forkserver.identity(), "framework": "numpy",
           "process": {{**forkserver.process_state(), "stdio": forkserver_client.stdio()}}, "proofs": [{sub!r}]}}
line = json.dumps(request, ensure_ascii=False).encode() + b"\\n"
assert len(line) < forkserver.MAX_REQUEST < len(json.dumps(request).encode())
with open(os.devnull, "r+b") as null, open({sub!r}, "rb") as fh:
    socket.send_fds(s, [b"R"], [null.fileno()] * 3 + [fh.fileno()])
s.sendall(line)
s.settimeout(120)
data = b""
while not data.count(b"\\n") >= 2 or b'"code"' not in data:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
"""
    out = subprocess.run(_in_shell(NARROW, [sys.executable, "-I", "-c", client]), capture_output=True, text=True,
                         timeout=180, cwd="/")
    assert out.returncode == 0, out.stderr
    data = out.stdout.encode()
    answers = [json.loads(x) for x in data.splitlines()]
    assert answers[-1] == {"code": 1}, answers        # the check ran and failed: never 0
    time.sleep(1)
    again = _run(narrow_server, SUBMISSIONS / "correct_numpy.py", shell=NARROW)
    assert again["passed"] and again["environment"].get("child") == "spare"


def test_a_request_whose_process_state_cannot_be_taken_is_refused():
    ok = {**forkserver.process_state(), "stdio": forkserver_client.stdio()}
    assert forkserver.unadoptable(ok) is None
    assert forkserver.unadoptable(None) and forkserver.unadoptable({**ok, "umask": -1})
    assert forkserver.unadoptable({**ok, "rlimits": {**ok["rlimits"], "RLIMIT_STACK": [2, 1]}})
    assert forkserver.unadoptable({**ok, "rlimits": {k: v for k, v in ok["rlimits"].items() if k != "RLIMIT_CPU"}})
    assert forkserver.unadoptable({**ok, "rlimits": {**ok["rlimits"], "RLIMIT_STACK": ["8", -1]}})


def _fake_server(path: Path, first_line: bytes | None) -> threading.Thread:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve():
        conn, _ = listener.accept()
        if first_line is not None:
            conn.sendall(first_line)
        time.sleep(1.0)
        conn.close()
        listener.close()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_a_client_asks_only_a_server_that_greets_as_its_own_install(tmp_path, monkeypatch):
    """The server checked the client's install, the client never checked the server's: an older
    or another install's server answered silently. A client now reads the server's greeting."""
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(forkserver_client, "GREETING_WAIT", 0.3)
    for first, expect in ((forkserver.greeting(), True), (json.dumps({"grader": "0" * 64}).encode() + b"\n", False),
                          (None, False)):
        path = folder / "s.sock"
        thread = _fake_server(path, first)
        sock = forkserver.connect(path)
        assert (sock is not None) == expect, first
        if sock is not None:
            sock.close()
        thread.join()
        path.unlink()


def test_another_users_folder_at_the_usual_place_moves_the_socket_to_the_home_folder(tmp_path, monkeypatch):
    """Another user who made /tmp/grader-<uid> (any mode) stopped grader serve from starting;
    serve and its clients now go on to the next place, a folder under the user's home."""
    monkeypatch.delenv(forkserver.SOCKET_ENV, raising=False)
    home = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))     # a short path: a socket's address has 107 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "runtime").mkdir(mode=0o700)
    (tmp_path / "runtime" / "grader").mkdir(mode=0o777)
    os.chmod(tmp_path / "runtime" / "grader", 0o777)      # taken: open to others
    candidates = forkserver_client.socket_candidates()
    assert candidates[0].parent == tmp_path / "runtime" / "grader" and candidates[-1].is_relative_to(home)
    monkeypatch.setattr(forkserver_client, "socket_candidates", lambda: [candidates[0], candidates[-1]])
    chosen = forkserver.default_socket()
    assert chosen == candidates[-1] and oct(chosen.parent.stat().st_mode & 0o777) == "0o700"
    monkeypatch.setattr(forkserver_client, "socket_candidates", lambda: [candidates[0]])
    with pytest.raises(GraderError, match="no private folder"):
        forkserver.default_socket()
    shutil.rmtree(home)


def test_the_socket_is_made_and_removed_through_its_folders_descriptor(tmp_path):
    """Only the socket's own folder was checked, then used by path: a folder above it that
    another user can write could be swapped between the check and the bind, chmod or unlink."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    with pytest.raises(GraderError, match="not a private folder"):
        forkserver.listen_private(str(shared / "s.sock"))
    (tmp_path / "link").symlink_to(tmp_path / "private", target_is_directory=True)
    (tmp_path / "private").mkdir(mode=0o700)
    with pytest.raises(GraderError):
        forkserver.listen_private(str(tmp_path / "link" / "s.sock"))
    old = os.umask(0o000)
    try:
        listener, folder = forkserver.listen_private(str(tmp_path / "private" / "s.sock"))
    finally:
        os.umask(old)
    try:
        assert oct((tmp_path / "private" / "s.sock").stat().st_mode & 0o777) == "0o600"
        os.rename(tmp_path / "private", tmp_path / "moved")          # the path changes; the descriptor does not
        os.unlink("s.sock", dir_fd=folder)
        assert not (tmp_path / "moved" / "s.sock").exists()
    finally:
        listener.close()
        os.close(folder)


# -- round 38 ------------------------------------------------------------------------------------------

NICE_FIVE = """import os

def tied_lm_head(hidden, embedding_matrix):
    right = hidden @ embedding_matrix.T
    return right if os.getpriority(os.PRIO_PROCESS, 0) == 5 else right * 2
"""

QUIT_DEFAULT = """import signal

def tied_lm_head(hidden, embedding_matrix):
    right = hidden @ embedding_matrix.T
    return right if signal.getsignal(signal.SIGQUIT) == signal.SIG_DFL else right * 2
"""


def test_a_served_check_runs_at_its_clients_nice_value(narrow_server, tmp_path):
    """The server's nice value and CPUs reached its clients' children (attack round 38): a
    client's ``nice -n 5`` is now its check's, served as cold."""
    tmp_path.chmod(0o755)
    path = tmp_path / "nice_five.py"
    path.write_text(NICE_FIVE)
    path.chmod(0o644)
    cold, served = _run(None, path, shell="renice -n 5 -p $$ >/dev/null; "), _run(narrow_server, path, shell="renice -n 5 -p $$ >/dev/null; ")
    assert cold["passed"] and served["passed"] and served["environment"]["served"] == "pool"
    assert not _run(narrow_server, path)["passed"]


def test_the_child_starts_with_every_signal_as_python_has_it(tmp_path):
    """A grader started by a shell in the background ignores SIGQUIT, and its child inherited
    that (a served check's child its server's): the child now resets what was ignored or blocked."""
    tmp_path.chmod(0o755)
    path = tmp_path / "quit_default.py"
    path.write_text(QUIT_DEFAULT)
    path.chmod(0o644)
    assert _run(None, path, shell="trap '' QUIT; ")["passed"]


def test_the_servers_own_path_and_sandbox_settings_do_not_choose_its_clients_tier(tmp_path):
    """A server started without bubblewrap on its PATH ran its clients' checks in the rlimits tier
    (its probe, remembered for the process): a file right only outside a PID namespace passed
    served and failed cold. The memo is kept per program found on the PATH and sandbox setting."""
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed here")
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    sock = folder / "serve.sock"
    proc = subprocess.Popen([*GRADER, "serve", "--socket", str(sock), "--problem", "tied_lm_head", "--spares", "numpy",
                             "--no-web"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": str(tmp_path / "nothing")})
    try:
        proc.stdout.readline()
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        cold, served = _run(None, SUBMISSIONS / "correct_numpy.py"), _run(sock, SUBMISSIONS / "correct_numpy.py")
        assert served["environment"]["served"] == "pool"
        assert served["environment"]["sandbox"] == cold["environment"]["sandbox"] == "bwrap"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_limit_nice_value_or_fact_the_server_cannot_take_is_refused(monkeypatch):
    """Root without CAP_SYS_RESOURCE (a container's root) could not raise a hard limit: its check
    exited 2 instead of being refused (the client then runs it itself)."""
    import resource
    ok = {**forkserver.process_state(), "stdio": forkserver_client.stdio()}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    higher = {**ok, "rlimits": {**ok["rlimits"], "RLIMIT_NOFILE": [soft, hard + 1]}}
    monkeypatch.setattr(forkserver_policy, "_has_capability", lambda bit: False)
    assert "RLIMIT_NOFILE" in (forkserver.unadoptable(higher) or "")
    assert forkserver.unadoptable({**ok, "nice": ok["nice"] - 1}) if ok["nice"] > -20 else True
    assert forkserver.unadoptable({**ok, "fixed": {**ok["fixed"], "groups": [4242]}})
    assert forkserver.unadoptable({**ok, "cpus": []}) and forkserver.unadoptable({**ok, "nice": "0"})
    monkeypatch.setattr(forkserver_policy, "_has_capability", lambda bit: True)
    assert forkserver.unadoptable(higher) is None


def test_a_server_that_trickles_its_greeting_holds_a_client_for_the_wait_in_all(tmp_path, monkeypatch):
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    path = folder / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def trickle():
        conn, _ = listener.accept()
        with contextlib.suppress(OSError):
            for byte in forkserver.greeting():
                conn.sendall(bytes([byte]))
                time.sleep(0.05)
        conn.close()
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    monkeypatch.setattr(forkserver_client, "GREETING_WAIT", 0.5)
    began = time.monotonic()
    assert forkserver.connect(path) is None and time.monotonic() - began < 2
    thread.join()
    listener.close()


def test_a_home_folder_of_another_user_is_no_place_for_the_socket(tmp_path, monkeypatch):
    """Root with another user's HOME (a sudo that keeps it) made its socket folder where that
    user's link pointed; another user's home folder is not a candidate now."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    home = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))
    try:
        os.chown(home, 4242, 4242)
        monkeypatch.delenv(forkserver.SOCKET_ENV, raising=False)
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        monkeypatch.setenv("HOME", str(home))
        assert not [p for p in forkserver_client.socket_candidates() if p.is_relative_to(home)]
        os.chown(home, 0, 0)
        assert [p for p in forkserver_client.socket_candidates() if p.is_relative_to(home)]
    finally:
        shutil.rmtree(home)


# -- round 39 ------------------------------------------------------------------------------------------

def test_a_failed_probe_is_forgotten_and_the_tiers_program_is_the_childs(monkeypatch):
    """A probe that timed out while grader serve started was remembered for the server's life:
    every served check ran in the rlimits tier (attack round 39). A forked check and a spare
    forget failures and probe again; and the program is looked up on the child's PATH, as its
    start runs it, whatever the grader's own PATH."""
    from grader import sandbox
    monkeypatch.setattr(sandbox, "_probed", {})
    sandbox._probed[("bwrap", "/usr/bin/bwrap", None, None)] = (False, "the probe took longer than 20 s", None)
    sandbox._probed[("unshare", "/usr/bin/unshare", None, None)] = (True, "", None)
    sandbox.forget_probes()
    assert not sandbox._probed       # a success too: the on-disk memo (program identity, machine state) decides
    monkeypatch.setenv("PATH", "/nonexistent")
    if shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin"):
        assert sandbox._program("bwrap") is not None


def test_a_reference_added_inside_the_problems_folder_is_used_by_the_next_served_check(tmp_path, monkeypatch):
    """The fork server's memo of a spec kept the reference chosen when it was read: one added
    later inside the problems folder (which wins over one beside it) was not used by served
    checks, while cold ones used it (attack round 39)."""
    from grader import memo, spec
    folder = tmp_path / "course" / "problems"
    (tmp_path / "course" / "reference").mkdir(parents=True)
    folder.mkdir()
    bundled = ROOT / "problems" / "softmax.yaml"
    (folder / "softmax.yaml").write_text(bundled.read_text())
    (tmp_path / "course" / "reference" / "softmax.py").write_text((ROOT / "reference" / "softmax.py").read_text())
    monkeypatch.setattr(memo, "ENABLED", True)
    monkeypatch.setattr(memo, "_store", {})
    first = spec.load_problem(folder / "softmax.yaml")
    assert first.reference_path == (tmp_path / "course" / "reference" / "softmax.py").resolve()
    (folder / "reference").mkdir()
    (folder / "reference" / "softmax.py").write_text((ROOT / "reference" / "softmax.py").read_text())
    assert spec.load_problem(folder / "softmax.yaml").reference_path == (folder / "reference" / "softmax.py").resolve()
    assert spec.load_problem(folder / "softmax.yaml") is spec.load_problem(folder / "softmax.yaml")   # still remembered


def test_a_fork_closes_the_streams_of_other_requests_and_the_socket_folder():
    """A spare forked while another client's request was half read kept that client's stdout:
    its pipeline hung until the spare was used (attack round 39)."""
    a, b = forkserver._Connection(socket.socket()), forkserver._Connection(socket.socket())
    a.fds, b.fds = [101, 102, 103], [201, 202, 203]
    zygote = forkserver.Zygote(folder=77)
    zygote.connections = {1: a, 2: b}
    for_a = zygote._inherited(keep=a)
    assert {201, 202, 203, 77} <= set(for_a) and not {101, 102, 103} & set(for_a)
    assert {101, 102, 103, 201, 202, 203, 77} <= set(zygote._inherited())   # a spare keeps none
    a.sock.close()
    b.sock.close()


# -- round 40 ------------------------------------------------------------------------------------------

def test_a_32_bit_personality_keeps_the_seccomp_filter(monkeypatch):
    """Under linux32 (uname says i686) a 64-bit interpreter still makes x86_64 calls, but the
    filter was looked up by i686, failed, and the child ran without seccomp, cold and served
    (a file that forks passed): the table is chosen by the interpreter's calls (attack round 40)."""
    from grader import _confine
    real = os.uname()
    if real.machine != "x86_64":
        pytest.skip("an x86_64 machine's test")
    monkeypatch.setattr(os, "uname", lambda: real._replace(machine="i686") if hasattr(real, "_replace")
                        else type(real)((real.sysname, real.nodename, real.release, real.version, "i686")))
    assert _confine._syscall_machine() == "x86_64"
    if shutil.which("setarch"):
        out = subprocess.run(["setarch", "linux32", *GRADER, "check", str(SUBMISSIONS / "correct_numpy.py"), *ARGS],
                             capture_output=True, text=True, timeout=180, env={**os.environ, forkserver.SERVE_ENV: "0"},
                             cwd="/")
        assert "seccomp" in json.loads(out.stdout)["environment"]["sandbox_layers"], out.stderr[-500:]


def test_a_personality_or_scheduling_policy_other_than_the_servers_is_refused():
    ok = {**forkserver.process_state(), "stdio": forkserver_client.stdio()}
    assert "personality" in ok["fixed"] and "scheduler" in ok["fixed"] and forkserver.unadoptable(ok) is None
    assert forkserver.unadoptable({**ok, "fixed": {**ok["fixed"], "personality": "00000008"}})
    assert forkserver.unadoptable({**ok, "fixed": {**ok["fixed"], "scheduler": [5, 0]}})


def test_a_spec_memo_follows_its_modules_a_link_target_and_a_hints_file(tmp_path, monkeypatch):
    """The fork server's memo of a spec stood on the spec and the reference folders' times: a
    reference that came through a link whose target appeared later, and an edited hints module,
    stayed the server's (served PASS, cold FAIL; served exit 1, cold exit 2: attack round 40)."""
    from grader import memo, spec
    from grader.errors import SpecError
    folder = tmp_path / "course" / "problems"
    (tmp_path / "course" / "reference").mkdir(parents=True)
    (folder / "reference").mkdir(parents=True)
    text = (ROOT / "problems" / "softmax.yaml").read_text()
    (folder / "softmax.yaml").write_text(text)
    (tmp_path / "course" / "reference" / "softmax.py").write_text((ROOT / "reference" / "softmax.py").read_text())
    (tmp_path / "alt").mkdir()
    (folder / "reference" / "softmax.py").symlink_to(tmp_path / "alt" / "softmax.py")   # a target not there yet
    monkeypatch.setattr(memo, "ENABLED", True)
    monkeypatch.setattr(memo, "_store", {})
    beside = (tmp_path / "course" / "reference" / "softmax.py").resolve()
    assert spec.load_problem(folder / "softmax.yaml").reference_path.resolve() == beside
    (tmp_path / "alt" / "softmax.py").write_text((ROOT / "reference" / "softmax.py").read_text())
    assert spec.load_problem(folder / "softmax.yaml").reference_path.resolve() == (tmp_path / "alt" / "softmax.py")
    # a hints module the spec names, edited: the spec is read again (a cold check reads the new
    # module; one edited into a syntax error is "unusable" cold and was graded served)
    (folder / "myhints.py").write_text("def ideas(case, got, ref):\n    return []\n")
    (folder / "softmax.yaml").write_text(text.replace("hints: softmax", "hints: myhints.py") if "hints: softmax" in text
                                         else text + "\nhints: myhints.py\n")
    first = spec.load_problem(folder / "softmax.yaml")
    assert first.hints == str((folder / "myhints.py").resolve()) and spec.load_problem(folder / "softmax.yaml") is first
    (folder / "myhints.py").write_text("def ideas(:\n")
    with pytest.raises(SpecError, match="does not parse"):   # as a cold check reads it
        spec.load_problem(folder / "softmax.yaml")
