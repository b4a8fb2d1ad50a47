"""The class's similarity report, ``similarity.html`` (issue 37): the pairs of submissions that
share more code than ``--similarity`` (a share), each with its matching lines side by side.

Fingerprints are copydetect's (a maintained implementation of winnowing, Schleimer, Wilkerson
and Aiken, SIGMOD 2003, as in MOSS): the code is tokenized with Pygments and names, strings
and comments are normalised, so renamed variables and reworded comments do not hide a copy;
k-grams of ``NOISE`` characters are hashed and one hash per window of ``WINDOW`` kept. The
starter code (``--starter``) is fingerprinted too and its hashes removed from every
submission's, so the code everyone was handed is never a match. A notebook is compared by
its code cells (:func:`grader.notebook.convert`).

The share of a pair is the larger of the two: the part of one submission's fingerprinted code
found in the other; a pair is listed from ``--similarity`` (a share) and :data:`MIN_OVERLAP`
characters of common normalised code up. Every learner-controlled string (ids, code) is escaped by the template.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

NOISE = 25          # copydetect's noise threshold: matches shorter than this (characters of tokens) are ignored
GUARANTEE = 30      # copydetect's guarantee threshold: matches this long are always found
WINDOW = GUARANTEE - NOISE + 1
#: the least common code (characters of normalised tokens, beyond the starter code) a listed pair
#: shares: a short exercise's answers look alike at any share (``return V.V(V,V.V)`` is 16),
#: about three lines of code written alike are worth a look
MIN_OVERLAP = 60
MAX_BYTES = 1 << 20  # a file larger than this is left out (no one hands in a megabyte of code)
CSP = "default-src 'none'; style-src 'unsafe-inline'"
MAX_PAIRS = 100     # pairs listed, with their lines side by side; the page says how many more there are


@dataclass
class Pair:
    """Two learners' submissions that share code: ``share`` (0-1, the larger of the two shares),
    ``shares`` (of ``a``'s code found in ``b``'s, and the other way), and for each side its
    lines (text, matched) to show."""

    a: str
    b: str
    share: float
    shares: tuple[float, float]
    lines_a: list[tuple[str, bool]]
    lines_b: list[tuple[str, bool]]


def code_of(path: Path, helpers: bool = False) -> str | None:
    """The Python source of a submission file (a notebook's code cells), or None when it cannot
    be read as one: a link, a FIFO or another special file, a hard link, over :data:`MAX_BYTES`
    (:func:`grader.siblings.read_no_follow`, as the check reads it). With ``helpers``, the
    modules beside it that its check takes along follow it, in name order
    (``grader.submission.siblings_of``: the same files, read the same way)."""
    from ..siblings import read_no_follow
    try:  # the one reader of learner files: no link followed, no FIFO waited on, no hard link
        data, _, _ = read_no_follow(str(path), MAX_BYTES)
    except OSError:
        return None
    if data is None:
        return None
    if path.suffix == ".ipynb":
        from ..notebook import NotebookError, convert
        try:
            code = convert(data).source
        except NotebookError:
            return None
    else:
        code = python_text(data)
    if helpers:
        from ..errors import GraderError
        from ..submission import load_submission, siblings_of
        try:
            taken = siblings_of(path, load_submission(path)).files
        except (GraderError, OSError, ValueError):
            taken = []
        for name, module in sorted(taken):
            code += f"\n\n# {name}\n" + python_text(module)
    return code


def python_text(data: bytes) -> str:
    """``data`` decoded as Python decodes a source file (``importlib.util.decode_source``: the
    PEP 263 ``# coding:`` line, then universal newlines), else as UTF-8 with replacements.
    Read as plain UTF-8, a verbatim copy of another learner's file declared ``# coding: utf-7``
    (every character a ``+AGk-`` block) or ``unicode_escape`` (every one ``\\xNN``) passed 10/10
    and was in no similar pair (round eleven of issue 32)."""
    import importlib.util
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, LookupError, UnicodeError, ValueError):
        return data.decode("utf-8", errors="replace")


def _fingerprint(code: str, boilerplate: Iterable[int] = ()):  # noqa: ANN202 - copydetect's type
    from copydetect import CodeFingerprint
    return CodeFingerprint("submission.py", NOISE, WINDOW, boilerplate=list(boilerplate), language="python",
                           fp=io.StringIO(code))


def _marked(code: str, slices, handed_out: frozenset[str] = frozenset()) -> list[tuple[str, bool]]:  # noqa: ANN001
    """The lines of ``code``, each with whether a matched slice (copydetect's 2xN character
    offsets) covers part of it; a line of the starter code (``handed_out``, stripped) never is."""
    lines = code.splitlines(keepends=True)
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line)
    hit = [False] * len(lines)
    import bisect
    for s, e in zip(*slices) if len(slices) == 2 else []:
        first, last = bisect.bisect_right(starts, int(s)) - 1, bisect.bisect_right(starts, max(int(e) - 1, int(s))) - 1
        for i in range(max(first, 0), min(last, len(lines) - 1) + 1):
            if lines[i].strip() and lines[i].strip() not in handed_out:
                hit[i] = True
    return [(line.rstrip("\n"), h) for line, h in zip(lines, hit)]


def similar_pairs(sources: dict[str, str], starters: Iterable[str] = (), threshold: float = 0.5) -> list[Pair]:
    """The pairs of ``sources`` (learner -> code) whose share of common code, the starter code
    (``starters``, texts) left out, is at least ``threshold`` and at least :data:`MIN_OVERLAP`
    characters of normalised code; the most similar first."""
    from copydetect import compare_files
    from copydetect.utils import filter_code, get_document_fingerprints
    boiler: set[int] = set()
    for text in starters:
        filtered, _ = filter_code(text, "starter.py", "python")
        hashes, _ = get_document_fingerprints(filtered, NOISE, 1)  # every k-gram of it, as copydetect does
        boiler |= {int(h) for h in hashes}
    handed_out = frozenset(line.strip() for text in starters for line in text.splitlines() if line.strip())
    prints = {}
    for learner, code in sorted(sources.items()):
        try:
            fp = _fingerprint(code, sorted(boiler))
        except Exception:  # noqa: BLE001 - code the tokenizer cannot take is compared with no one
            continue
        if fp.token_coverage:
            prints[learner] = fp
    names = list(prints)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            overlap, (sa, sb), (slices_a, slices_b) = compare_files(prints[a], prints[b])
            share = max(float(sa), float(sb))
            if overlap >= MIN_OVERLAP and share >= threshold:
                pairs.append(Pair(a=a, b=b, share=share, shares=(float(sa), float(sb)),
                                  lines_a=_marked(prints[a].raw_code, slices_a, handed_out),
                                  lines_b=_marked(prints[b].raw_code, slices_b, handed_out)))
    return sorted(pairs, key=lambda p: (-p.share, p.a, p.b))


def render(pairs: list[Pair], *, learners: int, threshold: float, starters: list[str], title: str,
           links: dict[str, str]) -> str:
    """similarity.html: ``pairs`` among ``learners`` compared, at ``threshold``, the starter
    files named by ``starters`` left out; ``links`` maps a learner to their feedback page. The
    :data:`MAX_PAIRS` most similar pairs are shown; the page counts the others."""
    from .templating import render as render_template
    return render_template("similarity.html.j2", pairs=pairs[:MAX_PAIRS], more=max(0, len(pairs) - MAX_PAIRS),
                           learners=learners, threshold=threshold, starters=starters, title=title, links=links,
                           csp=CSP, noise=NOISE)
