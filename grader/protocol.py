"""The wire format between the grader and the submission's process.

Every message is one frame::

    b"GRD1" | uint32 big-endian header length | header (UTF-8 JSON object) | payloads

The header carries ``seq`` (the request's sequence number, echoed in the reply), ``token``
(a random string per run, echoed too; see below), and for each array
``{"name", "dtype", "shape", "nbytes"}``; the payloads follow in that order as raw C-order
bytes. Arrays never travel as pickles: a pickle would run code in the reader.

The reader (the grader) checks, before it reads any payload: the magic, a header length cap
(:data:`MAX_HEADER`), that the header is a JSON object, unique array names, the dtype against a
whitelist (:data:`DTYPE_WHITELIST`), the shape (at most :data:`MAX_DIMS` axes, each at most
:data:`MAX_AXIS`), that ``nbytes == prod(shape) * itemsize``, and a total payload cap. Any
violation raises :class:`ProtocolError`, which the runner turns into a ``crash`` failure; so
does a missing frame before the deadline (:class:`Timeout`, a ``timeout`` failure) or a closed
channel (:class:`PeerClosed`).

The pipes are inherited descriptors, so the submission can find them (``/proc/self/fd``) and
write frames of its own. That cannot forge a verdict: the grader computes the verdict from the
array in the reply, and the submission could have returned that array anyway. The runner
rejects replies whose ``seq`` or ``token`` differ from the request's, which catches stale and
garbled frames; the token is not a secret from the submission (the child learns it from its
command line, which the submission can read too).

This module is imported by both sides; the submission side (``grader/_child.py``) loads it by
file path so that the child needs nothing of the grader package but this file.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any, Callable

import numpy as np

MAGIC = b"GRD1"
MAX_HEADER = 1 << 20          # bytes of JSON header
MAX_PAYLOAD = 1 << 30         # bytes of array data in one frame (1 GiB)
MAX_DIMS = 32
WATCH_SLICE = 0.1            # seconds between calls of a read's or write's ``watch``
MAX_AXIS = 1 << 40            # largest length of one axis
DTYPE_WHITELIST = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
})


#: most items of a returned tuple, list or dict sent as several results (a spec with several outputs)
MAX_ITEMS = 16


def type_name(value: Any) -> str:
    """``value``'s type as a reply names it: a builtin's name (``list``), else ``module.QualName``."""
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def convert_one(result: Any, to_numpy: Callable[[Any], Any]) -> tuple[str, Any, str]:
    """``("ok", C-contiguous NumPy array, type name)`` of a Python number, a NumPy array (a
    subclass as a plain copy) or a framework's own array (``to_numpy(result)``: ``(array, type
    name)`` or None, ``grader.frameworks.<fw>.to_numpy``), else ``("type", what it is, "")``: the
    type's name, ``"array of dtype X"`` outside :data:`DTYPE_WHITELIST`, or the framework's own
    words for a tensor NumPy cannot hold. Used by the sandboxed child and the in-process executor
    alike."""
    own, result_type = None, type(result).__name__
    if type(result) in (bool, int, float):   # a Python number: the grader decides if it may be one
        result = np.asarray(result)
    if not isinstance(result, (np.ndarray, np.generic)):
        try:  # the framework's own array (jax.Array, torch.Tensor) as a NumPy array
            own = to_numpy(result)
        except TypeError as exc:  # a tensor of a dtype NumPy lacks: "array of dtype ..."
            return "type", str(exc)[:200], ""
        if own:
            result, result_type = own
    if not isinstance(result, (np.ndarray, np.generic)):
        return "type", type_name(result), ""
    arr = np.asarray(result)
    if type(arr) is not np.ndarray:
        arr = np.array(arr, copy=True).view(np.ndarray)
    if arr.dtype.name not in DTYPE_WHITELIST:
        return "type", f"array of dtype {arr.dtype.name}", ""
    return "ok", (arr if arr.flags.c_contiguous else arr.copy(order="C")), result_type


def convert_result(result: Any, to_numpy: Callable[[Any], Any]) -> tuple[str, Any, Any]:
    """What a reply says of a call's ``result``: :func:`convert_one`'s, or for a tuple, list or
    dict of at most :data:`MAX_ITEMS` arrays (dict keys: identifiers of at most 64 characters)
    ``("several", [(key, array, type name)], "tuple" | "list" | "dict")``; a container with any
    other item is ``("type", the container's name, (key, what the first such item is))``, and
    one of no or too many items (or other keys) ``("type", its name, "")``."""
    if not isinstance(result, (tuple, list, dict)):
        return convert_one(result, to_numpy)
    kind = "dict" if isinstance(result, dict) else ("list" if isinstance(result, list) else "tuple")
    name = type_name(result)
    if not 0 < len(result) <= MAX_ITEMS:
        return "type", name, ""
    items = list(result.items()) if kind == "dict" else list(enumerate(result))
    if kind == "dict" and not all(type(k) is str and 0 < len(k) <= 64 and k.isidentifier() for k, _ in items):
        return "type", name, ""
    converted = []
    for key, value in items:
        status, arr, item_type = convert_one(value, to_numpy)
        if status != "ok":   # the container, and its first item that is no array: (key, what it is)
            return "type", name, (str(key), arr)
        converted.append((str(key), arr, item_type))
    return "several", converted, kind


def layout(arg: Any) -> tuple[Any, Any, str]:
    """What of an argument can change in place besides its values: shape, strides and dtype, read
    from the object the submission was given (a NumPy array; a torch tensor, whose ``t_()`` or
    ``resize_`` changes the tensor but not the NumPy array it shares memory with; a JAX array,
    which has no strides). One that cannot be read is compared as it reads."""
    try:
        strides = getattr(arg, "strides", None)
        if strides is None and callable(getattr(arg, "stride", None)):
            strides = arg.stride()
        shape = getattr(arg, "shape", None)
        return (tuple(shape) if shape is not None else None, tuple(strides) if strides is not None else None,
                str(getattr(arg, "dtype", "")))
    except Exception:  # noqa: BLE001 - the submission's object: whatever it raises
        return (None, None, "")


def before_call(arrays: dict[str, np.ndarray], given: dict[str, Any],
                scalars: frozenset[str] | set[str] = frozenset()) -> dict[str, tuple[bytes, Any]]:
    """What :func:`mutated_inputs` compares after the call: each case array's bytes, and the
    layouts (:func:`layout`) of the array and of the argument made of it (``given[name]``; a
    parameter in ``scalars``, given as a Python number, has none). Bytes, not a digest: a copy and a
    memcmp, 20 ms for 17 MB against 58 ms for two BLAKE2 digests (tied_lm_head's real_size).

    Args:
        arrays: the case's inputs as NumPy arrays (the framework's arguments share their memory
            where the framework allows: torch tensors, NumPy itself).
        given: what the function is called with, by parameter name.
    """
    return {k: (v.tobytes(), None if k in scalars or k not in given else (layout(v), layout(given[k])))
            for k, v in arrays.items()}


def mutated_inputs(arrays: dict[str, np.ndarray], given: dict[str, Any],
                   before: dict[str, tuple[bytes, Any]],
                   to_numpy: Callable[[Any], Any] | None = None) -> list[str]:
    """The parameters a call changed in place (its ``mutated``, in ``arrays``' order): values
    (bytes), or the shape, strides or dtype of the array or of the argument given
    (``hidden.shape = (-1, d)`` and ``E.t_()`` change those, not the bytes), or, with the
    framework's ``to_numpy`` (``grader.frameworks.<fw>.to_numpy``), the values the argument
    itself reads now when it is no NumPy array: a torch tensor whose storage was swapped
    (``x.data = ...``, ``x.set_(...)``) or whose negative bit was set reads other values over an
    unchanged array; a JAX array deleted reads nothing (counted as changed). ``before`` is
    :func:`before_call`'s. Used by the sandboxed child and the in-process executor alike, after
    the result was converted (converting can run the submission's code: a subclass's hooks).
    """
    out = []
    for k, v in arrays.items():
        data, shapes = before[k]
        changed = v.tobytes() != data or (shapes is not None and shapes != (layout(v), layout(given[k])))
        if not changed and shapes is not None and to_numpy is not None and not isinstance(given[k], np.ndarray):
            try:
                seen = to_numpy(given[k])
                changed = seen is not None and (np.asarray(seen[0]).tobytes() != data
                                                or tuple(np.shape(seen[0])) != v.shape)
            except Exception:  # noqa: BLE001 - an argument that cannot be read any more was changed
                changed = True
        if changed:
            out.append(k)
    return out


class ProtocolError(Exception):
    """A frame broke the protocol: bad magic, oversized header, unknown dtype, wrong byte count."""


class PeerClosed(ProtocolError):
    """The other side closed its end (exited, crashed or closed the descriptor)."""


class Timeout(Exception):
    """No complete frame arrived before the deadline (a ``time.monotonic()`` value)."""


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _parts(header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> list[memoryview]:
    """One frame holding ``header`` plus ``arrays`` (name -> array), as the buffers to write in
    order: the frame's head, then each array's bytes in place (no copy of a C-order array)."""
    arrays = arrays or {}
    metas, blobs = [], []
    for name, arr in arrays.items():
        arr = np.asarray(arr)
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")        # not np.ascontiguousarray: it turns 0-d into 1-d
        metas.append({"name": name, "dtype": arr.dtype.name, "shape": list(arr.shape),
                      "nbytes": int(arr.nbytes)})
        blobs.append(memoryview(arr.reshape(-1).view(np.uint8)))
    head = json.dumps({**header, "arrays": metas}).encode()
    return [memoryview(MAGIC + struct.pack(">I", len(head)) + head), *blobs]


def encode(header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """One frame holding ``header`` plus ``arrays`` (name -> array), as bytes."""
    return b"".join(_parts(header, arrays))


def _wait(fd: int, events: int, deadline: float | None, watch: Callable[[], None] | None) -> None:
    """Wait until ``fd`` is ready for ``events`` (``select.POLLIN`` or ``POLLOUT``).

    ``deadline`` is a ``time.monotonic()`` value (None: no deadline). ``watch``, when given, is
    called every :data:`WATCH_SLICE` seconds while waiting and may raise to give up (the
    runner's CPU-time check). ``poll``, not ``select``: a grader with many open descriptors may
    hold one past ``FD_SETSIZE``.

    Raises:
        Timeout: the deadline passed first.
    """
    poller = select.poll()
    poller.register(fd, events | select.POLLERR | select.POLLHUP)
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise Timeout()
        if watch is not None:
            left = WATCH_SLICE if left is None else min(left, WATCH_SLICE)
        if poller.poll(None if left is None else max(1, int(left * 1000))):
            return
        if watch is not None:
            watch()


def write_frame(fd: int, header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None,
                deadline: float | None = None, watch: Callable[[], None] | None = None) -> None:
    """Write one frame to ``fd``.

    With a ``deadline`` (a ``time.monotonic()`` value) the descriptor must be non-blocking
    (``os.set_blocking(fd, False)``; the grader's ends are): every write waits only until the
    deadline, so a reader that stops reading (a submission that filled its own request pipe
    through ``/proc/self/fd`` and never reads) cannot hang the writer. Without one (the child's
    side) the descriptor may block. ``watch`` as for :func:`read_frame`.

    Raises:
        PeerClosed: the reader has gone (EPIPE).
        Timeout: the deadline passed before the whole frame was written.
    """
    try:
        for data in _parts(header, arrays):   # each array from its own memory: no copy of it
            while data:
                if deadline is not None:
                    _wait(fd, select.POLLOUT, deadline, watch)
                try:
                    n = os.write(fd, data)
                except BlockingIOError:
                    continue
                data = data[n:]
    except (BrokenPipeError, OSError) as exc:
        raise PeerClosed(f"cannot write to the other process: {exc}") from None


def _read_into(fd: int, view: memoryview, deadline: float | None,
               watch: Callable[[], None] | None = None) -> None:
    """Fill ``view`` from ``fd``, waiting (``_wait``) until the ``deadline`` with ``watch`` as
    :func:`read_frame` says; into the caller's buffer, no copy.

    Raises:
        PeerClosed: the channel closed, or the read failed, before ``view`` was full.
        Timeout: the deadline passed first.
    """
    got, n = 0, len(view)
    while got < n:
        if deadline is not None or watch is not None:
            _wait(fd, select.POLLIN, deadline, watch)
        try:
            k = os.readv(fd, [view[got:]])
        except BlockingIOError:
            continue
        except OSError as exc:
            raise PeerClosed(f"read failed: {exc}") from None
        if not k:
            raise PeerClosed("the other process closed the channel")
        got += k


def _read_exact(fd: int, n: int, deadline: float | None, watch: Callable[[], None] | None = None) -> bytes:
    """The next ``n`` bytes of ``fd`` (:func:`_read_into` a fresh buffer; ``n`` is capped by the
    caller: the frame's magic, its length and its header of at most :data:`MAX_HEADER`)."""
    buffer = bytearray(n)
    _read_into(fd, memoryview(buffer), deadline, watch)
    return bytes(buffer)


def _text(value: str) -> str:
    """``value`` with each lone surrogate (which JSON can carry but UTF-8 cannot) written as a
    visible ``\\udXXX`` escape; surrogate pairs were already joined by ``json.loads``."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _without_lone_surrogates(header: dict[str, Any]) -> dict[str, Any]:
    """A decoded header with :func:`_text` applied to every string, keys included.

    Iterative, so a deeply nested header (which ``json.loads`` accepted) cannot make it recurse.
    An exception message such as ``"\\ud800"`` would otherwise make every UTF-8 report fail.
    """
    root: dict[str, Any] = {}
    todo: list[tuple[Any, Any]] = [(header, root)]
    while todo:
        src, dst = todo.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for key, value in items:
            if isinstance(value, str):
                value = _text(value)
            elif isinstance(value, (dict, list)):
                copy: Any = {} if isinstance(value, dict) else [None] * len(value)
                todo.append((value, copy))
                value = copy
            if isinstance(dst, dict):
                dst[_text(key)] = value
            else:
                dst[key] = value
    return root


#: the most frames and characters of a raised exception's facts a reply carries (the deepest kept)
MAX_FRAMES = 64
MAX_CODE = 300
MAX_EXCEPTION = 2000


def exception_facts(exc: BaseException, submission: str) -> dict[str, Any]:
    """What the submission raised, as facts for the reply: ``{"frames": [...], "exception": str}``.

    ``frames`` is the traceback from the first frame in ``submission``'s file on, else from the
    first in its folder (a sibling's), else none (no frame of the grader's), the deepest
    :data:`MAX_FRAMES`, each ``{"file", "line", "function", "code", "marks"}`` (``marks``: the
    ``~~^^`` markers Python writes under the code line, where it writes them):
    ``file`` relative to the submission's folder when the file is in it (``"solution.py"``,
    ``"helper.py"``), else as Python names it (a library's absolute path, ``<string>``). A
    ``SyntaxError`` adds the place it names as the last frame. ``exception`` is the exception's
    type and message (``"ValueError: shapes do not match"``, notes included), at most
    :data:`MAX_EXCEPTION` characters. ``submission`` "" (a function of no known file): every
    frame, named as Python names it. Nothing here is worded for a reader: the grader names the
    files as the reader has them (``grader.words.places``). Used by the child and by the
    in-process executor alike, so both report the same facts.
    """
    try:
        return _exception_facts(exc, submission)
    except Exception:  # noqa: BLE001 - an exception whose fields are not what Python gives (a
        # SyntaxError built with a number for its file name, a NUL in a code object's file name)
        # is still the submission's exception: its type, and no frames
        return {"frames": [], "exception": safe_str(type(exc).__name__)[:MAX_EXCEPTION]}


def safe_str(value: Any) -> str:
    """``str(value)``, or ``"?"`` when that raises (a learner's ``__str__``)."""
    try:
        return value if isinstance(value, str) else str(value)
    except Exception:  # noqa: BLE001
        return "?"


def _marks(frame: Any) -> str:
    """The markers Python 3.11+ writes under a frame's code line (``~~~~^^^^``: where on the line
    the failing operation is), aligned with the stripped code line, or "" (none, or older Python)."""
    import traceback
    try:
        rows = traceback.StackSummary().format_frame_summary(frame).splitlines()
    except Exception:  # noqa: BLE001 - no markers is no fact lost
        return ""
    marks = rows[2][4:] if len(rows) >= 3 and rows[2].startswith("    ") else ""
    return marks.rstrip()[:MAX_CODE] if marks.strip() and not marks.strip(" ~^") else ""


def _exception_facts(exc: BaseException, submission: str) -> dict[str, Any]:
    import traceback

    folder = os.path.dirname(os.path.realpath(submission)) if submission else None

    def named(filename: Any) -> str:
        filename = safe_str(filename) if filename is not None else ""
        try:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
        except (ValueError, OSError):   # a NUL in the name
            real = ""
        if folder and real and real.startswith(folder + os.sep):
            return real[len(folder) + 1:]
        return filename or "?"

    def number(value: Any) -> int | None:
        return value if type(value) is int else None

    frames = traceback.extract_tb(exc.__traceback__)
    names = [named(fr.filename) for fr in frames]
    if folder:   # from the submission's first frame, else a sibling's; none of the grader's
        own = [i for i, n in enumerate(names) if n == os.path.basename(submission)]
        near = [i for i, n in enumerate(names) if not os.path.isabs(n) and not n.startswith(("<", "?"))]
        start = (own or near)[0] if own or near else len(frames)
        frames, names = frames[start:], names[start:]
    out = [{"file": name, "line": number(fr.lineno), "function": safe_str(fr.name)[:MAX_CODE],
            "code": safe_str(fr.line or "").strip()[:MAX_CODE], "marks": _marks(fr)} for fr, name in zip(frames, names)]
    if isinstance(exc, SyntaxError):
        out.append({"file": named(exc.filename), "line": number(exc.lineno), "function": "",
                    "code": safe_str(exc.text or "").strip()[:MAX_CODE]})
        text = f"{type(exc).__name__}: {safe_str(exc.msg)}"
    else:
        text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
    return {"frames": out[-MAX_FRAMES:], "exception": text[:MAX_EXCEPTION]}


def read_frame(fd: int, deadline: float | None = None, max_payload: int = MAX_PAYLOAD,
               watch: Callable[[], None] | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read and check one frame; return ``(header, arrays)``.

    The arrays are fresh, writable, C-order copies owned by the caller. ``deadline`` is a
    ``time.monotonic()`` value (None: wait for ever); ``watch``, when given, is called every
    :data:`WATCH_SLICE` seconds of waiting and may raise to give up (the grader's CPU-time limit
    of a call, ``grader.runner``).

    Raises:
        Timeout: the deadline passed first.
        PeerClosed: the channel closed before a whole frame arrived.
        Exception: whatever ``watch`` raises.
        ProtocolError: the frame breaks the format (see the module docstring).
    """
    magic = _read_exact(fd, 4, deadline, watch)
    if magic != MAGIC:
        raise ProtocolError(f"bad frame start {magic!r}")
    (length,) = struct.unpack(">I", _read_exact(fd, 4, deadline, watch))
    if length > MAX_HEADER:
        raise ProtocolError(f"header of {length} bytes exceeds the {MAX_HEADER}-byte cap")
    raw = _read_exact(fd, length, deadline, watch)
    try:
        header = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ProtocolError(f"header is not JSON: {str(exc)[:200]}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    if b"\\ud" in raw or b"\\uD" in raw:  # JSON escapes of surrogates: any lone one must go
        header = _without_lone_surrogates(header)
    metas = header.get("arrays", [])
    if not isinstance(metas, list):
        raise ProtocolError("header 'arrays' is not a list")
    plan, total, names = [], 0, set()
    for meta in metas:
        try:
            name, dtname, shape, nbytes = meta["name"], meta["dtype"], meta["shape"], meta["nbytes"]
        except (KeyError, TypeError):
            raise ProtocolError(f"array entry {str(meta)[:80]} lacks name/dtype/shape/nbytes") from None
        if not isinstance(name, str) or name in names:
            raise ProtocolError(f"array name {str(name)[:80]!r} is not a string or is repeated")
        names.add(name)
        if not isinstance(dtname, str) or dtname not in DTYPE_WHITELIST:
            raise ProtocolError(f"array {name!r}: dtype {str(dtname)[:80]!r} is not allowed")
        if (not isinstance(shape, list) or len(shape) > MAX_DIMS
                or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_AXIS for s in shape)):
            raise ProtocolError(f"array {name!r}: bad shape {str(shape)[:80]}")
        dt = _dtype(dtname)
        expect = int(np.prod(shape, dtype=object)) * dt.itemsize
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes != expect:
            raise ProtocolError(f"array {name!r}: {str(nbytes)[:40]} bytes for shape {shape} {dtname}")
        total += expect
        if total > max_payload:
            raise ProtocolError(f"payload of {total} bytes exceeds the {max_payload}-byte cap")
        plan.append((name, dt, tuple(shape), expect))
    arrays = {}
    for name, dt, shape, nbytes in plan:
        try:
            arr = np.empty(shape, dtype=dt)    # the array's own memory, read into in place
        except (ValueError, MemoryError) as exc:
            raise ProtocolError(f"array {name!r}: cannot be built: {exc}") from None
        if nbytes:
            _read_into(fd, memoryview(arr.reshape(-1).view(np.uint8)), deadline, watch)
        arrays[name] = arr
    return header, arrays
