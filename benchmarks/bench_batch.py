"""How long ``grader grade`` takes for a class: 40 submissions copied from correct and wrong
examples into a temporary class folder, graded with ``--jobs 2`` (or the ``--jobs`` given).

    python benchmarks/bench_batch.py [--submissions 40] [--jobs 2 [1 ...]] [--source DIR ...]

The sources default to tests/corpus/correct and tests/corpus/wrong (or ../shared/corpus/... when
those are absent) plus submissions/; their .py files are taken in sorted order and repeated until
there are ``--submissions`` of them, each a learner ``NNN_<name>.py``. Each run starts with an
empty cache (``GRADER_CACHE_DIR`` a new folder), as a fresh CI machine would; ``--warm`` adds a
run with the cache the first one filled, and a regrade into that run's folder (the learners
started longest first by the times it recorded).

The table gives the wall time, the time per submission, the sum of the per-submission check
times from the gradebook (what one job would take, roughly) and their ratio (the speed-up the
jobs gave), and the three slowest submissions.
"""
from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import ROOT, header, timed  # noqa: E402


def default_sources() -> list[Path]:
    for corpus in (ROOT / "tests" / "corpus", ROOT.parent / "shared" / "corpus"):
        if (corpus / "correct").is_dir():
            return [corpus / "correct", corpus / "wrong", ROOT / "submissions"]
    return [ROOT / "submissions"]


def make_class(folder: Path, sources: list[Path], count: int) -> list[str]:
    """Copy ``count`` submissions from ``sources`` into ``folder``; return their source names."""
    files = [f for src in sources for f in sorted(src.glob("*.py"))]
    if not files:
        raise SystemExit(f"no .py files in {', '.join(map(str, sources))}")
    folder.mkdir(parents=True)
    names = []
    for i in range(count):
        src = files[i % len(files)]
        shutil.copy(src, folder / f"{i:03d}_{src.stem}.py")
        names.append(f"{src.parent.name}/{src.name}")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--source", type=Path, action="append", help="folder of .py submissions (repeatable)")
    parser.add_argument("--warm", action="store_true", help="also time a run with a warm cache")
    args = parser.parse_args()
    sources = args.source or default_sources()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        klass = Path(tmp) / "class"
        names = make_class(klass, sources, args.submissions)
        for jobs in args.jobs:
            cache = Path(tmp) / f"cache-{jobs}"
            for kind in ("empty", "warm", "regrade") if args.warm else ("empty",):
                # regrade: into the warm run's folder, whose check times order the learners
                out = Path(tmp) / f"out-{jobs}-{'warm' if kind == 'regrade' else kind}"
                wall, cpu = timed([sys.executable, "-m", "grader", "grade", str(klass), "--jobs", str(jobs),
                                   "--out", str(out)], env={"GRADER_CACHE_DIR": str(cache)}, ok=(0, 1),
                                  timeout=3600)
                with open(out / "gradebook.csv", newline="") as fh:
                    book = list(csv.DictReader(fh))
                total = sum(float(r["seconds"]) for r in book)
                slow = sorted(book, key=lambda r: -float(r["seconds"]))[:3]
                rows.append((jobs, kind, len(book), sum(r["passed"] == "true" for r in book), wall, cpu, total,
                             ", ".join(f"{r['learner']} {float(r['seconds']):.1f} s ({r['kinds'] or 'passed'})"
                                       for r in slow)))
                print(f"  jobs {jobs}, {kind} cache: {wall:.1f} s", file=sys.stderr)

    print(header(f"grader grade, {args.submissions} submissions (benchmarks/bench_batch.py)"))
    shown = [str(s.relative_to(ROOT)) if s.is_relative_to(ROOT) else str(s) for s in sources]
    print(f"- sources: {', '.join(shown)} ({len(set(names))} distinct files)\n")
    print("| jobs | cache | graded | passed | wall s | s per submission | CPU s | sum of check s | speed-up "
          "| slowest |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for jobs, kind, graded, passed, wall, cpu, total, slow in rows:
        print(f"| {jobs} | {kind} | {graded} | {passed} | {wall:.1f} | {wall / graded:.2f} | {cpu:.1f} | {total:.1f} | "
              f"{total / wall:.2f} | {slow} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
