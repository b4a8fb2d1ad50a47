"""Issue 9, class 6: answers for a published seed.

Cases are a pure function of the seed, so with the default seed (printed in every report) one
local run tells a learner every case and its exact output (the case cache holds both), and a
lookup table that does no arithmetic scored full marks. With the instructor's secret
(``--seed-secret FILE`` or ``GRADER_SEED_SECRET``) each submission's cases come from
HMAC(secret, SHA-256 of its bytes): unknowable without the secret, and new for every other
file. These tests show that a lookup table built from a default-seed run fails then, that the
learner never sees the seed (nor a ``--seed`` replay command) while the instructor can replay
every case, that the secret reaches no child, report, cache or gradebook, and the bad inputs.

Grader runs (each a few seconds): one learner check with the secret and one replay of it; one
default run and one check of the lookup table; one ``grader grade`` of two learners and one
instructor replay of its seed. The rest runs in process.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import shutil
import zlib
from pathlib import Path

import pytest

from grader import cache, cli
from grader.batch.gradebook import report_from_json
from grader.reports import reporter

from .conftest import ROOT, SUBMISSIONS

# spelt out here (not imported) so that the tests run, and fail, against a grader without them
SEED_SECRET_ENV = "GRADER_SEED_SECRET"
SECRET_REPLAY_NOTE = "this case's inputs come from the instructor's secret seed and are too large to print as a replay, so it cannot be replayed alone: fix what its failure says and submit again"


def derive_seed(secret: bytes, data: bytes) -> int:
    """The documented derivation (docs/security.md, class 6), with the standard library only."""
    import hmac
    digest = hmac.new(secret, b"grader-seed-v1\0" + hashlib.sha256(data).digest(), "sha256").digest()
    return int.from_bytes(digest[:8], "big")


def file_seed(secret: bytes, path) -> int:
    """The seed of a single file (no module taken along): its bytes, NUL, ``name``, NUL and its
    name (docs/security.md, round four class 2: the name is in the seed, as the child sees it)."""
    path = Path(path)
    return derive_seed(secret, path.read_bytes() + b"\0name\0" + path.name.encode())

FAST = ["--max-examples", "4", "--timeout", "5", "--no-shrink"]

# wrong by a bias in every case (so every case fails and has a replay or a note), and it prints
# its whole environment at import (captured as the submission's output, shown in its report)
BIASED_ENV_PRINTER = '''\
import os
import numpy as np

print("ENVIRON", sorted(os.environ.items()))


def tied_lm_head(hidden, embedding_matrix):
    return (hidden @ embedding_matrix.T + 1).astype(hidden.dtype)
'''

# the same, wrong only beyond d_model 16: a mistake a small fixed case shows is not searched for a
# smaller example, and the learner run's test needs a search
BIASED_LARGE_ENV_PRINTER = BIASED_ENV_PRINTER.replace("+ 1)", "+ (hidden.shape[-1] > 16))")
assert BIASED_LARGE_ENV_PRINTER != BIASED_ENV_PRINTER

# answers looked up by a hash of the inputs; the table is filled in from a default-seed run
LOOKUP = '''\
import base64, hashlib, zlib
import numpy as np

TABLE = {table}


def tied_lm_head(hidden, embedding_matrix):
    h, e = np.ascontiguousarray(hidden), np.ascontiguousarray(embedding_matrix)
    key = hashlib.sha256(repr((h.dtype.str, h.shape, e.shape)).encode() + h.tobytes() + e.tobytes()).hexdigest()
    if key not in TABLE:
        return np.zeros(h.shape[:-1] + e.shape[:1], h.dtype)
    shape, blob = TABLE[key]
    return np.frombuffer(zlib.decompress(base64.b64decode(blob)), h.dtype).reshape(shape)
'''


def _no_secret_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != SEED_SECRET_ENV}


def _run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """``run_grader`` with exactly ``env`` added to an environment holding no seed secret."""
    import subprocess
    import sys
    from .conftest import Run
    proc = subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd or ROOT, env={**_no_secret_env(), **(env or {})}, stdin=subprocess.DEVNULL)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _case_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("cases-*.bin")) if folder.is_dir() else []


# -- the derived seed ---------------------------------------------------------------------------

def test_derived_seed_is_per_content_and_per_secret_and_64_bit():
    from grader.check import derive_seed

    data = (SUBMISSIONS / "correct_numpy.py").read_bytes()
    seed = derive_seed(b"s3cret", data)
    assert seed == derive_seed(b"s3cret", bytes(data))                      # same bytes, same secret
    assert derive_seed(b"s3cret", data + b"\n# resubmitted\n") != seed      # other content
    assert derive_seed(b"s3cret!", data) != seed                           # other secret
    assert derive_seed(b"s3cret", b"") != derive_seed(b"s3cret", b"\0")
    seeds = {derive_seed(b"k%d" % i, data) for i in range(64)}
    assert len(seeds) == 64 and all(0 <= s < 1 << 64 for s in seeds)
    assert max(seeds) >= 1 << 63  # the whole 64-bit range is used (2**-64 chance of a false failure)
    # the documented formula, so that an instructor can recompute a seed with the standard library
    assert seed == globals()["derive_seed"](b"s3cret", data)


def test_the_secret_comes_from_the_flag_first_then_the_environment(tmp_path):
    from grader.check import read_seed_secret

    f = tmp_path / "secret"
    f.write_bytes(b"from-the-file \n\t\n")
    assert read_seed_secret(str(f), {SEED_SECRET_ENV: "from-env"}) == (b"from-the-file", "--seed-secret")
    assert read_seed_secret(None, {SEED_SECRET_ENV: "from-env\n"}) == (b"from-env", SEED_SECRET_ENV)
    # a CI secret that is not set arrives as an empty variable: a practice run, default seed
    assert read_seed_secret(None, {SEED_SECRET_ENV: ""}) == (None, "")
    assert read_seed_secret(None, {}) == (None, "")


# -- bad input: one line, exit 2 ----------------------------------------------------------------

def test_bad_secret_input_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    ok = str(SUBMISSIONS / "correct_numpy.py")
    good, empty, blank = tmp_path / "good", tmp_path / "empty", tmp_path / "blank"
    good.write_text("k" * 32 + "\n")
    empty.write_bytes(b"")
    blank.write_text(" \n\n")
    (tmp_path / "adir").mkdir()
    calls = [
        (["check", ok, "--seed", "3", "--seed-secret", str(good)], "--seed cannot be used with a seed secret"),
        (["check", ok, "--seed", "0", "--seed-secret", str(good)], "--seed cannot be used with a seed secret"),
        (["check", ok, "--seed-secret", str(tmp_path / "missing")], "does not exist"),
        (["check", ok, "--seed-secret", str(empty)], "is empty"),
        (["check", ok, "--seed-secret", str(blank)], "is empty"),
        (["check", ok, "--seed-secret", str(tmp_path / "adir")], "not a regular file"),
        (["grade", ok, "--out", str(tmp_path / "out"), "--seed", "1", "--seed-secret", str(good)],
         "--seed cannot be used with a seed secret"),
        (["grade", ok, "--out", str(tmp_path / "out"), "--seed-secret", str(empty)], "is empty"),
    ]
    monkeypatch.delenv(SEED_SECRET_ENV, raising=False)
    for argv, words in calls:
        assert cli.main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, (argv, err)
        assert err.startswith("grader: error: ") and words in err, (argv, err)
        assert "k" * 32 not in err
    assert not (tmp_path / "out").exists()  # nobody was graded
    # the variable counts as a secret too
    monkeypatch.setenv(SEED_SECRET_ENV, "k" * 32)
    assert cli.main(["check", ok, "--seed", "5"]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and f"({SEED_SECRET_ENV})" in err and "k" * 32 not in err


# -- the learner's view of a secret-seeded run --------------------------------------------------

@pytest.fixture(scope="module")
def learner_run(tmp_path_factory):
    """One learner check of a wrong submission with the secret in the environment."""
    tmp = tmp_path_factory.mktemp("learner")
    sub = tmp / "solution.py"
    sub.write_text(BIASED_LARGE_ENV_PRINTER)
    n = 0  # a seed that needs all 64 bits, shrinking on: hypothesis takes a seed made from it
    while file_seed(b"learner-run-%d" % n, sub) < 1 << 63:
        n += 1
    secret = "learner-run-%d" % n
    cache_dir = tmp / "cache"
    run = _run("check", str(sub), "--format", "json", "--timeout", "5", "--max-examples", "8",
               env={SEED_SECRET_ENV: secret, "GRADER_CACHE_DIR": str(cache_dir)})
    return sub, secret, cache_dir, run


def test_learner_report_hides_the_seed_and_replays_without_it(learner_run):
    sub, secret, cache_dir, run = learner_run
    assert run.code == 1, run.stderr
    seed = file_seed(secret.encode(), sub)
    report = run.json()
    env = report["environment"]
    assert env["seed"] == "secret" and env["seed_source"] == "secret"
    assert env["seed_secret_from"] == SEED_SECRET_ENV
    text = reporter("text").render(report_from_json(report), audience="learner")
    assert "seed: secret (set by your instructor)" in text
    for shown in (run.stdout, text):
        assert str(seed) not in shown and "--seed" not in shown and secret not in shown
    failing = [c for c in report["cases"] if c["status"] != "passed"]
    assert failing and all(c["failure"] for c in failing)
    literal = [c for c in failing if c["replay"]]
    # (a case failed only as unearned passed its call: nothing to replay, no note)
    noted = [c for c in failing if not c["replay"] and c["failure"]["kind"] != "unearned"]
    # small cases replay as literals; a case too big for one (real_size) says why there is none
    assert literal and noted and any(c["name"].startswith("real_size") for c in noted)
    assert all("--replay" in shlex.split(c["replay"]) for c in literal)
    assert all(c["replay_note"] == SECRET_REPLAY_NOTE for c in noted)
    assert any(c["group"] == "shrunk" for c in literal)  # shrinking ran under the 64-bit seed
    only_noted = report_from_json({**report, "cases": noted})  # the text report lists the smallest five
    assert f"replay: none ({SECRET_REPLAY_NOTE})" in reporter("text").render(only_noted, audience="learner")
    # the secret run's cases (and their exact outputs) are not left in the cache
    assert _case_files(cache_dir) == []


def test_a_learner_replay_reproduces_the_failure_without_the_secret(learner_run):
    sub, _, _, run = learner_run
    # a literal (the inputs themselves) of a case shown with its values: a shrunk case gets a
    # literal whatever its size, and shrinking has a time budget, so under load the first
    # literal was once a larger shrunk case, shown without values (a loaded CI run, 2026-12-06)
    case = next(c for c in run.json()["cases"]
                if c["replay"] and c["status"] == "failed" and "--replay" in shlex.split(c["replay"])
                and c["values"] is not None)
    argv = shlex.split(case["replay"])
    assert argv[:3] == ["grader", "check", str(sub)]
    assert "--replay" in argv and "--seed" not in argv and "--case" not in argv  # the inputs themselves
    again = _run(*argv[1:], "--format", "json")  # no secret in this environment
    assert again.code == 1, again.stderr
    (got,) = again.json()["cases"]
    assert got["failure"]["kind"] == case["failure"]["kind"] == "tolerance"
    assert got["failure"]["message"] == case["failure"]["message"]
    assert got["values"] is not None, (case, again.stdout[-3000:])
    assert got["values"]["hidden"] == case["values"]["hidden"]


def test_the_secret_never_reaches_the_submissions_process(learner_run):
    """``runner.child_environment`` builds the child's environment from nothing, so this held
    before class 6 too; with the secret in the grader's environment it must go on holding."""
    _, secret, _, run = learner_run
    assert run.json()["environment"]["seed_source"] == "secret"  # the secret was in use
    printed = run.json()["output"]["stdout"]
    assert "ENVIRON" in printed and "'PATH'" in printed  # the whole environment was printed
    assert SEED_SECRET_ENV not in printed and secret not in printed
    assert secret not in run.stdout + run.stderr


def test_a_learner_rendering_of_an_instructor_report_hides_the_seed():
    """Defence in depth: every reporter, given an instructor's report of a secret run for a learner."""
    from grader.results import ArrayInfo, CaseResult, Failure, GroupScore, Report
    from grader.reports import FORMATS
    from grader.reports.github import classroom_result, step_summary

    seed = derive_seed(b"k", b"x")
    case = CaseResult(name="gen000[float32]", group="generated", status="failed", dtype="float32", rank=2,
                      inputs={"hidden": ArrayInfo(shape=(9, 70), dtype="float32")}, failure=Failure(kind="tolerance",
                                                                                                    message="off"),
                      replay=f"grader check s.py --problem p --seed {seed} --case 'gen000[float32]'")
    report = Report(problem="p", title="P", submission="s.py", passed=False, score=0.0, max_score=1.0, failure=None,
                    cases=[case], groups=[GroupScore(group="generated", points=1.0, earned=0.0, passed=0, total=1)],
                    summary=[],
                    environment={"seed": seed, "seed_source": "secret", "seed_secret_from": "--seed-secret"}, output={})
    for name in FORMATS:
        learner = reporter(name).render(report, audience="learner")
        assert str(seed) not in learner and "--seed " not in learner, name
        assert str(seed) in reporter(name).render(report, audience="instructor") or name in ("github", "gradescope")
    extra = step_summary(report, audience="learner") + json.dumps(classroom_result(report, audience="learner"))
    assert str(seed) not in extra


# -- the instructor's batch, the lookup table ---------------------------------------------------

@pytest.fixture(scope="module")
def small_problem(tmp_path_factory):
    """The problem without its one large case (a lookup table of it would pass the 1 MiB cap)."""
    import yaml
    tmp = tmp_path_factory.mktemp("problem")
    shutil.copytree(ROOT / "reference", tmp / "reference")
    spec = yaml.safe_load((ROOT / "problems" / "tied_lm_head.yaml").read_text())
    spec["cases"] = [c for c in spec["cases"] if c["name"] != "real_size"]
    (tmp / "problems").mkdir()
    (tmp / "problems" / "tied_lm_head.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return tmp / "problems"


def _lookup_from_cache(cache_dir: Path) -> str:
    """The lookup-table submission: every case a default-seed run left in the cache, with its answer."""
    table = {}
    for path in _case_files(cache_dir):
        items = cache.load_cases(path.stem[len("cases-"):])
        assert items
        for case, ref, _ in items:
            h, e = (case.inputs[k] for k in ("hidden", "embedding_matrix"))
            h, e = h.copy(order="C"), e.copy(order="C")
            key = hashlib.sha256(repr((h.dtype.str, h.shape, e.shape)).encode() + h.tobytes() + e.tobytes()).hexdigest()
            out = ref.astype(h.dtype)
            table[key] = (list(out.shape), base64.b64encode(zlib.compress(out.tobytes())).decode())
    assert table
    return LOOKUP.format(table=repr(table))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, small_problem):
    """A lookup table built from a default-seed run (passes it), then ``grader grade`` of it and
    of the biased environment printer with a secret file (and another secret in the variable)."""
    tmp = tmp_path_factory.mktemp("graded")
    probs = ["--problems-dir", str(small_problem), "--problem", "tied_lm_head"]
    # a learner's local practice run leaves the cases and their answers in the cache
    practice_cache = tmp / "practice-cache"
    practice = _run("check", str(SUBMISSIONS / "correct_numpy.py"), *probs, *FAST,
                    env={"GRADER_CACHE_DIR": str(practice_cache)})
    assert practice.code == 0, practice.stdout[-2000:] + practice.stderr
    old = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(practice_cache)
    try:
        lookup_source = _lookup_from_cache(practice_cache)
    finally:
        os.environ["GRADER_CACHE_DIR"] = old or ""
        if old is None:
            del os.environ["GRADER_CACHE_DIR"]
    klass = tmp / "class"
    klass.mkdir()
    (klass / "bob.py").write_text(lookup_source)
    alice = klass / "alice.py"
    alice.write_text(BIASED_ENV_PRINTER)
    lookup_default = _run("check", str(klass / "bob.py"), *probs, *FAST, "--format", "json",
                          env={"GRADER_CACHE_DIR": str(practice_cache)})
    # a secret whose seed for alice needs all 64 bits (the end-to-end check of a large seed)
    n = 0
    while file_seed(b"file-secret-%d" % n, alice) < 1 << 63:
        n += 1
    secret = "file-secret-%d" % n
    (tmp / "seed_secret").write_text(secret + "\n")
    env_secret = "env-secret-" + "7" * 30
    grade_cache = tmp / "grade-cache"
    out = tmp / "out"
    run = _run("grade", str(klass), "--out", str(out), "--seed-secret", str(tmp / "seed_secret"), *probs, *FAST,
               "--jobs", "2", env={SEED_SECRET_ENV: env_secret, "GRADER_CACHE_DIR": str(grade_cache)})
    return dict(run=run, out=out, alice=alice, secret=secret, env_secret=env_secret, grade_cache=grade_cache,
                lookup_default=lookup_default, probs=probs)


def _report(out: Path, learner: str) -> dict:
    (path,) = (out / "reports").glob(f"{learner}-*.json")
    return json.loads(path.read_text())


def test_a_lookup_table_of_the_published_seed_fails_with_a_secret(graded):
    default = graded["lookup_default"]
    assert default.code == 0, default.stdout[-2000:]  # the attack: full marks with no arithmetic
    assert default.json()["score"] == default.json()["max_score"]
    assert graded["run"].code == 1, graded["run"].stderr
    bob = _report(graded["out"], "bob")
    assert bob["environment"]["seed_source"] == "secret"
    assert not bob["passed"] and bob["score"] < 0.6 * bob["max_score"], bob["score"]
    generated = [c for c in bob["cases"] if c["group"] == "generated"]
    assert generated and all(c["status"] != "passed" for c in generated)
    assert _case_files(graded["grade_cache"]) == []  # nothing of a secret run is cached


def test_the_instructor_report_records_the_seed_and_its_replay_reproduces_the_case(graded):
    alice = _report(graded["out"], "alice")
    env = alice["environment"]
    seed = file_seed(graded["secret"].encode(), graded["alice"])  # the flag won
    assert env["seed"] == seed >= 1 << 63
    assert env["seed_source"] == "secret" and env["seed_secret_from"] == "--seed-secret"
    case = next(c for c in alice["cases"] if c["group"] == "generated" and c["status"] == "failed")
    argv = shlex.split(case["replay"])
    assert argv[argv.index("--seed") + 1] == str(seed) and argv[argv.index("--case") + 1] == case["name"]
    again = _run(*argv[1:], "--format", "json", "--audience", "instructor")  # no secret needed
    assert again.code == 1, again.stderr
    (got,) = again.json()["cases"]
    assert got["name"] == case["name"] and got["inputs"] == case["inputs"]
    assert got["failure"] == case["failure"]
    assert again.json()["environment"]["seed"] == seed


def test_the_secret_is_in_no_report_gradebook_log_or_child(graded):
    run, out = graded["run"], graded["out"]
    assert "seeds derived from the secret (--seed-secret)" in run.stderr
    assert f"the seed secret comes from --seed-secret; {SEED_SECRET_ENV} is ignored" in run.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    # every file the batch writes is read below: the class files, the run's settings (which say
    # only that a secret was used), two reports, two feedback files and their pages, the submission
    # times and the similarity page
    assert {p.name for p in files} >= {"gradebook.csv", "junit.xml", "summary.md", "summary.html", "index.csv",
                                       "settings.json", "submitted.json", "similarity.html"}
    assert len([p for p in files if p.parent.name == "reports"]) == 2
    assert len([p for p in files if p.parent.name == "feedback" and p.suffix == ".txt"]) == 2
    assert len([p for p in files if p.parent.name == "feedback" and p.suffix == ".html"]) == 2 and len(files) == 14
    for secret in (graded["secret"], graded["env_secret"]):
        assert secret not in run.stdout + run.stderr
        for p in files:
            assert secret not in p.read_text(encoding="utf-8"), p
    printed = _report(out, "alice")["output"]["stdout"]
    assert "ENVIRON" in printed and SEED_SECRET_ENV not in printed


# -- the CI templates ---------------------------------------------------------------------------

def test_classroom_workflow_passes_the_secret_to_the_grade_step_only():
    import yaml
    flow = yaml.safe_load((ROOT / "templates" / "github-classroom" / ".github" / "workflows" /
                           "autograding.yml").read_text())
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    grade = next(s for s in steps if "grader check" in s.get("run", ""))
    # the course's secret, else one of the run's own (round four, class 7: never the published seed)
    assert grade["env"][SEED_SECRET_ENV] == "${{ secrets.%s || env.GRADER_RUN_SECRET }}" % SEED_SECRET_ENV
    made = next(i for i, s in enumerate(steps) if "GRADER_RUN_SECRET=" in s.get("run", ""))
    assert made < steps.index(grade) and "::add-mask::" in steps[made]["run"]
    assert all("secrets." not in str(v) for k, v in grade["env"].items() if k != SEED_SECRET_ENV)
    assert "--seed" not in grade["run"]
    assert all(SEED_SECRET_ENV not in json.dumps(s) for s in steps if s is not grade)
    assert SEED_SECRET_ENV not in json.dumps(flow.get("env", {}))


def test_gradescope_grades_with_the_secret_shipped_in_the_bundle(tmp_path):
    import subprocess
    import sys
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "source").mkdir()
    (root / "submission" / "solution.py").write_text(BIASED_ENV_PRINTER)
    secret = "gradescope-secret-" + "3" * 30
    (root / "source" / "seed_secret").write_text(secret + "\n")
    env = {**_no_secret_env(), "AUTOGRADER_ROOT": str(root), "GRADER_BIN": f"{sys.executable} -m grader",
           "GRADER_ARGS": " ".join(FAST)}
    proc = subprocess.run(["bash", str(ROOT / "templates" / "gradescope" / "run_autograder")], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    text = (root / "results" / "results.json").read_text()
    results = json.loads(text)
    assert results["extra_data"]["seed"] == "secret"
    assert results["extra_data"]["environment"]["seed_secret_from"] == "--seed-secret"
    seed = file_seed(secret.encode(), root / "submission" / "solution.py")
    assert str(seed) not in text and secret not in text and "--seed " not in text
    assert results["score"] < 10
