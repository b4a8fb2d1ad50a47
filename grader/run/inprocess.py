"""An executor that calls a Python function in this process: the verdict logic without a process.

:class:`InProcessExecutor` gives the same records as the sandboxed child (``grader._child``) for
the same function: an ``ok`` outcome with the result as a NumPy array, ``type`` for anything
else, ``exception`` / ``memory`` with the traceback, and the inputs changed in place in
``mutated``. The function gets copies of the case's arrays, as the child does (they cross a
pipe). It isolates nothing and enforces no limit: it is for tests of judging, scoring,
shrinking, hints and reports, and for outcomes scripted by a test (a function may return a
:class:`grader.results.CallOutcome`, e.g. a timeout or a crash, which is passed on as it is).
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable

import numpy as np

from .. import parsing
from ..cases import Case
from ..frameworks.jax import one_mlir_context
from ..protocol import before_call, convert_result, exception_facts, mutated_inputs, safe_str
from ..results import CallOutcome, ImportOutcome, frames_of
from . import MAX_RESTARTS, empty_output


class InProcessExecutor:
    """Calls ``fn`` on a case's inputs in this process: by position in the spec's parameter order,
    optional ones by keyword where the case says so, scalar parameters as Python values.

    Args:
        fn: the submission's function, or None for a submission that defines none (``start``
            then gives an ``import_error`` as the child would).
        versions: what :meth:`facts` reports as imported (e.g. ``{"jax": "0.7.1"}``).
        import_outcome: the :class:`ImportOutcome` :meth:`start` gives (default ``ok``).
        output: the captured output :meth:`close` gives (default: nothing written).
        submission: the file ``fn`` comes from ("": none), which an exception's frames are
            trimmed to and named by, as the child does (``grader.protocol.exception_facts``).

    Attributes:
        calls: the cases called, in order.
    """

    max_restarts = MAX_RESTARTS

    def __init__(self, fn: Callable[..., Any] | None, *, versions: dict[str, Any] | None = None,
                 import_outcome: ImportOutcome | None = None, output: dict[str, Any] | None = None,
                 submission: str = "") -> None:
        self.fn, self.versions = fn, dict(versions or {})
        self.submission = str(submission)
        self.import_outcome = import_outcome
        self.output = output
        self.restarts = 0
        self.calls: list[Case] = []
        self._crashed = False

    def start(self) -> ImportOutcome:
        if self.import_outcome is not None:
            return self.import_outcome
        if self.fn is None:
            return ImportOutcome(status="import_error", message="the submission defines no function")
        return ImportOutcome(status="ok", versions=dict(self.versions))

    def facts(self) -> dict[str, Any]:
        return {"jax": self.versions.get("jax"), "torch": self.versions.get("torch"), "memory_limit": "none"}

    def call(self, case: Case, timeout: float | None = None) -> CallOutcome:
        if self._crashed:             # the sandboxed session restarts a crashed process before the next call
            self.restarts += 1
            self._crashed = False
        self.calls.append(case)
        arrays = {k: v.copy() for k, v in case.inputs.items()}
        # the arguments in the framework's type, as the child makes them (framework_call's
        # to_framework and scope; a plain function gets the NumPy arrays themselves)
        to_framework = getattr(self.fn, "to_framework", None) or (lambda v: v)
        invoke = getattr(self.fn, "invoke", self.fn)
        with getattr(self.fn, "scope", contextlib.nullcontext)():
            given = {k: (v.item() if k in case.scalars else to_framework(v)) for k, v in arrays.items()}
        before = before_call(arrays, given, case.scalars)
        args = [v for k, v in given.items() if k not in case.keywords]
        kwargs = {k: v for k, v in given.items() if k in case.keywords}
        t0 = time.perf_counter()
        try:
            with one_mlir_context():   # JAX's lowerings of this trusted call, as in the child
                result = invoke(*args, **kwargs)  # type: ignore[misc]
        except MemoryError as exc:
            return CallOutcome(status="memory", message="MemoryError: the submission ran out of memory",
                               **self._facts(exc), seconds=time.perf_counter() - t0)
        except Exception as exc:  # noqa: BLE001 - the function's exception is data
            return CallOutcome(status="exception", message=f"{type(exc).__name__}: {safe_str(exc)}"[:2000],
                               **self._facts(exc),
                               error_types=[c.__name__ for c in type(exc).__mro__][:32],
                               seconds=time.perf_counter() - t0, mutated=self._mutated(arrays, given, before))
        seconds = time.perf_counter() - t0
        if isinstance(result, CallOutcome):
            self._crashed = result.status == "crash"
            return result
        # classified by the child's own functions (grader.protocol.convert_result, then
        # mutated_inputs: the conversion can run the function's code); a framework's array by
        # that framework's to_numpy when framework_call made ``fn``; copied, as a reply is
        to_numpy = getattr(self.fn, "to_numpy", None) or (lambda value: None)
        status, value, extra = convert_result(result, to_numpy)
        mutated = self._mutated(arrays, given, before)
        if status == "ok":
            return CallOutcome(status="ok", result=value.copy(order="C"), mutated=mutated, seconds=seconds,
                               result_type=extra)
        if status == "several":
            return CallOutcome(status="ok", results={k: a.copy(order="C") for k, a, _ in value},
                               result_types={k: t for k, _, t in value}, result_type=extra, mutated=mutated,
                               seconds=seconds)
        return CallOutcome(status="type", message=value, mutated=mutated, seconds=seconds,
                           result_types={extra[0]: extra[1]} if isinstance(extra, tuple) else {})

    def _mutated(self, arrays: dict[str, Any], given: dict[str, Any], before: dict[str, Any]) -> list[str]:
        """``grader.protocol.mutated_inputs`` with the framework's ``to_numpy``, as the child."""
        return mutated_inputs(arrays, given, before, getattr(self.fn, "to_numpy", None))

    def _facts(self, exc: BaseException) -> dict[str, Any]:
        """``frames`` and ``exception`` of ``exc``, as the child's reply gives them."""
        with parsing.AST_LOCK:   # Python 3.11's traceback reads each frame's source
            facts = exception_facts(exc, self.submission)
        return {"frames": frames_of(facts["frames"], os.path.basename(self.submission)),
                "exception": facts["exception"]}

    def close(self) -> dict[str, Any]:
        return dict(self.output) if self.output is not None else empty_output()

    def unprivate(self, text: str | None) -> str | None:
        return text


def framework_call(fn: Callable[..., Any], framework: str) -> Callable[..., Any]:
    """``fn`` called as the sandboxed child calls it: NumPy array inputs converted with
    ``grader.frameworks.<framework>.to_framework`` (JAX arrays under a thread-local
    ``jax_enable_x64``, torch tensors sharing the arrays' memory); the result is returned as the
    function gave it, and the returned callable's ``to_numpy`` (the framework's) is what
    :class:`InProcessExecutor` converts it with, as the child does. Nothing in this process's
    configuration is changed (``grader.frameworks.<fw>.bind``).

    Raises:
        GraderError: ``framework`` is not installed (``grader.frameworks.get``).
    """
    from .. import frameworks

    fw = frameworks.get(framework)
    fw.bind()
    scope: Callable[[], Any] | None = None
    if framework == "jax":
        import jax

        from ..reference import x64
        scope = lambda: x64(jax)  # noqa: E731

    def invoke(*args: Any, **kwargs: Any) -> Any:
        """``fn`` on arguments already the framework's (made with ``call.to_framework`` in
        ``call.scope``), waited for as the child waits."""
        with (scope or contextlib.nullcontext)():
            result = fn(*args, **kwargs)
            fw.sync(result)
        return result

    def call(*args: Any, **kwargs: Any) -> Any:
        conv = lambda v: fw.to_framework(v) if isinstance(v, np.ndarray) else v  # noqa: E731
        with (scope or contextlib.nullcontext)():   # the conversion too: a float64 input stays float64
            return invoke(*(conv(a) for a in args), **{k: conv(v) for k, v in kwargs.items()})

    # InProcessExecutor makes the arguments and converts the result as the child does (their
    # layouts before and after: grader.protocol.before_call; the result: convert_result with this
    # framework's to_numpy)
    call.to_numpy = fw.to_numpy  # type: ignore[attr-defined]
    call.to_framework = fw.to_framework  # type: ignore[attr-defined]
    call.invoke = invoke  # type: ignore[attr-defined]
    call.scope = scope or contextlib.nullcontext  # type: ignore[attr-defined]
    return call


def for_file(path: Any, function: str, framework: str) -> InProcessExecutor:
    """An :class:`InProcessExecutor` of ``function`` from the **trusted** file ``path`` (the
    project's own alternatives and mistakes, in a test), imported as a fresh module in this
    process and called through :func:`framework_call`. A file that fails to import or lacks the
    function gives an ``import_error`` start, as the child would.

    It runs the file's code unconfined: never for a learner's file.
    """
    import importlib.machinery
    import importlib.util
    import sys as _sys

    name = f"grader_inprocess_{abs(hash(str(path)))}"
    try:
        module = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(name, None, origin=str(path)))
        module.__file__ = str(path)
        _sys.modules[name] = module          # dataclasses and pickling look the module up
        with open(path, "rb") as f:          # compiled here: no __pycache__ beside the file
            source = f.read()
        if b"jax" in source:   # JAX's first import, once, under the reference's lock (threads)
            from ..reference import import_jax
            import_jax()
        code = compile(source, str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - a trusted file, see above
        fn = getattr(module, function)
        if not callable(fn):
            raise TypeError(f"{function} is a {type(fn).__name__}, not a function")
    except Exception as exc:  # noqa: BLE001 - the file's fault is an import outcome
        return InProcessExecutor(None, import_outcome=ImportOutcome(
            status="import_error", message=f"{type(exc).__name__}: {exc}"[:2000]))
    return InProcessExecutor(framework_call(fn, framework), submission=str(path))

