"""JAX submissions: inputs are ``jax.Array`` on the CPU with ``jax_enable_x64`` on, graded in
bfloat16, float16, float32 and float64; a returned ``jax.Array`` is accepted.

Loaded by path in the submission's process too (see ``grader.frameworks``): standard library,
NumPy and JAX only, JAX imported inside the functions.
"""
NAME = "jax"
LABEL = "JAX"
MODULES = ("jax",)
REQUIREMENT = "pip install jax jaxlib"
RESULT = "a jax.Array or a numpy.ndarray"
#: address space (MiB) the submission's process needs to import it (JAX alone maps about 1.5 GB)
ADDRESS_SPACE_MIB = 1536
#: how code is written in JAX, for the wording of hints (``grader.words``; keys as in
#: ``grader/frameworks/numpy.py``). ``x64_off``: JAX's own cause of a float64 result computed in
#: float32, said to JAX learners only; the child turns ``jax_enable_x64`` on before the
#: submission is imported (:func:`setup`), so only the submission's own code can turn it off
#: (a newcomer read "JAX without jax_enable_x64" as a setting they had to make)
CODE = {
    "array": "a jax.Array",
    "noun": "an array",
    "as_array": "jnp.asarray",
    "cast": "{x}.astype(jnp.{dtype})",
    "cast_like": ".astype({x}.dtype)",
    "to_int": ".astype(jnp.int32)",
    "transpose": "jnp.transpose({x})",
    "swap_last": "jnp.swapaxes({x}, -1, -2)",
    "atleast_2d": "jnp.atleast_2d",
    "from_list": "jnp.array",
    "new_values": "operations that return new arrays",
    "ddof1": "ddof=1",
    "int_check": "jnp.issubdtype({x}.dtype, jnp.integer)",
    "x64_off": ", or jax_enable_x64 turned off by the submission (the grader turns it on)",
    "reduce_axis": "axis={axis}, keepdims=True",
    "axis_kw": "axis={axis}",
    "minus_max": "{x} - jnp.max({x}, axis={axis}, keepdims=True)",
    "other_framework": "",
}

_jax = None

#: XLA's CPU flag that keeps operations off YNNPACK (an empty list of fusion types). YNNPACK reads
#: the machine's CPU from /proc/cpuinfo once per process, the first time an operation uses it;
#: when that read failed (seen once in a spare child, at load 10-16, and every time where /proc is
#: not shown), every later reduction of the process raised "YNNPACK operation failed: unsupported
#: parameter", and a correct submission failed 37 cases. XLA's own kernels need no /proc.
NO_YNNPACK = "--xla_cpu_experimental_ynn_fusion_type="
#: the first jaxlib known to have that flag (an unknown flag in XLA_FLAGS ends the process)
NO_YNNPACK_SINCE = (0, 10)


#: lowerings that share one MLIR context (:func:`share_mlir_context`) before the thread makes a
#: new one, which bounds what one context holds in a long-lived process (``grader serve``)
CONTEXT_USES = 512
#: share contexts in every thread at every time (the submission's process), not only within
#: :func:`one_mlir_context` (the grader's own process, whose caller's lowerings stay JAX's own)
_always = False


def share_mlir_context(always: bool = False) -> bool:
    """Let JAX lower a thread's computations into one MLIR context, made anew after
    :data:`CONTEXT_USES` lowerings, instead of a new context for every lowering: in every
    thread with ``always`` (the submission's child, before the submission is imported), else
    only within :func:`one_mlir_context` (the grader's reference and trusted files, so that a
    library caller's own lowerings are made as JAX makes them).

    JAX (``jax._src.interpreters.mlir.make_ir_context``, 0.4-0.10) makes a context per lowering
    and loads every dialect into it: 3.6-3.9 ms each, which op-by-op code pays once per
    operation and signature even when the compiled executable then comes from the persistent
    cache. A warm check of tied_lm_head with a softmax applied (357 lowerings) took 3.8-3.9 s of
    calls, 2.3-2.6 s with one context, the results bit for bit the same and the cache keys
    the same (the modules' text does not change); a cold one 17.1 -> 15.0 s, its peak memory
    810 -> 391 MB. A module keeps its own context alive, so nothing lowered before a renewal
    is affected. Contexts are per thread: the grader's reference threads never share one.

    Returns:
        True when JAX's lowering can share contexts, False when this JAX has no such function
        (nothing is changed).
    """
    global _always
    import threading
    _always = _always or always
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return False
    make = getattr(mlir, "make_ir_context", None)
    if not callable(make):
        return False
    if getattr(make, "shared_by_grader", False):
        return True
    local = threading.local()

    def shared():
        if not (_always or getattr(local, "active", 0)):
            return make()
        if getattr(local, "context", None) is None or local.uses >= CONTEXT_USES:
            local.context, local.uses = make(), 0
        local.uses += 1
        return local.context

    shared.shared_by_grader = True
    shared.local = local
    shared.__wrapped__ = make
    mlir.make_ir_context = shared
    return True


class one_mlir_context:
    """A context manager: the JAX lowerings of this thread inside it share MLIR contexts
    (:func:`share_mlir_context`). Does nothing while JAX's lowering module is not imported, or
    is being imported by another thread (it never imports anything: importing JAX's modules
    from here while a reference thread was importing JAX gave that thread a partially
    initialised ``jax._src.traceback_util``, and the check failed)."""

    def __enter__(self) -> "one_mlir_context":
        import sys
        self.local = None
        mlir = sys.modules.get("jax._src.interpreters.mlir")
        if mlir is not None and not getattr(getattr(mlir, "__spec__", None), "_initializing", False) \
                and "jax" in sys.modules and not getattr(sys.modules["jax"].__spec__, "_initializing", False) \
                and share_mlir_context():
            self.local = mlir.make_ir_context.local
            self.local.active = getattr(self.local, "active", 0) + 1
        return self

    def __exit__(self, *exc: object) -> None:
        if self.local is not None:
            self.local.active -= 1


def _jaxlib_version() -> tuple[int, ...]:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return tuple(int(p) for p in version("jaxlib").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return ()


def setup(config: dict) -> dict:
    """Import JAX in the submission's process: CPU only, x64 on, no YNNPACK (:data:`NO_YNNPACK`,
    for a jaxlib that has the flag), the persistent compilation cache in ``config["jax_cache"]``
    (a private folder, or "" for none) and one MLIR context for its lowerings
    (:func:`share_mlir_context`). The versions to report.
    """
    global _jax
    import os
    if _jaxlib_version() >= NO_YNNPACK_SINCE:   # read when XLA's CPU backend starts, after this
        os.environ["XLA_FLAGS"] = " ".join(f for f in [os.environ.get("XLA_FLAGS", ""), NO_YNNPACK] if f)
    import jax
    _jax = jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    cache = config.get("jax_cache")
    if cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        try:  # XLA's own caches would put this run's folder name into every cache key
            jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
        except (AttributeError, KeyError, ValueError):
            pass
    import jax.numpy  # noqa: F401 - imported before the submission, as a learner's file does
    share_mlir_context(always=True)
    return {"jax": jax.__version__, "x64": bool(jax.config.jax_enable_x64)}


def warm_up() -> None:
    """Run two computations in a spare child, before it has a submission: ``x + 1`` of a float32
    scalar (the first lowering and compilation of a process also loads JAX's lowering rules and
    XLA's CPU client) and a float32 ``a @ b.T`` of (16, 64) by (48, 64) ones, op by op, as
    learners' code runs (the transpose's and the dot's lowering rules, and XLA's first call of
    its runtime matrix product: a dot that size calls Eigen, and the first such call of a
    process took 30-40 ms; tied_lm_head's first 2-D case paid it in every served check, measured
    with JAX 0.10). A served check would otherwise pay these after it was handed its submission.
    Nothing of any problem or case is computed: the shapes are fixed here."""
    import numpy as np
    _jax.jit(lambda x: x + 1)(np.float32(1)).block_until_ready()
    a = _jax.device_put(np.ones((16, 64), np.float32))
    b = _jax.device_put(np.ones((48, 64), np.float32))
    (a @ b.T).block_until_ready()


def to_framework(array):
    """The ``jax.Array`` the submission receives for the NumPy input ``array`` (a copy; its dtype
    canonicalised as ``jnp.asarray`` does: int64 to int32 without x64). ``jax.device_put``
    copies the buffer; ``jnp.asarray`` compiles a conversion per shape and dtype first (JAX
    0.10: 10-37 ms a new shape against 0.15 ms, measured), which was much of a JAX check's
    time (two inputs of each of tied_lm_head's 112 cases)."""
    return _jax.device_put(array)


def sync(result) -> None:
    """Wait until ``result`` is computed (JAX dispatches asynchronously), so the call's time is real."""
    if isinstance(result, _jax.Array):
        result.block_until_ready()


def to_numpy(result):
    """``(numpy array, "jax.Array")`` for a ``jax.Array`` result, else None."""
    import numpy as np
    if isinstance(result, _jax.Array):
        return np.asarray(result), "jax.Array"
    return None


def bind() -> None:
    """Import JAX for :func:`to_framework` / :func:`to_numpy` in this process, changing none of
    its configuration (``grader.run.inprocess``; :func:`setup` is the child's)."""
    global _jax
    import jax
    _jax = jax
