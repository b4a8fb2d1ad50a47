"""check(fn) with and without the warm grader (grader/warm.py), interleaved with the floors.

Each round: the two floors (``import numpy``; JAX's import and one op) as fresh processes, then
a kernel-like Python that calls ``check(tied_lm_head)`` CALLS times with GRADER_WARM=0 (a grader
per call) and one that does with the warm grader; the first call of each is reported apart
(it starts the warm process), the rest are "after the first". Prints medians and the load.

    .venv/bin/python benchmarks/check_fn_warm.py [ROUNDS] [CALLS]
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
KERNEL = f"""
import json, time, numpy as np
from grader import check
def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
out = []
for _ in range({CALLS}):
    t = time.perf_counter(); r = check(tied_lm_head); out.append(time.perf_counter() - t)
    assert r.passed
print(json.dumps(out))
"""


def wall(argv: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env, cwd="/tmp")
    return time.perf_counter() - t


def calls(warm: bool) -> list[float]:
    env = {**os.environ, "GRADER_WARM": "1" if warm else "0"}
    got = subprocess.run([sys.executable, "-c", KERNEL], check=True, capture_output=True, text=True, env=env, cwd="/tmp")
    return json.loads(got.stdout.strip().splitlines()[-1])


rows: dict[str, list[float]] = {k: [] for k in ("numpy floor", "jax floor", "per call: first", "per call: later",
                                                "warm: first", "warm: later")}
for _ in range(ROUNDS):
    rows["numpy floor"].append(wall([sys.executable, "-c", "import numpy"]))
    rows["jax floor"].append(wall([sys.executable, "-c", "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()"]))
    cold = calls(False)
    rows["per call: first"].append(cold[0])
    rows["per call: later"] += cold[1:]
    hot = calls(True)
    rows["warm: first"].append(hot[0])
    rows["warm: later"] += hot[1:]
for name, values in rows.items():
    print(f"{name:18s} median {statistics.median(values):6.2f} s  (n={len(values)}, {min(values):.2f}-{max(values):.2f})")
print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
