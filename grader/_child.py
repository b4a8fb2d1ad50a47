"""The submission's side of a grading run: import the learner's file, then answer call requests.

Run by the grader as ``python -I _child.py FD_IN FD_OUT SUBMISSION FUNCTION FRAMEWORK LIMITS``, in a
process of its own (see ``grader.runner``). It needs only the standard library, NumPy, the
framework the submission uses, and ``protocol.py`` beside this file, loaded by path so that
the grader package itself need not be importable here.

Nothing that decides a verdict happens here: this process never sees an expected value. It
reports what the submission returned (raw bytes behind a checked header), what it raised, and
whether it changed its inputs, and the grader judges.
"""
import hashlib
import importlib.util
import os
import sys
import time
import traceback


def _load_protocol():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_grader_protocol", os.path.join(here, "protocol.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _trim_traceback(exc: BaseException, submission: str) -> str:
    """The traceback from the first frame in the submission's file on (no grader frames)."""
    frames = traceback.extract_tb(exc.__traceback__)
    real = os.path.realpath(submission)
    for i, fr in enumerate(frames):
        if os.path.realpath(fr.filename) == real:
            frames = frames[i:]
            break
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-4000:]


def _digest(arr) -> str:
    return hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest()


def _apply_limits(limits: dict) -> None:
    """Lower this process's rlimits (soft and hard) before any submission code runs.

    Hard limits cannot be raised again by an unprivileged process, and the sandbox tiers drop
    privileges, so the submission is bound by them. RLIMIT_CPU keeps soft < hard: SIGXCPU
    first, SIGKILL at the hard limit.
    """
    import resource

    table = {"memory_bytes": resource.RLIMIT_AS, "file_bytes": resource.RLIMIT_FSIZE,
             "open_files": resource.RLIMIT_NOFILE, "processes": resource.RLIMIT_NPROC}
    for key, which in table.items():
        if limits.get(key):
            try:
                resource.setrlimit(which, (int(limits[key]), int(limits[key])))
            except (ValueError, OSError):
                pass
    for which, soft, hard in ((resource.RLIMIT_CORE, 0, 0),
                              (resource.RLIMIT_CPU, limits.get("cpu_seconds"), (limits.get("cpu_seconds") or 0) + 5)):
        if soft is not None:
            try:
                resource.setrlimit(which, (int(soft), int(hard)))
            except (ValueError, OSError):
                pass


def main() -> int:
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    submission, function, framework = sys.argv[3], sys.argv[4], sys.argv[5]
    import json
    _apply_limits(json.loads(sys.argv[6]) if len(sys.argv) > 6 else {})
    proto = _load_protocol()
    os.set_inheritable(fd_in, False)
    os.set_inheritable(fd_out, False)

    import numpy as np
    versions = {"numpy": np.__version__}
    jnp = None
    if framework == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        cache = os.environ.get("GRADER_JAX_CACHE")
        if cache:
            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        import jax.numpy as jnp
        versions["jax"] = jax.__version__
        versions["x64"] = bool(jax.config.jax_enable_x64)

    # import the submission as a module named after its file, from its own folder
    sys.path.insert(0, os.path.dirname(os.path.abspath(submission)))
    started = time.monotonic()
    try:
        spec = importlib.util.spec_from_file_location("submission", submission)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
    except SystemExit as exc:
        proto.write_frame(fd_out, {"seq": 0, "status": "import_error", "error": "SystemExit",
                                   "message": f"the submission called exit({exc.code!r}) while being imported",
                                   "traceback": _trim_traceback(exc, submission)})
        return 0
    except BaseException as exc:  # noqa: BLE001 - anything at import time is the submission's failure
        where = ""
        if isinstance(exc, SyntaxError):
            where = f" ({exc.filename}:{exc.lineno})"
        proto.write_frame(fd_out, {"seq": 0, "status": "import_error", "error": type(exc).__name__,
                                   "message": f"{type(exc).__name__}: {exc}{where}",
                                   "traceback": _trim_traceback(exc, submission)})
        return 0
    fn = getattr(module, function, None)
    if not callable(fn):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == "submission")
        proto.write_frame(fd_out, {"seq": 0, "status": "import_error", "error": "MissingFunction",
                                   "message": f"the submission defines no function {function!r}"
                                              + (f" (it defines: {', '.join(found)})" if found else ""),
                                   "traceback": ""})
        return 0
    proto.write_frame(fd_out, {"seq": 0, "status": "ready", "versions": versions,
                               "import_seconds": time.monotonic() - started})

    while True:
        try:
            header, arrays = proto.read_frame(fd_in)
        except proto.PeerClosed:
            return 0
        seq = header.get("seq")
        if header.get("op") == "exit":
            return 0
        names = header.get("order") or list(arrays)
        before = {k: _digest(v) for k, v in arrays.items()}
        args = [arrays[k] for k in names]
        if jnp is not None:
            args = [jnp.asarray(a) for a in args]
        reply = {"seq": seq}
        out = {}
        t0 = time.perf_counter()
        try:
            result = fn(*args)
            if jnp is not None and hasattr(result, "block_until_ready"):
                result.block_until_ready()
            seconds = time.perf_counter() - t0
            reply["seconds"] = seconds
            reply["mutated"] = [k for k, v in arrays.items() if _digest(v) != before[k]]
            is_array = isinstance(result, (np.ndarray, np.generic)) or (
                jnp is not None and isinstance(result, jax.Array))
            if not is_array:
                reply.update(status="type", type_name=f"{type(result).__module__}.{type(result).__qualname__}"
                             if type(result).__module__ != "builtins" else type(result).__qualname__)
            else:
                arr = np.asarray(result)
                if type(arr) is not np.ndarray:
                    arr = np.array(arr, copy=True).view(np.ndarray)
                if arr.dtype.name not in proto.DTYPE_WHITELIST:
                    reply.update(status="type", type_name=f"array of dtype {arr.dtype.name}")
                else:
                    reply["status"] = "ok"
                    out["result"] = np.ascontiguousarray(arr)
                    reply["result_type"] = "jax.Array" if jnp is not None and isinstance(result, jax.Array) \
                        else type(result).__name__
        except MemoryError as exc:
            reply.update(status="memory", error="MemoryError",
                         message="MemoryError: the submission ran out of memory",
                         traceback=_trim_traceback(exc, submission), seconds=time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001 - the learner's exception is data
            reply.update(status="exception", error=type(exc).__name__,
                         message=f"{type(exc).__name__}: {exc}"[:2000],
                         traceback=_trim_traceback(exc, submission), seconds=time.perf_counter() - t0)
        try:
            proto.write_frame(fd_out, reply, out)
        except proto.PeerClosed:
            return 0
        except MemoryError:
            proto.write_frame(fd_out, {"seq": seq, "status": "memory", "error": "MemoryError",
                                       "message": "MemoryError while returning the result"})


if __name__ == "__main__":
    try:
        code = main()
    finally:
        sys.stdout.flush()
    os._exit(code)
