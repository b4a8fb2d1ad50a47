"""Evaluate a problem's reference solution (JAX, trusted code) in the grader's process.

The reference runs on float64 images of each case's inputs (exact: every graded dtype embeds in
float64) with ``jax_enable_x64`` on and on the CPU, so it gives the exact logits to within
float64 rounding (Higham, section 3.1: at most ``gamma_n * S`` with ``gamma_n ~ n * 2**-53``),
far below any tolerance of a graded dtype; for float64 cases the tolerance bound counts that
error twice (``grader.compare``).

For the tolerance models that use a scale (``grader.tolerance``: ``sum_of_products``,
``masked_mean``) the same reference also gives the condition scale ``S = f(|x_1|, ..., |x_k|)``
with the absolute value taken of the *float* parameters only (integer and bool inputs, ids and
masks, are passed unchanged): for a function that is a sum of products of its inputs (a matmul,
an einsum, a masked mean), evaluating it on absolute values gives ``sum |a_i| |b_i|``, the
scale of the dot-product error bound.

Inputs reach the reference by parameter kind: float parameters as float64 images, integer and
bool parameters in their own dtype (never cast to a float dtype).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import threading
from typing import Any, Callable

import numpy as np

from .errors import GraderError
from .frameworks.jax import one_mlir_context
from .spec import Problem

_loaded: dict[str, Callable[..., Any]] = {}
_configured: list[bool] = []


def x64(jax: Any) -> Any:
    """A context manager that turns ``jax_enable_x64`` on for the calling thread only, restoring
    the previous value on exit; the calling process's global flag is never changed (a notebook
    kernel that grades in process keeps its own setting).

    ``jax.enable_x64`` (a config state usable as a context, as in JAX 0.10) or, where JAX lacks
    the top-level name (0.4.30 has only ``jax.experimental.enable_x64``, which enters
    ``config.enable_x64(True)``, read in its source): both are thread-local scopes.
    """
    scoped = getattr(jax, "enable_x64", None)
    if scoped is not None and callable(scoped):
        return scoped(True)
    from jax.experimental import enable_x64  # JAX before the top-level name

    return enable_x64(True)


def x64_scope() -> Any:
    """:func:`x64` for JAX as the reference runs it (CPU, the reference's compilation cache):
    a context in which trusted JAX code (the reference, a second reference used as an oracle)
    computes in float64 without touching the process's global flag."""
    return x64(_jax())


def import_jax() -> Any:
    """``import jax``; when this is its first import, with what the grader's reference runs ask
    of it unless the caller's environment says otherwise: the CPU platform only (JAX reads
    ``JAX_PLATFORMS`` when imported) and XLA's cheaper compile (``processes.CHEAP_COMPILE``, as
    the child has it; read when the CPU backend starts, which is done here: the references of
    248 cases of four pack problems 27.7 -> 21.3 CPU-s, the values bit for bit the same). Each
    variable is set for that alone and removed after it, so the caller's environment ends as
    it was."""
    with _IMPORT_LOCK:   # two threads' first imports of JAX met a partly initialised jax._src.lax.linalg
        if "jax" in sys.modules:
            import jax
            return jax
        from .processes import CHEAP_COMPILE
        ours = {k: v for k, v in (("JAX_PLATFORMS", "cpu"), ("XLA_FLAGS", CHEAP_COMPILE)) if k not in os.environ}
        os.environ.update(ours)
        try:
            import jax
            if "XLA_FLAGS" in ours:
                jax.devices("cpu")
        finally:
            for key in ours:
                os.environ.pop(key, None)
        return jax


#: held around the first ``import jax`` (``import_jax``): the reference threads of a check and
#: of ``grader validate``, and trusted files called in process (``grader.run.inprocess``), may
#: all reach it first
_IMPORT_LOCK = threading.Lock()


def _jax() -> Any:
    jax = import_jax()

    if not _configured:
        # the persistent compilation cache of the reference runs (a process-wide JAX setting,
        # set once, only when nobody set one; x64 is scoped per call, see x64())
        from .cache import jax_cache_dir
        path = jax_cache_dir("reference")
        if path and not jax.config.jax_compilation_cache_dir:
            jax.config.update("jax_compilation_cache_dir", path)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        _configured.append(True)
    return jax


def load_reference(problem: Problem) -> Callable[..., Any]:
    """The reference function of ``problem`` (imported once per process).

    Raises:
        GraderError: the reference module cannot be imported or lacks the function.
    """
    key = str(problem.reference_path)
    if key in _loaded:
        return _loaded[key]
    _jax()
    spec = importlib.util.spec_from_file_location(f"grader_reference_{problem.id}", problem.reference_path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - any failure of the instructor's file is a usage error
        raise GraderError(f"{problem.reference_path}: the reference solution failed to import: "
                          f"{type(exc).__name__}: {exc}") from None
    fn = getattr(module, problem.reference_function, None)
    if not callable(fn):
        raise GraderError(f"{problem.reference_path}: no function {problem.reference_function!r}")
    _loaded[key] = fn
    return fn


def _args(problem: Problem, inputs: dict[str, np.ndarray]) -> tuple[list[Any], dict[str, Any], list[str]]:
    """The reference's call: positional arguments, keyword arguments (``grader.cases.call_layout``)
    and the names of the float arrays (given as float64 images; integer and bool arrays as they
    are; scalar parameters as Python values; an optional parameter not in ``inputs`` left out)."""
    from .cases import call_layout

    layout = call_layout(problem, inputs)
    given: dict[str, Any] = {}
    floats: list[str] = []
    for p in problem.parameters:
        if p.name not in inputs:
            continue
        a = np.asarray(inputs[p.name])
        if p.name in layout["scalars"]:
            given[p.name] = a.item()
            continue
        floating = a.dtype.kind == "f" or a.dtype.name == "bfloat16"
        given[p.name] = np.asarray(a, dtype=np.float64) if floating else a
        if p.kind == "float" and floating:
            floats.append(p.name)
    args = [v for k, v in given.items() if k not in layout["keywords"]]
    kwargs = {k: v for k, v in given.items() if k in layout["keywords"]}
    return args, kwargs, floats


def call(problem: Problem, inputs: dict[str, Any], *, wide: bool = True) -> Any:
    """The reference's raw output on ``inputs`` (parameter name -> array or 0-d array).

    With ``wide`` (the exact run) float arrays go as float64 images under ``jax_enable_x64``;
    without it they go in their own dtype with x64 off, so that JAX computes in that dtype
    (its reductions of half dtypes accumulate in float32): the "reference in the graded dtype"
    of the derived tolerance (``grader.derived``). Its lowerings share this thread's MLIR
    context (``frameworks.jax.one_mlir_context``).

    Raises:
        Exception: whatever the reference raises (the callers word it).
    """
    jax = _jax()
    fn = load_reference(problem)
    if wide:
        args, kwargs, _ = _args(problem, inputs)
        with x64(jax), jax.default_device(jax.devices("cpu")[0]), one_mlir_context():
            return pick(problem, run(fn, args, kwargs))
    from .cases import call_layout

    layout = call_layout(problem, inputs)
    given = {k: (np.asarray(v).item() if k in layout["scalars"] else v) for k, v in inputs.items()}
    with _x32(jax), jax.default_device(jax.devices("cpu")[0]), one_mlir_context():
        # op by op, as a learner's code runs: compiled whole, XLA folds and fuses what the
        # graded dtype rounds step by step (an alternative of sinusoidal_positional_encoding
        # then failed at half the allowance it derived)
        return pick(problem, fn(*[v for k, v in given.items() if k not in layout["keywords"]],
                                **{k: v for k, v in given.items() if k in layout["keywords"]}))


#: calls JAX could not compile (Python control flow on values, a result that is no array), by
#: function and signature: called op by op without trying again (``run``). Per signature, not per
#: function: with the reference computed in several threads, a flag per function would make
#: which cases ran compiled depend on the threads' timing
_eager_only: set[tuple[Any, ...]] = set()
#: ``jax.jit`` of a reference function per layout of its non-array arguments
_jitted: dict[tuple[Any, ...], Any] = {}


def run(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` for trusted JAX code (a reference, an oracle), compiled whole with
    ``jax.jit`` per signature (shapes, dtypes, ``jax_enable_x64`` and the values of the
    arguments that are no array, which are static) rather than op by op: one XLA compilation a
    signature instead of one per operation and signature (softmax's validation: 312
    compilations, 8.2 of its 16 CPU-s, before). Only the exact (float64) runs come here: the
    runs in the graded dtype stay op by op (:func:`call`), as a learner's code runs. Anything
    the compiled call raises is raised again by the op-by-op call (a reference that must raise
    raises its own exception; a signature JAX cannot trace stays op by op). Whether a call runs
    compiled depends on its own signature only, never on which calls ran before it (the
    reference's threads, :func:`grader.plan.reference_threads`).

    Raises:
        Exception: whatever ``fn`` raises when called op by op.
    """
    static = tuple(i for i, a in enumerate(args) if not isinstance(a, np.ndarray))
    names = tuple(sorted(k for k, v in kwargs.items() if not isinstance(v, np.ndarray)))
    signature = _signature(fn, args, kwargs, static, names)
    if signature is not None and signature in _eager_only:
        return fn(*args, **kwargs)
    jax = _jax()
    key = (id(fn), static, names)
    compiled = _jitted.get(key)
    if compiled is None:
        compiled = _jitted[key] = jax.jit(fn, static_argnums=static, static_argnames=names)
    try:
        return compiled(*args, **kwargs)
    except Exception:  # noqa: BLE001 - op by op: its own exception, or a reference JAX cannot trace
        out = fn(*args, **kwargs)
        if signature is not None:   # it ran op by op where it did not compile: this signature, always
            _eager_only.add(signature)
        return out


def _signature(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], static: tuple[int, ...],
               names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """What ``jax.jit`` compiles ``fn(*args, **kwargs)`` for: each array's shape and dtype, the
    other arguments' values (static), and whether x64 is on; None when a static value cannot be
    a key (the call is then tried compiled each time)."""
    def one(a: Any) -> Any:
        return ("array", a.shape, a.dtype.str) if isinstance(a, np.ndarray) else ("static", type(a).__name__, a)

    x64_on = _jax().dtypes.canonicalize_dtype(np.float64) == np.float64   # this thread's setting
    key = (id(fn), static, names, x64_on, tuple(one(a) for a in args),
           tuple((k, one(kwargs[k])) for k in sorted(kwargs)))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def pick(problem: Problem, raw: Any) -> Any:
    """The reference's ``raw`` result, or, for one output of several (``problem.select``, see
    ``Problem.output_view``), that item: by name from a mapping, else by index.

    Raises:
        GraderError: the reference did not return a tuple, list or mapping with that output.
    """
    if problem.select is None:
        return raw
    index, name = problem.select
    try:
        if hasattr(raw, "keys"):
            return raw[name]
        if isinstance(raw, (tuple, list)):
            return raw[index]
    except (KeyError, IndexError):
        pass
    raise GraderError(f"{problem.reference_path}: the reference returned {type(raw).__name__}, without the output "
                      f"{name!r} (item {index}) the spec's returns.outputs declares")


def _x32(jax: Any) -> Any:
    """A thread-local scope with ``jax_enable_x64`` off (the counterpart of :func:`x64`)."""
    scoped = getattr(jax, "enable_x64", None)
    if scoped is not None and callable(scoped):
        return scoped(False)
    from jax.experimental import disable_x64

    return disable_x64()


def evaluate(problem: Problem, inputs: dict[str, np.ndarray], dtype: str | None = None,
             out_dtype: str | None = None, key: str = "") -> tuple[np.ndarray, np.ndarray | None]:
    """The exact output and, for a model with a scale, ``S``; both float64 NumPy arrays.

    For the ``derived`` model the "scale" is the per-element allowance itself
    (``grader.derived.allowance``), for the case's graded ``dtype`` and ``out_dtype``; ``key``
    seeds its probes (the case's name).

    Args:
        inputs: parameter name -> array; float parameters in any floating dtype (converted to
            float64 here), integer and bool parameters in their dtype (passed unchanged),
            scalar parameters as 0-d arrays (passed as Python values).

    Raises:
        GraderError: the reference raised or returned something that is not an array.
    """
    from .tolerance import model

    jax = _jax()
    args, kwargs, floats = _args(problem, inputs)
    name = problem.tolerance["model"]
    try:
        raw = call(problem, inputs)
        ref = np.asarray(raw)
        if ref.dtype.kind not in "biu":
            ref = np.asarray(ref, dtype=np.float64)
        scale = None
        if name == "derived" and ref.dtype.kind == "f" and problem.checker is None:
            from .derived import allowance
            scale = allowance(call, problem, inputs, ref, dtype or "float64", out_dtype or dtype or "float64", key,
                              length=_longest_sum(load_reference(problem), args, kwargs))
        elif model(name).uses_scale:
            fn = load_reference(problem)
            absolute = [np.abs(a) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args]
            with x64(jax), jax.default_device(jax.devices("cpu")[0]):
                scale = np.asarray(run(fn, absolute, kwargs), dtype=np.float64)
    except GraderError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise GraderError(f"{problem.reference_path}: the reference solution raised "
                          f"{type(exc).__name__}: {exc}") from None
    return ref, scale


#: JAX primitives that add up many terms, and how many each adds per output element
_SUMMING = ("reduce_sum", "reduce_prod", "cumsum", "cumprod", "cumlogsumexp", "dot_general")


def _summed(eqn: Any) -> int:
    """How many terms one ``eqn`` adds (or multiplies) into each output element: the product of
    its reduced (or contracted) axes' lengths; 1 for any other primitive."""
    name = eqn.primitive.name
    if name not in _SUMMING:
        return 1
    shape = tuple(getattr(eqn.invars[0].aval, "shape", ()))
    if name == "dot_general":
        (contract, _), _ = eqn.params["dimension_numbers"]
        axes = contract
    elif name in ("reduce_sum", "reduce_prod"):
        axes = eqn.params.get("axes", ())
    else:
        axes = (eqn.params.get("axis", 0),)
    n = 1
    for a in axes:
        if 0 <= int(a) < len(shape):
            n *= int(shape[int(a)])
    return n


def _longest(jaxpr: Any) -> int:
    """The longest sum in ``jaxpr`` and the jaxprs nested in its equations (jit, cond, scan...)."""
    longest = 1
    for eqn in jaxpr.eqns:
        longest = max(longest, _summed(eqn))
        for value in eqn.params.values():
            for sub in (value if isinstance(value, (list, tuple)) else (value,)):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    longest = max(longest, _longest(inner))
    return longest


def longest_sum(problem: Problem, inputs: dict[str, Any]) -> int:
    """``L``: the most terms any one sum of the reference adds on ``inputs`` (its ``reduce_sum``,
    ``dot_general`` contractions, cumulative sums), read from the reference's jaxpr
    (``jax.make_jaxpr``, traced once, nothing computed); 1 for a reference that sums nothing, or
    one that cannot be traced (a Python loop over values, a host callback).

    The derived tolerance allows a correct implementation the rounding of a sum of ``L`` terms
    in another order (``grader.derived``).
    """
    args, kwargs, _ = _args(problem, inputs)
    return _longest_sum(load_reference(problem), args, kwargs)


def _longest_sum(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> int:
    """:func:`longest_sum` of the reference ``fn`` on the arguments :func:`_args` made.

    Every array argument is traced; if the reference cannot be traced so (it turns an index
    array into NumPy, ``np.asarray(targets)``, to index or one-hot with it), only the float
    arrays are traced and the others are passed as they are: a sum's length is read from the
    shapes, which the integer values do not change.
    """
    jax = _jax()
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    floats = [i for i in arrays if args[i].dtype.kind in "fc" or args[i].dtype.name == "bfloat16"]

    def trace(traced_at: list[int]) -> int:
        def traced(*xs: Any) -> Any:
            given = list(args)
            for i, x in zip(traced_at, xs):
                given[i] = x
            return fn(*given, **kwargs)
        with x64(jax), jax.default_device(jax.devices("cpu")[0]):
            return _longest(jax.make_jaxpr(traced)(*[args[i] for i in traced_at]).jaxpr)

    for traced_at in (arrays, floats) if floats != arrays else (arrays,):
        try:
            return trace(traced_at)
        except Exception:  # noqa: BLE001 - a reference JAX cannot trace this way
            continue
    return 1


def must_raise(problem: Problem, inputs: dict[str, np.ndarray], accepted: tuple[str, ...]) -> None:
    """Check that the reference raises one of ``accepted`` (type names, a subclass counts) on ``inputs``.

    Raises:
        GraderError: the reference returned instead, or raised another type (a spec or
            reference fault: the case's contract and the reference disagree).
    """
    try:
        call(problem, inputs)
    except Exception as exc:  # noqa: BLE001
        names = {c.__name__ for c in type(exc).__mro__}
        if names & set(accepted):
            return
        raise GraderError(f"{problem.reference_path}: the reference raised {type(exc).__name__}: {exc} "
                          f"where the spec wants one of {', '.join(accepted)}") from None
    raise GraderError(f"{problem.reference_path}: the reference returned where the spec wants it to raise "
                      f"one of {', '.join(accepted)}")
