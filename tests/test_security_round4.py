"""Untrusted submissions, round four (docs/security.md, "Round four"): each class of attack that
broke the sandbox of 3779b48 has a test here (or in the file named beside it) that failed there
and passes now.

The attacks are made harmless to the machine the tests run on: a quota is taken once and given
back at once, so a host-wide counter is never held for longer than the test.
"""
from __future__ import annotations

import os

import pytest

from grader import sandbox
from grader.runner import Limits, Worker

from .test_security import INPUTS, NAMESPACE_OK, write_submission

TIERS = ["rlimits", *NAMESPACE_OK]

# -- class 1: host-wide kernel quotas ----------------------------------------------------------------
QUOTAS = """
import ctypes, errno, os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    libc = ctypes.CDLL(None, use_errno=True)
    out = []
    ctx = ctypes.c_ulong(0)                     # io_setup(nr_events, &ctx): fs.aio-nr, host-wide
    nr = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
    rc = libc.syscall(nr, 1, ctypes.byref(ctx))
    out += [rc, ctypes.get_errno() if rc != 0 else 0]
    if rc == 0:                                 # give it back at once (io_destroy)
        libc.syscall({"x86_64": 207, "aarch64": 1}[os.uname().machine], ctx)
    try:                                        # a pseudo-terminal: kernel.pty.nr, host-wide
        fd = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
        os.close(fd)
        out += [0]
    except OSError as exc:
        out += [exc.errno]
    libc.mmap.restype = ctypes.c_void_p         # huge pages: the host's one pool
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    p = libc.mmap(None, 2 << 20, 3, 0x22 | 0x40000, -1, 0)   # PROT_READ|WRITE, PRIVATE|ANONYMOUS|HUGETLB
    out += [ctypes.get_errno() if p in (None, ctypes.c_void_p(-1).value) else 0]
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_no_host_wide_quota_can_be_taken(tmp_path, tier):
    """Class 1: native AIO contexts are charged to one counter for the whole kernel
    (``fs.aio-nr``): a submission took all 65,536 in every tier and every ``io_setup`` on the
    host failed while it held them. The filter answers ENOSYS (libaio users fall back). One
    check also opened 251 pseudo-terminals of the host's 3,072: no tier has /dev/ptmx now (the
    bwrap tier's /dev is a tmpfs with five devices, as the unshare tier's; Landlock grants only
    those in the fallback tier). Huge pages come from the host's one pool: EPERM."""
    sub = write_submission(tmp_path, QUOTAS)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    aio_rc, aio_errno, pty_errno, huge_errno = (int(x) for x in out.result)
    assert (aio_rc, aio_errno) == (-1, 38), f"{tier}: io_setup gave {aio_rc}, errno {aio_errno}"
    assert pty_errno != 0, f"{tier}: the submission opened a pseudo-terminal"
    assert huge_errno != 0, f"{tier}: the submission mapped huge pages"


def test_the_bwrap_view_has_no_devpts():
    """The bubblewrap command line never mounts a devpts instance (``--dev``)."""
    steps = sandbox.view("/work/sub.py", "/tmp/w")
    argv = sandbox.bwrap_argv(steps, "/tmp/w", as_root=True)
    assert "--dev" not in argv
    binds = [argv[i + 2] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert sorted(binds) == sorted(f"/dev/{d}" for d in sandbox.DEVICES)
    assert not any("pts" in a or "ptmx" in a for a in argv)
