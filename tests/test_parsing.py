"""One conversion to Python AST objects at a time in the grader's process (grader/parsing.py).

CPython 3.11 (gh-106905) fails a valid parse with ``SystemError: AST constructor recursion depth
mismatch`` when two threads convert at once; CI at load 7 failed a correct exercise in
``grader validate`` this way (NumPy parses every .npy header of the case cache with
``ast.literal_eval`` while the mistakes are graded in threads).
"""
from __future__ import annotations

import ast

import numpy as np
import pytest

from grader import cache, parsing, siblings
from grader.cases import fixed_cases
from grader.spec import load_problem

from .conftest import ROOT

MISMATCH = "AST constructor recursion depth mismatch (before=51, after=45)"


def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    p = load_problem(ROOT / "problems" / "tied_lm_head.yaml")
    items = [(c, np.arange(3.0), None) for c in fixed_cases(p, ("float32",), 2)]
    cache.store_cases("k", items)
    return items


def test_a_case_cache_read_parses_no_python_so_no_other_thread_can_interleave_it(tmp_path, monkeypatch):
    """The case file's header is JSON (format 4): reading it never builds Python AST objects,
    which an ``.npz`` did per array (NumPy's ``ast.literal_eval`` of each ``.npy`` header) and
    which failed under threads on Python 3.11 (gh-106905)."""
    items = _store(tmp_path, monkeypatch)
    real, parsed = ast.parse, []
    monkeypatch.setattr(ast, "parse", lambda *a, **k: (parsed.append(1), real(*a, **k))[1])
    loaded = cache.load_cases("k")
    assert loaded is not None and [c.name for c, _, _ in loaded] == [c.name for c, _, _ in items]
    assert parsed == []


def test_the_grader_s_parse_of_learner_source_holds_the_lock(monkeypatch):
    real, held = ast.parse, []
    monkeypatch.setattr(ast, "parse", lambda *a, **k: (held.append(parsing.AST_LOCK._is_owned()), real(*a, **k))[1])
    tree = siblings.parse("import numpy as np\ndef f(x):\n    return x\n", "f.py")
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["f"]
    assert held == [True]
    assert parsing.format_exception(ValueError("x")).endswith("ValueError: x\n")


def _failing_first(real, times, message=MISMATCH):
    calls = []

    def parse(*args, **kwargs):
        calls.append(1)
        if len(calls) <= times:
            raise SystemError(message)
        return real(*args, **kwargs)
    return parse, calls


def test_a_parse_interleaved_by_another_thread_is_tried_again(monkeypatch):
    fake, calls = _failing_first(ast.parse, 1)
    monkeypatch.setattr(ast, "parse", fake)
    tree = parsing.parse("x = 1\n")
    assert isinstance(tree.body[0], ast.Assign) and len(calls) == 2


def test_a_persistent_or_other_system_error_is_not_hidden(monkeypatch):
    fake, calls = _failing_first(ast.parse, 100)
    monkeypatch.setattr(ast, "parse", fake)
    with pytest.raises(SystemError, match="mismatch"):
        parsing.parse("x = 1\n")
    assert len(calls) == parsing.RETRIES + 1
    other, calls = _failing_first(ast.parse, 1, "some other interpreter fault")
    monkeypatch.setattr(ast, "parse", other)
    with pytest.raises(SystemError, match="other"):
        parsing.parse("x = 1\n")
    assert len(calls) == 1
