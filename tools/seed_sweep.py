"""Acceptance sweep: ``grader validate --seed S`` of every bundled problem for many seeds.

For each seed (outer loop, so that a sweep cut short covers every problem for the seeds it did)
and each bundled problem, this runs :func:`grader.validate.validate_problem` with that seed and
records:

- every **alternative** (a correct file of the spec's ``alternatives`` folder) that does not pass
  within its share of the allowance: a false fail of that seed, with its first failing case and
  how far off it was;
- every **mistake** that is not caught with its stated kind (it passes, or fails with another
  kind): a case set of that seed that lets a known wrong solution through;
- any other error finding (the oracle, the reference, a stale literal).

The files are the project's own trusted ones, so they are called in this process
(``grader.run.inprocess.for_file``, as tests/test_validate.py does): the same plan and the same
judge as the sandboxed check, without a process per file, which is what makes 20 seeds x 21
problems affordable on a small machine. One JSON line per (seed, problem) is appended to
``--out`` as it is done, so a sweep stopped early keeps what it did.

    python tools/seed_sweep.py [--seeds 20] [--first 0] [--problem ID ...] [--out sweep.jsonl]
    python tools/seed_sweep.py --summarize sweep.jsonl

An alternative that fails only by ``timeout`` (its run passed the check's time limit) is listed
apart: on a loaded machine that is the load, not the tolerance.

It is not a test (it takes hours on two shared cores). Exit 1 when anything was found.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = Path(__file__).resolve().parent.parent


def in_process(path, problem, plan):
    """Run a trusted file of the project in this process (``validate_problem``'s ``executor_for``)."""
    from grader.run.inprocess import for_file
    return for_file(path, problem.function, plan.framework)


def sweep_one(spec: Path, seed: int) -> dict:
    """One problem at one seed: ``{"problem", "seed", "seconds", "false_fails", "uncaught",
    "errors"}``, each finding a list of one-line strings."""
    from grader.validate import validate_problem

    started = time.monotonic()
    v = validate_problem(spec, jobs=1, executor_for=in_process, seed=seed)
    failing = [a for a in v.alternatives if not a.passed]
    # a run that hit its time limit says nothing of the values: on a loaded machine it is the load
    slow = [a for a in failing if a.error is None and a.kind == "timeout"]
    false_fails = [f"{a.file} ({a.framework}): {a.kind} in {a.failed} of {a.total} cases; first {a.case}: {a.message}"
                   if a.error is None else f"{a.file}: could not be graded: {a.error}"
                   for a in failing if a not in slow]
    uncaught = [f"{m.file}: " + ("passes" if m.passed else m.error if m.error else f"fails with {m.kind}, not {m.expected}")
                for m in v.mistakes if not m.ok]
    others = [f"{f.check}: {f.message}" for f in v.errors if f.check not in ("alternatives", "mistakes")]
    return {"problem": v.problem or spec.stem, "seed": seed, "seconds": round(time.monotonic() - started, 1),
            "alternatives": len(v.alternatives), "mistakes": len(v.mistakes),
            "false_fails": false_fails, "uncaught": uncaught, "errors": others,
            "timeouts": [f"{a.file} ({a.framework}): {a.case}: {a.message}" for a in slow],
            "worst_alternative_margin": max((m for a in v.alternatives for m in a.margins.values()), default=None)}


def summarize(path: str) -> dict:
    """The figures of a sweep's JSON lines: seeds done per problem, and every false fail,
    uncaught mistake, other error and timeout with its (seed, problem)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    seeds: dict[str, list[int]] = {}
    out: dict = {"rows": len(rows), "false_fails": [], "uncaught": [], "errors": [], "timeouts": []}
    for r in rows:
        seeds.setdefault(r["problem"], []).append(r["seed"])
        for key in ("false_fails", "uncaught", "errors", "timeouts"):
            out[key] += [f"seed {r['seed']} {r['problem']}: {x}" for x in r.get(key, ())]
    out["seeds"] = {k: " ".join(map(str, sorted(v))) for k, v in sorted(seeds.items())}
    out["worst_alternative_margin"] = {r["problem"]: max(x["worst_alternative_margin"] for x in rows
                                                         if x["problem"] == r["problem"]
                                                         and x.get("worst_alternative_margin") is not None)
                                       for r in rows if r.get("worst_alternative_margin") is not None}
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, sweep, print a summary; 1 when any finding was seen."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    parser.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--problem", action="append", metavar="ID", help="only these problems (repeatable)")
    parser.add_argument("--out", default="seed_sweep.jsonl", help="JSON lines appended per (seed, problem)")
    parser.add_argument("--summarize", metavar="FILE", help="print the figures of a sweep's JSON lines and stop")
    args = parser.parse_args(argv)
    if args.summarize:
        figures = summarize(args.summarize)
        print(json.dumps(figures, indent=1))
        return 1 if figures["false_fails"] or figures["uncaught"] or figures["errors"] else 0

    sys.path.insert(0, str(ROOT))
    specs = sorted((ROOT / "problems").glob("*.yaml"))
    if args.problem:
        specs = [s for s in specs if s.stem in args.problem]
    found = 0
    done: dict[str, int] = {}
    with open(args.out, "a", encoding="utf-8") as out:
        for seed in range(args.first, args.first + args.seeds):
            for spec in specs:
                row = sweep_one(spec, seed)
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[row["problem"]] = done.get(row["problem"], 0) + 1
                bad = row["false_fails"] + row["uncaught"] + row["errors"]
                found += len(bad)
                print(f"seed {seed:2d} {row['problem']:32s} {row['seconds']:7.1f}s "
                      + ("ok" if not bad else "; ".join(bad))
                      + "".join(f" (timeout, not judged: {t})" for t in row["timeouts"]), flush=True)
    print(f"\n{len(done)} problems, seeds per problem: {sorted(set(done.values()))}; findings: {found}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
