"""Case generation (grader.cases): one seed gives one case set everywhere, and the cases find real bugs.

In process, except one test that draws the cases in two fresh interpreters with different
import orders and compares their digests.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from grader import spec
from grader.cases import LEAD, Stream, cases_digest, fixed_cases, generated_cases
from grader.compare import allowed_error
from grader.dtypes import dtype_of, smallest_normal

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = spec.load_problem(ROOT / "problems" / "tied_lm_head.yaml")
ALL = ("bfloat16", "float16", "float32", "float64")


def all_cases(seed: int, dtypes=ALL, count: int | None = None):
    count = PROBLEM.generated["count"] if count is None else count
    return fixed_cases(PROBLEM, dtypes, seed) + generated_cases(PROBLEM, dtypes, seed, count)


def test_stream_is_pinned_to_pcg64_raw_output():
    """The numbers NumPy's PCG64 + SeedSequence give for one key, pinned: if a NumPy release ever
    changed them, every case set would change, and this says so first."""
    s = Stream(0, "pin")
    assert s.raw(2).tolist() == [16742492672135641969, 5256775191033051773]
    assert Stream(0, "pin").normal((3,)).tolist() == [0.6244659423828125, -0.6877288818359375, -1.628936767578125]
    assert Stream(7, "x").integers(2, 5, (6,)).tolist() == [3, 3, 2, 5, 2, 2]


def test_stream_normal_has_unit_variance_and_is_bounded():
    z = Stream(1, "moments").normal((200_000,))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert np.abs(z).max() < 6


def test_same_seed_same_cases_and_digest():
    a, b = all_cases(0), all_cases(0)
    assert cases_digest(a) == cases_digest(b)
    assert cases_digest(all_cases(1)) != cases_digest(a)


def test_adding_a_dtype_does_not_change_the_other_dtypes_cases():
    both = {c.name: c for c in all_cases(3, ("float32", "float64"))}
    alone = all_cases(3, ("float32",))
    for case in alone:
        if case.origin == "fixed":
            twin = both[case.name]
            assert all(np.array_equal(case.inputs[k], twin.inputs[k]) for k in case.inputs)


def test_digest_is_the_same_in_fresh_processes_whatever_was_imported_first():
    """hypothesis, jax and NumPy's global RNG used before the cases are drawn change nothing."""
    draw = ("from pathlib import Path; from grader import spec; "
            "from grader.cases import cases_digest, fixed_cases, generated_cases; "
            f"p = spec.load_problem(Path({str(ROOT / 'problems' / 'tied_lm_head.yaml')!r})); "
            "d = ('bfloat16', 'float16', 'float32', 'float64'); "
            "print(cases_digest(fixed_cases(p, d, 0) + generated_cases(p, d, 0, 36)))")
    first = ("import hypothesis, hypothesis.strategies as st, numpy as np, random; "
             "np.random.seed(123); random.seed(5); np.random.standard_normal(1000); "
             "st.floats().example() if hasattr(st.floats(), 'example') else None; ")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    outs = []
    for prefix in ("", first, "import jax, jax.numpy as jnp; jnp.ones(3); "):
        proc = subprocess.run([sys.executable, "-c", prefix + draw], capture_output=True, text=True,
                              env=env, cwd="/", timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(proc.stdout.strip().splitlines()[-1])
    assert outs[0] == outs[1] == outs[2] == cases_digest(all_cases(0))


@pytest.mark.parametrize("seed", range(12))
def test_no_graded_input_is_subnormal(seed):
    for case in all_cases(seed):
        tiny = smallest_normal(case.dtype)
        for name, arr in case.inputs.items():
            wide = np.abs(arr.astype(np.float64))
            assert not ((wide > 0) & (wide < tiny)).any(), (case.name, name)


def test_generated_shapes_have_leading_axes_distinct_sizes_and_varied_values():
    gen = [c for c in all_cases(0) if c.origin == "generated"]
    assert len(gen) == PROBLEM.generated["count"]
    for case in gen:
        d, v, lead = case.sizes["d_model"], case.sizes["vocab_size"], case.sizes[LEAD]
        assert len(lead) >= 1, case.name
        assert d != v and d not in lead and v not in lead, (case.name, case.sizes)
        share = 0.25 if case.dtype in ("float16", "bfloat16") else 0.9  # 8 or 11 significant bits
        for name, arr in case.inputs.items():
            distinct = len(np.unique(arr.astype(np.float64)))
            assert distinct >= share * arr.size, (case.name, name, distinct, arr.size)
    for dt in ALL:  # the spec's 3 distinct shapes, each used in every dtype
        shapes = {(tuple(c.inputs["hidden"].shape), tuple(c.inputs["embedding_matrix"].shape))
                  for c in gen if c.dtype == dt}
        assert len(shapes) == PROBLEM.generated["shapes"] == 3


def test_every_dtype_has_a_real_size_case():
    for dt in ALL:
        real = [c for c in all_cases(0, (dt,)) if c.sizes.get("vocab_size", 0) > 2048]
        assert real, dt
        case = real[0]
        h, e = case.inputs["hidden"], case.inputs["embedding_matrix"]
        rows = int(np.prod(h.shape[:-1]))
        # 16 rows: the default run's largest output (a path taken only for big outputs runs);
        # 4 in float16, where NumPy has no BLAS (the other dtypes hold the big output)
        assert e.shape[0] % 128 != 0 and e.shape[1] >= 1024 and h.ndim >= 3
        assert rows >= (4 if dt == "float16" else 16), (dt, h.shape)


def _expected(case):
    h = case.inputs["hidden"].astype(np.float64)
    e = case.inputs["embedding_matrix"].astype(np.float64)
    return h @ e.T, np.abs(h) @ np.abs(e).T, h.shape[-1]


def _ratio(got, case):
    ref, s, n = _expected(case)
    return float(np.max(np.abs(got.astype(np.float64) - ref) / allowed_error(case.dtype, ref, s, n)))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_a_running_sum_in_the_half_dtype_fails_by_a_wide_margin(dt):
    case = next(c for c in all_cases(0, (dt,)) if c.name.startswith("long_positive_sums"))
    h, e = case.inputs["hidden"], case.inputs["embedding_matrix"]
    acc = np.zeros(h.shape[:-1] + (e.shape[0],), dtype=dtype_of(dt))
    for k in range(h.shape[-1]):  # the learner's loop with a half-precision accumulator
        acc = (acc + h[..., k, None] * e[:, k]).astype(dtype_of(dt))
    assert _ratio(acc, case) > 10
    right = (h.astype(np.float32) @ e.astype(np.float32).T).astype(dtype_of(dt))
    assert _ratio(right, case) < 0.5


def test_vocabulary_in_blocks_that_drop_the_tail_fails():
    case = next(c for c in all_cases(0, ("float32",)) if c.name.startswith("real_size"))
    h, e = case.inputs["hidden"], case.inputs["embedding_matrix"]
    full = (e.shape[0] // 1024) * 1024
    got = np.concatenate([h @ e[i:i + 1024].T for i in range(0, full, 1024)]
                         + [np.zeros(h.shape[:-1] + (e.shape[0] - full,), np.float32)], axis=-1)
    assert _ratio(got, case) > 10


def test_flushed_products_of_a_correct_xla_style_matmul_pass():
    """Inputs and products flushed as XLA on the CPU does: within the tolerance in every case."""
    for case in all_cases(0, ("float32",)):
        if case.compare == "exact" or not all(a.size for a in case.inputs.values()):
            continue
        h = case.inputs["hidden"].astype(np.float64)
        e = case.inputs["embedding_matrix"].astype(np.float64)
        prod = h[..., None, :] * e if h.size * e.shape[0] < 2_000_000 else None
        if prod is None:
            continue
        tiny = smallest_normal("float32")
        prod = np.where(np.abs(prod) < tiny, 0.0, prod)
        got = prod.sum(-1).astype(np.float32)
        got = np.where(np.abs(got) < tiny, 0, got)
        assert _ratio(got, case) < 1, case.name


def test_bfloat16_cases_are_rounded_through_float32():
    """float64 -> float32 -> bfloat16, each step correctly rounded: the same on every library version."""
    for case in all_cases(0, ("bfloat16",)):
        for arr in case.inputs.values():
            assert arr.dtype == np.dtype(ml_dtypes.bfloat16)


def test_replay_literal_round_trips_and_keeps_subnormals():
    from grader.cases import case_from_literal, case_literal
    lit = {"dtype": "float32", "hidden": [1e-40, 1.0], "embedding_matrix": [[1.0, 2.0]]}
    case = case_from_literal(PROBLEM, lit)
    assert case.inputs["hidden"][0] != 0  # a replay is graded as given
    again = case_from_literal(PROBLEM, json.loads(json.dumps(case_literal(case))))
    assert np.array_equal(again.inputs["hidden"], case.inputs["hidden"])


def test_an_exact_case_replays_as_exact():
    from grader.cases import case_from_literal, case_literal
    case = next(c for c in all_cases(0, ("float32",)) if c.compare == "exact")
    again = case_from_literal(PROBLEM, json.loads(json.dumps(case_literal(case))))
    assert again.compare == "exact"
    assert all(np.array_equal(again.inputs[k], case.inputs[k]) for k in case.inputs)
    with pytest.raises(ValueError):
        case_from_literal(PROBLEM, {**case_literal(case), "compare": "loose"})


def test_the_score_sums_the_groups_exact_shares():
    """A third of every group of tied_lm_head's points (1, 2, 1, 1, 1, 4) is 3.3333, not the sum
    of the groups' rounded scores (3.3332, which a newcomer saw)."""
    from grader.grading import total as _total
    from grader.results import GroupScore

    groups = [GroupScore(group=name, points=points, earned=round(points / 3, 4), passed=1, total=3)
              for name, points in (("examples", 1), ("shapes", 2), ("exact", 1), ("values", 1), ("real_size", 1),
                                   ("generated", 4))]
    assert round(sum(g.earned for g in groups), 4) == 3.3332 and _total(groups) == 3.3333
    assert _total([GroupScore(group="shapes", points=2, earned=0.0, passed=3, total=3)]) == 0.0  # a whole-run failure earns nothing
    assert _total([GroupScore(group="shapes", points=2, earned=2.0, passed=3, total=3), GroupScore(group="none", points=1, earned=0.0, passed=0, total=0)]) == 2.0


def test_an_unknown_case_name_is_answered_with_this_problems_names(tmp_path):
    """An instructor's `--case 'gen004[float16]' --max-examples 10` on softmax was told names
    "look like 'batch[float32]' or 'gen003[float16]'", tied_lm_head's: the message now gives the
    checked problem's own names for that seed and count, and that --max-examples must be the run's."""
    from grader.errors import GraderError
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.spec import find_problem, load_problem
    sub = tmp_path / "sub.py"
    sub.write_text("import numpy as np\n\ndef softmax(x, axis=-1):\n    return x\n")
    opts = CheckOptions(max_examples=10, shrink=False, sandbox="none", only_cases=("gen099[float16]",))
    with pytest.raises(GraderError) as err:
        make_plan(sub, load_problem(find_problem("softmax")), opts, lambda request: ("none", None))
    message = str(err.value)
    assert "batch[float32]" not in message and "did you mean gen009" in message   # this run's own names
    assert "10 generated cases" in message and "--max-examples" in message
    # a name like none of them: the problem's own names, and how a dtype is given, in its terms
    opts = CheckOptions(max_examples=10, shrink=False, sandbox="none", only_cases=("qqq",))
    with pytest.raises(GraderError) as err:
        make_plan(sub, load_problem(find_problem("softmax")), opts, lambda request: ("none", None))
    message = str(err.value)
    assert "batch" not in message and "axis_0" in message and "axis_0[float16]" in message, message
    assert "--max-examples" not in message


# -- the generated cases' shape pool ---------------------------------------------------------------

def _free_pool(problem, seed):
    """The pool as K free draws give it (what ``shape_pool`` drew before it covered the ranks)."""
    from grader.cases import draw_sizes
    stream, pool = Stream(seed, "shapes"), []
    while len(pool) < problem.generated["shapes"]:
        sizes = draw_sizes(stream, problem.generated, problem)
        if sizes not in pool:
            pool.append(sizes)
    return pool


@pytest.mark.parametrize("problem_id", sorted(spec.available_problems()))
def test_the_shape_pool_holds_every_count_of_leading_axes(problem_id):
    """A pool of K shapes holds each number of leading axes of ``leading_axes`` when K allows
    (masked_mean_pool's seed 0 drew one leading axis four times: a ``dim=1`` reduction scored
    8.33); a pool whose free draws covered the range is those draws, unchanged."""
    from grader.cases import shape_pool
    problem = spec.load_problem(ROOT / "problems" / f"{problem_id}.yaml")
    gen = problem.generated or {}
    if not gen.get("shapes"):
        pytest.skip("no shape pool")
    lo, hi = gen.get("leading_axes", [0, 0])
    for seed in (0, 1, 7):
        pool = shape_pool(problem, seed)
        counts = {len(s[LEAD]) for s in pool}
        assert len(pool) == gen["shapes"] and len({json.dumps(s, sort_keys=True) for s in pool}) == len(pool)
        if gen["shapes"] >= hi - lo + 1:
            assert counts == set(range(lo, hi + 1)), (seed, pool)
        free = _free_pool(problem, seed)
        if {len(s[LEAD]) for s in free} == set(range(lo, hi + 1)):
            assert pool == free
        else:
            assert sum(a != b for a, b in zip(pool, free)) <= hi - lo, (free, pool)
