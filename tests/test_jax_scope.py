"""``--jax-cache-scope``: one learner's checks (a notebook kernel's ``check(fn)``, the exercise
page) keep their JAX compilations for the learner, not for one exact source, so an edited
function compiles only what changed; without it (``grader grade``, a platform's autograder) a
store is keyed by the source, and another source never loads it (docs/security.md, class 3)."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader import cache
from grader.notebook_check import _kernel_scope, scope_of

from .conftest import run_grader

pytestmark = pytest.mark.cli_in_process

SOURCE = b"def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n"
EDITED = SOURCE + b"# edited\n"


def test_a_scope_keys_the_store_by_the_learner_not_by_the_source():
    scoped = [cache.submission_key(src, "tied_lm_head", "jax", scope="0123456789abcdef") for src in (SOURCE, EDITED)]
    assert scoped[0] == scoped[1]
    assert cache.submission_key(SOURCE, "tied_lm_head", "jax", scope="fedcba9876543210") != scoped[0]
    assert cache.submission_key(SOURCE, "embedding_lookup", "jax", scope="0123456789abcdef") != scoped[0]
    # without a scope: by source, as before
    assert cache.submission_key(SOURCE, "tied_lm_head", "jax") != cache.submission_key(EDITED, "tied_lm_head", "jax")
    assert cache.submission_key(SOURCE, "tied_lm_head", "jax") not in scoped


def _defined(source: bytes, filename: str, module: str = "__main__"):
    """``tied_lm_head`` as a kernel defines it: ``source`` run in a namespace named ``module``,
    its code naming ``filename`` (a cell's, or the file ``%run`` ran)."""
    namespace = {"__name__": module}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["tied_lm_head"]


def test_a_kernel_scopes_its_cells_together_each_run_file_apart_and_imports_not_at_all(tmp_path):
    """A function from a cell gets the kernel's scope; one run from a file (``%run alice.py``)
    the kernel's and that file's (a learner trial: two learners' files run into one kernel
    shared a scope); one imported from a module none (attack round thirty: an instructor's
    script checking each learner's file), so its compilations are keyed by its source."""
    first = _kernel_scope()
    assert first == _kernel_scope() and len(first) == 32 and int(first, 16) >= 0
    assert scope_of(_defined(SOURCE, "/tmp/ipykernel_1234/5678.py")) == first
    assert scope_of(_defined(EDITED, "<ipython-input-3-abc>")) == first
    alice, bob = tmp_path / "alice.py", tmp_path / "bob.py"
    alice.write_bytes(SOURCE)
    bob.write_bytes(SOURCE)
    ran = [scope_of(_defined(SOURCE, str(alice))), scope_of(_defined(EDITED, str(alice))),
           scope_of(_defined(SOURCE, str(bob)))]
    assert ran[0] == ran[1] and ran[0] != ran[2] and first not in ran and None not in ran
    assert scope_of(_defined(SOURCE, str(alice), module="alice")) is None


def test_the_page_gives_its_server_scope():
    from grader.web.checks import Checker
    checker = Checker()
    argv = checker.arguments("tied_lm_head", "jax")
    assert argv[argv.index("--jax-cache-scope") + 1] == checker.scope
    assert Checker().scope != checker.scope


@pytest.mark.parametrize("token", ["short", "a" * 129, "has space ok", "../../etc/pass"])
def test_a_bad_scope_token_is_one_line_and_exit_2(token):
    run = run_grader("check", "submissions/correct_numpy.py", "--jax-cache-scope", token)
    assert run.code == 2 and "--jax-cache-scope" in run.stderr and "Traceback" not in run.stderr, run.stderr


def _stores(root: Path) -> dict[str, set[str]]:
    """The submissions' JAX stores under the cache ``root``: folder name -> its entries."""
    return {d.name: {f.name for f in d.iterdir()} for base in root.glob("jax-submissions-*") for d in base.iterdir()}


def test_an_edited_function_in_one_scope_reuses_its_compilations(tmp_path):
    """Two sources with the same operations, checked in one scope: one store, and the edited
    one compiles nothing new; the same edit without a scope gets a store of its own."""
    env = {"GRADER_CACHE_DIR": str(tmp_path / "cache")}
    sub = tmp_path / "tied_lm_head.py"
    args = ["--problem", "tied_lm_head", "--framework", "jax", "--case", "worked_example[float32]",
            "--format", "json"]
    sub.write_bytes(b"import jax.numpy as jnp\n\n\n" + SOURCE)
    first = run_grader("check", str(sub), *args, "--jax-cache-scope", "0123456789abcdef", env=env)
    assert first.code == 0, first.stderr[-600:]
    stores = _stores(tmp_path / "cache")
    assert len(stores) == 1 and next(iter(stores.values())), stores      # its compilations were kept
    sub.write_bytes(b"import jax.numpy as jnp\n\n\n" + EDITED)
    second = run_grader("check", str(sub), *args, "--jax-cache-scope", "0123456789abcdef", env=env)
    assert second.code == 0, second.stderr[-600:]
    assert _stores(tmp_path / "cache") == stores                          # nothing compiled anew
    third = run_grader("check", str(sub), *args, env=env)
    assert third.code == 0, third.stderr[-600:]
    assert len(_stores(tmp_path / "cache")) == 2                          # by source: a store of its own
