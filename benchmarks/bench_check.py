"""How long one cold ``grader check`` takes, next to its floors and a naive pytest + hypothesis file.

Every row is a fresh process (a cold start: the interpreter, imports and JAX compilations paid
each time), run ``--repeat`` times; the table gives the median and the best wall time and the
median CPU time of the process and its children. Rows:

* ``python -c pass``, ``import numpy`` and the JAX floor
  ``python -c "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()"``;
* ``grader --version`` (the CLI's own start-up);
* ``grader check`` of a correct NumPy and a correct JAX submission, with an empty cache
  (``GRADER_CACHE_DIR`` a new folder each run: what a learner's first check costs) and with a
  warm one (the same folder, filled by a first run: every check after that);
* benchmarks/naive_pytest_hypothesis.py on the same submissions, with as many hypothesis
  examples as the check ran cases (split evenly over its float16/float32/float64).

    python benchmarks/bench_check.py [--repeat 3]

Prints a Markdown table (docs/performance.md keeps the figures).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None,
          ok: Sequence[int] = (0,), timeout: float = 900) -> tuple[float, float]:
    """Run ``argv`` once; return (wall seconds, CPU seconds of it and every child it waited for).

    Raises:
        RuntimeError: the exit code is not in ``ok`` (the output is in the message).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(argv), env={**os.environ, **(env or {})}, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summarise(runs: list[tuple[float, float]]) -> dict[str, float]:
    """Median and min wall seconds and median CPU seconds of ``runs``."""
    walls = [w for w, _ in runs]
    return {"median": statistics.median(walls), "min": min(walls),
            "cpu": statistics.median(c for _, c in runs), "runs": len(runs)}


def header(title: str) -> str:
    """Markdown lines: what was measured, when, on which commit and machine."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "?"

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    versions = []
    for name in ("numpy", "jax", "hypothesis"):
        try:
            from importlib import metadata
            versions.append(f"{name} {metadata.version(name)}")
        except Exception:  # noqa: BLE001 - a missing package is reported, not fatal
            versions.append(f"{name} missing")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return "\n".join([
        f"### {title}", "",
        f"- measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"on commit {git('rev-parse', '--short', 'HEAD')}{dirty}",
        f"- {len(os.sched_getaffinity(0))} cores, {platform.machine()}, Python {platform.python_version()}, "
        + ", ".join(versions),
        f"- load average before: {load}", ""])


SUBMISSIONS = {
    "numpy": ROOT / "submissions" / "correct_numpy.py",
    "jax": ROOT / "submissions" / "correct_jax.py",
}
JAX_FLOOR = "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()"
NAIVE = ROOT / "benchmarks" / "naive_pytest_hypothesis.py"


def check_cases(framework: str, cache: Path) -> int:
    """Number of cases one default ``grader check`` of the correct submission runs."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        timed([sys.executable, "-m", "grader", "check", str(SUBMISSIONS[framework]), "--format", "json",
               "--output", str(report)], env={"GRADER_CACHE_DIR": str(cache)})
        return len(json.loads(report.read_text())["cases"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (default 3)")
    args = parser.parse_args()
    py = sys.executable
    rows: list[tuple[str, dict[str, float]]] = []

    def row(name: str, argv: list[str], env: dict[str, str] | None = None, fresh_cache: bool = False,
            ok: tuple[int, ...] = (0,)) -> None:
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache:
                run_env = dict(env or {})
                if fresh_cache:
                    run_env["GRADER_CACHE_DIR"] = cache
                runs.append(timed(argv, env=run_env, ok=ok))
        rows.append((name, summarise(runs)))
        print(f"  {name}: {rows[-1][1]['median']:.2f} s", file=sys.stderr)

    row("python -c pass", [py, "-c", "pass"])
    row("python -c 'import numpy'", [py, "-c", "import numpy"])
    row("JAX floor: import jax + one op", [py, "-c", JAX_FLOOR], env={"JAX_PLATFORMS": "cpu"})
    row("grader --version", [py, "-m", "grader", "--version"])
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as warm:
        for framework, path in SUBMISSIONS.items():
            cases = check_cases(framework, Path(warm))  # also fills the warm cache
            check = [py, "-m", "grader", "check", str(path), "--format", "json", "--output", "/dev/null"]
            row(f"grader check, correct {framework}, empty cache ({cases} cases)", check, fresh_cache=True)
            row(f"grader check, correct {framework}, warm cache ({cases} cases)", check,
                env={"GRADER_CACHE_DIR": warm})
            per_dtype = math.ceil(cases / 3)
            row(f"naive pytest + hypothesis, {framework} ({3 * per_dtype} examples)",
                [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(NAIVE)],
                env={"BENCH_SUBMISSION": str(path), "BENCH_EXAMPLES": str(per_dtype),
                     "JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "1"})

    print(header("grader check, cold (benchmarks/bench_check.py)"))
    print("| what | median s | best s | CPU s | runs |\n| --- | ---: | ---: | ---: | ---: |")
    for name, s in rows:
        print(f"| {name} | {s['median']:.2f} | {s['min']:.2f} | {s['cpu']:.2f} | {s['runs']} |")
    floor = {"numpy": "python -c 'import numpy'", "jax": "JAX floor: import jax + one op"}
    medians = dict((name, s["median"]) for name, s in rows)
    print("\n| check | its floor | empty cache / floor | warm cache / floor |\n| --- | --- | ---: | ---: |")
    for framework in SUBMISSIONS:
        f = medians[floor[framework]]
        cold = next(v for k, v in medians.items() if k.startswith(f"grader check, correct {framework}, empty"))
        warm = next(v for k, v in medians.items() if k.startswith(f"grader check, correct {framework}, warm"))
        print(f"| {framework} | {floor[framework]}, {f:.2f} s | {cold / f:.1f}x | {warm / f:.1f}x |")
    print("\n| check, empty cache | grader peak RSS MiB | submission peak RSS MiB |\n| --- | ---: | ---: |")
    for framework, path in SUBMISSIONS.items():
        grader_mb, child_mb = peak_memory(path)
        print(f"| correct {framework} | {grader_mb:.0f} | {child_mb:.0f} |")
    return 0


PEAK = """
import resource, sys
from grader.cli import main
code = main(["check", sys.argv[1], "--format", "json", "--output", "/dev/null"])
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(own, kids)
sys.exit(code)
"""


def peak_memory(submission: Path) -> tuple[float, float]:
    """Peak resident memory (MiB) of the grader's own process and of its largest descendant (the
    sandboxed submission process) in one check with an empty cache: ``ru_maxrss`` of
    ``RUSAGE_SELF`` and of ``RUSAGE_CHILDREN`` (the largest of the reaped descendants)."""
    with tempfile.TemporaryDirectory(prefix="bench-peak-") as cache:
        proc = subprocess.run([sys.executable, "-c", PEAK, str(submission)], capture_output=True, text=True,
                              env={**os.environ, "GRADER_CACHE_DIR": cache}, cwd=ROOT, timeout=900,
                              stdin=subprocess.DEVNULL)
    own, kids = (int(x) for x in proc.stdout.split()[-2:])
    return own / 1024, kids / 1024


if __name__ == "__main__":
    raise SystemExit(main())
