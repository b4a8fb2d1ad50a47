"""When each learner submitted, and how late (issue 37): ``submitted.json`` in the output folder.

A learner's submission time is, first found first:

* ``created_at`` of Gradescope's ``submission_metadata.json``: for a learner's folder given to
  ``grader grade`` itself, the one in the folder above (the platform's: Gradescope's autograder
  layout is ``/autograder/submission`` beside ``/autograder/submission_metadata.json``; source:
  Gradescope's "Submission Metadata" page of its autograder documentation) or, failing that,
  the learner's; for a learner's folder inside a class folder, the learner's own only;
* the commit time of ``HEAD`` when the learner's folder is a Git repository (a GitHub Classroom
  clone), read by the grader itself: ``HEAD``, one ref and one commit object, each read bounded
  (``git log`` would read the learner's ``.git/config``, whose ``gpg.program`` or ``core.pager``
  it may run; dulwich read a config include, a ``.git`` file and objects past every bound: rounds
  fourteen and fifteen of issue 32);
* the file's modification time.

``--deadline`` (ISO 8601; without an offset, UTC) makes each time on time or late by a
duration. :func:`record` writes ``submitted.json`` when ``grader grade`` ends; the class view
(:mod:`grader.reports.classview`) reads it back with :func:`read`.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from ..errors import GraderError

TIMES = "submitted.json"
METADATA = "submission_metadata.json"


@dataclass
class Submitted:
    """A learner's submission time: ``at`` (ISO 8601, UTC), ``source`` (``gradescope``, ``git``
    or ``mtime``) and ``late_seconds`` (seconds after the deadline; 0 or less is on time; None
    without a deadline)."""

    at: str
    source: str
    late_seconds: float | None = None


def parse_deadline(text: str) -> datetime:
    """The ``--deadline`` ``text`` (ISO 8601, e.g. ``2026-12-05T23:59``; without an offset, UTC).

    Raises:
        GraderError: it is not an ISO 8601 date and time.
    """
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise GraderError(f"--deadline {text!r} is not an ISO 8601 date and time (e.g. 2026-12-05T23:59 "
                          "or 2026-12-05T23:59-05:00)") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


GIT_ENTRIES = 20_000  # files and folders of a learner's .git looked at before it is read


def _gradescope_time(folder: Path, given: bool = False) -> datetime | None:
    """``created_at`` of the ``submission_metadata.json`` that tells ``folder``'s submission time.

    ``given``: the folder is itself a path given to ``grader grade`` (Gradescope's layout,
    ``/autograder/submission``), so the folder above is the platform's and its file is read
    first; a copy the learner uploads does not override it (round twenty-five). Otherwise the
    folder above is the class folder all learners share, whose file is never read: one file
    there set every learner's time (round twenty-six); only the learner's own is.
    """
    from ..siblings import read_no_follow
    for place in ((folder.parent / METADATA,) if given else ()) + (folder / METADATA,):
        try:  # no link followed, no FIFO waited on (the learner's folder may hold either)
            data, _, _ = read_no_follow(str(place), 1 << 20)
            if data is None:
                continue
            when = datetime.fromisoformat(str(json.loads(data.decode("utf-8"))["created_at"]))
            # without an offset, UTC (as --deadline): a naive time against an aware deadline
            # raised TypeError and ended the whole batch with exit 2 (round eight)
            return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue   # RecursionError: '[' * 200000 in the learner's file (round eight)
    return None


def _plain_git_folder(git: Path) -> bool:
    """Whether ``git`` is a folder of folders and regular files only, at most
    :data:`GIT_ENTRIES` of them: the grader opens what HEAD and the refs name, and a FIFO there
    would block the batch, a link would lead out of the learner's folder."""
    import stat
    todo, seen = [str(git)], 0
    while todo:
        here = todo.pop()
        try:
            st = os.lstat(here)
        except OSError:
            return False
        seen += 1
        if seen > GIT_ENTRIES:
            return False
        if stat.S_ISDIR(st.st_mode):
            try:
                todo += [os.path.join(here, name) for name in os.listdir(here)]
            except OSError:
                return False
        elif not stat.S_ISREG(st.st_mode):
            return False
    return True


#: the largest HEAD commit object read (a commit is a few hundred bytes)
COMMIT_BYTES = 1 << 20


#: the most compressed bytes read for the one commit object (a commit of COMMIT_BYTES deflates
#: to less; zlib's worst case adds 5 bytes per 16 KiB block)
COMPRESSED_BYTES = 2 * COMMIT_BYTES


def _commit_time(git: Path, sha: bytes) -> datetime | None:
    """The committer time of the commit ``sha`` (40 hex) of the repository folder ``git``, read
    by the grader with every read bounded: its loose object (a file of at most
    :data:`COMPRESSED_BYTES`, inflated to at most its declared size) or, else, the object a pack index names for it
    (:func:`_packed_object`). None when it is not a commit of at most :data:`COMMIT_BYTES`
    stored whole, or cannot be read.

    dulwich's object store read past every bound of the check made before it: the whole of a
    sparse 3 GiB loose file, a zlib bomb declaring 180 bytes up to its own 512 MiB cap, and a
    pack's 2 GiB blob under the same id as a small loose commit (2.1, 1.6 and 4.3 GB in the
    trusted batch process, round fifteen of issue 32); a pack declaring a 1.25 GiB commit took
    2.6 GB before that (round eight). No library reads it now.
    """
    import zlib

    hexsha = sha.decode("ascii")
    data = _small_file(git / "objects" / hexsha[:2] / hexsha[2:], COMPRESSED_BYTES)
    if data is not None:
        try:
            raw = zlib.decompressobj().decompress(data, COMMIT_BYTES + 64)
        except zlib.error:
            return None
        kind, _, rest = raw.partition(b" ")
        size, _, body = rest.partition(b"\0")
        if kind != b"commit" or not size.isdigit() or int(size) > COMMIT_BYTES or len(body) < int(size):
            return None
        return _committer_time(body[:int(size)])
    body = _packed_object(git / "objects" / "pack", bytes.fromhex(hexsha))
    return _committer_time(body) if body is not None else None


def _packed_object(packs: Path, sha: bytes) -> bytes | None:
    """The content of the commit ``sha`` (20 bytes) stored whole in a pack of the folder
    ``packs``, found through a version-2 ``.idx`` (looked up by binary search, 20 bytes a probe),
    its header and body read at the offset with ``os.pread``; None for anything else (a delta,
    another type, more than :data:`COMMIT_BYTES`, a version-1 index, a malformed file)."""
    import struct
    import zlib
    try:
        names = sorted(n for n in os.listdir(packs) if n.endswith(".idx"))[:64]
    except OSError:
        return None
    for name in names:
        idx = _open_regular(packs / name)
        if idx is None:
            continue
        try:
            if os.pread(idx, 8, 0) != b"\377tOc\0\0\0\2":
                continue
            fan = struct.unpack(">256I", os.pread(idx, 1024, 8))
            count = fan[255]
            lo, hi = (fan[sha[0] - 1] if sha[0] else 0), fan[sha[0]]
            if not lo <= hi <= count:
                continue
            while lo < hi:   # the ids are sorted
                mid = (lo + hi) // 2
                here = os.pread(idx, 20, 1032 + 20 * mid)
                if here == sha:
                    break
                lo, hi = (mid + 1, hi) if here < sha else (lo, mid)
            else:
                continue
            (offset,) = struct.unpack(">I", os.pread(idx, 4, 1032 + 24 * count + 4 * mid))
            if offset & 0x80000000:
                (offset,) = struct.unpack(">Q", os.pread(idx, 8, 1032 + 28 * count + 8 * (offset & 0x7FFFFFFF)))
        except (OSError, struct.error):
            continue
        finally:
            os.close(idx)
        pack = _open_regular(packs / (name[:-4] + ".pack"))
        if pack is None:   # an index without its pack: another may hold the object
            continue
        try:
            head = os.pread(pack, 16, offset)
            kind, size, used, shift = (head[0] >> 4) & 7, head[0] & 15, 1, 4
            while head[used - 1] & 0x80 and used < len(head):
                size |= (head[used] & 0x7F) << shift
                used, shift = used + 1, shift + 7
            if kind != 1 or size > COMMIT_BYTES:   # 1: a commit stored whole, not a delta
                return None
            body = zlib.decompressobj().decompress(os.pread(pack, COMPRESSED_BYTES, offset + used), size + 1)
            return body if len(body) == size else None
        except (OSError, IndexError, zlib.error):
            return None
        finally:
            os.close(pack)
    return None


def _committer_time(body: bytes) -> datetime | None:
    """The committer time of a commit's ``body`` (``committer NAME <EMAIL> SECONDS +HHMM``)."""
    for line in body.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            parts = line.rsplit(b" ", 2)
            if len(parts) == 3 and parts[1].isdigit():
                return datetime.fromtimestamp(int(parts[1]), tz=timezone.utc)
    return None


def _open_regular(path: Path) -> int | None:
    """A read-only descriptor of the learner's regular file ``path``
    (``grader.siblings.open_no_follow``: no link, hard link or FIFO), or None."""
    from ..siblings import open_no_follow
    try:
        return open_no_follow(str(path))[0]
    except OSError:
        return None


#: files of a ``.git`` that send git to another folder: a learner's ``commondir``
#: naming ``../cd``, a folder of their own holding a FIFO as ``refs/heads/master``, hung
#: ``grader grade`` for good (round ten); such a repository's time is not read
GIT_REDIRECTS = ("commondir", "objects/info/alternates", "objects/info/http-alternates")
#: the longest a learner's repository is read for its HEAD's time before the file's time is used
GIT_SECONDS = 5.0


def _git_time(folder: Path) -> datetime | None:
    """The commit time of HEAD of the learner's ``folder/.git``, or None: no plain repository
    (a ``.git`` folder of folders and regular files, :func:`_plain_git_folder`, with none of
    :data:`GIT_REDIRECTS`), no small HEAD commit, or not read within :data:`GIT_SECONDS` (the
    read runs in a daemon thread that is left behind then).

    Only what a commit time needs is read, by the grader itself: ``HEAD``, the one ref it names
    (loose, else ``packed-refs``) and that commit (:func:`_commit_time`), each read bounded.
    dulwich's ``Repo`` also read a ``.git`` *file*'s ``gitdir`` and the repository's ``config``, whose
    ``[include] path`` (or a ``commondir`` beside a ``gitdir``) sent it to ``/dev/zero``: the
    batch grew past 5 GB, and the thread kept reading after its 5 s (round fourteen of issue 32).
    """
    git = folder / ".git"
    if not os.path.isdir(git) or os.path.islink(git) or not _plain_git_folder(git) \
            or any(os.path.lexists(git / name) for name in GIT_REDIRECTS):
        return None
    import threading
    found: list[datetime | None] = []

    def read() -> None:
        try:
            sha = _head_sha(git)
            if sha is not None:
                found.append(_commit_time(git, sha))
        except Exception:  # noqa: BLE001 - no readable HEAD (an empty or broken repository): the file's time
            pass

    reader = threading.Thread(target=read, name="git-time", daemon=True)
    reader.start()
    reader.join(GIT_SECONDS)
    return found[0] if found and found[0] is not None and not reader.is_alive() else None


#: what a ref HEAD names may look like (``refs/heads/main``): no ``..``, no other folder
_REF_NAME = re.compile(rb"refs/[A-Za-z0-9._/-]{1,200}")
_SHA = re.compile(rb"[0-9a-f]{40}")


def _small_file(path: Path, limit: int) -> bytes | None:
    """The learner's regular file ``path`` when it holds at most ``limit`` bytes
    (``grader.siblings.read_no_follow``, the one reader of learner files), else None."""
    from ..siblings import read_no_follow
    try:
        return read_no_follow(str(path), limit)[0]
    except OSError:
        return None


def _head_sha(git: Path) -> bytes | None:
    """The 40-hex commit id HEAD of ``git`` names: detached, or through one ref read from its
    loose file or ``packed-refs`` (each read bounded, no link followed); None otherwise."""
    head = (_small_file(git / "HEAD", 4096) or b"").strip()
    if _SHA.fullmatch(head):
        return head
    if not head.startswith(b"ref: "):
        return None
    name = head[5:].strip()
    if not _REF_NAME.fullmatch(name) or b".." in name.split(b"/") or b"//" in name:
        return None
    loose = (_small_file(git / name.decode("ascii"), 4096) or b"").strip()
    if _SHA.fullmatch(loose):
        return loose
    for line in (_small_file(git / "packed-refs", 1 << 20) or b"").splitlines():
        sha, _, ref = line.partition(b" ")
        if ref.strip() == name and _SHA.fullmatch(sha):
            return sha
    return None


#: most entries of a learner's folder read for the latest module's time (a folder of thousands is
#: read no further: its first modules' times stand)
FOLDER_ENTRIES = 1024


def submission_time(path: Path | None, folder: Path | None, given: bool = False) -> tuple[datetime, str] | None:
    """The submission time of a learner whose file is ``path`` in their own ``folder`` (None for
    a file among other learners' files; ``given``: that folder is a path given to ``grader
    grade``), and where it comes from; None when neither a platform's record nor a file tells it.
    By the files' times, in a learner's own folder it is the latest of its ``.py`` files (a
    helper module edited after the deadline counted nothing: an instructor's trial), read with
    ``lstat`` (no link followed), :data:`FOLDER_ENTRIES` entries at most."""
    if folder is not None:
        for source, reader in (("gradescope", lambda f: _gradescope_time(f, given)), ("git", _git_time)):
            if (when := _utc(reader(folder))) is not None:
                return when, source
    if path is None:  # nothing submitted: a folder's time is no submission's
        return None
    try:  # a link's own time: nothing is followed
        latest = os.lstat(path).st_mtime
    except OSError:
        return None
    if folder is not None:
        try:
            with os.scandir(folder) as entries:
                for i, entry in enumerate(entries):
                    if i >= FOLDER_ENTRIES:
                        break
                    if entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                        latest = max(latest, entry.stat(follow_symlinks=False).st_mtime)
        except OSError:
            pass
    try:
        return datetime.fromtimestamp(latest, tz=timezone.utc), "mtime"
    except (OverflowError, ValueError, OSError):  # a time beyond year 9999 (tmpfs, xfs, a tar's)
        return None


def _utc(when: datetime | None) -> datetime | None:
    """``when`` in UTC, or None where that leaves datetime's years 1-9999 (``0001-01-01T00:00+05:00``,
    a learner's ``created_at``): such a time is no time, as an unreadable one is."""
    try:
        return when.astimezone(timezone.utc) if when is not None else None
    except (OverflowError, ValueError):
        return None


def learner_folder(sub: Any) -> Path | None:
    """The learner's own folder of a chosen submission (:class:`grader.batch.discovery.Submission`):
    the folder of its file when the file's siblings are the learner's, the folder found when no
    file was; None for a file among other learners' files."""
    if sub.path is not None:
        return Path(sub.path).parent if sub.siblings else None
    return Path(sub.folder) if sub.folder else None


def record(out: Path, subs: Iterable[Any], deadline: datetime | None,
           given: Iterable[str | os.PathLike[str]] = (), not_on_roster: Iterable[str] | None = None
           ) -> dict[str, Submitted]:
    """Write ``submitted.json`` into ``out``: the submission time of each chosen submission of
    ``subs`` (learners with nothing to read a time from are left out) and, with ``deadline``,
    how late. ``given``: the paths given to ``grader grade`` (a learner's folder among them is
    read as Gradescope's layout, :func:`_gradescope_time`). ``not_on_roster``: with ``--roster``,
    the learners not on it (those of ``subs`` are kept: a shard's own), which summary.html marks
    (:func:`off_roster`); None without a roster. Returns the times it wrote, by learner.

    Raises:
        GraderError: the file cannot be written.
    """
    from .._io import write_output
    times: dict[str, Submitted] = {}
    roots = {os.path.abspath(p) for p in given}
    subs = list(subs)
    for sub in subs:
        folder = learner_folder(sub)
        found = submission_time(sub.path, folder, folder is not None and os.path.abspath(folder) in roots)
        if found is None:
            continue
        when, source = found
        late = (when - deadline).total_seconds() if deadline is not None else None
        times[sub.learner] = Submitted(at=when.astimezone(timezone.utc).isoformat(timespec="seconds"),
                                       source=source, late_seconds=late)
    kept = {"deadline": deadline.isoformat() if deadline else None,
            "learners": {k: asdict(v) for k, v in sorted(times.items())}}
    if not_on_roster is not None:
        here = {sub.learner for sub in subs}
        kept["not_on_roster"] = sorted(set(not_on_roster) & here)
    write_output(json.dumps(kept, indent=2) + "\n", str(out / TIMES))
    return times


def read(out: Path) -> tuple[str | None, dict[str, Submitted]]:
    """The deadline and the submission times recorded in ``out`` (:func:`record`); nothing when
    there is no readable record (a folder merged from shards, an older grader's)."""
    try:
        data = json.loads((out / TIMES).read_text(encoding="utf-8"))
        return data.get("deadline"), {str(k): Submitted(**v) for k, v in data["learners"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, {}


def off_roster(out: Path) -> list[str]:
    """The learners graded into ``out`` who are not on the roster ``grader grade --roster`` was
    given (:func:`record`); none without a roster or a readable record."""
    try:
        names = json.loads((out / TIMES).read_text(encoding="utf-8")).get("not_on_roster") or []
        return sorted(str(n) for n in names)
    except (OSError, ValueError, TypeError, AttributeError):
        return []


def merge(out: Path, folders: Iterable[Path]) -> None:
    """Write into ``out`` the union of the submission times recorded in ``folders`` (the shards
    ``grader merge`` joins), with the first deadline one of them names; nothing when none
    recorded times.

    Raises:
        GraderError: the file cannot be written.
    """
    from .._io import write_output
    deadline, learners, strangers = None, {}, set()
    for folder in folders:
        told, times = read(folder)
        deadline = deadline or told
        learners.update({k: asdict(v) for k, v in times.items()})
        strangers.update(off_roster(folder))
    if deadline is None and not learners and not strangers:
        return
    kept: dict[str, Any] = {"deadline": deadline, "learners": dict(sorted(learners.items()))}
    if strangers:
        kept["not_on_roster"] = sorted(strangers)
    write_output(json.dumps(kept, indent=2) + "\n", str(out / TIMES))
