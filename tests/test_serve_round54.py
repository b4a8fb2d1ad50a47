"""Attack rounds 54 and 55 (issue 33, on 664c3da and 058129b): grader serve's spares and socket.

Each test fails on the code before the fix: a spare interrupted before it read its request
exited 0, which the server sent its client as the check's exit code (a wrong file "passed",
never run); ``GRADER_SANDBOX_TIER=none`` in a client's environment was served (the server's
rights, not the client's); an ``$XDG_RUNTIME_DIR`` through another user's link had a root
``grader serve`` make folders where that user chose; a second interrupt during a forked check's
last flush unwound into the server's loop the fork inherited and exited 0 (round 55).
"""
from __future__ import annotations

import os
import select
import signal
import socket
import sys
import time

import pytest

from grader import cli, forkserver, forkserver_client, processes, sandbox
from grader.run import spare


@pytest.fixture
def parser(monkeypatch):
    """The CLI's parser, as ``grader serve`` registers it (the policy reads the default limits
    and the request's flags with it)."""
    monkeypatch.setitem(forkserver.CLI, "build_parser", cli.build_parser)


def _spare_exit(monkeypatch, act) -> int:
    """The exit code of ``forkserver._spare_process`` in a forked process whose spare child is
    a stand-in (it says on a pipe when it is being prepared, then waits a second); ``act(pid,
    sock, ready)`` plays the zygote's part."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ready_r, ready_w = os.pipe()

    def prepare(*args, **kwargs):
        os.write(ready_w, b"p")
        time.sleep(1.0)

    monkeypatch.setattr(sandbox, "choose_tier", lambda request: ("none", None))
    monkeypatch.setattr(spare, "prepare", prepare)
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the forked spare
        try:
            ours.close()
            forkserver._spare_process("numpy", theirs, [])
        finally:
            os._exit(99)
    theirs.close()
    os.close(ready_w)
    try:
        assert select.select([ready_r], [], [], 60)[0] and os.read(ready_r, 1) == b"p", "the spare was not prepared"
        act(pid, ours)
        _, status = os.waitpid(pid, 0)
    finally:
        ours.close()
        os.close(ready_r)
    return os.waitstatus_to_exitcode(status)


def test_a_spare_interrupted_before_it_read_its_request_is_no_pass(monkeypatch, parser):
    """The zygote hands a request to a spare still being prepared and forwards the client's
    SIGINT to it: the spare took the interrupt for the zygote closing its socket and exited 0,
    the client's exit code (a wrong file passed 3 times of 3). Now 130, as an interrupted
    check; only a socket closed with nothing sent is a clean 0."""
    def interrupt(pid, sock):
        socket.send_fds(sock, [b"R"], [0, 1, 2, 0])
        os.kill(pid, signal.SIGINT)

    assert _spare_exit(monkeypatch, interrupt) == 130
    assert _spare_exit(monkeypatch, lambda pid, sock: sock.close()) == 0


class _FlushInterrupts:
    """A stdout whose flush is interrupted: a full pipe the check blocked on, and a second SIGINT."""

    def write(self, text):
        return len(text)

    def flush(self):
        raise KeyboardInterrupt


def test_a_second_interrupt_during_the_checks_last_flush_is_no_pass(monkeypatch, tmp_path):
    """Round 55: the first interrupt gave 130; a second, while the check's final flush blocked on
    a full pipe, escaped ``_forked_check`` (its flush suppressed Exception only) into the
    zygote's frames the fork inherited, whose loop shut a copy of the server down (killing
    another client's check) and exited 0: a wrong file's exit code. The check now leaves only
    through its exit code; the stand-in for the zygote's loop below exits 0 if anything escapes."""
    def interrupted_main(argv):
        sys.stdout = _FlushInterrupts()
        raise KeyboardInterrupt

    monkeypatch.setitem(forkserver.CLI, "main", interrupted_main)
    monkeypatch.setattr(forkserver, "adopt", lambda state: None)
    null = os.open(os.devnull, os.O_RDWR)
    request = {"cwd": str(tmp_path), "env": {}, "process": {}, "argv": ["check", "x.py"]}
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the forked check
        try:
            forkserver._forked_check(request, [null, null, null], [])
        except BaseException:
            pass
        os._exit(0)   # what the zygote's loop did with an interrupt that reached it
    os.close(null)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 130


def test_the_tier_none_from_the_clients_environment_is_not_served(tmp_path, parser):
    """``--sandbox none`` was left to the client (round 41), but ``GRADER_SANDBOX_TIER=none``,
    which choose_tier reads from the same request's environment, was served: the check ran
    learner code with the server's rights, not the client's (a Landlock-confined client read
    a file its domain forbade)."""
    request = {"argv": ["check", "mine.py", "--problem", "tied_lm_head"], "cwd": str(tmp_path), "proofs": []}
    why = forkserver.unserved({**request, "env": {sandbox.ENV_TIER: "none"}}, [], [])
    assert why == "a check without the sandbox runs in the client's own process"
    assert forkserver.unserved({**request, "env": {sandbox.ENV_TIER: "rlimits"}}, [], []) != why


def test_a_runtime_folder_through_a_link_or_open_to_others_is_not_used(tmp_path, monkeypatch):
    """grader serve and the check slot make their folders in ``$XDG_RUNTIME_DIR``, which was
    used as given: through another user's link, root made folders of that user's choosing in
    a folder only root may enter. It is used only when it is a real folder of this user's,
    reached through no link, mode 0700, and never made."""
    monkeypatch.delenv(forkserver.SOCKET_ENV, raising=False)
    real = tmp_path / "run"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    missing = tmp_path / "missing" / "made" / "by" / "grader"
    for value, used in ((real, True), (link / "run", False), (missing, False)):
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(value))
        assert (processes.runtime_folder() == str(value)) is used
        in_candidates = any(str(p).startswith(str(value) + os.sep) for p in forkserver_client.socket_candidates())
        assert in_candidates is used
        assert any(f.startswith(str(value) + os.sep) for f in processes.slot_folders(os.getuid())) is used
    os.chmod(real, 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(real))
    assert processes.runtime_folder() is None
    assert not (tmp_path / "missing").exists()


if __name__ == "__main__":   # pragma: no cover
    pytest.main([__file__, "-q"])


def test_a_tmpdir_another_user_could_rename_on_the_way_is_not_used(tmp_path, monkeypatch, capsys):
    """Round 55 (outside the pool): a root grader run with another user's ``$TMPDIR`` (``sudo -E``)
    made its private copies and working folders in a folder that user owns, who could rename
    them. ``$TMPDIR`` is used only when every folder on its path is this user's or root's and
    none is writable by others unless sticky; otherwise /tmp, said once."""
    import tempfile
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o777)                   # anyone may rename what is in it
    (open_folder / "tmp").mkdir(mode=0o700)
    cases = [(mine, True), (open_folder / "tmp", False)]
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 1002, 1002)
        cases.append((theirs, False))
    monkeypatch.setattr(tempfile, "tempdir", None)
    for folder, used in cases:
        monkeypatch.setenv("TMPDIR", str(folder))
        tempfile.tempdir = None
        processes.trusted_tempdir()
        assert (tempfile.gettempdir() == str(folder)) is used, folder
        assert (os.environ["TMPDIR"] == str(folder)) is used
        assert ("is not used" in capsys.readouterr().err) is not used


def test_a_spare_whose_fork_fails_costs_only_that_spare(monkeypatch, capsys):
    """Round 56: a learner's threads filled the server user's process limit; the next spare's
    fork failed (BlockingIOError), the error left the server's loop, and the server shut down:
    another client's running correct check ended with exit 2. A failed fork now closes what it
    made, says so, and leaves the spare to be asked for again when the next check of its
    framework ends; nothing of the zygote's is left open."""
    zygote = forkserver.Zygote(spares=("numpy",), adapt=True)
    before = set(os.listdir("/proc/self/fd"))

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(forkserver.os, "fork", no_fork)
    monkeypatch.setattr(forkserver, "threads", lambda: 1)   # the zygote forks only with one thread
    zygote._fork_spare("numpy")
    assert zygote.spares == {} and "no numpy spare for now" in capsys.readouterr().err
    assert set(os.listdir("/proc/self/fd")) <= before | {str(zygote.selector.fileno())}
    assert zygote.spare_failures.get("numpy", 0) == 0      # not counted as a spare that died: asked again
