"""JAX as the child sets it up (``grader.frameworks.jax.setup``) computes reductions where
/proc/cpuinfo cannot be read: XLA's CPU backend keeps operations off YNNPACK, whose one read of
/proc/cpuinfo per process, once failed in a spare child, made every later reduction raise
"YNNPACK operation failed" (a correct submission failed 37 of 93 cases)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

SCRIPT = r"""
import numpy as np
from grader.frameworks import jax as fw
fw.setup({"jax_cache": ""})
import jax.numpy as jnp
for dtype in (np.float32, np.float16):
    x = jnp.asarray(np.ones((2, 6, 512), dtype))
    assert float(jnp.sum(x, axis=-1)[0, 0]) == 512.0
    h, e = jnp.asarray(np.ones((8, 512), dtype)), jnp.asarray(np.ones((300, 512), dtype))
    assert float((h @ e.T)[0, 0]) == 512.0
print("ok")
"""


@pytest.mark.subprocess
def test_jax_reduces_without_proc_cpuinfo(tmp_path):
    pytest.importorskip("jax")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot make a namespace here: {probe.stderr.decode(errors='replace')[:200]}")
    # an empty /proc: /proc/cpuinfo cannot be opened, as when the child's read of it failed
    # (the rest of the file system as it is: the venv may live under /tmp, as in a CI clone),
    # with the XLA_FLAGS the child is given (a word of it that XLA cannot read once dropped
    # NO_YNNPACK, which setup appends, and this failed in every child)
    import os

    from grader.processes import child_environment
    env = dict(os.environ, XLA_FLAGS=child_environment("jax", "/tmp")["XLA_FLAGS"])
    proc = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/proc",
                           "--chdir", "/", sys.executable, "-I", "-c", SCRIPT],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_every_word_of_the_childs_xla_flags_is_a_flag():
    """XLA reads XLA_FLAGS up to its first word without "--" and drops the rest without a word:
    "intra_op_parallelism_threads=1" there once dropped the cheaper compile (processes.
    CHEAP_COMPILE: each of a JAX check's compilations took 2.5x the CPU) and NO_YNNPACK."""
    from grader.frameworks.jax import NO_YNNPACK
    from grader.processes import CHEAP_COMPILE, child_environment
    words = child_environment("jax", "/tmp")["XLA_FLAGS"].split()
    assert words and all(w.startswith("--") for w in words), words
    assert set(CHEAP_COMPILE.split()) <= set(words)
    assert NO_YNNPACK.startswith("--") and " " not in NO_YNNPACK


REFERENCE_IMPORT = r"""
import os, sys
from grader import reference
before = dict(os.environ)
jax = reference.import_jax()
assert dict(os.environ) == before, set(os.environ) ^ set(before)
from jax._src import xla_bridge
print(xla_bridge.backends()["cpu"].platform, os.environ.get("XLA_FLAGS"))
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("flags", [None, "--xla_cpu_multi_thread_eigen=false"])
def test_the_references_first_import_of_jax_leaves_the_environment_as_it_was(flags):
    """The grader's first ``import jax`` starts the CPU backend with processes.CHEAP_COMPILE (a
    cheaper compile, the values bit for bit the same) and JAX_PLATFORMS=cpu, then removes both;
    a caller's own XLA_FLAGS is kept and used instead."""
    pytest.importorskip("jax")
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    if flags:
        env["XLA_FLAGS"] = flags
    run = subprocess.run([sys.executable, "-c", REFERENCE_IMPORT], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["cpu", str(flags)]
