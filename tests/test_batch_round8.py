"""Round eight (issue 32): what ``grader grade`` reads of a learner's folder before any sandbox.

A learner's ``submission_metadata.json`` that is deeply nested, or whose time has no UTC
offset while the instructor gives ``--deadline``, ended the whole batch with exit 2; a ``.git``
whose HEAD commit declares a size of gigabytes (a 1.3 MB pack) made the batch inflate it."""
from __future__ import annotations

import hashlib
import struct
import zlib
from datetime import datetime, timezone

from grader.batch import times

HEAD = b"tree " + b"1" * 40 + b"\nauthor a <a> 1 +0000\ncommitter a <a> 1700000000 +0000\n\nm\n"


def _git(folder, sha_hex: str) -> None:
    git = folder / ".git"
    for sub in ("objects/pack", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(sha_hex + "\n")
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")


def _loose(folder, declared: int) -> None:
    """HEAD a loose commit whose header declares ``declared`` bytes (the body filled to it)."""
    body = HEAD + b"a" * max(0, declared - len(HEAD))
    raw = b"commit %d\0" % declared + body
    sha = hashlib.sha1(raw).hexdigest()
    _git(folder, sha)
    obj = folder / ".git" / "objects" / sha[:2]
    obj.mkdir()
    (obj / sha[2:]).write_bytes(zlib.compress(raw, 9))


def _packed(folder, declared: int) -> None:
    """HEAD a commit stored in a pack whose object header declares ``declared`` bytes."""
    content = HEAD + b"a" * max(0, declared - len(HEAD))
    data = zlib.compress(content, 9)
    size, first, hdr = declared, (1 << 4) | (declared & 0x0F), bytearray()
    size >>= 4
    while True:
        if size:
            hdr.append(first | 0x80)
            first, size = size & 0x7F, size >> 7
        else:
            hdr.append(first)
            break
    body = b"PACK" + struct.pack(">II", 2, 1) + bytes(hdr) + data
    sha = hashlib.sha1(b"commit %d\0" % len(content) + content).digest()
    fan = b"".join(struct.pack(">I", 1 if i >= sha[0] else 0) for i in range(256))
    idx = (b"\377tOc" + struct.pack(">I", 2) + fan + sha + struct.pack(">I", zlib.crc32(bytes(hdr) + data))
           + struct.pack(">I", 12) + hashlib.sha1(body).digest())
    idx += hashlib.sha1(idx).digest()
    _git(folder, sha.hex())
    name = hashlib.sha1(body).hexdigest()
    (folder / ".git" / "objects" / "pack" / f"pack-{name}.pack").write_bytes(body + hashlib.sha1(body).digest())
    (folder / ".git" / "objects" / "pack" / f"pack-{name}.idx").write_bytes(idx)


def test_a_commit_declaring_more_than_a_commit_is_never_inflated(tmp_path):
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    for store in (_loose, _packed):
        small, big = tmp_path / f"{store.__name__}-small", tmp_path / f"{store.__name__}-big"
        small.mkdir()
        big.mkdir()
        store(small, len(HEAD))
        store(big, 8 * times.COMMIT_BYTES)   # 8 MiB here; the attack declared 1.25 GiB
        assert times._git_time(small) == when, store.__name__
        assert times._git_time(big) is None, store.__name__


def test_metadata_that_is_nested_deeply_or_has_no_offset_is_read_or_skipped(tmp_path):
    (tmp_path / times.METADATA).write_text("[" * 200_000)
    assert times._gradescope_time(tmp_path) is None            # RecursionError: skipped, never raised
    (tmp_path / times.METADATA).write_text('{"created_at": "2026-01-01T00:00:00"}')
    got = times._gradescope_time(tmp_path)
    assert got == datetime(2026, 1, 1, tzinfo=timezone.utc)   # no offset: UTC, as --deadline
    assert got > times.parse_deadline("2025-12-31T23:00")     # comparable with a deadline
