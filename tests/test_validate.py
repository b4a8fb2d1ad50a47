"""``grader validate``: every bundled problem validates; each kind of invalid problem exits 1
and names what is wrong; a problem added from a temporary folder validates and grades with no
edit under grader/."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader import validate
from grader.cases import cases_digest, fixed_cases, generated_cases
from grader.spec import available_problems, load_problem

from .conftest import PROBLEMS, ROOT, release_memory, run_grader

#: run_grader runs grader.cli.main in this process: these tests read validate's findings and exit
#: codes (the mistakes still run in their sandboxed children)
pytestmark = pytest.mark.cli_in_process

BUNDLED = sorted(available_problems())

# -- a fourth problem, written to a temporary folder -------------------------------------------

REFERENCE = '''\
import jax
import jax.numpy as jnp


def weighted_sum(values, weights):
    """values (..., n) times weights (n,): (...)."""
    return jnp.matmul(values, weights, precision=jax.lax.Precision.HIGHEST)
'''

CORRECT = "import numpy as np\n\n\ndef weighted_sum(values, weights):\n    return values @ weights\n"
# right everywhere but a factor 1/n: the zero case cannot see it (0 / n = 0)
MEAN_NOT_SUM = ("import numpy as np\n\n\ndef weighted_sum(values, weights):\n"
                "    return (values @ weights) / values.shape[-1]\n")


def write_problem(root: Path, *, expected: str = "[-1, -1]", oracle: str | None = "np.einsum('...n,n->...', values, weights)",
                  mistakes: dict[str, tuple[str, str]] | None = None, extra: str = "") -> Path:
    """A small problem ``weighted_sum`` under ``root/problems`` (NumPy, float32 and float64, one
    literal case, one zero case, 4 generated); ``mistakes`` maps a file name to (source, kind)."""
    problems = root / "problems"
    (root / "reference").mkdir(parents=True, exist_ok=True)
    problems.mkdir(parents=True, exist_ok=True)
    (root / "reference" / "weighted_sum.py").write_text(REFERENCE)
    if mistakes is None:
        mistakes = {"mean_not_sum.py": (MEAN_NOT_SUM, "tolerance")}
    text = textwrap.dedent(f"""\
        id: weighted_sum
        title: Weighted sum
        statement: |
          Return `values @ weights`: values (..., n), weights (n,), result (...).
        function:
          name: weighted_sum
          parameters:
            - {{name: values, shape: ["...", n]}}
            - {{name: weights, shape: [n]}}
          returns: {{shape: ["..."], dtype: same_as_inputs}}
        reference: {{module: weighted_sum}}
        frameworks:
          numpy: {{dtypes: [float32, float64]}}
        tolerance: {{model: sum_of_products, contraction: n}}
        groups:
          examples: {{points: 1}}
          zeros: {{points: 1}}
          random: {{points: 2}}
        cases:
          - name: worked_example
            group: examples
            inputs: {{values: [[1, 2], [3, 4]], weights: [1, -1]}}
            expected: {expected}
          - name: zero_values
            group: zeros
            sizes: {{"...": [3], n: 4}}
            fill: {{values: {{kind: zeros}}}}
        generated:
          group: random
          count: 4
          shapes: 2
          leading_axes: [1, 2]
          sizes: {{"...": [1, 4], n: [2, 8]}}
        """)
    if oracle is not None:
        text += f"oracle: {{numpy: {json.dumps(oracle)}}}\n"
    if mistakes:
        folder = problems / "mistakes" / "weighted_sum"
        folder.mkdir(parents=True, exist_ok=True)
        for name, (source, _) in mistakes.items():
            (folder / name).write_text(source)
        text += "mistakes:\n  dir: mistakes/weighted_sum\n  expect:\n"
        text += "".join(f"    {name}: {kind}\n" for name, (_, kind) in mistakes.items())
    spec = problems / "weighted_sum.yaml"
    spec.write_text(text + extra)
    return spec


def errors_of(run) -> list[dict]:
    return [f for f in run.json()["findings"] if f["level"] == "error"]


_bundled_runs: dict = {}


def in_process(path, problem, plan):
    """The project's own mistakes and alternatives, called in this process (they are trusted)."""
    from grader.run.inprocess import for_file
    return for_file(path, problem.function, plan.framework)


def validate_bundled(problem_id: str) -> dict:
    """``grader validate ID --format json``'s document, computed in this process with the files
    called in process (``executor_for``), once per problem in this module. The sandboxed path
    is test_a_pack_problem_validates_the_same_through_the_cli's."""
    from grader.validate import render_json, validate_problem
    if problem_id not in _bundled_runs:
        # one file at a time: in process, two threads of trusted files gain little and once raced
        v = validate_problem(PROBLEMS / f"{problem_id}.yaml", jobs=1, executor_for=in_process)
        _bundled_runs[problem_id] = json.loads(render_json(v))
        release_memory()     # its JAX compilations: the worker validates about ten problems
    return _bundled_runs[problem_id]


# -- every bundled problem ---------------------------------------------------------------------

@pytest.mark.parametrize("problem_id", BUNDLED)
def test_bundled_problem_validates(problem_id):
    """VALID, every mistake failing with its stated kind, every alternative passing at half the
    allowance, and both margins reported per group."""
    report = validate_bundled(problem_id)
    errors = [f["message"] for f in report["findings"] if f["level"] == "error"]
    assert report["valid"] and report["problem"] == problem_id, errors
    assert all(m["ok"] for m in report["mistakes"]), report["mistakes"]
    assert all(a["passed"] and a["error"] is None for a in report["alternatives"]), report["alternatives"]
    for a in report["alternatives"]:
        assert all(float(m) <= a["share"] for m in a["margins"].values()), (a["file"], a["margins"])
    assert {"least_mistake_margin", "worst_alternative_margin"} <= set(report["groups"][0])
    # no case whose allowance lets zeros pass (a reference that loses every digit in a half dtype)
    assert not [f for f in report["findings"] if f["check"] == "tolerance"], report["findings"]


def test_a_pack_problem_validates_the_same_through_the_cli():
    """The sandboxed path (each file in its own confined process, NumPy, JAX and PyTorch
    alternatives) gives the verdicts the in-process validation gives."""
    run = run_grader("validate", "softmax", "--format", "json", timeout=300)
    assert run.code == 0, run.stdout + run.stderr
    sandboxed, here = run.json(), validate_bundled("softmax")
    assert sandboxed["valid"] and here["valid"]
    assert [(m["file"], m["kind"], m["failed"]) for m in sandboxed["mistakes"]] == \
        [(m["file"], m["kind"], m["failed"]) for m in here["mistakes"]]
    assert [(a["file"], a["passed"], a["total"]) for a in sandboxed["alternatives"]] == \
        [(a["file"], a["passed"], a["total"]) for a in here["alternatives"]]
    assert {a["framework"] for a in sandboxed["alternatives"]} >= {"numpy", "jax", "torch"}


def test_tied_lm_head_has_an_oracle_and_ten_mistakes_each_caught():
    """The bundled problem's own mistakes: the ten the issue lists (and more) fail as stated, and
    every case group's mutation score is reported."""
    report = validate_bundled("tied_lm_head")
    assert report["valid"]
    assert report["oracle"]["kind"] == "numpy" and report["oracle"]["cases"] >= 93
    kinds = {m["file"]: m["kind"] for m in report["mistakes"]}
    assert {"softmax.py": "tolerance", "bias.py": "tolerance", "inv_sqrt_d_model.py": "tolerance",
            "no_transpose.py": "exception", "flattened_leading_axes.py": "shape",
            "float32_for_float64.py": "dtype", "half_running_sum.py": "tolerance",
            "vocab_blocks_1024.py": "shape", "mutates_input.py": "mutation",
            "returns_list.py": "type"}.items() <= kinds.items()
    assert all(not m["passed"] and m["groups"] for m in report["mistakes"])
    groups = {g["group"]: g for g in report["groups"]}
    assert set(groups) == set(load_problem(PROBLEMS / "tied_lm_head.yaml").groups)
    # only the real-size cases see a vocabulary split in blocks of 1024
    assert groups["real_size"]["caught"] == len(report["mistakes"])
    assert "vocab_blocks_1024.py" in groups["generated"]["missed"]


def test_oracle_and_mistakes_do_not_change_the_cases(tmp_path):
    """The spec fields for validate leave every graded input as it was (cases_digest)."""
    spec = PROBLEMS / "tied_lm_head.yaml"
    text = spec.read_text()
    assert "\noracle:" in text and "\nmistakes:" in text
    stripped = text[:text.index("\n# For `grader validate`")] + "\n"
    assert "\noracle:" not in stripped and "\nmistakes:" not in stripped
    (tmp_path / "problems").mkdir()
    (tmp_path / "reference").symlink_to(spec.parent.parent / "reference")
    (tmp_path / "problems" / "tied_lm_head.yaml").write_text(stripped)
    with_fields, without = load_problem(spec), load_problem(tmp_path / "problems" / "tied_lm_head.yaml")
    assert "oracle" not in without.raw
    for dtypes in with_fields.frameworks.values():
        count = with_fields.generated["count"]
        digests = [cases_digest(fixed_cases(p, dtypes, 0) + generated_cases(p, dtypes, 0, count))
                   for p in (with_fields, without)]
        assert digests[0] == digests[1]


# -- a problem from a temporary folder ---------------------------------------------------------

def test_fourth_problem_from_a_folder_validates_and_grades(tmp_path):
    write_problem(tmp_path)
    pdir = str(tmp_path / "problems")
    run = run_grader("validate", "weighted_sum", "--problems-dir", pdir)
    assert run.code == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("weighted_sum: ") and lines[-1].startswith("VALID")
    # which reference file was used, on one line (here beside the problems folder)
    assert f"  ok       reference: {(tmp_path / 'reference' / 'weighted_sum.py').resolve()}" in lines
    assert any("oracle" in line and "agrees with the reference on" in line for line in lines)
    assert any(line.split()[:2] == ["mean_not_sum.py", "tolerance"] for line in lines)
    # the zero case cannot see a factor: a warning, not an error
    assert any(line.startswith("  warning  group zeros catches none of the 1 mistakes") for line in lines)
    assert any(line.split()[:3] == ["examples", "1/1", "100%"] for line in lines)

    (tmp_path / "correct.py").write_text(CORRECT)
    good = run_grader("check", str(tmp_path / "correct.py"), "--problem", "weighted_sum", "--problems-dir", pdir,
                      "--format", "json")
    assert good.code == 0, good.stdout + good.stderr
    assert good.json()["passed"]
    bad = run_grader("check", str(tmp_path / "problems" / "mistakes" / "weighted_sum" / "mean_not_sum.py"),
                     "--problem", "weighted_sum", "--problems-dir", pdir, "--format", "json")
    assert bad.code == 1
    # its zero-weight cases (expected zeros) are passed but not credited beside it: unearned, after tolerance
    assert {c["failure"]["kind"] for c in bad.json()["cases"] if c["failure"]} <= {"tolerance", "unearned"}
    assert bad.json()["summary"][0]["kind"] == "tolerance"


def test_a_spec_path_validates_too(tmp_path):
    spec = write_problem(tmp_path, mistakes={})
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 0, run.stdout + run.stderr
    report = run.json()
    assert report["valid"] and report["mistakes"] == []
    # no mistakes folder: a warning, so problems can be added before their mistakes
    assert [f["check"] for f in report["findings"]] == ["mistakes"]
    assert report["findings"][0]["level"] == "warning"


def test_stale_literal_exits_1_naming_the_case_and_both_values(tmp_path):
    spec = write_problem(tmp_path, expected="[-1, 7]")
    run = run_grader("validate", str(spec))
    assert run.code == 1, run.stdout + run.stderr
    stale = [line for line in run.stdout.splitlines() if line.startswith("  ERROR    stale expected value")]
    assert len(stale) == 1
    assert "case worked_example (float32, float64)" in stale[0]
    assert "spec [-1.0, 7.0], reference [-1.0, -1.0]" in stale[0]
    assert "index (1,)" in stale[0]
    assert run.stdout.splitlines()[-1].startswith("INVALID: 1 error")
    js = run_grader("validate", str(spec), "--format", "json")
    (finding,) = errors_of(js)
    assert finding["check"] == "literal" and finding["data"]["case"] == "worked_example"
    assert finding["data"]["spec_values"] == [-1.0, 7.0] and finding["data"]["reference_values"] == [-1.0, -1.0]


def test_a_stale_literal_names_each_dtype_once(tmp_path):
    """A case graded with two integer dtypes of its targets (cross_entropy: int64 and int32) was
    named "(float16, float16, float32, float32, ...)" by a stale literal (an instructor's trial)."""
    import shutil
    (tmp_path / "reference").mkdir()
    shutil.copy(ROOT / "reference" / "cross_entropy.py", tmp_path / "reference")
    text = (PROBLEMS / "cross_entropy.yaml").read_text()
    text = text.replace("expected: 0.49041462650586304", "expected: 0.5")
    text = text[:text.index("\nmistakes:")] + "\n"     # no mistakes or alternatives to grade
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "cross_entropy.yaml").write_text(text)
    (finding,) = errors_of(run_grader("validate", str(tmp_path / "problems" / "cross_entropy.yaml"), "--format", "json"))
    assert finding["check"] == "literal"
    assert sorted(finding["data"]["dtypes"]) == sorted(set(finding["data"]["dtypes"])), finding
    assert "float32" in finding["data"]["dtypes"]


def test_stale_literal_shape_is_named(tmp_path):
    spec = write_problem(tmp_path, expected="[-1, -1, 0]", mistakes={})
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    (finding,) = errors_of(run)
    assert "worked_example" in finding["message"] and "shape (3,)" in finding["message"]


def test_an_oracle_that_disagrees_exits_1_naming_the_case_and_the_worst_element(tmp_path):
    # the oracle forgets the weights: every case but the zero one disagrees
    spec = write_problem(tmp_path, oracle="values.sum(axis=-1)", mistakes={})
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1, run.stdout + run.stderr
    found = errors_of(run)
    assert found and all(f["check"] == "oracle" for f in found)
    cases = {f["data"]["case"] for f in found}
    assert {"worked_example[float32]", "worked_example[float64]"} <= cases
    assert not any(c.startswith("zero_values") for c in cases)
    example = next(f for f in found if f["data"]["case"] == "worked_example[float64]")
    # [1, 2] . [1, -1] = -1 where the oracle says 3: worst against the allowance (which grows with
    # S = |1| + |2|) at index 0, though [3, 4] gives a larger absolute error at index 1
    assert example["data"]["index"] == [0] and example["data"]["reference"] == -1.0 and example["data"]["other"] == 3.0
    assert "1 of 2 elements" not in example["message"] and "2 of 2 elements" in example["message"]
    assert "worst at index (0,): oracle 3, reference -1" in example["message"]


def test_the_oracle_sees_no_builtins(tmp_path):
    spec = write_problem(tmp_path, oracle="values @ weights + 0 * len(weights)", mistakes={})
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    (finding,) = errors_of(run)
    assert "oracle.numpy: unknown name 'len'" in finding["message"]
    # the text says it at the oracle's step, before the mistakes and alternatives (an instructor
    # found it printed after them)
    alt = tmp_path / "problems" / "alternatives" / "weighted_sum"
    alt.mkdir(parents=True)
    (alt / "matmul.py").write_text(CORRECT)
    spec.write_text(spec.read_text() + "alternatives: {dir: alternatives/weighted_sum}\n")
    lines = validate.render_text(validate.validate_problem(spec, jobs=1)).splitlines()
    oracle = next(i for i, line in enumerate(lines) if "unknown name 'len'" in line)
    assert oracle < next(i for i, line in enumerate(lines) if "alternatives:" in line), lines


def test_the_oracle_runs_in_long_double(tmp_path):
    problem = load_problem(write_problem(tmp_path, mistakes={}))
    run, info = validate.oracle_function(problem)
    out = run({"values": np.ones((2, 3), np.float32), "weights": np.ones(3, np.float32)})
    assert out.dtype == np.longdouble and info["precision"] == validate.longdouble_name()


def test_a_mistake_that_passes_exits_1_naming_it(tmp_path):
    spec = write_problem(tmp_path, mistakes={"mean_not_sum.py": (MEAN_NOT_SUM, "tolerance"),
                                             "not_a_mistake.py": (CORRECT, "tolerance")})
    run = run_grader("validate", str(spec))
    assert run.code == 1, run.stdout + run.stderr
    assert "  ERROR    mistake not_a_mistake.py passes: no case catches it" in run.stdout.splitlines()
    assert "mistakes: 1 of 2 fail with their stated kind" in run.stdout


def test_a_mistake_with_another_kind_exits_1(tmp_path):
    spec = write_problem(tmp_path, mistakes={"mean_not_sum.py": (MEAN_NOT_SUM, "shape")})
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    (finding,) = errors_of(run)
    assert finding["data"] == {"file": "mean_not_sum.py", "expected": "shape", "kind": "tolerance",
                               "kinds": finding["data"]["kinds"]}
    assert "fails with tolerance, not shape" in finding["message"]


def test_mistake_config_errors(tmp_path):
    spec = write_problem(tmp_path, mistakes={"mean_not_sum.py": (MEAN_NOT_SUM, "tolerence")})
    (spec.parent / "mistakes" / "weighted_sum" / "unlisted.py").write_text(CORRECT)
    spec.write_text(spec.read_text() + "    gone.py: shape\n")
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    messages = [f["message"] for f in errors_of(run)]
    assert any("gone.py is not in mistakes/weighted_sum" in m for m in messages)
    assert any("'tolerence' is not a failure kind" in m for m in messages)
    assert any("mistake unlisted.py has no stated kind" in m for m in messages)


def test_a_schema_error_exits_1_with_file_line_and_field(tmp_path):
    spec = write_problem(tmp_path, mistakes={}, extra="mistakes: {dir: mistakes/weighted_sum}\n")
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1, run.stdout + run.stderr
    (finding,) = errors_of(run)
    line = len(spec.read_text().splitlines())
    assert finding["check"] == "spec" and finding["data"]["field"] == "mistakes"
    assert finding["data"]["line"] == line and finding["message"].startswith(f"{spec}:{line}: mistakes")


@pytest.mark.parametrize("argv, message", [
    (["validate", "no_such_problem"], "grader: error: unknown problem 'no_such_problem'"),
    (["validate", "tied_lm_hed"], "did you mean 'tied_lm_head'?"),
    (["validate", "missing/spec.yaml"], "grader: error: spec 'missing/spec.yaml' does not exist"),
    (["validate", "tied_lm_head", "--jobs", "0"], "grader: error: argument --jobs: '0' must be 1 or more"),
    (["validate", "tied_lm_head", "--format", "xml"], "grader: error: argument --format: invalid choice"),
])
def test_could_not_run_exits_2_with_one_line(argv, message):
    run = run_grader(*argv)
    assert run.code == 2 and run.stdout == ""
    errors = [line for line in run.stderr.splitlines() if line.startswith("grader:")]
    assert len(errors) == 1 and message in errors[0], run.stderr


def test_expected_values_stored_by_validate_are_those_check_stores(tmp_path, monkeypatch):
    """validate fills the case cache before grading the mistakes; what it stores must be what
    ``grader check`` itself would (same names, inputs, expected values), or a check could read
    wrong expected values."""
    from grader.check import CheckOptions, check_submission

    problem = load_problem(write_problem(tmp_path / "p", mistakes={}))
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "by_validate"))
    validate.expected_values(problem, validate.plan_cases(problem))
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "by_check"))
    (tmp_path / "correct.py").write_text(CORRECT)
    assert check_submission(tmp_path / "correct.py", problem, CheckOptions(shrink=False)).passed
    ours = sorted((tmp_path / "by_validate").glob("cases-*.bin"))
    theirs = sorted((tmp_path / "by_check").glob("cases-*.bin"))
    assert [f.name for f in ours] == [f.name for f in theirs] and len(ours) == 1
    from grader import cache
    key = ours[0].stem[len("cases-"):]
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "by_validate"))
    a = cache.load_cases(key)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "by_check"))
    b = cache.load_cases(key)
    assert a and b and [c.name for c, _, _ in a] == [c.name for c, _, _ in b]
    for (ca, ra, sa), (cb, rb, sb) in zip(a, b):
        assert list(ca.inputs) == list(cb.inputs), ca.name
        for name in ca.inputs:
            assert ca.inputs[name].dtype == cb.inputs[name].dtype, (ca.name, name)
            assert np.array_equal(ca.inputs[name], cb.inputs[name]), (ca.name, name)
        assert ra.dtype == rb.dtype and np.array_equal(ra, rb, equal_nan=True), ca.name
        assert (sa is None) == (sb is None) and (sa is None or np.array_equal(sa, sb, equal_nan=True)), ca.name
    assert ours[0].read_bytes() == theirs[0].read_bytes()


def test_an_oracle_module_beside_the_reference(tmp_path):
    spec = write_problem(tmp_path, oracle=None, mistakes={}, extra="oracle: {module: weighted_sum_oracle, function: ws}\n")
    oracle = tmp_path / "reference" / "weighted_sum_oracle.py"
    oracle.write_text("import numpy as np\n\n\ndef ws(values, weights):\n"
                      "    return np.einsum('...n,n->...', values, weights)\n")
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 0, run.stdout + run.stderr
    assert run.json()["oracle"]["kind"] == "module" and run.json()["oracle"]["cases"] == 8  # 2 fixed cases x 2 dtypes + 4 generated
    oracle.write_text("def ws(values, weights):\n    return 2 * values @ weights\n")
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    assert {f["data"]["case"] for f in errors_of(run)} >= {"worked_example[float32]", "worked_example[float64]"}


@pytest.mark.parametrize("oracle, message", [
    ("{numpi: values @ weights}", "oracle: unknown field 'numpi'; allowed: numpy, module, function; did you mean 'numpy'?"),
    ("{numpy: 3}", "oracle.numpy: 3 is not of type 'string'"),
])
def test_a_misspelled_oracle_is_named(tmp_path, oracle, message):
    spec = write_problem(tmp_path, oracle=None, mistakes={}, extra=f"oracle: {oracle}\n")
    run = run_grader("validate", str(spec))
    assert run.code == 1
    assert f"{spec}:{len(spec.read_text().splitlines())}: {message}" in run.stdout


def test_a_reference_that_raises_exits_1(tmp_path):
    spec = write_problem(tmp_path, mistakes={})
    (tmp_path / "reference" / "weighted_sum.py").write_text(
        "def weighted_sum(values, weights):\n    raise ValueError('not written yet')\n")
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    (finding,) = errors_of(run)
    assert finding["check"] == "reference" and "ValueError: not written yet" in finding["message"]


def test_json_is_strict_with_non_finite_values():
    v = validate.Validation("x.yaml", findings=[validate.Finding("error", "oracle", "m", {"other": float("nan")})])
    data = json.loads(validate.render_json(v))  # json.loads accepts NaN; the text must not hold it
    assert "NaN" not in validate.render_json(v) and data["findings"][0]["data"]["other"] == "nan"
    assert data["valid"] is False and data["errors"] == 1


def test_a_mistake_that_keeps_most_of_the_points_is_a_warning_with_its_score():
    """A helper's trial: a softmax without the max shift, which the statement forbids, scored
    8.4 of 10, and validate did not say so. Each mistake's score is in its line and its JSON; one
    that keeps 75% of the points or more is a warning naming the groups that catch it."""
    from grader.validate import MistakeResult, score_findings
    lenient = MistakeResult("no_shift.py", "non_finite", kind="non_finite", groups=["values", "real_size"],
                            score=8.3958, max_score=10.0)
    strict = MistakeResult("axis0.py", "tolerance", kind="tolerance", groups=["shapes"], score=2.4, max_score=10.0)
    wrong_kind = MistakeResult("odd.py", "shape", kind="tolerance", score=9.0, max_score=10.0)   # an error already
    found = score_findings([lenient, strict, wrong_kind])
    assert [(f.level, f.data["file"]) for f in found] == [("warning", "no_shift.py")]
    assert "8.3958 of 10" in found[0].message and "values, real_size" in found[0].message
    assert strict.to_json()["score"] == 2.4 and strict.to_json()["max_score"] == 10.0


def test_a_value_mistake_caught_by_less_than_ten_allowances_is_a_warning():
    from grader.validate import MistakeResult, margin_findings
    narrow = MistakeResult("narrow.py", "tolerance", kind="tolerance", margins={"values": 3.0, "examples": 0.4})
    wide = MistakeResult("wide.py", "tolerance", kind="tolerance", margins={"values": 12.0, "examples": 0.2})
    by_kind = MistakeResult("shape.py", "shape", kind="shape", margins={})
    found = margin_findings([narrow, wide, by_kind])
    assert [(f.level, f.data["file"]) for f in found] == [("warning", "narrow.py")]
    assert "3x the allowance" in found[0].message
    assert wide.to_json()["margins"] == {"values": 12.0, "examples": 0.2}


def test_an_oracle_gets_the_default_of_an_optional_parameter_a_case_leaves_out(tmp_path):
    """softmax(logits, axis=-1) with an oracle that names ``axis``: the default cases omit it,
    and the oracle (expression or module) got a NameError / the grader a KeyError."""
    import dataclasses

    from grader.cases import fixed_cases
    from grader.validate import oracle_function

    problem = load_problem(PROBLEMS / "softmax.yaml")
    expr = ("np.exp(logits - logits.max(axis=axis, keepdims=True)) / "
            "np.exp(logits - logits.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)")
    (tmp_path / "oracle_softmax.py").write_text(
        "import numpy as np\ndef softmax(logits, axis):\n"
        "    e = np.exp(logits - logits.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n")
    cases = fixed_cases(problem, ("float64",), 0)
    omitted = [c for c in cases if "axis" not in c.inputs]
    given = [c for c in cases if "axis" in c.inputs]
    assert omitted and given
    for oracle in ({"numpy": expr}, {"module": "oracle_softmax"}):
        spec = dataclasses.replace(problem, raw={**problem.raw, "oracle": oracle},
                                   reference_path=tmp_path / "softmax.py")
        run, _ = oracle_function(spec)
        for case in omitted[:2] + given[:2]:
            x = case.inputs["logits"].astype(np.float64)
            axis = int(case.inputs["axis"]) if "axis" in case.inputs else -1
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            np.testing.assert_allclose(np.asarray(run(case.inputs), dtype=np.float64),
                                       e / e.sum(axis=axis, keepdims=True), rtol=1e-12)


def test_an_integer_oracle_is_compared_in_its_own_dtype(tmp_path):
    """Issue 35, item 4: validate made a NumPy oracle's output float64, so every case of an int64
    problem (top_k_indices) failed with "dtype float64 != expected int64", a dtype the oracle
    never returned. Integer and boolean outputs are now compared as returned."""
    import shutil
    spec = tmp_path / "top_k_indices.yaml"
    text = (PROBLEMS / "top_k_indices.yaml").read_text()
    text = text[:text.index("\nmistakes:")] + "\n"
    spec.write_text(text + "oracle:\n  numpy: \"np.argsort(-scores.astype(np.float64), axis=-1, "
                           "kind='stable')[..., :k].astype(np.int64)\"\n")
    shutil.copytree(PROBLEMS.parent / "reference", tmp_path / "reference")
    problem = load_problem(spec)
    entries = validate.plan_cases(problem).entries
    entries = [e for e in entries if e.case.dtype == "float32"][:8]
    findings, info = validate.check_oracle(problem, entries)
    assert findings == [] and info["cases"] == len([e for e in entries if not e.case.raises]) > 0
    wrong = spec.read_text().replace("[..., :k]", "[..., 1:k+1]")
    spec.write_text(wrong)
    findings, _ = validate.check_oracle(load_problem(spec), entries)
    assert findings and not any("dtype float64" in f.message for f in findings)


def test_an_oracle_of_a_problem_with_a_fixed_float32_output_agrees(tmp_path):
    """A fresh instructor could give no oracle to a problem whose output dtype the spec fixes
    (returns.dtype: float32): every case failed 'dtype float64 != expected float32', whatever
    the oracle returned. The oracle is judged as float64 there, as it computes."""
    import shutil
    folder = tmp_path / "pe"
    (folder / "reference").mkdir(parents=True)
    shutil.copy(PROBLEMS.parent / "reference" / "sinusoidal_positional_encoding.py", folder / "reference")
    text = (PROBLEMS / "sinusoidal_positional_encoding.yaml").read_text()
    assert "\noracle:" not in text and "\nmistakes:" in text
    oracle = ('oracle:\n  numpy: "np.where(np.arange(d_model) % 2 == 0, '
              'np.sin(np.arange(seq_len)[:, None] / 10000 ** ((np.arange(d_model) // 2 * 2) / d_model)), '
              'np.cos(np.arange(seq_len)[:, None] / 10000 ** ((np.arange(d_model) // 2 * 2) / d_model)))'
              '.astype(np.float32)"\n')
    text = text.split("\nmistakes:")[0] + "\n" + oracle
    (folder / "sinusoidal_positional_encoding.yaml").write_text(text)
    run = run_grader("validate", "sinusoidal_positional_encoding", "--problems-dir", str(folder), "--format", "json")
    found = [f for f in json.loads(run.stdout)["findings"] if f["check"] == "oracle" and f["severity"] == "error"] \
        if run.stdout.strip().startswith("{") else None
    assert found == [], run.stdout[-2000:] + run.stderr


# -- --seed ----------------------------------------------------------------------------------

def test_validate_seed_is_check_seed(tmp_path):
    """``grader validate --seed S`` checks the cases ``grader check --seed S`` grades: a mistake
    wrong only at a size that seed S's generated cases draw (and seed 0's do not) passes at seed
    0 (an error) and is caught at seed S; the JSON says the seed."""
    from grader.cases import shape_pool

    spec = write_problem(tmp_path, mistakes={})
    problem = load_problem(spec)

    def sizes_of(seed: int) -> set[int]:
        return {s["n"] for s in shape_pool(problem, seed)}

    seed, n = next((s, n) for s in range(1, 50) for n in sorted(sizes_of(s) - sizes_of(0) - {2, 4}))
    wrong_at_n = ("import numpy as np\n\n\ndef weighted_sum(values, weights):\n"
                  f"    out = values @ weights\n    return out * 2 if values.shape[-1] == {n} else out\n")
    spec = write_problem(tmp_path, mistakes={"wrong_at_n.py": (wrong_at_n, "tolerance")})
    seeds_seen = []

    def in_process(path, problem, plan):
        from grader.run.inprocess import for_file
        seeds_seen.append(plan.options.seed)
        return for_file(path, problem.function, plan.framework)

    at_zero = validate.validate_problem(spec, jobs=1, executor_for=in_process)
    assert not at_zero.valid
    assert [f.message for f in at_zero.errors] == ["mistake wrong_at_n.py passes: no case catches it"]
    at_seed = validate.validate_problem(spec, jobs=1, executor_for=in_process, seed=seed)
    assert at_seed.valid, [f.message for f in at_seed.errors]
    assert seeds_seen == [0, seed]
    assert json.loads(validate.render_json(at_seed))["seed"] == seed

    run = run_grader("validate", str(spec), "--seed", str(seed), "--format", "json")
    assert run.code == 0, run.stdout + run.stderr
    assert run.json()["seed"] == seed and run.json()["mistakes"][0]["ok"]
    assert run_grader("validate", str(spec), "--seed", "-1").code == 2


def test_a_mistake_may_list_two_kinds_and_either_counts(tmp_path):
    """``expect: {f.py: [tolerance, non_finite]}``: a mistake whose dominant kind depends on the
    seed (scaled_dot_product_attention's inverted mask: non_finite 20, tolerance 12 at seed 6)
    is caught with either; a kind outside the list is still an error, and a misspelled kind in
    the list is named."""
    from grader.validate_mistakes import MistakeResult, mistake_findings
    both = MistakeResult("inverted.py", "tolerance or non_finite", kind="non_finite", failed=32, total=60)
    assert both.ok and both.accepted == ("tolerance", "non_finite") and not mistake_findings([both])
    other = MistakeResult("inverted.py", "tolerance or non_finite", kind="shape", failed=3, total=60)
    assert not other.ok
    assert "fails with shape, not tolerance or non_finite" in mistake_findings([other])[0].message

    spec = write_problem(tmp_path)
    spec.write_text(spec.read_text().replace("mean_not_sum.py: tolerance", "mean_not_sum.py: [tolerance, nan_kind]"))
    run = run_grader("validate", str(spec), "--format", "json")
    assert run.code == 1
    assert any("'nan_kind' is not a failure kind" in e["message"] for e in errors_of(run))
    spec.write_text(spec.read_text().replace("nan_kind", "non_finite"))
    run = run_grader("validate", str(spec), "--format", "json")
    mistake = run.json()["mistakes"][0]
    assert run.code == 0 and mistake["ok"] and mistake["expected"] == "tolerance or non_finite", mistake


def test_a_stale_value_is_written_with_the_digits_that_tell_it_apart():
    """A newcomer's instructor trial: "spec -0.142932, reference -0.142932" (the same six digits);
    the worst element is written with as many digits as tell the two apart, six when they differ
    there, and as six when they are equal."""
    assert validate._apart(-0.14293212345, -0.14293198765) == ("-0.142932123", "-0.142931988")
    assert validate._apart(1.0, 2.0) == ("1", "2") and validate._apart(0.1, 0.1) == ("0.1", "0.1")
    assert validate._apart(1.0, 1.0 + 2 ** -52) == ("1", "1.0000000000000002")


NORMALISE_SPEC = """\
id: rms_scale
title: Divide by the root mean square
statement: |
  Return `x / sqrt(mean(x ** 2, axis=-1) + 1e-6)` for `x` of shape (..., d), in the dtype of `x`;
  compute the mean of squares in float32 for float16.
function:
  name: rms_scale
  parameters:
    - {name: x, shape: ["...", d]}
  returns: {shape: ["...", d], dtype: same_as_inputs}
reference: {module: rms_scale}
frameworks:
  numpy: {dtypes: [float16, float32]}
groups:
  values: {points: 1}
cases:
  - name: large_values
    group: values
    sizes: {"...": [3], d: 32}
    fill: {x: {kind: uniform, low: 300, high: 3000, random_sign: true}}
"""


@pytest.mark.parametrize("square", ["x * x", "jnp.square(x.astype(jnp.float32))"])
def test_an_allowance_as_large_as_the_values_is_named(tmp_path, square):
    """An instructor's reference squared in float16, which overflows there: the derived allowance
    (the reference run in the graded dtype) grew as large as the values, and a mistake returning
    zeros passed with no word of why. Validate names such cases; a reference that squares in
    float32 has none."""
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "rms_scale.py").write_text(
        "import jax.numpy as jnp\n\n\ndef rms_scale(x):\n"
        f"    ms = jnp.mean({square}, axis=-1, keepdims=True)\n"
        "    return (x / jnp.sqrt(ms + 1e-6)).astype(x.dtype)\n")
    (tmp_path / "rms_scale.yaml").write_text(NORMALISE_SPEC)
    v = validate.validate_problem(tmp_path / "rms_scale.yaml", jobs=1)
    found = [f for f in v.findings if f.check == "tolerance"]
    if square == "x * x":
        assert len(found) == 1 and found[0].level == "warning", v.findings
        assert found[0].data["cases"] == ["large_values[float16]"] and "zeros passes" in found[0].message
    else:
        assert found == [], found


def test_an_alternative_within_the_allowance_but_beyond_its_share_is_told_how_much_to_widen():
    """An instructor's torch alternative reached 0.62 of a float64 allowance: a right file the
    allowance is tight for. The error says by how much to widen it, and where to; a file beyond
    the whole allowance gets no such advice (it may be wrong)."""
    from grader.validate_mistakes import AlternativeResult, alternative_findings

    tight = AlternativeResult(file="torch_ln.py", share=0.5, kind="tolerance", failed=1, total=36,
                              case="real_size[float64]", message="mean: off", margins={"a": 0.1, "b": 0.62})
    (finding,) = alternative_findings([tight])
    assert "widen the allowance by at least 1.2x" in finding.message and "real_size[float64]" in finding.message
    wrong = AlternativeResult(file="w.py", share=0.5, kind="tolerance", failed=3, total=36, case="c[float32]",
                              message="off", margins={"a": 3.0})
    assert "widen" not in alternative_findings([wrong])[0].message


def test_kinds_tied_for_commonest_take_the_stated_one():
    """A helper's mistake failed one case as non_finite and one as tolerance; it stated
    tolerance and validate called it non_finite (the first kind in the list): of kinds tied for
    the commonest, the stated one is the mistake's kind; a kind that is not tied still wins."""
    from collections import Counter

    from grader.validate_mistakes import _dominant
    assert _dominant(Counter(non_finite=1, tolerance=1), ("tolerance",)) == "tolerance"
    assert _dominant(Counter(non_finite=1, tolerance=1)) == _dominant(Counter(tolerance=1, non_finite=1))
    assert _dominant(Counter(non_finite=2, tolerance=1), ("tolerance",)) == "non_finite"


_ORACLE_IN_A_FRESH_PROCESS = r'''
import sys
from pathlib import Path
import numpy as np
from grader.spec import load_problem
from grader.validate import oracle_function
run, _ = oracle_function(load_problem(Path(sys.argv[1])))
print([float(v) for v in run({"values": np.ones((2, 3)), "weights": np.ones(3)})])
'''


def test_an_oracle_may_use_an_array_method_in_a_fresh_process(tmp_path):
    """An instructor's oracle ``(values * weights).sum(axis=-1)`` failed with ``KeyError:
    '__import__'`` in every case of a fresh process: NumPy's array methods import their
    implementation on first use, through the calling frame's builtins, which the oracle's
    expression had none of."""
    spec = write_problem(tmp_path, oracle="(values * weights).sum(axis=-1)", mistakes={})
    run = subprocess.run([sys.executable, "-I", "-c", _ORACLE_IN_A_FRESH_PROCESS, str(spec)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.split() == ["[3.0,", "3.0]"], run.stderr


def test_a_spec_that_does_not_parse_is_named_by_its_file_and_told_to_quote(tmp_path):
    """A newcomer's unquoted `domain: [0, C)`: the report's first line read "?: myprobs/x.yaml";
    it says the spec is not loaded, and the error says to quote the interval."""
    spec = tmp_path / "bad.yaml"
    spec.write_text("id: bad\nfunction:\n  parameters:\n    - name: t\n      domain: [0, C)\n")
    run = run_grader("validate", str(spec))
    assert run.code == 1, run.stdout + run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("not loaded: ") and first.endswith("bad.yaml"), first
    assert 'quote a half-open interval: "[0, C)"' in run.stdout


def test_an_oracle_that_disagrees_through_a_checker_is_told_in_the_checkers_words():
    """top_k_indices got an oracle (a newcomer's validate warned it had none); an oracle judged by
    a checker that disagrees read "None of None elements; worst at index (): oracle None": the
    checker's own line now."""
    from grader.results import Failure
    text, data = validate._where(Failure(kind="tolerance", message="row 0: position 0 holds index 0 (score 0.1)"))
    assert text == "row 0: position 0 holds index 0 (score 0.1)" and data["kind"] == "tolerance"
    assert load_problem(PROBLEMS / "top_k_indices.yaml").raw.get("oracle")


def test_an_alternative_failing_exact_comparisons_is_told_of_checkers_not_of_widening():
    """A newcomer's top_k of two outputs (values, int64 indices): correct alternatives with
    another order among ties failed the exact comparison of the indices, and validate advised
    "widen the allowance by at least 0x" beside "at most 0 of the allowance"."""
    from grader.validate_mistakes import AlternativeResult, alternative_findings
    exact = AlternativeResult(file="torch_topk.py", share=0.5, kind="tolerance", failed=7, total=52,
                              case="many_ties[bfloat16]", message="indices is off", margins={"values": 0.0})
    (finding,) = alternative_findings([exact])
    assert "0x" not in finding.message and "compared exactly" in finding.message and "checker" in finding.message
    tight = AlternativeResult(file="mean.py", share=0.5, kind="tolerance", failed=1, total=52, case="c[float64]",
                              message="off", margins={"values": 0.62})
    (finding,) = alternative_findings([tight])
    assert "widen the allowance by at least 1.2x" in finding.message
