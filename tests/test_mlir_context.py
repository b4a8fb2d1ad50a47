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


def test_within_the_grader_lowerings_share_a_context_per_thread_and_outside_they_do_not(monkeypatch):
    """Inside ``one_mlir_context`` (the reference's calls, trusted files in process) one thread's
    lowerings share a context and another thread gets its own; outside it (a library caller's
    own JAX code in the same process) each lowering gets a new one, as JAX makes them."""
    monkeypatch.setattr(jax_framework, "_always", False)
    monkeypatch.setattr(jax_framework, "CONTEXT_USES", 10_000)
    assert jax_framework.share_mlir_context() and jax_framework.share_mlir_context()   # idempotent
    with jax_framework.one_mlir_context():
        first, second = _context_of((3,)), _context_of((4, 5))
        other = []
        thread = threading.Thread(target=lambda: other.append(_context_of((6,))))
        thread.start()
        thread.join()
    assert first is second
    assert other and other[0] is not first
    outside = [_context_of((7,)), _context_of((8,))]
    assert outside[0] is not outside[1] and first not in outside


def test_a_context_is_renewed_after_its_uses(monkeypatch):
    from jax._src.interpreters import mlir
    jax_framework.share_mlir_context()
    monkeypatch.setattr(jax_framework, "CONTEXT_USES", 2)
    with jax_framework.one_mlir_context():
        contexts = [mlir.make_ir_context() for _ in range(5)]
    assert len({id(c) for c in contexts}) >= 2 and contexts[-1] is not contexts[0] and contexts[0] is contexts[1]


def test_the_reference_lowers_within_one_context(monkeypatch):
    """grader.reference.call runs the reference (exact and graded-dtype runs) inside
    ``one_mlir_context``, where JAX's lowerings share this thread's context."""
    from jax._src.interpreters import mlir
    from grader import reference
    from grader.spec import find_problem, load_problem
    active = []

    class Recording(jax_framework.one_mlir_context):
        def __enter__(self):
            entered = super().__enter__()
            active.append(getattr(mlir.make_ir_context.local, "active", 0))
            return entered
    monkeypatch.setattr(reference, "one_mlir_context", Recording)
    problem = load_problem(find_problem("softmax"))
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    low = reference.call(problem, {"logits": x.astype(np.float16)}, wide=False)
    exact = reference.call(problem, {"logits": x}, wide=True)
    assert active == [1, 1] and np.allclose(np.asarray(low, np.float64), np.asarray(exact), atol=1e-2)


def test_the_module_and_values_are_those_of_a_context_per_lowering(monkeypatch):
    """The module text (what the persistent cache's key hashes) and the values are the same as
    with JAX's own context per lowering."""
    from jax._src.interpreters import mlir
    jax_framework.share_mlir_context()
    x = np.linspace(-3, 3, 35, dtype=np.float32).reshape(5, 7)

    def run():
        f = jax.jit(lambda a: jax.nn.softmax(a @ a.T, axis=-1))   # a new function: lowered anew
        return f.lower(x).as_text(), np.asarray(f(x))

    with jax_framework.one_mlir_context():
        run()                                       # the thread's shared context made, used
        shared_text, shared_values = run()          # and used again
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
