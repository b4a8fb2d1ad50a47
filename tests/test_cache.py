"""The on-disk case cache: a warm run grades exactly like a cold one, and nothing stale is served."""
from __future__ import annotations

import shutil

import numpy as np

from grader import cache
from grader.cases import fixed_cases
from grader.spec import load_problem

from .conftest import ROOT, SUBMISSIONS, run_grader


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
    (tmp_path / "cases-k.npz").write_bytes(b"garbage")
    assert cache.load_cases("k") is None
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    assert cache.cache_root() is None and cache.load_cases("k") is None


def test_warm_run_reports_the_same_as_cold(tmp_path):
    env = {"GRADER_CACHE_DIR": str(tmp_path / "c")}
    args = ("check", str(SUBMISSIONS / "wrong_tolerance_softmax.py"), "--format", "json",
            "--max-examples", "6", "--no-shrink")
    cold = run_grader(*args, env=env)
    assert list((tmp_path / "c").glob("cases-*.npz")), "the cold run stores the case set"
    warm = run_grader(*args, env=env)
    assert cold.code == warm.code == 1
    strip = lambda r: [(c["name"], c["status"], c["failure"]["message"] if c["failure"] else None)  # noqa: E731
                       for c in r["cases"]]
    assert strip(cold.json()) == strip(warm.json())
