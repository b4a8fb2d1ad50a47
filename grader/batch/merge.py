"""``grader merge``: join the output folders of the shards of one class (:func:`cmd_merge`).

All N shards of one run, each once, graded with the same settings (their ``settings.json``),
else it refuses (exit 2: :func:`check_merge`). Folders graded without ``--shard`` (or by a
grader that wrote no record) are merged as before, as long as the records there agree. The
merged folder's reports are copied, and its gradebook, junit.xml, summary.md, summary.html and
feedback written anew (:func:`grader.batch.outputs.write_outputs`).
"""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from .._args import parse_shard
from ..errors import EXIT_FAILED, EXIT_PASSED, GraderError
from ..reports.summary_md import tally
from .gradebook import GRADEBOOK, REPORTS, Row, read_gradebook, report_path
from .outputs import write_outputs
from .settings import SETTINGS, read_settings, settings_diff, write_settings


def add_parser(sub: Any) -> None:
    """Add the ``merge`` subcommand to the CLI's subparsers ``sub``."""
    merge = sub.add_parser(
        "merge", help="merge the output folders of several grade runs (shards) into one",
        description="Merge gradebooks and reports of grader grade --out folders; rewrite junit.xml and "
                    "summary.md. Exit 0 when every merged submission passed, 1 when some failed, 2 when the "
                    "folders cannot be merged.")
    merge.add_argument("dirs", nargs="+", metavar="DIR", help="folders written by grader grade --out")
    merge.add_argument("--out", required=True, metavar="DIR", help="the merged output folder")
    merge.add_argument("--audience", choices=("learner", "instructor"), default="instructor",
                       help="audience of the merged junit.xml (default instructor)")


def check_merge(sources: list[Path], records: dict[Path, dict[str, Any] | None]) -> dict[str, Any] | None:
    """Check that the folders ``sources`` (with their :func:`read_settings`) may be merged; the
    settings of the merged folder (shard none), or None when some folder has no record.

    Folders with a record must agree on every setting but the shard. When some folder is a
    shard, every folder must be one of the same N, and shards 1..N each given once.

    Raises:
        GraderError: one line saying what is wrong (exit 2).
    """
    known = [(d, r) for d, r in records.items() if r is not None]
    for d, r in known[1:]:
        diff = settings_diff(known[0][1], r, skip=("shard",), labels=(f"in {str(known[0][0])!r}", f"in {str(d)!r}"))
        if diff:
            raise GraderError(f"the folders were graded with different settings ({'; '.join(diff)}); "
                              "merge the folders of one run")
    sharded = [(d, r) for d, r in known if r.get("shard")]
    if not sharded:
        return {**known[0][1], "shard": None} if known and len(known) == len(sources) else None
    first, first_record = sharded[0]
    for d in sources:
        r = records[d]
        if r is None:
            raise GraderError(f"{str(d)!r} has no {SETTINGS} (graded by an older grader), so its shard is unknown, "
                              f"and {str(first)!r} is shard {first_record['shard']}; grade the shards again")
        if not r.get("shard"):
            raise GraderError(f"{str(d)!r} is not a shard (graded without --shard) and {str(first)!r} is shard "
                              f"{first_record['shard']}; merge the shards of one run")
    given: dict[int, Path] = {}
    count = None
    for d, r in sharded:
        try:
            index, n = parse_shard(str(r["shard"]))
        except argparse.ArgumentTypeError:
            raise GraderError(f"{str(d / SETTINGS)!r} records no shard I/N ({r['shard']!r})") from None
        if count is None:
            count = n
        elif n != count:
            raise GraderError(f"{str(first)!r} is shard {first_record['shard']} and {str(d)!r} is shard "
                              f"{index}/{n}; merge the shards of one run (one --shard I/N count)")
        if index in given:
            raise GraderError(f"shard {index}/{n} is given twice ({str(given[index])!r} and {str(d)!r}); "
                              "give each shard's folder once")
        given[index] = d
    assert count is not None
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in given]
    if missing:
        raise GraderError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                          f"{'are' if len(missing) > 1 else 'is'} missing: merge all {count} shards of the run "
                          f"(given: {', '.join(f'{i}/{count}' for i in sorted(given))})")
    return {**first_record, "shard": None}


def cmd_merge(args: argparse.Namespace) -> int:
    """``grader merge``: join the gradebooks and reports of ``args.dirs`` into ``args.out``.

    Returns 0 when every row of the merged gradebook passed, 1 otherwise (as ``grader grade``).

    Raises:
        GraderError: a folder is given twice (also by another path to it), a folder has no
            gradebook or misses a report, a learner is in two folders, the folders' settings
            records disagree or their shards are not all N shards of one run once each
            (:func:`check_merge`), ``--out`` already holds a gradebook that is not one of the
            inputs, or a file cannot be written.
    """
    sources = [Path(d) for d in args.dirs]
    out = Path(args.out)
    for i, d in enumerate(sources):
        for e in sources[:i]:
            if d.resolve() == e.resolve() or (d.exists() and e.exists() and d.samefile(e)):
                raise GraderError(f"{str(e)!r} and {str(d)!r} are the same folder; give each shard's folder once")
    for d in sources:
        if not (d / GRADEBOOK).is_file():
            raise GraderError(f"{str(d)!r} holds no {GRADEBOOK}; give folders written by grader grade --out")
    merged_settings = check_merge(sources, {d: read_settings(d) for d in sources})
    found: dict[str, tuple[Row, Path]] = {}  # learner -> (row, the folder it comes from)
    for d in sources:
        book = d / GRADEBOOK
        for row in read_gradebook(book):
            if not report_path(d, row.learner).is_file():
                raise GraderError(f"{str(report_path(d, row.learner))!r} is missing; finish that run with "
                                  f"grader grade --resume --out {d}")
            if row.learner in found and found[row.learner][1].resolve() != d.resolve():
                raise GraderError(f"learner {row.learner!r} is in both {str(found[row.learner][1])!r} and "
                                  f"{str(d)!r}; merge the disjoint shards of one class (grader grade --shard I/N)")
            found[row.learner] = (row, d)
    if (out / GRADEBOOK).exists() and out.resolve() not in {d.resolve() for d in sources}:
        raise GraderError(f"--out {args.out!r} already holds a gradebook; give a new folder or list it among DIR")
    try:
        (out / REPORTS).mkdir(parents=True, exist_ok=True)
        for learner, (_, d) in found.items():
            src, dst = report_path(d, learner), report_path(out, learner)
            if not dst.exists() or not dst.samefile(src):
                shutil.copyfile(src, dst)
        if merged_settings is None:  # a record of some other run must not stand for this merge
            (out / SETTINGS).unlink(missing_ok=True)
    except OSError as exc:
        raise GraderError(f"cannot write --out {args.out!r}: {exc.strerror or exc}") from None
    if merged_settings is not None:
        write_settings(out, merged_settings, by="grader merge")
    rows = [row for row, _ in found.values()]
    from .times import merge as merge_times
    merge_times(out, sources)  # the shards' submission times, for summary.html's grid
    reports = write_outputs(out, rows, args.audience)
    print(f"merged {tally(rows, reports)} from {len(sources)} folders; {out / GRADEBOOK}")
    return EXIT_PASSED if all(r.passed for r in rows) else EXIT_FAILED


HANDLERS = {"merge": cmd_merge}
