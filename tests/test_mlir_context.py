"""One MLIR context per thread for JAX's lowerings (``grader.frameworks.jax.share_mlir_context``),
in the reference's process and in a JAX submission's child: the same values, the same cache
keys, a fraction of the per-lowering cost."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from grader.frameworks import jax as jax_framework

from .conftest import run_grader

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.cli_in_process


def _context_of(shape: tuple[int, ...]):
    from jax._src.interpreters import mlir
    del mlir   # imported for its side effect only: the patched function is what lowering calls
    lowered = jax.jit(lambda x: jax.numpy.exp(x) * 2).lower(np.ones(shape, np.float32))
    return lowered.compiler_ir().context


def test_lowerings_of_one_thread_share_a_context_and_other_threads_get_their_own(monkeypatch):
    assert jax_framework.share_mlir_context()
    assert jax_framework.share_mlir_context()       # a second call changes nothing
    monkeypatch.setattr(jax_framework, "CONTEXT_USES", 10_000)
    first, second = _context_of((3,)), _context_of((4, 5))
    assert first is second
    other = []
    thread = threading.Thread(target=lambda: other.append(_context_of((6,))))
    thread.start()
    thread.join()
    assert other and other[0] is not first


def test_a_context_is_renewed_after_its_uses(monkeypatch):
    from jax._src.interpreters import mlir
    jax_framework.share_mlir_context()
    monkeypatch.setattr(jax_framework, "CONTEXT_USES", 2)
    contexts = [mlir.make_ir_context() for _ in range(5)]
    assert len({id(c) for c in contexts}) >= 2 and contexts[-1] is not contexts[0]


def test_the_module_and_values_are_those_of_a_context_per_lowering(monkeypatch):
    """The module text (what the persistent cache's key hashes) and the values are the same as
    with JAX's own context per lowering."""
    from jax._src.interpreters import mlir
    jax_framework.share_mlir_context()
    x = np.linspace(-3, 3, 35, dtype=np.float32).reshape(5, 7)

    def run():
        f = jax.jit(lambda a: jax.nn.softmax(a @ a.T, axis=-1))   # a new function: lowered anew
        return f.lower(x).as_text(), np.asarray(f(x))

    shared_text, shared_values = run()
    monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context.__wrapped__)
    own_text, own_values = run()
    assert shared_text == own_text and np.array_equal(shared_values, own_values)


SHARES = """
import jax.numpy as jnp
from jax._src.interpreters import mlir


def tied_lm_head(hidden, embedding_matrix):
    out = jnp.matmul(hidden, embedding_matrix.T)
    return out if getattr(mlir.make_ir_context, "shared_by_grader", False) else out + 1
"""


def test_a_jax_child_lowers_into_one_context(tmp_path):
    sub = tmp_path / "tied_lm_head.py"
    sub.write_text(SHARES)
    run = run_grader("check", str(sub), "--problem", "tied_lm_head", "--case", "worked_example[float32]",
                     "--format", "json")
    assert run.code == 0, run.stdout[-800:] + run.stderr[-800:]
