"""False fails over many seeds: every correct implementation of every bundled problem, graded on each seed's cases.

For each problem (``grader problems``) this takes its correct files: the spec's ``alternatives:``
folder, ``submissions/<problem>/correct_*.py`` (``submissions/correct_*.py`` and
``tests/corpus/correct`` for tied_lm_head). For each seed in ``range(--seeds)`` it plans the
check exactly as ``grader check --seed S`` does (``grader.plan.make_plan``: every dtype of the
file's framework, the spec's case count) and grades it with ``grader.grading.grade`` (the one
judge) through ``grader.run.inprocess.InProcessExecutor``, the function called in this process
with its inputs converted as the sandboxed child converts them (``grader.run.inprocess.for_file``:
``to_framework`` / ``to_numpy``, JAX under a scoped ``jax_enable_x64``).

A correct file that fails any case of a seed at the full allowance is a **false fail** of that
seed. Each file is also graded at half the allowance (``--share``, as ``grader validate`` grades
alternatives): a seed failing there is a thin margin, reported but not a false fail.

The files run in this process (they are the project's own trusted files), which is what makes
20 seeds x ~70 files affordable; the sandboxed path adds no arithmetic of its own
(tests/test_corpus_verdicts.py and ``grader validate`` grade the same files through the child).

    python benchmarks/false_fails.py [--seeds 20] [--problem ID ...] [--only GLOB] [--json FILE]

Prints one line per file (seeds failing at the full allowance, seeds failing at the share) and a
total; exit 1 when any false fail was seen. The figure goes into docs/tolerance.md.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import frameworks  # noqa: E402
from grader.check import grade_plan  # noqa: E402
from grader.options import CheckOptions  # noqa: E402
from grader.plan import make_plan  # noqa: E402
from grader.run.inprocess import InProcessExecutor, for_file  # noqa: E402
from grader.spec import available_problems, load_problem  # noqa: E402
from grader.submission import load_submission  # noqa: E402
from grader.validate import alternative_files  # noqa: E402

NO_SANDBOX = lambda request: ("none", None)  # noqa: E731 - nothing is started


def correct_files(problem) -> list[Path]:
    """The correct implementations the project holds for ``problem``."""
    files, _, _ = alternative_files(problem)
    files = list(files)
    folder = ROOT / "submissions" / problem.id
    files += sorted(folder.glob("correct_*.py"))
    if problem.id == "tied_lm_head":
        files += sorted((ROOT / "submissions").glob("correct_*.py"))
        files += sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py"))
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--problem", nargs="*", help="problem ids (default: every bundled problem)")
    ap.add_argument("--only", default="*", help="file name glob")
    ap.add_argument("--share", type=float, default=0.5, help="the margin share also graded (default 0.5)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    ids = args.problem or sorted(available_problems())
    results: dict[str, dict] = {}
    t0 = time.monotonic()
    for pid in ids:
        problem = load_problem(available_problems()[pid])
        for path in correct_files(problem):
            if not fnmatch.fnmatch(path.name, args.only):
                continue
            framework = frameworks.detect(load_submission(path, path.name).tree)
            if framework not in problem.frameworks or not frameworks.installed(framework):
                continue
            fn = for_file(path, problem.function, framework).fn   # called as the child calls it
            key = f"{pid}/{path.name}"
            row = results[key] = {"framework": framework, "false_fail_seeds": [], "thin_seeds": [],
                                  "cases": 0, "first": None}
            for seed in range(args.seeds):
                for share, bucket in ((1.0, "false_fail_seeds"), (args.share, "thin_seeds")):
                    opts = CheckOptions(max_examples=None, shrink=False, sandbox="none", seed=seed,
                                        allowance_share=share)
                    plan = make_plan(path, problem, opts, NO_SANDBOX)
                    report = grade_plan(plan, InProcessExecutor(fn))
                    if share == 1.0:
                        row["cases"] += len(report.cases)
                    if not report.passed:
                        row[bucket].append(seed)
                        bad = next((c for c in report.cases if c.failure), None)
                        what = (f"{bad.name}: {bad.failure.kind}: {bad.failure.message}" if bad else
                                f"{report.failure.kind}: {report.failure.message}" if report.failure else "failed")
                        row["first"] = row["first"] or f"share {share:g} seed {seed} {what}"
                        if share == 1.0:
                            print(f"  FALSE FAIL {key} seed {seed} {what}", flush=True)
                    if share == 1.0 and not report.passed:
                        break   # a false fail already: the share run adds nothing
            print(f"{key:64s} {framework:5s} false fails {len(row['false_fail_seeds']):2d}/{args.seeds}, "
                  f"fails at {args.share:g}: {len(row['thin_seeds']):2d}/{args.seeds} "
                  f"({row['cases']} cases, {time.monotonic() - t0:.0f} s)", flush=True)
    total = sum(len(r["false_fail_seeds"]) for r in results.values())
    thin = sum(len(r["thin_seeds"]) for r in results.values())
    print(f"total: {total} false fails and {thin} seeds failing at {args.share:g} of the allowance, in "
          f"{len(results) * args.seeds} (file, seed) runs: {len(results)} correct files of {len(ids)} problems "
          f"x {args.seeds} seeds; {time.monotonic() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
