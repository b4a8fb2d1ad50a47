"""Untrusted submissions, round four (docs/security.md, "Round four"): each class of attack that
broke the sandbox of 3779b48 has a test here (or in the file named beside it) that failed there
and passes now.

The attacks are made harmless to the machine the tests run on: a quota is taken once and given
back at once, so a host-wide counter is never held for longer than the test.
"""
from __future__ import annotations

import os

import pytest

from grader import sandbox
from grader.options import Limits
from grader.runner import Worker

from .test_security import INPUTS, NAMESPACE_OK, write_submission

TIERS = ["rlimits", *NAMESPACE_OK]

# -- class 1: host-wide kernel quotas ----------------------------------------------------------------
QUOTAS = """
import ctypes, errno, os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    libc = ctypes.CDLL(None, use_errno=True)
    out = []
    ctx = ctypes.c_ulong(0)                     # io_setup(nr_events, &ctx): fs.aio-nr, host-wide
    nr = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
    rc = libc.syscall(nr, 1, ctypes.byref(ctx))
    out += [rc, ctypes.get_errno() if rc != 0 else 0]
    if rc == 0:                                 # give it back at once (io_destroy)
        libc.syscall({"x86_64": 207, "aarch64": 1}[os.uname().machine], ctx)
    try:                                        # a pseudo-terminal: kernel.pty.nr, host-wide
        fd = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
        os.close(fd)
        out += [0]
    except OSError as exc:
        out += [exc.errno]
    libc.mmap.restype = ctypes.c_void_p         # huge pages: the host's one pool
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    p = libc.mmap(None, 2 << 20, 3, 0x22 | 0x40000, -1, 0)   # PROT_READ|WRITE, PRIVATE|ANONYMOUS|HUGETLB
    out += [ctypes.get_errno() if p in (None, ctypes.c_void_p(-1).value) else 0]
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_no_host_wide_quota_can_be_taken(tmp_path, tier):
    """Class 1: native AIO contexts are charged to one counter for the whole kernel
    (``fs.aio-nr``): a submission took all 65,536 in every tier and every ``io_setup`` on the
    host failed while it held them. The filter answers ENOSYS (libaio users fall back). One
    check also opened 251 pseudo-terminals of the host's 3,072: no tier has /dev/ptmx now (the
    bwrap tier's /dev is a tmpfs with five devices, as the unshare tier's; Landlock grants only
    those in the fallback tier). Huge pages come from the host's one pool: EPERM."""
    sub = write_submission(tmp_path, QUOTAS)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    aio_rc, aio_errno, pty_errno, huge_errno = (int(x) for x in out.result)
    assert (aio_rc, aio_errno) == (-1, 38), f"{tier}: io_setup gave {aio_rc}, errno {aio_errno}"
    assert pty_errno != 0, f"{tier}: the submission opened a pseudo-terminal"
    assert huge_errno != 0, f"{tier}: the submission mapped huge pages"


def test_the_bwrap_view_has_no_devpts():
    """The bubblewrap command line never mounts a devpts instance (``--dev``)."""
    steps = sandbox.view("/work/sub.py", "/tmp/w")
    argv = sandbox.bwrap_argv(steps, "/tmp/w", as_root=True)
    assert "--dev" not in argv
    binds = [argv[i + 2] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert sorted(binds) == sorted(f"/dev/{d}" for d in sandbox.DEVICES)
    assert not any("pts" in a or "ptmx" in a for a in argv)


# -- class 2: a table of one run's answers replayed through a helper file ----------------------------
MAIN = "from helper import tied_lm_head\n"


def _secret_plan(tmp_path, helper: str, secret: bytes = b"course secret", audience: str = "learner"):
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.spec import find_problem, load_problem
    folder = tmp_path / helper.replace(" ", "_")[:20]
    folder.mkdir(exist_ok=True)
    (folder / "main.py").write_text(MAIN)
    (folder / "helper.py").write_text(helper)
    opts = CheckOptions(max_examples=4, shrink=False, sandbox="none", seed_secret=secret, audience=audience)
    return make_plan(folder / "main.py", load_problem(find_problem("tied_lm_head")), opts,
                     lambda request: ("none", None))


def test_the_secret_seed_covers_every_file_taken_along(tmp_path):
    """Class 2: with a secret the seed was derived from the main file's bytes only, so the same
    main file with a helper that returned zeros (whose report showed the expected outputs) and
    then a helper that was a table of those answers got the same cases: 0 -> 3.5/10 on gelu with
    no arithmetic. The seed now covers each module taken along, by name and bytes."""
    zeros = "import numpy as np\ndef tied_lm_head(h, e):\n    return np.zeros(h.shape[:-1] + e.shape[:1], h.dtype)\n"
    table = "import numpy as np\nTABLE = {}\ndef tied_lm_head(h, e):\n    return TABLE[h.tobytes()]\n"
    a, b = _secret_plan(tmp_path, zeros), _secret_plan(tmp_path, table)
    assert a.siblings.names() == b.siblings.names() == ["helper.py"]
    assert a.options.seed != b.options.seed
    gen = lambda plan: [c.inputs["hidden"].tobytes() for c in plan.cases if c.origin == "generated"]  # noqa: E731
    assert gen(a) and not set(gen(a)) & set(gen(b))
    # the main file's name is in the seed too: the same bytes under another name (a name the
    # child reads in __file__, which carried a table of answers) get other cases
    from grader.options import derive_seed
    from grader.plan import seed_material
    from grader.siblings import Siblings
    assert seed_material(a.loaded, Siblings()) == a.loaded.data + b"\0name\0main.py"
    assert a.options.seed == derive_seed(b"course secret", seed_material(a.loaded, a.siblings))
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / "main2.py").write_bytes((a.loaded.path and open(a.loaded.path, "rb").read()))
    from grader.submission import load_submission
    other = load_submission(renamed / "main2.py")
    assert other.data == a.loaded.data and seed_material(other, Siblings()) != seed_material(a.loaded, Siblings())


def test_a_learner_is_not_shown_expected_values_of_seeded_cases(tmp_path):
    """Class 2: under a secret the learner's report shows the inputs and what the submission
    returned, and the expected values only for cases whose inputs are literal in the spec."""
    import json

    from grader.check import grade_plan
    from grader.reports import reporter
    from grader.run.inprocess import InProcessExecutor
    import numpy as np
    plan = _secret_plan(tmp_path, "def tied_lm_head(h, e):\n    return h @ e.T\n")
    assert plan.seeded and any(c.origin == "generated" for c in plan.cases)
    literal = [c.name for c in plan.cases if c.name not in plan.seeded]
    assert any(n.startswith("worked_example") for n in literal), literal   # the spec's literal example
    report = grade_plan(plan, InProcessExecutor(lambda h, e: np.zeros(h.shape[:-1] + e.shape[:1], h.dtype)))
    learner = json.loads(reporter("json").render(report, audience="learner"))
    teacher = json.loads(reporter("json").render(report, audience="instructor"))
    by_name = {c["name"]: c for c in learner["cases"]}
    seeded = [by_name[n] for n in plan.seeded if n in by_name and by_name[n]["status"] == "failed"]
    assert seeded
    for case in seeded:
        assert "expected" not in (case.get("values") or {})
        assert not {"expected", "error", "ratio", "grid"} & set(case["failure"]["data"])
        assert not any("expected" in d for d in case["failure"]["details"][1:]) and "margin" not in case
    assert any("expected" in (by_name[n].get("values") or {}) for n in literal if by_name[n]["status"] == "failed")
    t = {c["name"]: c for c in teacher["cases"]}
    assert all("expected" in t[c["name"]]["failure"]["data"] for c in seeded
               if t[c["name"]]["failure"]["kind"] == "tolerance")
    text = reporter("text").render(report, audience="learner")
    assert "withheld" in text


def test_which_fixed_cases_a_seed_chooses_is_found_once_and_a_bad_memo_is_not_read(tmp_path, monkeypatch):
    """Each secret-seeded check drew the fixed cases twice more to find those the seed does not
    choose (0.76 of its 2.7 CPU-s on tied_lm_head): the names are now kept beside the case
    cache. They are those drawn alike under every compared seed, the literal worked example
    among them and no random case; a memo that is a link, not a list of names, or of another
    format is not read (the cases are drawn again)."""
    import numpy as np

    from grader import cache
    from grader import plan as plan_module
    from grader.cases import fixed_cases
    from grader.spec import find_problem, load_problem
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    problem = load_problem(find_problem("tied_lm_head"))
    dtypes = problem.frameworks["numpy"]
    draws = []
    real_fixed = plan_module.fixed_cases
    monkeypatch.setattr(plan_module, "fixed_cases", lambda *a: draws.append(a[2]) or real_fixed(*a))
    found = plan_module.seed_independent(problem, dtypes)
    assert draws == list(plan_module.COMPARED_SEEDS)
    assert any(n.startswith("worked_example") for n in found)
    # a random case is never among them: its inputs differ between two other seeds
    a, b = ({c.name: c for c in fixed_cases(problem, dtypes, s)} for s in (11, 12))
    for name in found:
        assert all(np.array_equal(a[name].inputs[k], b[name].inputs[k], equal_nan=True) for k in a[name].inputs)
    assert any(not np.array_equal(a[n].inputs["hidden"], b[n].inputs["hidden"]) for n in a if n not in found)
    # read back, not drawn again
    assert plan_module.seed_independent(problem, dtypes) == found and len(draws) == len(plan_module.COMPARED_SEEDS)
    key = cache.case_key(problem, 0, 0, dtypes)
    memo_file = tmp_path / "cache" / f"seed-independent-{key}.json"
    assert memo_file.exists() and cache.load_seed_independent(key) == found
    target = tmp_path / "forged.json"
    for bad in ('{"format": 1, "independent": "real_size[float64]"}', '{"format": 2, "independent": []}',
                '{"format": 1, "independent": [1]}', "not json", "link"):
        memo_file.unlink()
        if bad == "link":
            target.write_text('{"format": 1, "independent": ["real_size[float64]"]}')
            memo_file.symlink_to(target)
        else:
            memo_file.write_text(bad)
        assert cache.load_seed_independent(key) is None, bad     # so the cases are drawn again


def test_the_seed_memo_and_a_secret_runs_donors_come_only_from_a_private_cache_folder(tmp_path, monkeypatch):
    """Attack round 36: in a shared cache folder (the Slurm template allows one) another user
    listed every fixed case as seed-independent, and a secret run showed a learner the expected
    values of all 57 seeded fixed cases. The memo is now read and written only in a cache folder
    that is this user's and nobody else may write, and only as a file of this user's that nobody
    else may write; a secret run takes no other set's values from such a folder either."""
    import os

    import numpy as np

    from grader import cache
    from grader import plan as plan_module
    from grader.spec import find_problem, load_problem
    problem = load_problem(find_problem("tied_lm_head"))
    dtypes = problem.frameworks["numpy"]
    key = cache.case_key(problem, 0, 0, dtypes)
    forged = '{"format": 1, "independent": ["real_size[float64]"]}'
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(shared))
    (shared / f"seed-independent-{key}.json").write_text(forged)
    assert cache.load_seed_independent(key) is None
    found = plan_module.seed_independent(problem, dtypes)
    assert "real_size[float64]" not in found
    assert (shared / f"seed-independent-{key}.json").read_text() == forged      # nor written there
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(private))
    (private / f"seed-independent-{key}.json").write_text(forged)
    os.chmod(private / f"seed-independent-{key}.json", 0o666)                    # others may write it
    assert cache.load_seed_independent(key) is None
    os.chmod(private / f"seed-independent-{key}.json", 0o644)
    assert cache.load_seed_independent(key) == {"real_size[float64]"}            # this user's own
    # a set another user could write gives a secret run nothing
    family = cache.family_key(problem, 0, dtypes)
    cases = plan_module.fixed_cases(problem, dtypes, 0)[:3]
    cache.store_cases(f"{family}-n5", [(c, np.zeros(1), None) for c in cases])
    assert set(cache.donated_values(family, cases, private_only=True)) == {c.name for c in cases}
    os.chmod(private / f"cases-{family}-n5.bin", 0o666)
    assert cache.donated_values(family, cases, private_only=True) == {}
    assert set(cache.donated_values(family, cases)) == {c.name for c in cases}  # a published check's rule


def test_a_spec_edited_after_it_was_read_keeps_the_key_of_what_was_read(tmp_path):
    """Attack round 36: a spec edited between its parse and the case cache's key (which read the
    file again) stored the old spec's seed memo and cases under the new spec's key, and a later
    secret run of the new spec showed a learner the expected values of a seeded case. The key
    is now that of the text the problem was parsed from."""
    import shutil

    from grader.spec import load_problem, problem_digest

    from .conftest import ROOT
    shutil.copytree(ROOT / "problems", tmp_path / "problems")
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    spec = tmp_path / "problems" / "tied_lm_head.yaml"
    read = load_problem(spec)
    before = problem_digest(read)
    spec.write_text(spec.read_text().replace("count: 36", "count: 35"))
    assert problem_digest(read) == before
    assert problem_digest(load_problem(spec)) != before


def test_a_seeded_cases_factor_named_from_the_sizes_is_not_withheld():
    """An instructor's trial: under a secret, tied_lm_head's 1/sqrt(d_model) hint of 25 cases was
    withheld ("a hint naming values of the expected output is withheld"), yet the learner computes
    1/sqrt(d_model) from the inputs shown. A factor the hint names from the sizes (1/sqrt(d_model),
    an axis's length) stays; a plain fitted factor (0.1491, which with the output gives the
    expected values back) is still withheld."""
    from grader.reports.common import WITHHELD_HINT, without_expected
    from grader.results import ArrayInfo, CaseResult, Failure

    def seeded(params):
        failure = Failure(kind="tolerance", message="off", hint="the hint",
                          data={"hint_id": "factor", "hint_params": params})
        return CaseResult(name="gen001[float32]", group="generated", status="failed", dtype="float32", rank=2,
                          inputs={"hidden": ArrayInfo(shape=(2, 4), dtype="float32")}, failure=failure, seeded=True)

    named = {"factor": 0.5, "d_model": 4, "vocab_size": 3, "named": "1/sqrt(d_model)"}
    axis = {"factor": 0.25, "n": 4, "how": "divided", "where": ["hidden.shape[-1]"], "root": False}
    plain = {"factor": 0.1491, "d_model": 4, "vocab_size": 3, "named": None}
    assert without_expected(seeded(named)).failure.hint == "the hint"
    assert without_expected(seeded(axis)).failure.hint == "the hint"
    assert without_expected(seeded(plain)).failure.hint == WITHHELD_HINT
    assert without_expected(seeded({**named, "offset": 0.3})).failure.hint == WITHHELD_HINT


def _plan_with_hidden_last(tmp_path, max_examples: int, hidden: int):
    """A plan of tied_lm_head (no sandbox, no shrinking) whose last ``hidden`` cases are hidden,
    as new records: the plan's cases are shared with the other tests of this process."""
    import dataclasses

    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.spec import find_problem, load_problem
    sub = tmp_path / "sub.py"
    sub.write_text("def tied_lm_head(h, e):\n    return h @ e.T\n")
    plan = make_plan(sub, load_problem(find_problem("tied_lm_head")),
                     CheckOptions(max_examples=max_examples, shrink=False, sandbox="none"),
                     lambda request: ("none", None))
    plan.cases = [dataclasses.replace(c, visibility="hidden") if i >= len(plan.cases) - hidden else c
                  for i, c in enumerate(plan.cases)]
    return plan


# -- class 3: hidden inputs read from per-case outcomes ------------------------------------------------
def test_hidden_cases_are_a_passed_count_per_group_and_nothing_else(tmp_path):
    """Class 3: the learner JSON kept one entry per hidden case, in order, with its status and
    failure kind: picking one of eight outcomes per hidden call, two submissions recovered a
    hidden literal input exactly. Now every learner format says of hidden cases only how many
    passed per group; ``cases_digest`` (a hash of the hidden inputs) is an instructor's field."""
    import json

    from grader.check import grade_plan
    from grader.reports import FORMATS, reporter
    from grader.results import Report
    from grader.run.inprocess import InProcessExecutor
    import numpy as np
    plan = _plan_with_hidden_last(tmp_path, max_examples=6, hidden=6)

    def signalling(h, e):   # one outcome per hidden call, chosen by its input: what the attacker did
        out = h @ e.T
        pick = int(abs(float(h.reshape(-1)[0])) * 1000) % 4
        return [out, out.astype(np.float32) if out.dtype != np.float32 else out.astype(np.float64),
                out[..., :1], "not an array"][pick] if h.size > 40 else out

    report = grade_plan(plan, InProcessExecutor(signalling))
    hidden = [c for c in report.cases if c.visibility == "hidden"]
    assert len({c.failure.kind for c in hidden if c.failure}) >= 2, "the attack needs distinct outcomes"
    learner = json.loads(reporter("json").render(report, audience="learner"))
    assert learner["hidden"] == [{"group": hidden[0].group, "passed": sum(c.status == "passed" for c in hidden),
                                  "total": len(hidden)}]
    assert all(c["visibility"] != "hidden" for c in learner["cases"])
    assert "cases_digest" not in learner["environment"]
    assert "cases_digest" in json.loads(reporter("json").render(report, audience="instructor"))["environment"]
    shown_errors = sum(c["status"] in ("error", "timeout") for c in learner["cases"])
    assert learner["counts"]["errors"] == shown_errors    # a hidden call's error is no error count
    kinds = {"type", "shape", "dtype", "exception", "tolerance"}
    for fmt in FORMATS:
        out = reporter(fmt).render(report, audience="learner")
        for c in hidden:
            assert c.name not in out, f"{fmt} names hidden case {c.name}"
        if fmt in ("json", "text"):
            continue
        assert not any(f"{k}: " in out and k not in json.dumps(learner["cases"]) for k in kinds), fmt
    # read back, a learner's JSON counts and renders as the learner's report did
    again = Report.from_json(learner)
    assert sum(c.visibility == "hidden" for c in again.cases) == len(hidden)
    assert reporter("text").render(again, audience="learner").count("hidden cases:") >= 1


# -- class 7: earlier rounds broken again ------------------------------------------------------------
def test_a_wheel_install_s_package_is_not_granted_through_a_link(tmp_path):
    """Class 7: in a wheel install the fallback tier grants the venv entry by entry around the
    grader's package; the venv's ``lib64 -> lib`` link was one entry, and Landlock follows a
    link to what it names, so the child read the 44 bundled specs and references again."""
    venv = tmp_path / "venv"
    pkg = venv / "lib" / "python3.11" / "site-packages" / "grader"
    pkg.mkdir(parents=True)
    (pkg.parent / "numpy").mkdir()
    (venv / "bin").mkdir()
    (venv / "lib64").symlink_to("lib")
    (venv / "lib" / "python3.11" / "os.py").write_text("")
    granted = sandbox._cover_without(str(venv), str(pkg))
    assert str(venv / "lib64") not in granted
    assert str(venv / "bin") in granted and str(pkg.parent / "numpy") in granted
    assert str(venv / "lib" / "python3.11" / "os.py") in granted
    for path in granted:
        real = os.path.realpath(path)
        assert not (str(pkg) + "/").startswith(real.rstrip("/") + "/"), path


@pytest.mark.parametrize("tier", TIERS)
def test_abort_is_reported_as_an_abort_in_every_tier(tmp_path, tier):
    """Issue 37: ``os.abort()`` was reported as a segmentation fault in the namespace tiers (the
    child is its PID namespace's init, to which the kernel does not deliver SIGABRT, so glibc's
    abort() ends in a fault)."""
    sub = write_submission(tmp_path, "import os\n\ndef tied_lm_head(hidden, embedding_matrix):\n    os.abort()\n")
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "crash" and "SIGABRT (aborted)" in out.message, f"{tier}: {out.message}"


def test_a_seeded_cases_hint_does_not_name_a_value_of_the_expected_output(tmp_path):
    """Class 2, again (an attacker's second try): "looks like the whole result was multiplied by
    a constant factor of 0.1491" on a function that returns 1.0 gives the expected value back. A
    seeded case's hint whose parameters hold a value is withheld from learners; a hint of a
    fixed literal case keeps its numbers."""
    import json

    from grader.check import grade_plan
    from grader.reports import reporter
    from grader.run.inprocess import InProcessExecutor
    plan = _secret_plan(tmp_path, "def tied_lm_head(h, e):\n    return h @ e.T\n")
    # 2.5: no expression of the inputs' sizes (a factor of 3 equals single_vector's vocab_size,
    # which the hint then names from the sizes and may show)
    report = grade_plan(plan, InProcessExecutor(lambda h, e: (h @ e.T) * (h.dtype.type(2.5))))
    teacher = json.loads(reporter("json").render(report, audience="instructor"))
    factored = [c for c in teacher["cases"] if c["failure"] and "factor" in (c["failure"]["hint"] or "")]
    assert factored, "the factor idea should fire"
    learner = json.loads(reporter("json").render(report, audience="learner"))
    text = json.dumps(learner)
    for c in learner["cases"]:
        if c["name"] in plan.seeded and c["failure"]:
            assert "factor of 2.5" not in (c["failure"]["hint"] or "") and "hint_params" not in c["failure"]["data"]
    literal = [c for c in learner["cases"] if c["name"] not in plan.seeded and c["failure"]]
    assert literal and all("factor of" in (c["failure"]["hint"] or "") for c in literal)   # kept
    assert "withheld" in text


def test_no_learner_format_times_the_hidden_calls(tmp_path):
    """Class 3, again: Gradescope's execution_time and JUnit's suite time covered the hidden
    calls, which run last, so a passing submission that slept on a hidden input told it (1 vs 7
    s). Every learner format takes the shown cases' time."""
    import json
    import xml.etree.ElementTree as ET

    from grader.check import grade_plan
    from grader.reports import reporter
    from grader.run.inprocess import InProcessExecutor
    import dataclasses
    plan = _plan_with_hidden_last(tmp_path, max_examples=2, hidden=3)
    report = grade_plan(plan, InProcessExecutor(lambda h, e: h @ e.T))
    hidden = {c.name for c in report.cases if c.visibility == "hidden"}
    report = dataclasses.replace(report, seconds=report.seconds + 42.0, cases=[
        dataclasses.replace(c, seconds=c.seconds + 14.0) if c.name in hidden else c for c in report.cases])
    assert json.loads(reporter("gradescope").render(report, audience="learner"))["execution_time"] < 30
    suite = ET.fromstring(reporter("junit").render(report, audience="learner").encode())
    assert float(suite.get("time")) < 30 and all(float(tc.get("time")) < 30 for tc in suite.iter("testcase"))
    assert json.loads(reporter("gradescope").render(report, audience="instructor"))["execution_time"] >= 42


def test_a_literal_case_of_a_secret_run_keeps_a_replay_for_the_learner(tmp_path):
    """A newcomer's finding: under a secret seed every case of grade's feedback said "replay:
    none (this case comes from the instructor's secret seed)", the spec's worked example too.
    A case whose inputs the seed does not choose is the same case under any seed: its replay
    command loses --seed and stays; a seeded case keeps the note."""
    from grader.check import grade_plan
    from grader.reports.common import SECRET_REPLAY_NOTE
    from grader.reports.view import build
    from grader.run.inprocess import InProcessExecutor
    import numpy as np
    plan = _secret_plan(tmp_path, "def tied_lm_head(h, e):\n    return h @ e.T\n", audience="instructor")  # as grade
    report = grade_plan(plan, InProcessExecutor(lambda h, e: np.zeros(h.shape[:-1] + e.shape[:1], h.dtype)))
    learner = {c.name: c for c in build(report, "learner").report.cases}
    literal = [n for n, c in learner.items() if not c.seeded and c.status == "failed"]
    # (a case failed only as unearned passed its call: it has nothing to replay)
    seeded = [n for n, c in learner.items() if c.seeded and c.status == "failed" and not c.shrunk
              and c.failure.kind != "unearned"]
    assert literal and seeded
    for name in literal:
        assert learner[name].replay and "--seed" not in learner[name].replay and "--case" in learner[name].replay
        assert learner[name].replay_facts.seed is None    # the facts a learner's JSON carries too
    # a seeded case: as its literal when small (as a learner's own check gives it: a format
    # consumer's read found grade's feedback said "cannot be replayed" there), else the note
    from grader.compare import SMALL
    small = [n for n in seeded if all(np.prod(i.shape) <= SMALL for i in learner[n].inputs.values())]
    large = [n for n in seeded if n not in small]
    assert small and large
    assert all("--replay" in learner[n].replay and "--seed" not in learner[n].replay for n in small)
    assert all(learner[n].replay is None and learner[n].replay_facts is None
               and learner[n].replay_note == SECRET_REPLAY_NOTE for n in large)
    # the instructor's view keeps the seed
    instructor = {c.name: c for c in build(report, "instructor").report.cases}
    assert all("--seed" in instructor[n].replay for n in literal + seeded)


def test_nothing_a_learner_sees_is_made_after_a_hidden_call(tmp_path):
    """Class 3, a second attacker's pass: shrinking ran after the hidden cases, so a shrunk case's
    exception carried a clock reading that timed the hidden calls (0.31 s vs 7.36 s by a hidden
    input's sign), and whether the search had time left told it too. The shrink searches now run
    before any hidden call; a shrunk case of a secret run is seeded (no expected values)."""
    import dataclasses

    from grader.check import grade_plan
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.run.inprocess import InProcessExecutor
    from grader.spec import find_problem, load_problem
    sub = tmp_path / "sub.py"
    sub.write_text("def tied_lm_head(h, e):\n    return h @ e.T\n")
    plan = make_plan(sub, load_problem(find_problem("tied_lm_head")),
                     CheckOptions(max_examples=4, shrink=True, sandbox="none"), lambda request: ("none", None))
    plan.cases = [dataclasses.replace(c, visibility="hidden") if c.group == "values" else c for c in plan.cases]
    assert any(c.visibility == "hidden" for c in plan.cases)
    # wrong only beyond d_model 16 (a mistake a small visible case shows is not searched)
    executor = InProcessExecutor(lambda h, e: (h @ e.T) + h.dtype.type(0.5 * (h.shape[-1] > 16)))
    report = grade_plan(plan, executor)
    assert any(c.shrunk for c in report.cases), "the shrink search should find something"
    seen = [c.visibility for c in executor.calls]
    first_hidden = seen.index("hidden")
    assert all(v == "hidden" for v in seen[first_hidden:]), "a call after the hidden phase began"
    secret = _secret_plan(tmp_path, "def tied_lm_head(h, e):\n    return h @ e.T\n")
    secret.options = dataclasses.replace(secret.options, shrink=True)
    rep = grade_plan(secret, InProcessExecutor(lambda h, e: (h @ e.T) + h.dtype.type(0.5 * (h.shape[-1] > 16))))
    small = [c for c in rep.cases if c.shrunk]
    assert small and all(c.seeded for c in small if c.name.split(":", 1)[1] in secret.seeded)


def test_a_learners_junit_timestamp_does_not_time_the_hidden_calls():
    """A fourth attacker's pass: the JUnit suite's timestamp was the time of rendering, after the
    hidden calls; with a clock read in a visible case's message it timed them (11.85 s vs -0.42 s
    by a guess at a hidden input). A learner's report with hidden cases gives the day only."""
    import xml.etree.ElementTree as ET

    from grader.reports import reporter
    from grader.results import ArrayInfo, CaseResult, GroupScore, Report
    cases = [CaseResult(name=n, group=g, status="passed", dtype="float32", rank=1,
                        inputs={"x": ArrayInfo(shape=(2,), dtype="float32")}, visibility=v)
             for n, g, v in (("a", "examples", "visible"), ("h", "secret", "hidden"))]
    rep = Report(problem="gelu", title="gelu", submission="g.py", passed=True, score=2.0, max_score=2.0,
                 failure=None, cases=cases, groups=[GroupScore(group="examples", points=1, earned=1, passed=1, total=1),
                                                    GroupScore(group="secret", points=1, earned=1, passed=1, total=1,
                                                               visibility="hidden")],
                 summary=[], environment={}, output={}, seconds=1.0)
    learner = ET.fromstring(reporter("junit").render(rep, audience="learner").encode())
    assert learner.get("timestamp").endswith("T00:00:00")
    teacher = ET.fromstring(reporter("junit").render(rep, audience="instructor").encode())
    assert len(teacher.get("timestamp")) == 19
