#!/usr/bin/env python3
"""Snapshot every report format for every file of the project's corpora, to compare two versions.

    python tools/report_snapshot.py OUT_DIR [--jobs N] [--only GLOB]
    python tools/report_snapshot.py --compare OLD_DIR NEW_DIR

The first form grades each file of tests/corpus, tests/corpus-frameworks and tests/corpus-problems
through the CLI (``grader check FILE --problem P --format json --max-examples 4 --no-shrink``, a
3 s call limit for the files expected to time out), sets every timing field of the JSON report
to 0 (``seconds``, ``cpu_seconds``), writes the checkout's path as ``<ROOT>`` and what differs from run to run as placeholders
(:data:`VOLATILE`: sandbox uids, private folders' pids, thread addresses), and renders that report in every format of
``grader.reports.FORMATS`` for both audiences with the version of the grader that is imported.
One file per submission, format and audience is written under OUT_DIR, plus ``digests.json``
(each file's ``environment.cases_digest``).

The second form says which files differ between two snapshots, with a unified diff of each, and
exits 1 if any does (0 when every byte is the same). Run the first form at the old and the new
commit (a worktree each: ``PYTHONPATH=WORKTREE python WORKTREE/tools/report_snapshot.py ...``;
the sandboxed child runs the worktree's own ``_child.py``).
"""
from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ("tests/corpus", "tests/corpus-frameworks", "tests/corpus-problems")
#: JSON keys whose values are timings (machine- and load-dependent)
TIMINGS = {"seconds", "cpu_seconds"}
#: what differs between two runs of the same version: the sandbox uid a child was given, the
#: pid and random suffix of private folders, thread addresses in a faulthandler dump
VOLATILE = [(re.compile(r"uid-\d+"), "uid-N"), (re.compile(r"(grader-(?:run|sub))-\d+-[A-Za-z0-9_]+"), r"\1-PID-X"),
            (re.compile(r"([Tt])hread 0x[0-9a-f]+"), r"\1hread 0xADDR")]


def steady(text: str) -> str:
    """``text`` with :data:`VOLATILE` parts replaced by placeholders."""
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def submissions() -> list[tuple[str, str, str]]:
    """Every corpus file as (relative path, problem id, expected first kinds joined by ',')."""
    out = []
    for corpus in CORPORA:
        for expected in sorted((ROOT / corpus).rglob("expected.json")):
            folder = expected.parent
            problem = folder.name if corpus == "tests/corpus-problems" else "tied_lm_head"
            for rel, want in sorted(json.loads(expected.read_text()).items()):
                if (folder / rel).exists():
                    out.append((str((folder / rel).relative_to(ROOT)), problem, ",".join(want.get("kinds", []))))
    return out


def untimed(value):
    """``value`` (a JSON report) with every timing set to 0."""
    if isinstance(value, dict):
        return {k: (0 if k in TIMINGS and isinstance(v, (int, float)) else untimed(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def report_from(data: dict):
    """A Report object from its JSON form, with whichever deserialiser this version has."""
    from grader import results
    if hasattr(results.Report, "from_json"):
        return results.Report.from_json(data)
    from grader.batch.gradebook import report_from_json
    return report_from_json(data)


def snapshot_one(rel: str, problem: str, kinds: str, out: Path) -> str:
    """Grade one file and write its renderings; a one-line status."""
    from grader.reports import FORMATS, reporter

    args = ["--max-examples", "4", "--no-shrink"]
    if "timeout" in kinds.split(","):
        args += ["--timeout", "3"]
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "report.json"
        proc = subprocess.run([sys.executable, "-m", "grader", "check", str(ROOT / rel), "--problem", problem,
                               "--format", "json", "--output", str(report_path), *args],
                              capture_output=True, text=True, cwd=tmp, stdin=subprocess.DEVNULL, timeout=600)
        if not report_path.exists():
            return f"{rel}: no report (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
        # the checkout's own path (a worktree each) is not part of what is compared
        data = untimed(json.loads(steady(report_path.read_text().replace(str(ROOT), "<ROOT>"))))
    stem = rel.replace("/", "__")
    (out / f"{stem}.exit").write_text(f"{proc.returncode}\n")
    (out / f"{stem}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    report = report_from(data)
    for fmt in FORMATS:
        for audience in ("learner", "instructor"):
            # JUnit's timestamp is when it was rendered: fixed, as the other timings are zeroed
            stamp = {"timestamp": "2000-01-01T00:00:00"} if fmt == "junit" else {}
            text = reporter(fmt).render(report, audience=audience, **stamp)
            (out / f"{stem}.{audience}.{fmt}").write_text(text)
    return f"{rel}: exit {proc.returncode}"


def take(out: Path, jobs: int, only: str | None) -> int:
    """The first form: write a snapshot into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in submissions() if only is None or fnmatch.fnmatch(s[0], only)]
    with ThreadPoolExecutor(jobs) as pool:
        for line in pool.map(lambda s: snapshot_one(*s, out), todo):
            print(line, flush=True)
    digests = {}
    for rel, _, _ in todo:
        path = out / (rel.replace("/", "__") + ".json")
        if path.exists():
            digests[rel] = json.loads(path.read_text())["environment"].get("cases_digest")
    (out / "digests.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    return 0


def compare(old: Path, new: Path) -> int:
    """The second form: 0 when both snapshots hold the same files with the same bytes."""
    names = sorted({p.name for p in old.iterdir()} | {p.name for p in new.iterdir()})
    differ = 0
    for name in names:
        a, b = old / name, new / name
        if not a.exists() or not b.exists():
            print(f"only in {'new' if b.exists() else 'old'}: {name}")
            differ += 1
            continue
        if a.read_bytes() != b.read_bytes():
            differ += 1
            print(f"differs: {name}")
            sys.stdout.writelines(difflib.unified_diff(a.read_text().splitlines(True), b.read_text().splitlines(True),
                                                       str(a), str(b), n=1))
    print(f"{len(names)} files compared, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, help="the snapshot folder to write")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    ap.add_argument("--only", help="only corpus paths matching this glob")
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("give OUT_DIR or --compare OLD NEW")
    return take(args.out, args.jobs, args.only)


if __name__ == "__main__":
    sys.exit(main())
