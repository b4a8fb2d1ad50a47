"""templates/slurm/ on a real Slurm: a one-node cluster from Debian's packages (started by
.ci/slurm-up: munge, slurmctld, slurmd), a class of 12 learners, ``submit.sh`` with 3 shards
(an sbatch job array, then the merge job chained afterok), and the merged gradebook compared
row for row with a local ``grader grade`` of the same class.

Skipped where no cluster answers ``sinfo``, unless ``GRADER_REQUIRE_SLURM=1`` (set by .ci/run
when it started one): then a missing cluster is a failure, not a skip.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SLURM = ROOT / "templates" / "slurm"
CORPUS = ROOT / "tests" / "corpus-problems" / "embedding_lookup"
FLAGS = "--max-examples 2 --no-shrink"
#: every corpus file (6) twice, as learners of their own; each of the 3 shards gets some (4, 2 and 6
#: of learner00..learner11). It was 30 (each file five times): 60 checks between the cluster and
#: the local grade, where what is tested (the array, the chained merge, the merged gradebook row
#: for row against a local grade) needs only a class that every shard has a part of
LEARNERS = 12

pytestmark = pytest.mark.xdist_group("slurm")


def _cluster() -> bool:
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return False
    got = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    return got.returncode == 0 and any(s.strip() in ("idle", "mixed", "allocated") for s in got.stdout.split())


@pytest.fixture(scope="module")
def cluster():
    if not _cluster():
        if os.environ.get("GRADER_REQUIRE_SLURM") == "1":
            pytest.fail("GRADER_REQUIRE_SLURM=1 but no Slurm cluster answers sinfo (.ci/slurm-up)")
        pytest.skip("no Slurm cluster answers sinfo here (start one with .ci/slurm-up, as root)")


def _rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "gradebook.csv", newline="", encoding="utf-8") as fh:
        rows = [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(fh)]
    return sorted(rows, key=lambda r: r["learner"])


def _wait(jobs: list[str], seconds: float) -> None:
    """Until no job of ``jobs`` is in the queue (squeue lists pending and running ones)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = subprocess.run(["squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T"], capture_output=True, text=True)
        if got.returncode == 0 and not got.stdout.strip():
            return
        time.sleep(2)
    subprocess.run(["scancel", *jobs])
    pytest.fail(f"Slurm jobs {jobs} still queued after {seconds} s")


def test_submit_grades_a_class_in_3_shards_like_a_local_grade(cluster, tmp_path):
    from grader.batch.discovery import in_shard
    sources = sorted(CORPUS.glob("*/*.py"))
    klass = tmp_path / "class"
    klass.mkdir()
    for i in range(LEARNERS):  # every corpus file at least once, as learners of their own
        shutil.copy(sources[i % len(sources)], klass / f"learner{i:02d}.py")
    assert all(any(in_shard(f"learner{i:02d}", shard, 3) for i in range(LEARNERS)) for shard in (1, 2, 3))
    out = tmp_path / "grades"
    grader = f"{sys.executable} -I -m grader"
    env = {**os.environ, "GRADER": grader, "GRADER_PROBLEM": "embedding_lookup", "GRADER_ARGS": FLAGS,
           "GRADER_SHARDS": "3", "SBATCH_ARGS": f"--cpus-per-task=1 --output={tmp_path}/slurm-%A_%a.out"}
    submitted = subprocess.run(["bash", str(SLURM / "submit.sh"), str(klass), str(out)], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, env=env)
    assert submitted.returncode == 0, submitted.stderr
    words = submitted.stdout.split()
    jobs = [words[words.index("job") + 1], words[words.index("job", words.index("job") + 1) + 1]]
    # meanwhile, the same class graded locally
    local = subprocess.run([sys.executable, "-I", "-m", "grader", "grade", str(klass), "--problem", "embedding_lookup",
                            *FLAGS.split(), "--jobs", "1", "--out", str(tmp_path / "local"), "-q"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert local.returncode in (0, 1), local.stderr
    _wait(jobs, 900)
    logs = "\n".join(p.read_text() for p in sorted(tmp_path.glob("slurm-*.out")))
    assert (out / "merged" / "gradebook.csv").is_file(), logs
    assert sorted(p.name for p in out.glob("shard-*")) == ["shard-1", "shard-2", "shard-3"]
    merged, whole = _rows(out / "merged"), _rows(tmp_path / "local")
    assert len(merged) == LEARNERS and [r["learner"] for r in merged] == [f"learner{i:02d}" for i in range(LEARNERS)]
    assert merged == whole
    assert {r["passed"] for r in merged} == {"true", "false"}  # the class has right and wrong files
