"""Attack round 41 on ``grader serve`` (docs/security.md): what a served check took from the
server instead of its client, and what the server did on behalf of a client of its own user
that the client could not do itself.

- The facts a server compares (``forkserver_client.fixed_facts``) were a list of known lines: a
  non-dumpable server of a user other than root could not read ``/proc/self/personality`` and
  refused every check; the primary group, the time namespace, the OOM score adjustment and
  memory-deny-write-execute (every JAX check crashed under a server started with it) were not
  compared. Now every inherited line of ``/proc/self/status``, every namespace and the ``prctl``
  settings are, each read in a way a non-dumpable process may.
- A client confined by Landlock had the server run ``--sandbox none`` code and grade a file its
  domain forbade: ``forkserver.unserved`` leaves those to the client.
- The client's ``ulimit -v`` counted the server's memory in a fork; the server's stdout encoding
  was used for the client's report.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli, forkserver, forkserver_client

from .conftest import SUBMISSIONS

FACTS = "import json; from grader.forkserver_client import fixed_facts; print(json.dumps(fixed_facts()))"
ROOT = Path(__file__).resolve().parents[1]


def _facts(*prefix: str, preexec=None, python: str = sys.executable) -> dict:
    out = subprocess.run([*prefix, python, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); {FACTS}"],
                         capture_output=True, text=True, timeout=60, preexec_fn=preexec, cwd="/")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _non_dumpable_nobody() -> None:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0   # PR_SET_DUMPABLE 0, as the zygote sets


@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/usr/bin/python3", os.X_OK), reason="becomes another user")
def test_a_non_dumpable_server_of_another_user_has_the_facts_its_clients_have():
    """Round 41: /proc/self/personality is root's (mode 0400) in a non-dumpable process, so a
    server of any user but root lacked that fact and refused every client. (The system's
    Python: the other user may not enter this one's install; the facts need only the standard
    library.)"""
    client = _facts(preexec=lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534)), python="/usr/bin/python3")
    server = _facts(preexec=_non_dumpable_nobody, python="/usr/bin/python3")
    assert "personality" in server and "ns/time" in server
    assert server == client


def test_the_facts_see_the_group_the_time_namespace_the_oom_score_and_the_personality():
    here = forkserver_client.fixed_facts()
    assert _facts() == here     # a child of this process, nothing changed: the same facts
    if os.geteuid() == 0:
        other = _facts(preexec=lambda: os.setgid(4242))
        assert other["Gid"] != here["Gid"] and other["groups"] == here["groups"]
    raised = _facts("choom", "-n", str(min(1000, int(here["oom_score_adj"]) + 7)), "--")
    assert raised["oom_score_adj"] != here["oom_score_adj"]
    timens = subprocess.run(["unshare", "--time", "--fork", "true"], capture_output=True)
    if timens.returncode == 0:
        assert _facts("unshare", "--time", "--fork")["ns/time"] != here["ns/time"]
    assert _facts("setarch", "-R")["personality"] != here["personality"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or ctypes.CDLL(None).prctl(66, 0, 0, 0, 0) < 0,
                    reason="this kernel has no memory-deny-write-execute (PR_GET_MDWE)")
def test_the_facts_see_memory_deny_write_execute():
    """A server started under PR_SET_MDWE crashed every served JAX check (round 41)."""
    def mdwe() -> None:
        assert ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) == 0   # PR_SET_MDWE, MDWE_REFUSE_EXEC_GAIN
    assert _facts(preexec=mdwe)["mdwe"] != forkserver_client.fixed_facts()["mdwe"]


def _state(**change) -> dict:
    return {**forkserver.process_state(), "stdio": forkserver_client.stdio(), **change}


def test_an_address_space_limit_and_an_unknown_encoding_are_not_served():
    """A fork carries the server's ~200 MB: the client's ulimit -v counted it (served exit 2,
    cold PASS); the client's stream encodings are taken, so they must be ones Python knows."""
    import resource
    assert forkserver.unadoptable(_state()) is None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limits = {**forkserver.process_state()["rlimits"], "RLIMIT_AS": [350 << 20, hard]}
    assert "RLIMIT_AS" in (forkserver.unadoptable(_state(rlimits=limits)) or "")
    assert forkserver.unadoptable(_state(stdio=[["no-such-codec", "strict"], ["utf-8", "strict"]]))
    assert forkserver.unadoptable(_state(stdio=[["ascii", "no-such-handler"], ["utf-8", "strict"]]))
    assert forkserver.unadoptable({k: v for k, v in _state().items() if k != "stdio"})


@pytest.fixture
def parser(monkeypatch):
    monkeypatch.setitem(forkserver.CLI, "build_parser", cli.build_parser)


def _request(argv: list[str], cwd: str, proofs: list[str], env: dict | None = None) -> dict:
    return {"argv": argv, "env": env or {}, "cwd": cwd, "proofs": proofs}


def test_a_served_check_runs_trusted_code_and_reads_files_only_as_its_client_could(parser, tmp_path):
    """Round 41: a client confined by Landlock (same user) had the server run its code without
    the sandbox and grade a file its domain forbade. The server now leaves to the client a
    check without the sandbox, of an assignment, or of another problems folder, and one naming
    a file the client did not send opened."""
    sub = tmp_path / "mine.py"
    sub.write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    other = tmp_path / "other.py"
    other.write_text("x = 1\n")
    argv = ["check", "mine.py", "--problem", "tied_lm_head"]
    opened = forkserver_client.proofs(argv, str(tmp_path))
    try:
        fds = [fd for _, fd in opened]
        assert [a for a, _ in opened] == ["mine.py"]
        assert forkserver.unserved(_request(argv, str(tmp_path), ["mine.py"]), fds, []) is None
        assert forkserver.unserved(_request(argv, str(tmp_path), []), [], [])               # not sent
        with open(other, "rb") as fh:                                                     # another file
            assert forkserver.unserved(_request(argv, str(tmp_path), ["mine.py"]), [fh.fileno()], [])
        for extra in (["--sandbox", "none"], ["--problems-dir", str(tmp_path)], ["--assignment", "a.yaml"]):
            assert forkserver.unserved(_request(argv + extra, str(tmp_path), ["mine.py"]), fds, []), extra
        assert forkserver.unserved(_request(argv, str(tmp_path), ["mine.py"], {"GRADER_PROBLEMS_DIR": "p"}), fds, [])
        # the server's own problems folder, named relative to the client's folder, is served
        (tmp_path / "p").mkdir()
        assert forkserver.unserved(_request(argv + ["--problems-dir", "p"], str(tmp_path), ["mine.py"]), fds,
                                   ["--problems-dir", str(tmp_path / "p")]) is None
    finally:
        for _, fd in opened:
            os.close(fd)


def test_proofs_are_regular_files_only_opened_without_following_a_link(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    os.mkfifo(tmp_path / "fifo.py")
    opened = forkserver_client.proofs(["check", "a.py", "link.py", "fifo.py", "--problem", "missing.py"],
                                      str(tmp_path))
    try:
        assert [a for a, _ in opened] == ["a.py"]
    finally:
        for _, fd in opened:
            os.close(fd)


def _peer(pid: int) -> tuple[int, int]:
    return pid, os.pidfd_open(pid)


def test_the_server_reads_its_clients_state_rather_than_taking_its_word():
    """Attack round 42: a hand-made request that copied the server's facts was served (a root
    client without capabilities wrote another user's file; a client at nice 10 had its check run
    at nice 0). The server reads the connecting process's state from /proc (``misstated``)."""
    import signal
    honest = _state()
    peer = _peer(os.getpid())
    try:
        assert forkserver.misstated(honest, peer) is None
        assert forkserver.misstated({**honest, "nice": honest["nice"] + 1}, peer)
        assert forkserver.misstated({**honest, "umask": honest["umask"] ^ 0o002}, peer)
        forged = {**honest["fixed"], "CapEff": "0000000000000000" if honest["fixed"]["CapEff"] != "0000000000000000"
                  else "000001ffffffffff"}
        assert forkserver.misstated({**honest, "fixed": forged}, peer)
    finally:
        os.close(peer[1])
    # a client with no-new-privileges (which a Landlock domain needs without capabilities)
    nnp = subprocess.Popen(["sleep", "30"], preexec_fn=lambda: ctypes.CDLL(None).prctl(38, 1, 0, 0, 0))
    peer = _peer(nnp.pid)
    try:
        assert "no-new-privileges" in (forkserver.misstated(honest, peer) or "")
        nnp.send_signal(signal.SIGKILL)
        nnp.wait()
        assert forkserver.misstated(honest, peer) == "the client's process cannot be read"   # gone
    finally:
        os.close(peer[1])
        nnp.kill()


def _pids_cgroup(tmp_name: str) -> Path | None:
    """A new cgroup of the pids controller (v1 or v2) this process may make, or None."""
    for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if (base / "cgroup.procs").exists() and (base == Path("/sys/fs/cgroup/pids") or
                                                 (base / "cgroup.subtree_control").exists()):
            try:
                (base / tmp_name).mkdir()
            except OSError:
                continue
            if (base / tmp_name / "pids.max").exists():
                return base / tmp_name
            (base / tmp_name).rmdir()
    return None


def test_a_check_joins_its_clients_cgroup():
    """Attack rounds 42 and 43: the cgroup's path as a fact left every client of another cgroup
    (every other terminal's systemd scope) cold; its limits as the fact let a check leave its
    client's cgroup (a client near its process limit passed served, failed cold). The server's
    check joins the client's cgroups instead (``cgroup_joins``: none for a client of the
    server's own), and the fork's cgroup is the client's."""
    folder = _pids_cgroup(f"grader-test-{os.getpid()}")
    if folder is None:
        pytest.skip("no pids cgroup can be made here")

    def enter() -> None:
        (folder / "cgroup.procs").write_text(str(os.getpid()))
    sleeper = subprocess.Popen(["sleep", "30"], preexec_fn=enter)
    same = subprocess.Popen(["sleep", "30"])
    try:
        assert forkserver_client.cgroup_joins(same.pid) == []
        assert forkserver_client.cgroup_joins(sleeper.pid) == [str(folder / "cgroup.procs")]
        assert "root" in forkserver_client.proc_facts("self")
    finally:
        for p in (sleeper, same):
            p.kill()
            p.wait()
        with contextlib.suppress(OSError):
            folder.rmdir()


@pytest.mark.skipif(not os.path.exists("/usr/bin/strace"), reason="no strace to trace a client with")
def test_a_traced_client_runs_its_own_check():
    """A ptrace-based jail (proot) shows its process other paths than the server's (round 43)."""
    import time
    tracer = subprocess.Popen(["strace", "-f", "-o", os.devnull, "sleep", "30"])
    traced = None
    try:
        deadline = time.monotonic() + 10
        peer = None
        while peer is None and time.monotonic() < deadline:
            kids = Path(f"/proc/{tracer.pid}/task/{tracer.pid}/children").read_text().split()
            traced = int(kids[0]) if kids else None
            # the tracee once it runs sleep under the tracer (under load the first child listed was
            # gone before its pidfd was taken: ProcessLookupError)
            with contextlib.suppress(OSError):
                if traced is not None and Path(f"/proc/{traced}/comm").read_text().strip() == "sleep" \
                        and forkserver_client._status(traced).get("TracerPid", "0") != "0":
                    peer = _peer(traced)
            time.sleep(0.05)
        assert peer is not None
        try:
            assert forkserver.misstated(_state(), peer) == "a traced client runs its own check"
        finally:
            os.close(peer[1])
    finally:
        tracer.kill()
        tracer.wait()
        if traced is not None:
            with contextlib.suppress(OSError):
                os.kill(traced, 9)


_JAILED_ROOTS = r"""
set -e
mkdir -p "$1/bound"
mount --bind / "$1/bound"
chroot "$1/bound" sleep 30 & bound=$!
sleep 0.3
"$2" -I -c 'import sys; sys.path.insert(0, sys.argv[1]); import json
from grader.forkserver_client import proc_facts
print(json.dumps([proc_facts(p).get("root") for p in ("self", sys.argv[2])]))' "$3" $bound
kill $bound
"""


def test_a_chroot_into_a_bind_mount_of_the_root_is_another_root():
    """Attack rounds 43 and 44: a client chrooted into a folder, or into a bind mount of ``/``
    (the same device and inode as ``/``, its own mounts), was served in the server's root and
    its report replaced a host file its jail cannot see. The root fact names where the server
    sees the client's root and which mount it is: both differ from the server's (a fact that
    differs, or a client that misstates it, is not served: ``forkserver_policy``)."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and a mount namespace of its own")
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        run = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", _JAILED_ROOTS, "sh",
                              folder, sys.executable, str(Path(__file__).resolve().parents[1])],
                             capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    mine, bound = json.loads(run.stdout)
    assert mine.startswith("/:") and bound.split(":")[1:3] == mine.split(":")[1:3], (mine, bound)
    assert bound != mine and bound.split(":")[-1] != mine.split(":")[-1]   # the same inode, another mount
