"""False fails over many seeds: every correct submission of tests/corpus, graded on each seed's cases.

For each seed in ``range(--seeds)`` this builds the graded cases exactly as ``grader check``
does (``grader.cases.fixed_cases`` + ``generated_cases`` with the spec's count, in every dtype
of the submission's framework), computes the expected values with the grader's reference
(``grader.reference.evaluate``), calls each correct submission of ``tests/corpus/correct`` and
``submissions/correct_*.py`` on every case and judges the output with ``grader.compare.compare``
(the verdict function of the grader). A correct submission that fails any case of a seed is a
false fail of that seed.

The submissions run in this process (they are the project's own trusted corpus), which is what
makes 20 seeds x 26 submissions affordable; the sandboxed path adds no arithmetic of its own
(the child converts inputs with ``jnp.asarray`` for JAX submissions and returns
``np.asarray(result)``, as here), and tests/test_corpus_verdicts.py grades the same files through
the CLI. JAX submissions run with ``jax_enable_x64`` on, as in the child.

    python benchmarks/false_fails.py [--seeds 20] [--only GLOB] [--json FILE]

Prints one line per submission (seeds failed, cases failed, worst error/allowance ratio) and a
total. The figure goes into docs/tolerance.md.
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("GRADER_NO_CACHE", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import reference, spec  # noqa: E402
from grader.cases import fixed_cases, generated_cases  # noqa: E402
from grader.check import detect_framework, load_submission  # noqa: E402
from grader.compare import Expected, allowed_error, compare  # noqa: E402
from grader.runner import CallOutcome  # noqa: E402


def _load(path: Path):
    mod_spec = importlib.util.spec_from_file_location(f"sub_{path.stem}", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)  # type: ignore[union-attr]
    return getattr(module, "tied_lm_head")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", default="*")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    problem = spec.load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    files = sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py")) + sorted((ROOT / "submissions").glob("correct_*.py"))
    files = [f for f in files if fnmatch.fnmatch(f.name, args.only)]
    subs = []
    for f in files:
        framework = detect_framework(load_submission(f).tree)
        if framework in ("numpy", "jax"):  # torch files: grade them through the CLI (tests/corpus-frameworks)
            subs.append((f, framework, _load(f)))
    count = problem.generated["count"]
    results = {f.name: {"framework": fw, "seeds_failed": [], "cases_failed": 0, "cases": 0, "worst": 0.0}
               for f, fw, _ in subs}
    t0 = time.monotonic()
    for seed in range(args.seeds):
        for framework in ("numpy", "jax"):
            dtypes = tuple(problem.frameworks[framework])
            cases = fixed_cases(problem, dtypes, seed) + generated_cases(problem, dtypes, seed, count)
            expected = []
            for case in cases:
                ref, scale = reference.evaluate(problem, case.inputs)
                n = int(case.sizes["d_model"])
                expected.append(Expected(ref, scale if case.compare != "exact" else None, n))
            for f, fw, fn in subs:
                if fw != framework:
                    continue
                row = results[f.name]
                failed_here = 0
                for case, exp in zip(cases, expected):
                    inputs = [case.inputs[p.name].copy() for p in problem.parameters]
                    if fw == "jax":
                        inputs = [jnp.asarray(a) for a in inputs]
                    try:
                        got = np.asarray(fn(*inputs))
                        outcome = CallOutcome("ok", result=got)
                    except Exception as exc:  # noqa: BLE001 - a correct file must not raise
                        outcome = CallOutcome("exception", message=f"{type(exc).__name__}: {exc}")
                    row["cases"] += 1
                    failure = compare(case, outcome, exp) if outcome.status == "ok" else outcome
                    if failure is not None:
                        failed_here += 1
                        print(f"  FALSE FAIL {f.name} seed {seed} {case.name}: "
                              f"{getattr(failure, 'message', failure)}", flush=True)
                    elif exp.scale is not None and got.size:
                        allowed = allowed_error(case.dtype, exp.ref, exp.scale, exp.n)
                        ratio = float(np.max(np.abs(got.astype(np.float64) - exp.ref) / allowed))
                        row["worst"] = max(row["worst"], ratio)
                if failed_here:
                    row["seeds_failed"].append(seed)
                    row["cases_failed"] += failed_here
        print(f"seed {seed} done ({time.monotonic() - t0:.0f} s)", flush=True)
    total_fail = sum(len(r["seeds_failed"]) for r in results.values())
    for name, r in results.items():
        print(f"{name:40s} {r['framework']:5s} false fails {len(r['seeds_failed']):2d}/{args.seeds} seeds, "
              f"{r['cases_failed']} of {r['cases']} cases; worst error/allowance {r['worst']:.3f}")
    print(f"total: {total_fail} false fails in {len(results) * args.seeds} (submission, seed) runs; "
          f"{len(results)} correct submissions x {args.seeds} seeds; {time.monotonic() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if total_fail else 0


if __name__ == "__main__":
    raise SystemExit(main())
