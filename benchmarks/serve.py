"""``grader check`` cold and through ``grader serve``, interleaved with the two floors.

Each round runs, as fresh processes from /tmp: ``import numpy``; the JAX floor (``import jax``
and one op); a cold ``grader check`` (``GRADER_SERVE=0``), one served by a ``grader serve
--spares none`` (a forked grader that starts its child: ``_forked``) and one served by a
``grader serve`` with spares (the child started ahead: ``_spare``) of the correct NumPy and JAX
files of tied_lm_head (the default run: every case, shrinking on). The two servers (private
sockets, warmed for tied_lm_head) are started once before the rounds and stopped after; a
spare is refilled while the other commands of the round run. Prints the median wall time of
each, its ratio to its floor, and the load average. Each round also runs a kernel-like Python
that calls ``check(tied_lm_head)`` (NumPy) five times with the spare server's socket, as a
notebook does with ``grader serve`` running (the kernel asks the server itself):
``checkfn_first`` its first call, ``checkfn_later`` the next two, back to back (each waits for
the spare the call before it started when it ended), ``checkfn_paused`` two more, each after a
second's pause.

    .venv/bin/python benchmarks/serve.py [ROUNDS]
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
PY = sys.executable
FLOORS = {"numpy_floor": [PY, "-c", "import numpy"],
          "jax_floor": [PY, "-c", "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()"]}


KERNEL = """
import json, time, numpy as np
from grader import check
def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
out = []
for pause in (0, 0, 0, 1, 1):
    time.sleep(pause)
    t = time.perf_counter(); r = check(tied_lm_head); out.append(time.perf_counter() - t)
    assert r.passed, r
print(json.dumps(out))
"""


def kernel_calls(env: dict[str, str]) -> list[float]:
    """The wall times of a kernel's five ``check(fn)`` calls: three back to back (the later two
    wait for the spare the first one's end started), then two after a second's pause each, as a
    learner who edits between checks gives the spare time to start."""
    import json
    got = subprocess.run([PY, "-c", KERNEL], check=True, capture_output=True, text=True, env=env, cwd="/tmp")
    return json.loads(got.stdout.strip().splitlines()[-1])


def wall(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=env, cwd="/tmp")
    return time.perf_counter() - t


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="grader-bench-serve-"))
    os.chmod(folder, 0o700)
    servers, envs = [], {}
    for kind, spares in (("forked", "none"), ("spare", "numpy,jax")):
        sock = folder / f"{kind}.sock"
        envs[kind] = {**os.environ, "GRADER_SERVE_SOCKET": str(sock)}
        servers.append(subprocess.Popen([PY, "-m", "grader", "serve", "--socket", str(sock), "--problem", "tied_lm_head",
                                         "--spares", spares], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env=envs[kind], cwd="/tmp"))
        while not sock.exists():
            time.sleep(0.05)
    env = envs["forked"]
    times: dict[str, list[float]] = {}
    try:
        for _ in range(ROUNDS):
            for name, argv in FLOORS.items():
                times.setdefault(name, []).append(wall(argv, env))
            for fw in ("numpy", "jax"):
                check = [PY, "-m", "grader", "check", str(ROOT / "submissions" / f"correct_{fw}.py"), "-q"]
                times.setdefault(f"{fw}_cold", []).append(wall(check, {**env, "GRADER_SERVE": "0"}))
                times.setdefault(f"{fw}_forked", []).append(wall(check, envs["forked"]))
                times.setdefault(f"{fw}_spare", []).append(wall(check, envs["spare"]))
            calls = kernel_calls(envs["spare"])
            times.setdefault("checkfn_first", []).append(calls[0])
            times.setdefault("checkfn_later", []).extend(calls[1:3])
            times.setdefault("checkfn_paused", []).extend(calls[3:])
    finally:
        for server in servers:
            server.terminate()
            server.wait()
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, value in med.items():
        floor = med["jax_floor"] if name.startswith("jax") else med["numpy_floor"]
        print(f"{name:14s} {value:6.2f} s  {value / floor:5.1f}x its floor   runs: "
              + " ".join(f"{x:.2f}" for x in times[name]))
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
