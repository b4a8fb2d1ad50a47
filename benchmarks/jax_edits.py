"""A learner's edit loop on a failing JAX function: each check grades a new source.

A JAX submission's warm compilations are kept per exact source unless the check names a
``--jax-cache-scope`` (one learner's kernel or page, docs/security.md class 3), so without a
scope every edit compiles every operation again. Measured, interleaved, with the floors:

- ``grader check FILE`` after each edit, without a scope (as ``grader grade`` and the
  platform templates run) and with one (as ``check(fn)`` and the exercise page run);
- ``check(fn)`` in one kernel-like Python, the function redefined before each call.

The function is tied_lm_head with a softmax applied (a hint-producing mistake: about 8
operations per case signature, 68 signatures). The first check of each series fills the
reference values and, in a scope, its store; the table gives the median of the later ones.

    .venv/bin/python benchmarks/jax_edits.py [EDITS]
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EDITS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
SOURCE = """import jax
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    \"\"\"attempt {n}\"\"\"
    return jax.nn.softmax(jnp.matmul(hidden, embedding_matrix.T), axis=-1)
"""
KERNEL = """
import json, time
import jax, jax.numpy as jnp
from grader import check
out = []
for n in range({edits}):
    exec({source!r}.format(n=n))        # the cell edited and run again: a new source each time
    t = time.perf_counter(); r = check(tied_lm_head); out.append(time.perf_counter() - t)
    assert not r.passed
print(json.dumps(out))
"""


def wall(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=env, cwd="/tmp")
    return time.perf_counter() - t


def main() -> int:
    env = dict(os.environ, GRADER_SERVE="0", GRADER_CACHE_DIR=tempfile.mkdtemp(prefix="bench-jax-edits-"))
    py = sys.executable
    floors = {"import numpy": wall([py, "-c", "import numpy"], env),
              "import jax + one op": wall([py, "-c", "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()"], env)}
    folder = Path(tempfile.mkdtemp(prefix="bench-jax-edits-src-"))
    sub = folder / "tied_lm_head.py"
    series: dict[str, list[float]] = {"grader check, by source": [], "grader check, one scope": []}
    load = [os.getloadavg()[0]]
    for n in range(EDITS):
        for name, extra in (("grader check, by source", []),
                            ("grader check, one scope", ["--jax-cache-scope", "benchmark0scope0"])):
            sub.write_text(SOURCE.format(n=f"{n} {name}"))
            series[name].append(wall([py, "-m", "grader", "check", str(sub), *extra], env))
        load.append(os.getloadavg()[0])
    kernel = subprocess.run([py, "-c", KERNEL.format(edits=EDITS, source=SOURCE)], capture_output=True, text=True,
                            env=env, cwd="/tmp")
    series["check(fn), one kernel"] = json.loads(kernel.stdout.strip().splitlines()[-1]) if kernel.returncode == 0 else []
    load.append(os.getloadavg()[0])
    print(f"load average (1 min) {min(load):.1f}-{max(load):.1f}; floors: "
          + ", ".join(f"{k} {v:.2f} s" for k, v in floors.items()))
    print("| what | first | later edits (median) | runs | later / JAX floor |")
    print("| --- | ---: | ---: | --- | ---: |")
    for name, runs in series.items():
        later = statistics.median(runs[1:]) if len(runs) > 1 else float("nan")
        print(f"| {name} | {runs[0]:.2f} s | {later:.2f} s | {' '.join(f'{r:.2f}' for r in runs)} | "
              f"{later / floors['import jax + one op']:.1f}x |" if runs else f"| {name} | failed: {kernel.stderr[-300:]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
