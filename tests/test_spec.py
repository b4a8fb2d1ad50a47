"""Problem specs: the shipped spec loads; every kind of broken spec is one SpecError naming the field."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.errors import GraderError, SpecError
from grader.spec import available_problems, find_problem, load_problem

from .conftest import PROBLEMS, ROOT

SPEC = PROBLEMS / "tied_lm_head.yaml"


def test_shipped_spec_loads_with_its_groups_and_dtypes():
    p = load_problem(SPEC)
    assert p.id == "tied_lm_head"
    assert p.function == "tied_lm_head"
    assert [x.name for x in p.parameters] == ["hidden", "embedding_matrix"]
    assert p.parameters[0].shape == ("...", "d_model")
    assert p.returns_shape == ("...", "vocab_size")
    assert p.frameworks["numpy"] == ("float16", "float32", "float64")
    assert "bfloat16" in p.frameworks["jax"]
    assert p.max_score == sum(g.points for g in p.groups.values()) > 0
    assert p.reference_path == ROOT / "reference" / "tied_lm_head.py"
    worked = next(c for c in p.cases if c["name"] == "worked_example")
    assert worked["expected"] == [2, -1, 1]


def test_problem_lookup_and_unknown_problem_suggests_a_name():
    assert available_problems()["tied_lm_head"] == SPEC.resolve() or available_problems()["tied_lm_head"].name == SPEC.name
    assert find_problem("tied_lm_head").name == "tied_lm_head.yaml"
    with pytest.raises(GraderError, match=r"unknown problem 'tied_lm_haed'.*did you mean 'tied_lm_head'\?"):
        find_problem("tied_lm_haed")


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    (tmp_path / "problems").mkdir()
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    text = SPEC.read_text()
    assert old in text, old
    path = tmp_path / "problems" / "broken.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


BROKEN = [
    # (what is replaced, by what, the field named, words of the message)
    ("model: sum_of_products", "model: ulp", "tolerance.model", "'ulp' is not one of"),
    ("model: sum_of_products", "model: sum_of_product", "tolerance.model", "did you mean 'sum_of_products'"),
    ("title: Tied LM head", "titel: Tied LM head", "(top level)", "unknown field 'titel'"),
    ("  examples: {points: 1,", "  examples: {points: -1,", "groups.examples.points", "less than the minimum"),
    ("    group: examples\n", "    group: nosuchgroup\n", "cases[0].group", "unknown group 'nosuchgroup'"),
    ("sizes: {\"...\": [], d_model: 16, vocab_size: 11}", "sizes: {\"...\": [], d_model: 16}",
     "cases[1].sizes", "missing sizes: vocab_size"),
    ("contraction: d_model", "contraction: width", "tolerance.contraction", "'width' is not a size"),
    ("dtypes: [float16, float32, float64]", "dtypes: [float16, float8]", "frameworks.numpy.dtypes[1]", "'float8'"),
    ("module: tied_lm_head", "module: nothere", "reference.module", "no reference solution"),
    ("  - name: batch\n", "  - name: single_vector\n", "cases[2].name", "duplicate case name"),
]


@pytest.mark.parametrize("old,new,field,words", BROKEN, ids=[b[2] + ":" + b[1][:18] for b in BROKEN])
def test_broken_spec_names_file_line_and_field(tmp_path, old, new, field, words):
    path = _broken(tmp_path, old, new)
    with pytest.raises(SpecError) as info:
        load_problem(path)
    err = info.value
    assert err.field == field
    assert words in str(err)
    assert str(err).startswith(f"{path}:")
    assert err.line is not None and err.line > 0
    assert "\n" not in str(err)
    # the line is the one that was broken
    changed_line = path.read_text().splitlines()[err.line - 1]
    assert new.strip().splitlines()[0].split(":")[0].strip("- ") in changed_line, (err.line, changed_line)


@pytest.mark.parametrize("content,words", [
    ("id: [unclosed\n", "not valid YAML"),
    ("- a\n- b\n", "must be a YAML mapping"),
    ("", "must be a YAML mapping"),
])
def test_unparseable_spec(tmp_path, content, words):
    path = tmp_path / "x.yaml"
    path.write_text(content)
    with pytest.raises(SpecError, match=words):
        load_problem(path)


def test_missing_spec_file(tmp_path):
    with pytest.raises(SpecError, match="cannot read the spec"):
        load_problem(tmp_path / "nope.yaml")
