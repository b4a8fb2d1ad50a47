"""The submission's side of a grading run: import the learner's file, then answer call requests.

Run by the grader as ``python -I _child.py FD_IN FD_OUT SUBMISSION FUNCTION FRAMEWORK CONFIG``, in
a process of its own (see ``grader.runner``); CONFIG is JSON with ``limits``, ``policy`` (what
``grader.sandbox`` asks this process to apply to itself), ``token`` and ``jax_cache`` (this
process's own JAX cache folder and the read-only seed to fill it from, or null). It needs only the
standard library, NumPy, the framework the submission uses, and ``_confine.py``, ``protocol.py``
and ``frameworks/<framework>.py`` (that framework's set-up and conversions) beside this file,
loaded by path so that the grader package itself need not be importable here.

Before any submission code runs, this process confines itself (:func:`confine`, in
``grader/_confine.py``), in this order:
builds its file-system view (``unshare`` tier only), lowers its rlimits, drops every
capability, sets ``no_new_privs``, restricts itself with Landlock (``rlimits`` tier only) and
installs a seccomp filter. The hard limits and filters cannot be undone by the submission.

Nothing that decides a verdict happens here: this process never sees an expected value. It
reports what the submission returned (raw bytes behind a checked header), what it raised, and
whether it changed its inputs, and the grader judges. Every reply echoes the request's ``seq``
and the run's ``token``. ``op: export_cache`` sends back the files of the private JAX cache,
which the grader checks before keeping any (``grader.cache.store_jax_entries``).

``python -I _child.py --probe CONFIG`` applies the policy, finds and reads NumPy, checks that no
capability is left and prints ``probe-ok``: the grader's test of a sandbox tier.
"""
import importlib.machinery
import importlib.util
import os
import sys
import time


def _load_protocol():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_grader_protocol", os.path.join(here, "protocol.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_framework(name: str):
    """The module of framework ``name`` (``grader/frameworks/<name>.py``), loaded by path like
    ``protocol.py``: it needs only the standard library, NumPy and the framework itself."""
    if name not in ("numpy", "jax", "torch"):
        raise ValueError(f"unknown framework {name!r}")
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(f"_grader_framework_{name}",
                                                  os.path.join(here, "frameworks", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _name_warnings(submission: str, cells) -> None:
    """Warnings written as the learner has the files: a file in the submission's folder by its
    name (``solution.py:7: RuntimeWarning: ...``), a notebook's own line as its code cell and
    line (``cells``: ``grader.notebook.Notebook.cell_runs``), whatever the folder is called here."""
    import linecache
    import warnings

    folder = os.path.dirname(os.path.realpath(submission))
    base = os.path.basename(submission)
    runs = [r for r in cells if isinstance(r, list) and len(r) == 4 and all(type(x) is int for x in r)] \
        if isinstance(cells, list) else []

    def formatwarning(message, category, filename, lineno, line=None):
        name = str(filename)
        real = os.path.realpath(name) if name and not name.startswith("<") else name
        if real.startswith(folder + os.sep):
            name = real[len(folder) + 1:]
        place = f"{name}:{lineno}"
        if name == base:
            for start, count, cell, first in runs:
                if start <= lineno < start + count:
                    place = f"{name}, cell {cell}, line {first + lineno - start}"
                    break
        text = f"{place}: {category.__name__}: {message}\n"
        source = linecache.getline(filename, lineno) if line is None else line
        return text + (f"  {source.strip()}\n" if source and source.strip() else "")

    warnings.formatwarning = formatwarning


def _load_sibling(name: str, *parts: str):
    """A grader module beside this file (``parts`` under the package folder), loaded by path as
    ``name``: the grader package itself need not be importable here."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, *parts))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the confinement (``grader/_confine.py``): applied by :func:`main` before any submission code runs
_confine = _load_sibling("_grader_confine", "_confine.py")
SandboxError, confine = _confine.SandboxError, _confine.confine
_libc, _capabilities = _confine._libc, _confine._capabilities


def _watch_grader(fd_in: int) -> None:
    """Exit as soon as the grader's end of the request pipe is closed (the grader died).

    The parent-death signal cannot do this everywhere: privileged bubblewrap's monitor, this
    process's parent, keeps no capability, so the kernel refuses it the right to signal a
    process of the sandbox user, and its SIGKILL never arrives. A thread that only polls for
    the hang-up (it reads nothing) ends the process instead. A submission that holds the GIL
    on purpose can delay it; the grader's next check kills whatever is left of an unheld
    sandbox user (``grader.sandbox.SandboxUser.take``).
    """
    import select
    import threading

    def run() -> None:
        poller = select.poll()
        poller.register(fd_in, 0)                   # POLLHUP and POLLERR only: nothing is read
        while True:
            for _, event in poller.poll():
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    os._exit(0)

    threading.Thread(target=run, name="grader-watch", daemon=True).start()


def _close_other_fds(keep: set) -> None:
    """Close every descriptor but ``keep``: a wrapper's leftovers (an O_PATH descriptor of a host
    folder would let ``openat(fd, "..")`` walk out of the view) must never reach the submission."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        import resource
        fds = list(range(3, min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _private_jax_cache(spec) -> str:
    """Make this process's own JAX compilation cache folder and fill it from the seed; its path.

    ``spec`` is ``{"dir": ..., "seed": ...}`` from the grader (paths as this process sees them):
    ``dir`` is inside the working folder (a private tmpfs in the namespace tiers), ``seed`` a
    read-only copy of the warm entries of this exact submission source, or None. Runs before
    any submission code; only regular files are copied. Nothing here is trusted afterwards:
    the grader takes entries back only through :func:`_cache_files` and checks each one.
    """
    if not isinstance(spec, dict) or not spec.get("dir"):
        return ""
    target = str(spec["dir"])
    try:
        os.makedirs(target, mode=0o700, exist_ok=True)
    except OSError:
        return ""
    seed = spec.get("seed")
    if seed:
        import shutil
        import stat
        try:
            names = os.listdir(seed)
        except OSError:
            names = []
        for name in names:
            src = os.path.join(seed, name)
            try:
                if stat.S_ISREG(os.lstat(src).st_mode):
                    shutil.copyfile(src, os.path.join(target, name), follow_symlinks=False)
            except OSError:
                pass
    return target


def _cache_files(spec, max_bytes: int) -> dict:
    """The regular files of the private JAX cache (name -> uint8 array), at most ``max_bytes`` in all.

    The grader asks for them at the end of a run (``op: export_cache``) and checks every name
    and size again itself: after the submission's import this code may have been replaced.
    """
    import stat

    import numpy as np
    out: dict = {}
    if not isinstance(spec, dict) or not spec.get("dir"):
        return out
    folder, total = str(spec["dir"]), 0
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or total + st.st_size > max_bytes:
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                data = os.read(fd, st.st_size + 1)
            finally:
                os.close(fd)
        except OSError:
            continue
        if len(data) == st.st_size:
            out[name] = np.frombuffer(data, dtype=np.uint8)
            total += len(data)
    return out


def _probe(config: dict) -> int:
    """``--probe``: confine, find and read NumPy, check that no capability is left, print ``probe-ok``."""
    policy = config.get("policy", {})
    try:
        layers = confine(policy, config.get("limits", {}))
    except SandboxError as exc:
        sys.stderr.write(f"{exc}\n")
        return 3
    spec = importlib.util.find_spec("numpy")        # the install must be visible (a full import
    with open(spec.origin, "rb") as fh:              # costs 60 ms; the probe runs once per check)
        fh.read(1)
    if policy.get("tier", "none") != "none":
        caps = _capabilities()
        if caps.get("CapEff") or caps.get("CapPrm"):
            sys.stderr.write(f"capabilities left in the sandbox: {caps}\n")
            return 4
    print(" ".join(layers), "probe-ok")
    return 0


def _convert(result, fw, proto) -> tuple:
    """What the reply says of ``result``: ``grader.protocol.convert_result`` with the framework's
    own arrays converted by ``fw.to_numpy`` (the in-process executor classifies with the same
    function: one classifier of a call's result)."""
    return proto.convert_result(result, fw.to_numpy)


def _default_signals() -> None:
    """Every signal as a fresh Python has it, whatever the grader was started with: ignored
    signals and a blocked mask are inherited across exec (a grader started in the background by
    a shell ignores SIGQUIT, and a served check's child had its server's, not its client's:
    attack round 38). Python itself ignores SIGPIPE and SIGXFSZ; nothing is blocked."""
    import signal
    python_ignores = {signal.SIGPIPE, getattr(signal, "SIGXFSZ", signal.SIGPIPE)}
    for sig in signal.valid_signals():
        if sig in python_ignores or sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            if signal.getsignal(sig) == signal.SIG_IGN:
                signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _grader_stub(folder: str) -> None:
    """A ``grader`` module whose ``check`` does nothing, for a submission that imports it as the
    README teaches a notebook to (``from grader import check``; ``check(fn)`` in a cell): the
    package is not in the sandbox, and such a file or notebook, right in every other line, was
    graded FAIL 0.0 as an import failure (a newcomer's trial; a class's correct notebook scored
    0). Its result has the README's ``.passed`` (True: an ``assert check(f).passed`` cell must not
    stop a notebook being graded; attack round 48), ``.score`` and ``.max_score`` (0.0: a cell
    that formats them must not stop it either) and ``.report`` (a report's keys, any other a
    nested empty one), and says nothing of the verdict, which is worked out outside. Not when
    the submission's folder has a ``grader`` module of its own."""
    if any(os.path.exists(os.path.join(folder, name)) for name in ("grader.py", "grader")):
        return
    import types
    stub = types.ModuleType("grader", "Inside the grader's sandbox: check() does nothing there.")

    class Empty(dict):
        """The stand-in's report: a report's keys with harmless values, any other key another
        such dict (``r.report["environment"]["framework"]`` in a handed-in cell)."""

        def __missing__(self, key):
            return Empty()

    class Result:
        """What ``check`` returns inside the sandbox: no verdict (the grader's is worked out
        outside), numbers a cell may format or compare (``f"{r.score:.1f}"`` with None raised
        TypeError at import: a newcomer's correct notebook graded 0/10 as an import failure)."""
        passed, score, max_score = True, 0.0, 0.0
        report = Empty(passed=True, score=0.0, max_score=0.0, cases=[], groups=[], summary=[], hints=[])

        def __bool__(self) -> bool:
            return True

        def __repr__(self) -> str:
            return "check() is not run while the submission is graded"

    def check(*args, **kwargs):
        """Nothing: the submission is being graded already."""
        return Result()
    stub.check = check
    sys.modules["grader"] = stub


def main() -> int:
    import json
    _default_signals()
    if sys.argv[1] == "--probe":
        return _probe(json.loads(sys.argv[2]))
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    submission, function, framework = sys.argv[3], sys.argv[4], sys.argv[5]
    config = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
    token = str(config.get("token", ""))
    parent = config.get("parent_pid")
    if parent and config.get("policy", {}).get("tier", "none") in ("rlimits", "none"):
        if config["policy"].get("user"):            # checked again once the death signal is re-armed
            config["policy"]["user"]["parent"] = parent
        # started directly by the grader: die with it (the namespace tiers' wrappers do this)
        _libc().prctl(1, 9, 0, 0, 0)                # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() != parent:                  # it died before the line above
            return 3
    _close_other_fds({fd_in, fd_out})
    os.set_inheritable(fd_in, False)
    os.set_inheritable(fd_out, False)
    try:
        layers = confine(config.get("policy", {}), config.get("limits", {}))
    except SandboxError as exc:
        proto = _load_protocol()
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "sandbox_error", "message": str(exc)})
        return 3
    proto = _load_protocol()
    _watch_grader(fd_in)

    import numpy as np
    versions = {"numpy": np.__version__, "sandbox_layers": layers}
    # the framework's set-up (grader/frameworks/<name>.py), before any submission code runs
    fw = _load_framework(framework)
    awaiting = bool(config.get("await"))   # a spare: started ahead, told its submission later
    cache_spec = config.get("jax_cache")
    try:
        jax_cache = _private_jax_cache({**cache_spec, "seed": None} if awaiting and isinstance(cache_spec, dict)
                                       else cache_spec) if framework == "jax" else ""
        versions.update(fw.setup({"jax_cache": jax_cache}))
    except BaseException as exc:  # noqa: BLE001 - no submission code has run: this is the machine's
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in fw.MODULES:
            why = f"{fw.LABEL} is not installed where the grader runs; install it with {fw.REQUIREMENT}"
        elif isinstance(exc, MemoryError) or "failed to map" in str(exc) or "allocate memory" in str(exc):
            why = (f"importing {fw.LABEL} ran out of memory: the submission's memory limit is too low for "
                   f"{fw.LABEL} (raise --memory-mb; docs/security.md gives the sizes)")
        else:
            why = f"importing {fw.LABEL} failed before the submission ran"
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "import_error", "error": type(exc).__name__,
                                   "message": f"{why} ({type(exc).__name__}: {str(exc)[:300]})"})
        return 0

    # the framework's first computation (XLA starts its thread pools there) before the child says
    # it is confined: a process that dies before that frame failed in the machine (a sandbox that
    # could not start, threads or memory spent by another learner: XLA aborts when it cannot start
    # a thread, which was a correct JAX file's crash verdict, attack round 59), not in the
    # submission, none of whose code has run. A spare does it ahead, then says "waiting". Only
    # with an empty compilation cache: one seeded from the file's own earlier runs holds what its
    # code compiled, and a submission had put an endless loop under the warm-up's own key, so
    # that every later check of it "could not run" instead of failing (round 60)
    warm_up = getattr(fw, "warm_up", None)
    try:
        seeded = bool(jax_cache) and bool(os.listdir(jax_cache))
    except OSError:
        seeded = True
    if warm_up is not None and not seeded:
        try:
            warm_up()
        except Exception:  # noqa: BLE001 - a warm-up that fails leaves the first call to pay it
            pass
    if not awaiting:
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "confined"})

    if awaiting:
        # a spare child (runner.Spare): confined, its framework imported, no submission yet. The
        # grader writes the submission into the (read-only, empty until now) folder it was shown
        # and names the file; one submission, then this process ends (it is never handed another)
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "waiting"})
        try:
            header, _ = proto.read_frame(fd_in)
        except proto.PeerClosed:
            return 0
        function = header.get("function")
        try:   # the name's bytes, hex-encoded: any file name, not only UTF-8 (JSON cannot carry the rest)
            name = os.fsdecode(bytes.fromhex(str(header.get("file_hex"))))
        except ValueError:
            return 3
        if header.get("op") != "import" or not isinstance(function, str) \
                or not name or "/" in name or "\0" in name or name in (".", ".."):
            return 3
        submission = os.path.join(os.path.dirname(submission), name)
        config["cells"] = header.get("cells")
        if framework == "jax" and isinstance(cache_spec, dict):
            _private_jax_cache(cache_spec)   # the warm entries of this submission's source, staged just now

    # every object so far (the grader's, the framework's: JAX's several hundred thousand) lives as
    # long as this process: out of the collector's sight, a full collection during the
    # submission's calls does not walk them (one took 35-55 ms of a served JAX check of
    # tied_lm_head, at its 40th-60th call; measured with JAX 0.10)
    import gc
    gc.freeze()

    _name_warnings(submission, config.get("cells"))

    # import the submission as a module named after its file, from its own folder
    sys.path.insert(0, os.path.dirname(os.path.abspath(submission)))
    _grader_stub(os.path.dirname(os.path.abspath(submission)))
    started = time.monotonic()
    try:
        # an explicit source loader: any file name loads (spec_from_file_location wants .py)
        loader = importlib.machinery.SourceFileLoader("submission", submission)
        spec = importlib.util.spec_from_loader("submission", loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
    except SystemExit as exc:
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "import_error", "error": "SystemExit",
                                   "message": f"the submission called exit({exc.code!r}) while being imported",
                                   **proto.exception_facts(exc, submission)})
        return 0
    except BaseException as exc:  # noqa: BLE001 - anything at import time is the submission's failure
        facts = proto.exception_facts(exc, submission)   # a SyntaxError's place is its last frame
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "import_error", "error": type(exc).__name__,
                                   "message": (facts["exception"].splitlines() or [type(exc).__name__])[0],
                                   **facts})
        return 0
    fn = getattr(module, function, None)
    if not callable(fn):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == "submission")
        proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "import_error", "error": "MissingFunction",
                                   "message": f"the submission defines no function {function!r}"
                                              + (f" (it defines: {', '.join(found)})" if found else "")})
        return 0
    proto.write_frame(fd_out, {"seq": 0, "token": token, "status": "ready", "versions": versions,
                               "import_seconds": time.monotonic() - started})

    while True:
        try:
            header, arrays = proto.read_frame(fd_in)
        except proto.PeerClosed:
            return 0
        seq = header.get("seq")
        if header.get("op") == "exit":
            return 0
        if header.get("op") == "export_cache":
            files = _cache_files(config.get("jax_cache"), int(header.get("max_bytes", 0)))
            try:
                proto.write_frame(fd_out, {"seq": seq, "token": token, "status": "cache"}, files)
            except proto.PeerClosed:
                return 0
            continue
        names = header.get("order") or list(arrays)
        keywords = set(header.get("keywords") or ())
        scalars = set(header.get("scalars") or ())
        # scalar parameters as Python values (int, float, bool); arrays in the framework's type
        given = {k: (arrays[k].item() if k in scalars else fw.to_framework(arrays[k])) for k in names}
        args = [given[k] for k in names if k not in keywords]
        kwargs = {k: given[k] for k in names if k in keywords}
        before = proto.before_call(arrays, given, scalars)
        reply = {"seq": seq, "token": token}
        out = {}
        t0 = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
            fw.sync(result)
            seconds = time.perf_counter() - t0
            reply["seconds"] = seconds
            status, value, result_type = _convert(result, fw, proto)
            # after the conversion, which can run the submission's code (a subclass's hooks)
            reply["mutated"] = proto.mutated_inputs(arrays, given, before, fw.to_numpy)
            if status == "ok":
                reply["status"] = "ok"
                out["result"] = value
                reply["result_type"] = result_type
            elif status == "several":    # a tuple, list or dict of arrays: the grader decides if it may be one
                reply.update(status="ok", result_type=result_type, result_keys=[k for k, _, _ in value],
                             result_types=[t for _, _, t in value])
                out.update({f"result:{k}": arr for k, arr, _ in value})
            else:
                reply.update(status="type", type_name=value)
                if isinstance(result_type, tuple):   # a tuple, list or dict with an item that is no array
                    reply["bad_item"] = list(result_type)
        except MemoryError as exc:
            reply.update(status="memory", error="MemoryError",
                         message="MemoryError: the submission ran out of memory",
                         **proto.exception_facts(exc, submission), seconds=time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001 - the learner's exception is data
            reply.update(status="exception", error=type(exc).__name__,
                         error_mro=[c.__name__ for c in type(exc).__mro__][:32],
                         message=f"{type(exc).__name__}: {proto.safe_str(exc)}"[:2000],
                         **proto.exception_facts(exc, submission), seconds=time.perf_counter() - t0)
            try:   # a case that must raise is no pass when the inputs were changed on the way
                reply["mutated"] = proto.mutated_inputs(arrays, given, before, fw.to_numpy)
            except BaseException:  # noqa: BLE001 - the exception is the reply
                pass
        try:
            proto.write_frame(fd_out, reply, out)
        except proto.PeerClosed:
            return 0
        except MemoryError:
            proto.write_frame(fd_out, {"seq": seq, "token": token, "status": "memory", "error": "MemoryError",
                                       "message": "MemoryError while returning the result"})


if __name__ == "__main__":
    try:
        code = main()
    finally:
        sys.stdout.flush()
    os._exit(code)
