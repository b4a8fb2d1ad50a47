"""The on-disk case cache: a warm run grades exactly like a cold one, and nothing stale is served."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from grader import cache
from grader.cases import fixed_cases
from grader.spec import load_problem

from .conftest import ROOT, SUBMISSIONS, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process


def test_cache_key_changes_with_spec_reference_seed_and_count(tmp_path):
    shutil.copytree(ROOT / "problems", tmp_path / "problems")
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    spec = tmp_path / "problems" / "tied_lm_head.yaml"
    p = load_problem(spec)
    dtypes = ("float32",)
    key = cache.case_key(p, 0, 8, dtypes)
    assert key == cache.case_key(load_problem(spec), 0, 8, dtypes)
    assert key != cache.case_key(p, 1, 8, dtypes)
    assert key != cache.case_key(p, 0, 9, dtypes)
    assert key != cache.case_key(p, 0, 8, ("float16",))
    ref = tmp_path / "reference" / "tied_lm_head.py"
    ref.write_text(ref.read_text() + "\n# changed\n")
    assert key != cache.case_key(load_problem(spec), 0, 8, dtypes)
    spec.write_text(spec.read_text().replace("count: 36", "count: 35"))
    assert key != cache.case_key(load_problem(spec), 0, 8, dtypes)


def test_store_and_load_round_trip_every_dtype(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    cases = fixed_cases(p, ("bfloat16", "float16", "float32", "float64"), 3)
    items = [(c, np.arange(3.0) + i, None if i % 2 else np.ones(3)) for i, c in enumerate(cases)]
    cache.store_cases("k", items)
    loaded = cache.load_cases("k")
    assert loaded is not None and len(loaded) == len(items)
    for (c0, r0, s0), (c1, r1, s1) in zip(items, loaded):
        assert (c1.name, c1.group, c1.dtype, c1.compare, c1.origin) == (c0.name, c0.group, c0.dtype, c0.compare, c0.origin)
        assert c1.sizes == c0.sizes
        for name in c0.inputs:
            assert c1.inputs[name].dtype == c0.inputs[name].dtype
            assert np.array_equal(c1.inputs[name].view(np.uint8), c0.inputs[name].view(np.uint8))
        assert np.array_equal(r1, r0)
        assert (s1 is None) == (s0 is None)
    (tmp_path / "cases-k.bin").write_bytes(b"garbage")
    assert cache.load_cases("k") is None
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    assert cache.cache_root() is None and cache.load_cases("k") is None


def test_a_case_file_keeps_0d_empty_bool_integer_and_literal_arrays_and_its_digest(tmp_path, monkeypatch):
    """Format 4 (one JSON header, one block of bytes): every array comes back with its dtype and
    shape (a 0-d reference stays 0-d, an empty scale stays (2, 0)), the header's digest is the
    one the cases hash to, and a loaded array is the reader's own (a write to it reaches neither
    the file nor the next read)."""
    from grader.cases import cases_digest, generated_cases
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "embedding_lookup.yaml")
    cases = fixed_cases(p, p.frameworks["jax"], 0) + generated_cases(p, p.frameworks["jax"], 0, 4)
    assert any(c.expected_literal is not None for c in cases)
    items = [(c, np.array(7, dtype=np.int64) if i % 2 else np.arange(3.0)[::-1], None if i % 3 else np.ones((2, 0)))
             for i, c in enumerate(cases)]
    cache.store_cases("k", items)
    loaded = cache.load_cases("k")
    assert {"bool", "int32", "int64", "bfloat16", "float16", "float64"} <= \
        {a.dtype.name for c, _, _ in loaded for a in c.inputs.values()}
    for (c0, r0, s0), (c1, r1, s1) in zip(items, loaded, strict=True):
        assert (c1.raises, c1.keywords, c1.scalars) == (c0.raises, c0.keywords, c0.scalars)
        for name, a in c0.inputs.items():
            assert (c1.inputs[name].dtype, c1.inputs[name].shape) == (a.dtype, a.shape)
            assert c1.inputs[name].tobytes() == a.tobytes()
        assert (r1.dtype, r1.shape) == (r0.dtype, r0.shape) and np.array_equal(r1, r0)
        assert (s1 is None) == (s0 is None) and (s1 is None or s1.shape == (2, 0))
        if c0.expected_literal is not None:
            assert c1.expected_literal.shape == np.shape(c0.expected_literal)
            assert np.array_equal(c1.expected_literal, c0.expected_literal)
    assert cache.case_set_digest("k", []) == cases_digest([c for c, _, _ in items])
    first = loaded[0][0].inputs["embedding_matrix"]
    before = first.copy()
    first[...] = 0
    assert np.array_equal(cache.load_cases("k")[0][0].inputs["embedding_matrix"], before)


def test_a_case_file_cut_short_or_pointing_outside_itself_is_a_miss(tmp_path, monkeypatch):
    import json
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    cache.store_cases("k", [(c, np.arange(3.0), None) for c in fixed_cases(p, ("float32",), 0)])
    whole = (tmp_path / "cases-k.bin").read_bytes()
    assert cache.load_cases("k") is not None
    (tmp_path / "cases-k.bin").write_bytes(whole[: len(whole) - 8])
    assert cache.load_cases("k") is None
    n = len(cache.MAGIC)
    length = int.from_bytes(whole[n:n + 8], "little")
    header = json.loads(whole[n + 8:n + 8 + length])
    header["cases"][0]["arrays"]["ref"][2] = len(whole)   # an offset past the data
    text = json.dumps(header).encode()
    (tmp_path / "cases-k.bin").write_bytes(cache.MAGIC + len(text).to_bytes(8, "little") + text)
    assert cache.load_cases("k") is None
    (tmp_path / "cases-k.bin").write_bytes(b"PK\x03\x04" + whole[4:])   # another format
    assert cache.load_cases("k") is None


def _rewritten(whole: bytes, change) -> bytes:
    """A case file's bytes with its header changed by ``change(header)``, the data block kept."""
    import json
    n = len(cache.MAGIC)
    length = int.from_bytes(whole[n:n + 8], "little")
    header = json.loads(whole[n + 8:n + 8 + length])
    change(header)
    text = json.dumps(header).encode()
    head = cache.MAGIC + len(text).to_bytes(8, "little") + text
    head += b"\0" * (-len(head) % 64)
    return head + whole[-(-(n + 8 + length) // 64) * 64:]


def _overlap(h):
    h["cases"][1]["arrays"]["ref"][2] = h["cases"][0]["arrays"]["ref"][2]


def _name_a_list(h):
    h["cases"][0]["name"] = ["x"]


def _ref_dtype(name):
    def change(h):
        h["cases"][0]["arrays"]["ref"][0] = name
    return change


def _field(key, value):
    def change(h):
        h["cases"][0][key] = value
    return change


def _huge_shape(h):
    h["cases"][0]["arrays"]["ref"][1] = [2 ** 70]


HEADERS = {f"ref {d}": _ref_dtype(d) for d in ("V8", "object", "datetime64[ns]", ">f8", "U5", "(2,)f8", "f8,i4")}
HEADERS.update({"case dtype object": _field("dtype", "object"), "sizes a dict": _field("sizes", {"n": {"a": 1}}),
                "visibility odd": _field("visibility", "secret"), "huge shape": _huge_shape})


@pytest.mark.parametrize("hostile", ["fifo", "link", "deep", "huge header", "overlap", "name a list", "padded",
                                     *HEADERS, "unchanged"])
def test_a_hostile_case_file_is_a_miss_not_a_crash_or_a_hang(tmp_path, monkeypatch, hostile):
    """Round 33: whoever can write the cache folder made every check end with exit 2 (a header
    nested 200,000 deep, a field of another type), hang (a FIFO in the file's place), allocate
    what a header's length claimed, or grade inputs that shared bytes; each is now a miss (the
    set is made again), and no link is followed."""
    import os
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    cache.store_cases("k", [(c, np.arange(3.0), None) for c in fixed_cases(p, ("float32",), 0)])
    path = tmp_path / "cases-k.bin"
    whole = path.read_bytes()
    path.unlink()
    n = len(cache.MAGIC)
    if hostile == "fifo":
        os.mkfifo(path)
    elif hostile == "link":
        (tmp_path / "elsewhere.bin").write_bytes(whole)
        path.symlink_to(tmp_path / "elsewhere.bin")
    elif hostile == "deep":
        text = b"[" * 200_000 + b"]" * 200_000
        path.write_bytes(cache.MAGIC + len(text).to_bytes(8, "little") + text)
    elif hostile == "huge header":
        with open(path, "wb") as fh:
            fh.write(cache.MAGIC + (1 << 40).to_bytes(8, "little"))
            fh.truncate((1 << 40) + 64)          # sparse: as large as the header claims
    elif hostile == "overlap":
        path.write_bytes(_rewritten(whole, _overlap))
    elif hostile == "name a list":
        path.write_bytes(_rewritten(whole, _name_a_list))
    elif hostile == "padded":
        path.write_bytes(whole)
        with open(path, "r+b") as fh:
            fh.truncate(len(whole) + (1 << 30))    # sparse: a gigabyte past the last array
    elif hostile in HEADERS:
        path.write_bytes(_rewritten(whole, HEADERS[hostile]))
    else:
        path.write_bytes(_rewritten(whole, lambda h: None))
    loaded = cache.load_cases("k")
    assert (loaded is not None) == (hostile == "unchanged")
    assert cache.case_set_digest("k", []) is not None


def test_warm_run_reports_the_same_as_cold(tmp_path):
    env = {"GRADER_CACHE_DIR": str(tmp_path / "c")}
    args = ("check", str(SUBMISSIONS / "wrong_tolerance_softmax.py"), "--format", "json",
            "--max-examples", "6", "--no-shrink")
    cold = run_grader(*args, env=env)
    assert list((tmp_path / "c").glob("cases-*.bin")), "the cold run stores the case set"
    warm = run_grader(*args, env=env)
    assert cold.code == warm.code == 1
    strip = lambda r: [(c["name"], c["status"], c["failure"]["message"] if c["failure"] else None)  # noqa: E731
                       for c in r["cases"]]
    assert strip(cold.json()) == strip(warm.json())


WARM_IMPORTS = """
import json, sys
from grader import cli
code = cli.main(sys.argv[1:])
heavy = sorted(m for m in ("hypothesis", "jsonschema", "jax", "ml_dtypes") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def test_a_warm_passing_check_imports_no_hypothesis_jsonschema_or_jax(tmp_path):
    """Issue 20: what the run does not need is not imported. The cold run computes the reference
    values (JAX) and validates the spec (jsonschema); the warm one reads both from the cache, and
    nothing failed, so nothing is shrunk (hypothesis). Edited, the spec is validated again."""
    import subprocess
    import sys

    env = {**__import__("os").environ, "GRADER_CACHE_DIR": str(tmp_path / "c")}
    problems = tmp_path / "problems"                 # a copy of the bundled problem, to edit below
    problems.mkdir()
    shutil.copy(ROOT / "problems" / "tied_lm_head.yaml", problems)
    shutil.copytree(ROOT / "reference", problems / "reference")
    args = ["check", str(SUBMISSIONS / "correct_numpy.py"), "--problems-dir", str(problems), "--problem",
            "tied_lm_head", "--format", "json", "--output", str(tmp_path / "r.json")]

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-I", "-c", WARM_IMPORTS, *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
        return __import__("json").loads(proc.stderr.strip().splitlines()[-1])

    cold = run()
    assert cold["code"] == 0 and {"jax", "jsonschema"} <= set(cold["heavy"]), cold
    assert list((tmp_path / "c" / "specs-valid").iterdir()), "the cold run records the valid spec"
    assert run() == {"code": 0, "heavy": []}

    spec = problems / "tied_lm_head.yaml"
    spec.write_text(spec.read_text().replace("title:", "titel:", 1))   # no longer fits the schema
    bad = subprocess.run([sys.executable, "-I", "-m", "grader", *args], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "titel" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_a_cached_sets_digest_is_its_files_not_hashed_again_per_check(tmp_path, monkeypatch):
    """A check of a cached case set takes its digest from the file's header (written with the
    arrays it hashes), not by hashing every input again; a set written again has its own, and
    with the memos on (a fork server) the header is read once per file."""
    from grader import memo
    from grader.cases import cases_digest
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    cases = fixed_cases(p, ("float32",), 3)
    cache.store_cases("d", [(c, np.zeros(1), None) for c in cases])
    hashed, read = [], []
    monkeypatch.setattr("grader.cases.cases_digest", lambda cs: hashed.append(1) or cases_digest(cs))
    first = cache.case_set_digest("d", cases)
    assert first == cases_digest(cases) and not hashed
    other = fixed_cases(p, ("float64",), 3)
    want = cases_digest(other)
    cache.store_cases("d", [(c, np.zeros(1), None) for c in other])      # written again
    hashed.clear()
    assert cache.case_set_digest("d", other) == want != first and not hashed
    real_read = cache._read
    monkeypatch.setattr(cache, "_read", lambda path, arrays: read.append(arrays) or real_read(path, arrays))
    monkeypatch.setattr(memo, "ENABLED", True)
    monkeypatch.setattr(memo, "_store", {})
    assert cache.case_set_digest("d", other) == cache.case_set_digest("d", other) and read == [False]
    assert cache.case_set_digest("none", cases) == cases_digest(cases)   # no file: hashed


def test_a_set_of_another_count_a_named_case_and_a_replay_take_their_familys_values(tmp_path, monkeypatch):
    """A check with --max-examples 8 after a default run computed every fixed case and the first
    eight generated ones again (the same inputs): now it takes their values from the other set of
    the same seed (grader.cache.donated_values) and stores its own set; a --case of a count never
    run and a replay of a published case compute nothing; another seed's set gives nothing (its
    inputs differ), and what is taken is what a cold check computes."""
    from grader import plan as plan_module
    from grader.check import grade_plan
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.run.inprocess import InProcessExecutor
    from grader.spec import find_problem
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    problem = load_problem(find_problem("softmax"))
    sub = tmp_path / "sub.py"
    sub.write_text("import numpy as np\n\ndef softmax(x, axis=-1):\n    return np.exp(x)\n")
    computed: list[str] = []
    real = plan_module.expected_for
    monkeypatch.setattr(plan_module, "expected_for", lambda problem, case: computed.append(case.name) or real(problem, case))

    def check(**options):
        opts = CheckOptions(shrink=False, sandbox="none", framework="numpy", **options)
        plan = make_plan(sub, problem, opts, lambda request: ("none", None))
        report = grade_plan(plan, InProcessExecutor(lambda x, axis=-1: np.exp(x)))
        return plan, report

    check(max_examples=12)
    assert computed
    computed.clear()
    plan, _ = check(max_examples=8)
    assert computed == [] and plan.expected.complete()
    assert cache.load_cases(cache.case_key(problem, 0, 8, plan.dtypes)) is not None   # kept for next time
    generated = [c for c in plan.cases if c.origin == "generated"]
    _, named = check(max_examples=5, only_cases=(generated[1].name,))
    from grader.cases import case_literal
    _, replayed = check(replay=case_literal(generated[2]))
    assert computed == [] and named.cases[0].status == replayed.cases[0].status == "failed"
    check(max_examples=2, seed=7)
    assert any(n.startswith("gen") for n in computed)          # another seed: other inputs
    # the same expected values as computed afresh
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "fresh"))
    fresh_plan, _ = check(max_examples=8)
    for i, case in enumerate(plan.cases):
        assert np.array_equal(plan.expected[i].ref, fresh_plan.expected[i].ref, equal_nan=True), case.name


def test_a_sources_jax_store_and_all_stores_stay_bounded(tmp_path, monkeypatch):
    """Round nine of issue 32: a correct JAX file that also wrote 4 x 16 MiB of new entry names
    into its private cache each check grew its store by 48 MiB a check (49 -> 97 -> 145 MB),
    kept on the host. One source's store now stops at JAX_STORE_BYTES, and all stores together
    at JAX_STORES_BYTES, the least recently written going first (never the one being written)."""
    import os
    monkeypatch.setattr(cache, "JAX_STORE_BYTES", 3000)
    monkeypatch.setattr(cache, "JAX_STORES_BYTES", 7000)
    root = tmp_path / "jax-submissions"

    def entries(n: int, tag: str) -> dict:
        return {f"jit_f{tag}{i}-cache": np.full(1000, i, np.uint8) for i in range(n)}

    stores = [root / f"source{k}" for k in range(3)]
    for k, store in enumerate(stores):
        store.mkdir(parents=True)
        for run in range(3):   # three checks of one source, each handing back two new names
            cache.store_jax_entries(str(store), entries(2, f"r{run}"))
        assert sum(f.stat().st_size for f in store.iterdir()) == 3000     # stopped at its cap
        os.utime(store, (1_000_000 + k, 1_000_000 + k))                  # written in this order
    # source2's first 2000 bytes made 8000 > 7000: the least recently written store went
    assert [s.exists() for s in stores] == [False, True, True]
    assert sum(f.stat().st_size for s in stores[1:] for f in s.iterdir()) <= 7000
