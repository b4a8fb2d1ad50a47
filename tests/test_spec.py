"""Problem specs: the shipped spec loads; every kind of broken spec is one SpecError naming the field."""
from __future__ import annotations

import shutil

import numpy as np
from pathlib import Path

import pytest

from grader.errors import GraderError, SpecError
from grader.spec import available_problems, find_problem, load_all, load_problem

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
    ("sizes: {\"...\": [], d_model: 2, vocab_size: 3}", "sizes: {\"...\": [], d_model: 2}",
     "cases[1].sizes", "missing sizes: vocab_size"),
    ("contraction: d_model", "contraction: width", "tolerance.contraction", "'width' is not a size"),
    ("dtypes: [float16, float32, float64]", "dtypes: [float16, float8]", "frameworks.numpy.dtypes[1]", "'float8'"),
    ("module: tied_lm_head", "module: nothere", "reference.module", "no reference solution"),
    ("  - name: batch\n", "  - name: single_vector\n", "cases[2].name", "duplicate case name"),
    # a misspelled size in the generated section was drawn and never used (an instructor's trial)
    ('sizes: {"...": [1, 5], d_model: [2, 64], vocab_size: [2, 96]}',
     'sizes: {"...": [1, 5], d_model: [2, 64], vocab_size: [2, 96], vocab: [2, 9]}',
     "generated.sizes.vocab", "unknown size; sizes: ..., d_model, vocab_size"),
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
    # a newcomer's unquoted domain: YAML's message alone did not say what to do
    ("id: x\nfunction:\n  parameters:\n    - name: t\n      domain: [0, C)\n",
     r'not valid YAML: .*; quote a half-open interval: "\[0, C\)"'),
    ("id: x\nbounds: {low: (0, 1]}\n", r'quote a half-open interval: "\(0, 1\]"'),
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


# -- where the reference module is looked up ---------------------------------------------------

def _own_problems(root: Path) -> Path:
    """A problems folder ``root/myprobs`` holding the shipped spec, with no reference yet."""
    pdir = root / "myprobs"
    pdir.mkdir(parents=True)
    shutil.copy(SPEC, pdir / SPEC.name)
    return pdir


def test_reference_inside_the_problems_folder_is_used(tmp_path):
    pdir = _own_problems(tmp_path)
    (pdir / "reference").mkdir()
    shutil.copy(ROOT / "reference" / "tied_lm_head.py", pdir / "reference" / "tied_lm_head.py")
    assert load_problem(pdir / SPEC.name).reference_path == pdir.resolve() / "reference" / "tied_lm_head.py"


def test_reference_beside_is_used_only_when_inside_has_none(tmp_path):
    """The bundled layout (problems/ and reference/ siblings) still loads."""
    pdir = _own_problems(tmp_path)
    (tmp_path / "reference").mkdir()
    shutil.copy(ROOT / "reference" / "tied_lm_head.py", tmp_path / "reference" / "tied_lm_head.py")
    assert load_problem(pdir / SPEC.name).reference_path == tmp_path.resolve() / "reference" / "tied_lm_head.py"


def test_a_reference_beside_never_wins_over_nor_blocks_the_one_inside(tmp_path):
    """A reference beside the folder (say a world-writable /tmp/reference) is not used when the
    folder has its own: a planted file there can neither replace the reference nor make the
    problem unusable."""
    pdir = _own_problems(tmp_path)
    (pdir / "reference").mkdir()
    (tmp_path / "reference").mkdir()
    inside = pdir / "reference" / "tied_lm_head.py"
    beside = tmp_path / "reference" / "tied_lm_head.py"
    shutil.copy(ROOT / "reference" / "tied_lm_head.py", inside)
    beside.write_text("def tied_lm_head(hidden, embedding_matrix):\n    return 0\n")
    assert load_problem(pdir / SPEC.name).reference_path == inside.resolve()
    loaded, broken = load_all(str(pdir))
    assert "tied_lm_head" not in broken


def test_two_identical_references_load_the_inside_one(tmp_path):
    pdir = _own_problems(tmp_path)
    (pdir / "reference").mkdir()
    (tmp_path / "reference").mkdir()
    for folder in (pdir / "reference", tmp_path / "reference"):
        shutil.copy(ROOT / "reference" / "tied_lm_head.py", folder / "tied_lm_head.py")
    assert load_problem(pdir / SPEC.name).reference_path == pdir.resolve() / "reference" / "tied_lm_head.py"


def test_a_missing_reference_names_every_place_looked(tmp_path):
    pdir = _own_problems(tmp_path)
    with pytest.raises(SpecError) as info:
        load_problem(pdir / SPEC.name)
    message = str(info.value)
    assert "no reference solution tied_lm_head.py" in message
    assert str(pdir.resolve() / "reference" / "tied_lm_head.py") in message
    assert str(tmp_path.resolve() / "reference" / "tied_lm_head.py") in message


def test_a_spec_with_a_domain_names_the_line_of_a_later_error(tmp_path):
    """The domain's bounds were parsed into a variable that shadowed the spec's text, so every
    error found after them (a case's unknown group here) named line 1."""
    (tmp_path / "problems").mkdir()
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    text = (PROBLEMS / "embedding_lookup.yaml").read_text()
    assert 'domain: "[0, vocab_size)"' in text
    first_group = next(line for line in text.splitlines() if line.strip().startswith("group:")
                       and text.index(line) > text.index("cases:"))
    path = tmp_path / "problems" / "embedding_lookup.yaml"
    path.write_text(text.replace(first_group, first_group.split("group:")[0] + "group: nosuchgroup", 1))
    with pytest.raises(SpecError) as info:
        load_problem(path)
    err = info.value
    assert "unknown group 'nosuchgroup'" in str(err)
    assert "nosuchgroup" in path.read_text().splitlines()[err.line - 1], err.line


def test_sizes_may_be_left_out_where_a_problem_has_no_size_symbol(tmp_path):
    """sinusoidal_positional_encoding has only scalar parameters: its cases (args only) and its
    generated block need no ``sizes: {}`` (an instructor got "is not valid under any of the
    given schemas" for the last case only), and the cases are the same."""
    import shutil

    from grader.cases import fixed_cases, generated_cases
    from grader.spec import find_problem

    src = find_problem("sinusoidal_positional_encoding")
    (tmp_path / "reference").mkdir()
    shutil.copy(src.parent.parent / "reference" / "sinusoidal_positional_encoding.py", tmp_path / "reference")
    text = src.read_text().replace("    sizes: {}\n", "").replace("  sizes: {}\n", "")
    assert "sizes: {}" not in text
    (tmp_path / "sinusoidal_positional_encoding.yaml").write_text(text)
    bare, full = load_problem(tmp_path / "sinusoidal_positional_encoding.yaml"), load_problem(src)
    a = fixed_cases(bare, ("float32",), 0) + generated_cases(bare, ("float32",), 0, 5)
    b = fixed_cases(full, ("float32",), 0) + generated_cases(full, ("float32",), 0, 5)
    assert [c.name for c in a] == [c.name for c in b]
    assert all(x.inputs.keys() == y.inputs.keys() and all(np.array_equal(x.inputs[k], y.inputs[k]) for k in x.inputs)
               for x, y in zip(a, b))
