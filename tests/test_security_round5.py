"""Untrusted submissions, round five (docs/security.md, "Round five"): what a fifth attacker's
pass found in the code of round four, each with a test that failed there.
"""
from __future__ import annotations

import pytest

from grader import sandbox
from grader.runner import Limits, Worker

from .test_security import INPUTS, NAMESPACE_OK, write_submission

TIERS = ["rlimits", *NAMESPACE_OK]

LOCKS = """
import ctypes, errno, fcntl, os, struct
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    fd = os.open("/etc/ld.so.cache" if os.path.exists("/etc/ld.so.cache") else np.__file__, os.O_RDONLY)
    # F_SETLK of a read lock at a far offset: a 63-bit message any process on the host sees
    lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 1234 << 20, 1, 0)
    for cmd in (fcntl.F_SETLK, fcntl.F_GETLK, 37, 36):   # and the open-file-description ones
        try:
            fcntl.fcntl(fd, cmd, lock)
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    os.close(fd)
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_no_file_lock_can_be_taken_or_read(tmp_path, tier):
    """A read lock needs only a read-only descriptor, and a file every sandbox is shown (a
    library, /etc/ld.so.cache) is one file for the whole host: a learner's hidden input, put in
    a lock's offset by one check and read with F_GETLK by another beside it, reached the second
    learner's report in every tier. Record locks and flock() are refused (ENOLCK)."""
    sub = write_submission(tmp_path, LOCKS)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    assert [int(x) for x in out.result] == [37] * 5, f"{tier}: F_SETLK, F_GETLK, F_OFD_SETLK, F_OFD_GETLK, flock"


PROC = """
import os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    for path in ("/proc/self/cmdline", "/proc/thread-self/status", "/proc/cpuinfo", f"/proc/{os.getppid()}/cmdline",
                 "/proc/1/cmdline"):
        try:
            with open(path, "rb") as fh:
                fh.read(16)
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    try:
        os.listdir("/proc")
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    return np.array(out, dtype=np.int64)
"""


def test_the_fallback_tier_shows_only_the_childs_own_proc_entry(tmp_path):
    """Without a PID namespace (the rlimits tier) a child saw every process's /proc entry: one
    learner's child wrote a hidden input into its own argv (what /proc/PID/cmdline shows) and
    another learner's child, graded beside it, read it. Under Landlock the child is shown its own
    entry and the machine's description (cpuinfo...), not another process's, nor the list."""
    sub = write_submission(tmp_path, PROC)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox("rlimits")) as w:
        assert w.start().status == "ok"
        landlock = any("landlock" in layer.lower() for layer in w.layers)
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    own, thread, cpuinfo, parent, init, listing = (int(x) for x in out.result)
    assert (own, thread, cpuinfo) == (0, 0, 0)
    if not landlock:
        pytest.skip(f"no Landlock here: the fallback tier cannot hide /proc ({w.layers})")
    assert parent == init == listing == 13, "another process's entry or the list of /proc was readable"
