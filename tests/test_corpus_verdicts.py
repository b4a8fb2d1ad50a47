"""Verdicts on the project's own corpus (tests/corpus), graded through the CLI as a learner would.

Every file of tests/corpus/correct and tests/corpus/wrong is one test. tests/corpus/expected.json
says what each must get: ``verdict`` (``pass``/``fail``), ``kinds`` (the first failure kind must
be one of them) and optionally ``hint``, a keyword the text report's explanation (the summary of
what failed and the ``hint:`` lines) must contain, case-insensitively, and ``needs``, a NumPy
attribute the file calls (``vecdot``: NumPy 2 only), without which it fails as it would for the learner.

All files are graded once per session, in parallel (:data:`WORKERS` processes at a time, the
slow JAX ones first), with ``--max-examples 4 --no-shrink`` (one generated case per dtype; the fixed cases are
the same as in a default run); the files of :data:`DEFAULT_RUN` (a correct NumPy and a
correct JAX file among them: what learners run) get the default run (the spec's 36 generated
cases, shrinking on), and their replay commands are run to check that they reproduce the failure. The text report is rendered from the JSON
report with ``grader.reports.text`` (the function the CLI calls); one test checks that this
equals the CLI's own ``--format text`` output.

Where each file runs: the default-run files through a grader process (a learner's command);
NumPy and JAX functions whose expected kinds are the judge's (:func:`in_process`) with the function
called in this process (``grade_function_in_process``: the same plan, judge and report, inputs
converted as the child converts them, no child), which tests the verdict logic without paying
for a sandbox per file; the rest (a timeout, a crash, an import failure) through the CLI's
options in this process and the sandboxed child (``check_like_cli``). tests/test_security.py runs the adversarial corpus through the child.
"""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import check_like_cli, grade_function_in_process, judged_in_process

from grader.reports import text as text_report
from grader.results import Report

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text())
FILES = sorted(rel for rel in EXPECTED if rel.startswith(("correct/", "wrong/")) and (CORPUS / rel).exists())
FAST = ["--max-examples", "4", "--no-shrink"]
DEFAULT_RUN = {"correct/c01_numpy_matmul.py", "correct/c17_jax_matmul.py",
               "wrong/w12_relu_logits.py", "wrong/w18_wrong_only_float16.py"}
WORKERS = max(2, min(4, os.cpu_count() or 2))  # one grading per core (3 on 2 cores measured no faster)
CALL_TIMEOUT = {"timeout": ["--timeout", "3"]}  # an endless loop needs only a short wait to be caught


#: graded through the child whatever they are: the text-equals-CLI test reads this file's report
THROUGH_THE_CHILD = {"wrong/w04_constant_bias.py"}


def in_process(rel: str) -> bool:
    """Whether the file's verdict is tested in process (``conftest.judged_in_process``)."""
    return rel not in THROUGH_THE_CHILD and judged_in_process(CORPUS / rel, EXPECTED[rel].get("kinds", []))


@dataclass
class Graded:
    """One CLI run: exit code, the JSON report (None if none was written), stderr, the arguments."""

    code: int
    report: dict | None
    stderr: str
    args: list[str]
    seconds: float = 0.0


def grade(rel: str, out_dir: Path) -> Graded:
    """``python -m grader check FILE --problem tied_lm_head --format json --output ...`` for the
    files of :data:`DEFAULT_RUN` (a learner's own command: its exit code, its output file); the
    others through ``check_like_cli`` (the CLI's parser and options, the check in this process,
    the submission in its sandboxed child), which saves the grader's start-up per file."""
    want = EXPECTED[rel]
    args = [] if rel in DEFAULT_RUN else list(FAST)
    if set(want.get("kinds", [])) & set(CALL_TIMEOUT):
        args += CALL_TIMEOUT["timeout"]
    if rel not in DEFAULT_RUN:
        started = time.monotonic()
        graded = None
        if in_process(rel):
            graded = grade_function_in_process(str(CORPUS / rel), "--problem", "tied_lm_head", *args)
        code, report = graded or check_like_cli(str(CORPUS / rel), "--problem", "tied_lm_head", *args)
        return Graded(code, report, "", args, time.monotonic() - started)
    out = out_dir / (rel.replace("/", "__") + ".json")
    cmd = [sys.executable, "-m", "grader", "check", str(CORPUS / rel), "--problem", "tied_lm_head",
           "--format", "json", "--output", str(out), *args]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)
    report = json.loads(out.read_text()) if out.exists() else None
    return Graded(proc.returncode, report, proc.stderr, args, time.monotonic() - started)


@pytest.fixture(scope="session")
def graded() -> dict[str, Future]:
    """Every corpus file's :class:`Graded`, as futures: the first test to ask starts them all."""
    out_dir = Path(tempfile.mkdtemp(prefix="corpus-verdicts-"))
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="grade")
    is_jax = {rel: "jax" in (CORPUS / rel).read_text() for rel in FILES}
    order = sorted(FILES, key=lambda rel: (not is_jax[rel], rel not in DEFAULT_RUN, rel))
    futures = {rel: pool.submit(grade, rel, out_dir) for rel in order}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def report_from_json(data: dict) -> Report:
    """A :class:`grader.results.Report` rebuilt from its ``to_json`` form."""
    return Report.from_json(data)


def explanation(text: str) -> str:
    """The parts of a text report that explain: the summary of what failed and every hint line."""
    lines = text.splitlines()
    out, in_summary = [], False
    for line in lines:
        if line.startswith("What failed"):
            in_summary = True
        elif in_summary and not line.startswith("  "):
            in_summary = False
        if in_summary or line.strip().startswith("hint"):
            out.append(line)
    return "\n".join(out)


def first_kind(report: dict) -> str | None:
    """The whole run's failure kind, else the first failing case's (in run order)."""
    if report.get("failure"):
        return report["failure"]["kind"]
    for case in report["cases"]:
        if case["failure"]:
            return case["failure"]["kind"]
    return None


@pytest.mark.parametrize("rel", FILES)
def test_verdict(rel, graded):
    g: Graded = graded[rel].result()
    want = EXPECTED[rel]
    if want.get("needs") and not hasattr(np, want["needs"]):  # np.vecdot is NumPy 2's: on 1.26 it raises there
        assert g.report is not None and g.report["passed"] is False
        pytest.skip(f"numpy {np.__version__} has no {want['needs']}; the file fails here, as it would for the learner")
    assert g.report is not None, f"no report after {g.seconds:.1f} s; exit {g.code}; stderr: {g.stderr[-500:]}"
    report = g.report
    passed = want["verdict"] == "pass"
    failing = [(c["name"], c["failure"]["kind"], c["failure"]["message"]) for c in report["cases"] if c["failure"]]
    assert report["passed"] is passed, f"{rel}: got {'pass' if report['passed'] else 'fail'}; {failing[:5]}"
    assert g.code == (0 if passed else 1), f"exit code {g.code} disagrees with the verdict; {g.stderr[-500:]}"
    if passed:
        assert not failing and report["failure"] is None
        return
    assert first_kind(report) in want["kinds"], f"first failure kind {first_kind(report)} not in {want['kinds']}"
    if want.get("hint"):
        text = text_report.render(report_from_json(report))
        assert want["hint"].lower() in explanation(text).lower(), f"{rel}: no {want['hint']!r} in:\n{explanation(text)}"


def test_the_corpus_is_all_here():
    """Every correct/ and wrong/ file has an expectation, and the other way round."""
    on_disk = {f"{p.parent.name}/{p.name}" for d in ("correct", "wrong") for p in (CORPUS / d).glob("*.py")}
    assert on_disk == {rel for rel in EXPECTED if rel.startswith(("correct/", "wrong/"))}
    assert len([r for r in FILES if r.startswith("correct/")]) >= 20
    assert len([r for r in FILES if r.startswith("wrong/")]) >= 30


def test_text_rendered_from_json_equals_the_cli_text(graded):
    rel = "wrong/w04_constant_bias.py"
    g: Graded = graded[rel].result()
    proc = subprocess.run([sys.executable, "-m", "grader", "check", str(CORPUS / rel), "--problem", "tied_lm_head",
                           *g.args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1
    assert proc.stdout == text_report.render(report_from_json(g.report))


@pytest.mark.parametrize("rel", sorted(r for r in DEFAULT_RUN if r.startswith("wrong/")))
def test_replay_commands_reproduce_the_failure(rel, graded):
    """Run the replay command of a shrunk case, of a generated case and of a fixed one."""
    report = graded[rel].result().report
    failing = [c for c in report["cases"] if c["failure"] and c["replay"]]
    shrunk = [c for c in failing if c["shrunk"]]
    generated = [c for c in failing if c["group"] == "generated"]
    fixed = [c for c in failing if c["group"] not in ("generated", "shrunk")]
    # a (failure kind, dtype) that a small visible fixed case already shows is not searched
    from grader.shrink import SMALL_ENOUGH
    small = {(c["failure"]["kind"], c["dtype"]) for c in failing if c["group"] not in ("generated", "shrunk")
             and max((math.prod(i["shape"]) for i in c["inputs"].values()), default=1) <= SMALL_ENOUGH}
    searched = [c for c in generated if (c["failure"]["kind"], c["dtype"]) not in small]
    assert bool(shrunk) == bool(searched), ("the default run shrinks the first failing generated case of a kind "
                                            "no small fixed case shows; cases: "
                                            f"{[(c['name'], c['failure']['kind']) for c in failing][:8]}")
    if shrunk and shrunk[0]["values"] is None:
        # a case too big to show: only when the search ran out of its time (a loaded machine; it
        # happened once, with the oldest hypothesis, in a full parallel run on 2 cores)
        from grader.shrink import SHRINK_BUDGET
        took = float(re.search(r"found and shrunk by hypothesis in ([0-9.]+) s", shrunk[0]["failure"]["details"][0])[1])
        assert took >= SHRINK_BUDGET - 0.5, f"a small shrunk case shows its values (the search took {took} s)"
    for case in (*shrunk[:1], generated[0], fixed[0]):
        argv = shlex.split(case["replay"])
        assert argv[:2] == ["grader", "check"]
        proc = subprocess.run([sys.executable, "-m", "grader", *argv[1:], "--format", "json"],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert proc.returncode == 1, f"{case['replay']}: exit {proc.returncode}; {proc.stderr[-500:]}"
        again = json.loads(proc.stdout)
        (only,) = again["cases"]  # exactly that case, nothing shrunk on top
        assert only["failure"]["kind"] == case["failure"]["kind"]
        assert only["failure"]["data"].get("got") == case["failure"]["data"].get("got")
        if case["values"] is not None:
            assert only["values"]["got"] == case["values"]["got"]
            assert only["values"]["expected"] == case["values"]["expected"]
        if case["shrunk"]:
            assert "--replay" in argv

