"""What each sandbox tier costs: whole checks of the correct corpus, and one worker's start-up.

Two measurements, for every tier that works on this machine (``none``, ``rlimits``, and
``unshare`` / ``bwrap`` when they do):

1. *corpus*: ``grader check FILE --problem tied_lm_head --format json --output R`` for every
   ``*.py`` under the corpus's ``correct/`` folder (default: /work/shared/corpus, else
   tests/corpus), one run at a time, ``--rounds`` times. The tiers take turns file by file, so
   that slow drift of the machine and warm caches treat them alike, after one warm-up pass
   that fills the case and JAX caches (a private ``GRADER_CACHE_DIR``). The tier is chosen with
   ``--sandbox none`` or ``GRADER_SANDBOX_TIER``. Reported: the sum over files of the median
   wall time of the file's check (robust against one slow run of a noisy machine), and its
   overhead against ``none`` (the acceptance bound is +20%).
   Every run must pass: a failure is printed and makes the exit status 1.
2. *start-up*: in this process, ``runner.Worker`` start (import of a NumPy submission), one call
   and close, ``--launches`` times per tier; the median in milliseconds. This is the fixed cost
   a tier adds to every submission, plus, once per grader process, the probe of the tier
   (:func:`grader.sandbox.probe`, also reported).

    python benchmarks/sandbox_overhead.py [--corpus DIR] [--rounds 5] [--launches 10] [--json FILE]

About 5 minutes on 2 cores with the default corpus (8 files, 2 of them JAX).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import sandbox  # noqa: E402
from grader.options import Limits  # noqa: E402
from grader.runner import Worker  # noqa: E402


def tiers_here() -> list[str]:
    return ["none", "rlimits"] + [t for t in ("unshare", "bwrap") if sandbox.probe(t)[0]]


def check_once(sub: Path, tier: str, env: dict[str, str]) -> tuple[float, bool, str]:
    """One CLI check; returns (wall seconds, passed, tier reported)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "grader", "check", str(sub), "--problem", "tied_lm_head",
               "--format", "json", "--output", str(out)]
        run_env = dict(env)
        if tier == "none":
            cmd += ["--sandbox", "none"]
            run_env.pop("GRADER_SANDBOX_TIER", None)
        else:
            run_env["GRADER_SANDBOX_TIER"] = tier
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=run_env, capture_output=True, stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - t0
        try:
            report = json.loads(out.read_text())
        except (OSError, ValueError):
            return seconds, False, f"no report: {proc.stderr.decode(errors='replace')[-300:]}"
        return seconds, bool(report.get("passed")) and proc.returncode == 0, report["environment"]["sandbox"]


def corpus_benchmark(corpus: Path, tiers: list[str], rounds: int) -> tuple[dict, list[str]]:
    files = sorted((corpus / "correct").glob("*.py"))
    env = {**os.environ, "GRADER_CACHE_DIR": tempfile.mkdtemp(prefix="grader-bench-cache-")}
    env.pop("GRADER_JAX_CACHE", None)
    problems = []
    for sub in files:                                   # warm-up: case cache, JAX caches
        for tier in tiers:
            check_once(sub, tier, env)
    totals = {t: [] for t in tiers}
    per_file = {t: {f.name: [] for f in files} for t in tiers}
    for r in range(rounds):
        acc = {t: 0.0 for t in tiers}
        for sub in files:
            order = tiers[r % len(tiers):] + tiers[: r % len(tiers)]
            for tier in order:
                seconds, passed, got = check_once(sub, tier, env)
                if not passed or got != tier:
                    problems.append(f"{sub.name} under {tier}: passed={passed}, tier={got}")
                acc[tier] += seconds
                per_file[tier][sub.name].append(seconds)
        for t in tiers:
            totals[t].append(acc[t])
    result = {t: {"totals_s": v, "per_file_median_s": {k: statistics.median(x) for k, x in per_file[t].items()}}
              for t, v in totals.items()}
    for t in tiers:   # the sum of per-file medians: one slow outlier run does not move it
        result[t]["total_s"] = sum(result[t]["per_file_median_s"].values())
    base = result["none"]["total_s"]
    for t in tiers:
        result[t]["overhead_pct"] = 100.0 * (result[t]["total_s"] / base - 1.0)
    return result, problems


def startup_benchmark(tiers: list[str], launches: int) -> dict:
    out = {}
    inputs = {"hidden": np.ones((2, 3)), "embedding_matrix": np.ones((4, 3))}
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "sub.py"
        sub.write_text("def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n")
        for tier in tiers:
            t0 = time.perf_counter()
            ok, _ = sandbox.probe(tier)
            probe_ms = (time.perf_counter() - t0) * 1000   # 0 after the first probe in this process
            times = []
            for _ in range(launches):
                t0 = time.perf_counter()
                with Worker(sub, "tied_lm_head", "numpy", Limits(), wrap=sandbox.Sandbox(tier)) as w:
                    assert w.start().status == "ok", tier
                    assert w.call(inputs).status == "ok", tier
                times.append((time.perf_counter() - t0) * 1000)
            out[tier] = {"start_call_close_ms": statistics.median(times), "probe_ms": probe_ms}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path("/work/shared/corpus") if Path("/work/shared/corpus/correct").is_dir() else ROOT / "tests" / "corpus"
    ap.add_argument("--corpus", type=Path, default=default)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=10)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip-corpus", action="store_true")
    args = ap.parse_args()

    # probe costs first, in a fresh process each (the probe is cached per process)
    probes = {}
    for tier in ("unshare", "bwrap"):
        code = (f"import time; from grader import sandbox, runner; t=time.perf_counter(); "
                f"ok=sandbox.probe({tier!r})[0]; print(ok, (time.perf_counter()-t)*1000)")
        res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
        ok, ms = res.stdout.split()
        probes[tier] = {"works": ok == "True", "probe_ms_cold_process": float(ms)}
    tiers = tiers_here()
    startup = startup_benchmark(tiers, args.launches)
    print(f"tiers here: {', '.join(tiers)}")
    print("probe (once per grader process): " + ", ".join(
        f"{t} {v['probe_ms_cold_process']:.0f} ms" + ("" if v["works"] else " (does not work)") for t, v in probes.items()))
    print("worker start + 1 call + close, median: " + ", ".join(
        f"{t} {v['start_call_close_ms']:.0f} ms" for t, v in startup.items()))
    result: dict = {"tiers": tiers, "probe": probes, "startup": startup}
    problems: list[str] = []
    if not args.skip_corpus:
        corpus, problems = corpus_benchmark(args.corpus, tiers, args.rounds)
        result["corpus"] = corpus
        files = len(list((args.corpus / "correct").glob("*.py")))
        print(f"correct corpus ({files} files, {args.rounds} rounds), sum of per-file median wall times:")
        for t in tiers:
            c = corpus[t]
            print(f"  {t:8} {c['total_s']:7.2f} s  {c['overhead_pct']:+6.1f}% vs none   "
                  f"(round totals {', '.join(f'{x:.1f}' for x in c['totals_s'])} s)")
        for p in problems:
            print("PROBLEM:", p)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
