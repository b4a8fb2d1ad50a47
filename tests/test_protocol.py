"""The wire format between the grader and the submission's process (grader/protocol.py).

Every malformed frame must raise ProtocolError (or PeerClosed / Timeout), and the checks on the
header (size cap, dtype whitelist, shape, byte count, payload cap) must happen before a single
payload byte is read: the tests write a bad header and no payload, with a deadline, so a reader
that waited for the payload would raise Timeout instead.
"""
from __future__ import annotations

import json
import os
import struct
import threading
import time

import ml_dtypes
import numpy as np
import pytest

from grader import protocol
from grader.protocol import MAGIC, MAX_HEADER, PeerClosed, ProtocolError, Timeout, encode, read_frame


@pytest.fixture
def pipe():
    """A (read_fd, write_fd) pair; both closed afterwards."""
    r, w = os.pipe()
    fds = {"r": r, "w": w}
    yield fds
    for fd in fds.values():
        try:
            os.close(fd)
        except OSError:
            pass


def close_writer(pipe: dict) -> None:
    os.close(pipe["w"])
    pipe["w"] = os.open(os.devnull, os.O_RDONLY)  # keep the fixture's cleanup simple


def feed(pipe: dict, data: bytes, close: bool = False) -> threading.Thread:
    """Write ``data`` from a thread (large frames do not fit in the pipe buffer)."""
    def run() -> None:
        view = memoryview(data)
        while view:
            n = os.write(pipe["w"], view)
            view = view[n:]
        if close:
            close_writer(pipe)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def header_only(header: dict) -> bytes:
    head = json.dumps(header).encode()
    return MAGIC + struct.pack(">I", len(head)) + head


def soon(seconds: float = 2.0) -> float:
    return time.monotonic() + seconds


# -- well-formed frames ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sorted(protocol.DTYPE_WHITELIST))
def test_every_whitelisted_dtype_round_trips_bit_exactly(pipe, dtype):
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    arr = np.arange(24, dtype=np.float64).reshape(2, 3, 4).astype(dt)
    feed(pipe, encode({"seq": 7, "token": "t"}, {"a": arr, "empty": np.zeros((0, 5), dt), "scalar": arr[0, 0, 1]}))
    header, arrays = read_frame(pipe["r"], soon())
    assert header["seq"] == 7 and header["token"] == "t"
    assert list(arrays) == ["a", "empty", "scalar"]
    assert arrays["a"].dtype == dt and arrays["a"].shape == (2, 3, 4)
    assert arrays["a"].tobytes() == arr.tobytes()
    assert arrays["empty"].shape == (0, 5) and arrays["scalar"].shape == ()
    assert arrays["a"].flags.writeable and arrays["a"].flags.c_contiguous and arrays["a"].flags.owndata


def test_non_contiguous_input_is_sent_in_c_order(pipe):
    arr = np.arange(12.0).reshape(3, 4).T
    feed(pipe, encode({"seq": 1}, {"x": arr}))
    _, arrays = read_frame(pipe["r"], soon())
    np.testing.assert_array_equal(arrays["x"], arr)


def test_large_frame_arrives_whole(pipe):
    arr = np.random.default_rng(0).standard_normal((512, 1024))  # 4 MiB, far over a pipe buffer
    feed(pipe, encode({"seq": 1}, {"x": arr}))
    _, arrays = read_frame(pipe["r"], soon(10))
    assert arrays["x"].tobytes() == arr.tobytes()


# -- junk and malformed headers ------------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    b"Traceback (most recent call last):\n",
    b"\x00\x00\x00\x00\x00\x00\x00\x00",
    b'{"status": "ok", "passed": true}\n',
    b"GRD0" + struct.pack(">I", 2) + b"{}",
], ids=["traceback-text", "zeros", "fake-json", "wrong-magic"])
def test_junk_instead_of_a_frame_is_a_protocol_error(pipe, data):
    feed(pipe, data)
    with pytest.raises(ProtocolError) as info:
        read_frame(pipe["r"], soon())
    assert not isinstance(info.value, PeerClosed)


def test_oversized_header_is_refused_before_it_is_read(pipe):
    feed(pipe, MAGIC + struct.pack(">I", MAX_HEADER + 1))   # and no header bytes at all
    # refused from the length alone: reading the header would wait for bytes that never come and
    # end in Timeout (not a ProtocolError) at the deadline
    with pytest.raises(ProtocolError, match="cap"):
        read_frame(pipe["r"], soon(5))


@pytest.mark.parametrize("head", [
    b"not json at all",
    b"\xff\xfe\x00garbage",
    b"[1, 2, 3]",
    b'"a string"',
    b"[" * 200_000 + b"]" * 200_000,          # deep nesting: RecursionError inside json
    json.dumps({"seq": 1, "arrays": {"name": "x"}}).encode(),
    json.dumps({"seq": 1, "arrays": [{"name": "x", "dtype": "float64"}]}).encode(),
    json.dumps({"seq": 1, "arrays": ["x"]}).encode(),
], ids=["text", "binary", "list", "string", "deep-nesting", "arrays-not-list", "missing-keys", "entry-not-object"])
def test_malformed_header_is_a_protocol_error(pipe, head):
    feed(pipe, MAGIC + struct.pack(">I", len(head)) + head)
    with pytest.raises(ProtocolError) as info:
        read_frame(pipe["r"], soon(5))
    assert not isinstance(info.value, PeerClosed)


def meta(**over) -> dict:
    base = {"name": "result", "dtype": "float64", "shape": [2, 3], "nbytes": 48}
    base.update(over)
    return base


@pytest.mark.parametrize("entry, message", [
    (meta(dtype="object"), "not allowed"),
    (meta(dtype="O"), "not allowed"),
    (meta(dtype="V8", nbytes=48), "not allowed"),
    (meta(dtype="<f8"), "not allowed"),
    (meta(dtype="float128", nbytes=96), "not allowed"),
    (meta(dtype="datetime64[ns]"), "not allowed"),
    (meta(dtype=["float64"]), "not allowed"),
    (meta(shape=[2, -3]), "bad shape"),
    (meta(shape=[2, 3.0]), "bad shape"),
    (meta(shape=[True, 48]), "bad shape"),
    (meta(shape="2,3"), "bad shape"),
    (meta(shape=[1] * 33, nbytes=8), "bad shape"),
    (meta(shape=[0, 1 << 62], nbytes=0), "bad shape"),
    (meta(nbytes=47), "bytes for shape"),
    (meta(nbytes=49), "bytes for shape"),
    (meta(nbytes="48"), "bytes for shape"),
    (meta(nbytes=48.0), "bytes for shape"),
    (meta(shape=[1], nbytes=True, dtype="bool"), "bytes for shape"),
    (meta(name=5), "not a string"),
], ids=lambda v: str(v)[:40] if isinstance(v, dict) else None)
def test_bad_array_entry_is_refused_before_any_payload_is_read(pipe, entry, message):
    feed(pipe, header_only({"seq": 1, "arrays": [entry]}))   # no payload follows
    # refused from the header alone: reading the payload would end in Timeout at the deadline
    with pytest.raises(ProtocolError, match=message):
        read_frame(pipe["r"], soon(5))


def test_repeated_array_name_is_refused(pipe):
    feed(pipe, header_only({"seq": 1, "arrays": [meta(), meta()]}))
    with pytest.raises(ProtocolError, match="repeated"):
        read_frame(pipe["r"], soon())


def test_payload_over_the_cap_is_refused_before_reading(pipe):
    huge = meta(shape=[1 << 20, 1 << 10], nbytes=8 << 30)           # claims 8 GiB
    feed(pipe, header_only({"seq": 1, "arrays": [huge]}))
    with pytest.raises(ProtocolError, match="cap"):
        read_frame(pipe["r"], soon(5))


def test_caller_payload_cap_applies(pipe):
    feed(pipe, encode({"seq": 1}, {"result": np.zeros(1000)}))
    with pytest.raises(ProtocolError, match="cap"):
        read_frame(pipe["r"], soon(), max_payload=4000)


def test_arrays_in_a_frame_that_must_have_none(pipe):
    feed(pipe, encode({"seq": 0, "status": "ready"}, {"x": np.ones(2)}))
    with pytest.raises(ProtocolError, match="cap"):
        read_frame(pipe["r"], soon(), max_payload=0)


# -- truncation, closing, timeouts -------------------------------------------------------------------
@pytest.mark.parametrize("cut", [0, 2, 4, 6, 20, -1], ids=["nothing", "half-magic", "no-length", "half-length",
                                                          "half-header", "payload-short-by-one"])
def test_truncated_frame_then_closed_is_peer_closed(pipe, cut):
    frame = encode({"seq": 1, "status": "ok"}, {"result": np.arange(6.0)})
    feed(pipe, frame[:cut] if cut >= 0 else frame[:-1], close=True)
    with pytest.raises(PeerClosed):
        read_frame(pipe["r"], soon())


def test_nothing_arrives_before_the_deadline(pipe):
    """The read waits until its deadline, then gives up (Timeout) although the writer is still
    there. A hang guard of 60 s, not a stopwatch: only a read that never gives up fails it."""
    t0 = time.monotonic()
    raised: list[BaseException] = []

    def read() -> None:
        try:
            read_frame(pipe["r"], t0 + 0.3)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            raised.append(exc)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(60)
    assert not reader.is_alive(), "the read never gave up"
    assert len(raised) == 1 and isinstance(raised[0], Timeout), raised
    assert time.monotonic() - t0 >= 0.3     # not before its deadline


def test_a_frame_trickling_in_too_slowly_times_out(pipe):
    frame = encode({"seq": 1, "status": "ok"}, {"result": np.arange(6.0)})
    stop = threading.Event()

    sent = [0]

    def trickle() -> None:
        for byte in frame:
            if stop.is_set():
                return
            os.write(pipe["w"], bytes([byte]))
            sent[0] += 1
            time.sleep(0.05)
    threading.Thread(target=trickle, daemon=True).start()
    with pytest.raises(Timeout):
        read_frame(pipe["r"], time.monotonic() + 0.5)
    stop.set()
    # it gave up at its deadline, with the frame still coming in: not after the last byte
    assert sent[0] < len(frame), (sent[0], len(frame))


def test_partial_header_then_silence_times_out(pipe):
    feed(pipe, MAGIC + struct.pack(">I", 100) + b'{"seq"')
    with pytest.raises(Timeout):
        read_frame(pipe["r"], time.monotonic() + 0.3)


def test_write_to_a_closed_reader_is_peer_closed(pipe):
    os.close(pipe["r"])
    pipe["r"] = os.open(os.devnull, os.O_RDONLY)
    with pytest.raises(PeerClosed):
        protocol.write_frame(pipe["w"], {"seq": 1}, {"x": np.zeros(100_000)})


def test_two_frames_back_to_back_are_read_one_at_a_time(pipe):
    feed(pipe, encode({"seq": 1}, {"r": np.ones(3)}) + encode({"seq": 2}, {"r": np.zeros(2)}))
    first, a = read_frame(pipe["r"], soon())
    second, b = read_frame(pipe["r"], soon())
    assert (first["seq"], second["seq"]) == (1, 2)
    assert a["r"].tolist() == [1, 1, 1] and b["r"].tolist() == [0, 0]
