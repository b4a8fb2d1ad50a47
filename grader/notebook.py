"""Jupyter notebooks as submissions: the code cells, in order, as one Python source.

The trusted grader reads the notebook's bytes once (``check.load_submission``, no link
followed) and converts them here with nbformat; the submission's process imports the converted
source, never the notebook. What IPython would run but Python cannot is left out and listed:
line magics (``%matplotlib inline``), cell magics (a cell starting with ``%%``: the whole cell,
but for ``%%time``, ``%%capture`` and ``%%prun``, whose body IPython runs as Python: only their
first line),
and shell escapes (``!pip install ...``, ``files = !ls``); a line left
out inside a block becomes ``pass`` at its indentation, so the rest still parses. Markdown and
raw cells, outputs and execution counts are ignored.

The work is linear in the file and bounded: the JSON is read once before nbformat sees it and a
notebook of more than :data:`MAX_CELLS` cells (of any kind) is refused, a fault of the
submission; cells are mapped to the file's lines with one index of the line starts
(:func:`source_file_lines`), never one scan of the file per cell (a 1 MiB notebook of 22,303
empty raw cells took 5.4 CPU-s to convert, security issue round 4, class 4).

Positions in the converted source map back to the notebook as facts: :meth:`Notebook.cell_of`
gives (cell N, line M) (N counts every cell from 1, as the notebook shows them top to bottom; M is
the line in that cell) for a traceback's frames (``grading.in_cell``), :meth:`Notebook.cell_runs`
the same for the submission's process, which names its warnings' places with it. Nothing
rewrites a finished message.
"""
from __future__ import annotations

import bisect
import json
import re
import warnings
from dataclasses import dataclass, field

SUFFIX = ".ipynb"
#: cell magics whose body IPython runs as Python in the notebook's own namespace, so its
#: definitions persist (``%%time`` above a cell that defines the function): the body is kept.
#: ``%%timeit`` runs it in a scope of its own and ``%%python`` / ``%%script`` in another
#: process, so what they define never reaches the namespace: their cells are left out.
KEPT_CELL_MAGICS = frozenset({"time", "capture", "prun"})
#: the most cells a notebook may have, every kind counted (code, markdown, raw); a notebook with
#: more is refused before nbformat reads it (a course notebook has tens to hundreds)
MAX_CELLS = 2000
#: characters a ``source`` line of the file may hold beside the JSON string of its cell line
#: (indentation: Jupyter writes 4 spaces, a writer with indent 4 16; the comma; a CR): a longer
#: file line is not taken as that cell line's, so matching a cell line costs at most its own
#: length plus this, never the length of the file line
_LINE_SLACK = 32
_SHELL_ASSIGN = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*[!%]")


class NotebookError(ValueError):
    """The bytes are not a notebook nbformat can read (the message says why)."""


@dataclass
class Notebook:
    """A notebook converted to Python.

    Attributes:
        source: the code cells joined, each after a ``# cell N`` line.
        lines: for each line of ``source`` (index = line - 1), ``(cell, line in cell)``, or
            None for the ``# cell N`` lines.
        left_out: one entry per line or cell left out: ``"cell N, line M: %magic ..."``.
        code_cells: how many code cells there are.
        file_lines: for each line of ``source``, the line of the ``.ipynb`` file (its JSON text)
            that holds it (:func:`source_file_lines`), or None where that is not known.
    """

    source: str
    lines: list[tuple[int, int] | None] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    code_cells: int = 0
    file_lines: list[int | None] = field(default_factory=list)

    def file_line(self, line: int | None) -> int | None:
        """The line of the ``.ipynb`` file that holds line ``line`` of the converted source (what
        a GitHub annotation or a JUnit ``line=`` of the notebook must name), or None."""
        if line is None or not 1 <= line <= len(self.file_lines):
            return None
        return self.file_lines[line - 1]

    def cell_of(self, line: int | None) -> tuple[int, int] | None:
        """``(code cell, line in it)`` of line ``line`` of the converted source, or None (a line
        the conversion added, or none)."""
        if line is None or not 1 <= line <= len(self.lines) or self.lines[line - 1] is None:
            return None
        cell, in_cell = self.lines[line - 1]  # type: ignore[misc]
        return int(cell), int(in_cell)

    def cell_runs(self) -> list[list[int]]:
        """The converted source's lines by code cell, as runs ``[first line, count, cell, its line
        in the cell]`` (each run's lines consecutive in both): what the submission's process is
        given to name a warning's place as cell and line (``grader._child``), a few numbers a
        cell however long the notebook."""
        runs: list[list[int]] = []
        for i, place in enumerate(self.lines, start=1):
            if place is None:
                continue
            cell, in_cell = int(place[0]), int(place[1])
            last = runs[-1] if runs else None
            if last and last[2] == cell and last[0] + last[1] == i and last[3] + last[1] == in_cell:
                last[1] += 1
            else:
                runs.append([i, 1, cell, in_cell])
        return runs

    def where(self, line: int | None) -> str | None:
        """"cell N, line M" for line ``line`` of the converted source, or None."""
        place = self.cell_of(line)
        return f"cell {place[0]}, line {place[1]}" if place else None

    def note(self) -> str:
        """One line for the report: how many code cells ran and what was left out."""
        text = f"Notebook: its {self.code_cells} code cell{'s' if self.code_cells != 1 else ''} ran in order"
        if self.left_out:
            shown = "; ".join(self.left_out[:5]) + (f"; and {len(self.left_out) - 5} more" if len(self.left_out) > 5 else "")
            text += f"; left out, as IPython-only: {shown}"
        return text + "."


def _ipython_only(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("%", "!")) or bool(_SHELL_ASSIGN.match(line))


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 60 else text[:57] + "..."


def cell_count(nb: object) -> int:
    """How many cells the notebook ``nb`` (its JSON as ``json.loads`` reads it) may have, every
    kind counted: its ``cells`` (nbformat 4) and the cells of its ``worksheets`` (nbformat 2 and
    3) together, whichever nbformat's version field makes it read; 0 for anything else (nbformat
    then says what is wrong with it)."""
    if not isinstance(nb, dict):
        return 0
    count = len(nb["cells"]) if isinstance(nb.get("cells"), list) else 0
    sheets = nb.get("worksheets")
    if isinstance(sheets, list):
        count += sum(len(ws["cells"]) for ws in sheets if isinstance(ws, dict) and isinstance(ws.get("cells"), list))
    return count


def convert(data: bytes) -> Notebook:
    """The Python source of the notebook ``data`` (its bytes), in time linear in their length.

    Raises:
        NotebookError: not JSON, not a notebook, a version nbformat cannot read, or more than
            :data:`MAX_CELLS` cells.
    """
    import nbformat

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NotebookError("it is not UTF-8 text (a notebook is JSON)") from None
    try:  # the cells as written (nbformat joins a source's lines into one string on reading)
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raw = None   # nbformat says why below
    count = cell_count(raw)
    if count > MAX_CELLS:
        raise NotebookError(f"it has {count:,} cells; at most {MAX_CELLS:,} are graded: delete the empty and "
                            "unused cells, merge the others, or submit the code as a .py file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - any parse failure is the submission's
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise NotebookError(f"nbformat cannot read it ({type(exc).__name__}{': ' + first[:200] if first else ''})") \
            from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("it has no list of cells")
    if len(cells) > MAX_CELLS:  # (cell_count counts every layout nbformat reads: not reached)
        raise NotebookError(f"it has {len(cells):,} cells; at most {MAX_CELLS:,} are graded")
    out: list[str] = []
    lines: list[tuple[int, int] | None] = []
    left_out: list[str] = []
    code_cells = 0
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_cells += 1
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        out.append(f"# cell {number}")
        lines.append(None)
        cell_lines = src.split("\n")
        if cell_lines and cell_lines[0].lstrip().startswith("%%"):
            magic = cell_lines[0].lstrip()[2:].split(maxsplit=1)[0] if cell_lines[0].strip() != "%%" else ""
            if magic in KEPT_CELL_MAGICS:   # IPython runs the body as Python, in the notebook's namespace
                left_out.append(f"cell {number}, line 1: {_short(cell_lines[0])} (the cell's body is kept: "
                                f"IPython runs it as Python)")
                cell_lines = [""] + cell_lines[1:]
            else:
                left_out.append(f"cell {number}: the whole cell ({_short(cell_lines[0])}, a cell magic)")
                cell_lines = [""] * len(cell_lines)
        for i, line in enumerate(cell_lines, start=1):
            if _ipython_only(line):
                left_out.append(f"cell {number}, line {i}: {_short(line)}")
                indent = line[: len(line) - len(line.lstrip())]
                line = f"{indent}pass" if indent else ""
            out.append(line)
            lines.append((number, i))
    written = raw.get("cells") if isinstance(raw, dict) else None
    where = source_file_lines(text, written) if isinstance(written, list) else {}
    file_lines = [None if at is None else where.get(at) for at in lines]
    return Notebook("\n".join(out) + "\n", lines, left_out, code_cells, file_lines)


_SOURCE_KEY = re.compile(r'(?:^|(?<=[{,]))([ \t]*)"source"\s*:', re.MULTILINE)


def line_starts(text: str) -> list[int]:
    """The offset in ``text`` at which each of its lines starts (one pass over ``text``): the
    line holding offset ``pos`` is ``bisect.bisect_right(starts, pos)`` (from 1)."""
    starts = [0]
    find, at = text.find, text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = find("\n", at + 1)
    return starts


def _holds(file_line: str, part: object) -> bool:
    """Whether the line ``file_line`` of the notebook's JSON text holds the cell line ``part``
    as a JSON string (as written by Jupyter, or with non-ASCII escaped), looking at no file line
    longer than the string plus :data:`_LINE_SLACK`: the work is bounded by the cell line's
    own length however long the file line is."""
    tried = None
    for ascii in (False, True):
        encoded = json.dumps(part, ensure_ascii=ascii)
        if encoded != tried and len(file_line) <= len(encoded) + _LINE_SLACK and encoded in file_line:
            return True
        tried = encoded
    return False


def source_file_lines(text: str, cells: list) -> dict[tuple[int, int], int]:
    """``(cell, line in cell) -> line of the file`` for the notebook JSON ``text`` whose
    ``cells`` are given as ``json.loads`` reads them (cells counted from 1, every cell).

    Jupyter and nbformat write a cell's ``source`` as a list of its lines, one JSON string per
    line of the file after the ``"source": [`` line; that layout is checked line by line (each
    file line must hold its source line as a JSON string), and where it does not hold (a source
    written as one string, a minified notebook) every line of the cell maps to the line of its
    ``"source"`` key. Where the text has more ``"source"`` keys than cells (one in metadata),
    the cells' are those at the start of a line with the least indentation; if their count is
    still not the number of cells, the map is empty (callers then say line 1).

    Linear in ``text`` and the cells: the file's lines are indexed once (:func:`line_starts`)
    and each cell line is compared with one file line, at a cost bounded by its own length
    (:func:`_holds`).
    """
    found = [(m.start(), m.group(1), m.start() == 0 or text[m.start() - 1] == "\n")
             for m in _SOURCE_KEY.finditer(text)]
    starts = [pos for pos, _, _ in found]
    if len(starts) != len(cells):  # keys named "source" elsewhere: the cells' are the outermost
        at_start = [(pos, indent) for pos, indent, first in found if first]
        depth = min((len(indent) for _, indent in at_start), default=0)
        starts = [pos for pos, indent in at_start if len(indent) == depth]
    if len(starts) != len(cells):
        return {}
    file_lines = text.split("\n")
    index = line_starts(text)
    out: dict[tuple[int, int], int] = {}
    for number, (pos, cell) in enumerate(zip(starts, cells), start=1):
        key_line = bisect.bisect_right(index, pos)
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        parts = src if isinstance(src, list) else str(src).splitlines(keepends=True)
        listed = isinstance(src, list) and file_lines[key_line - 1].rstrip().endswith("[")
        for i, part in enumerate(parts, start=1):
            at = key_line + i
            ok = listed and at <= len(file_lines) and _holds(file_lines[at - 1], part)
            out[(number, i)] = at if ok else key_line
        if not parts or str(parts[-1]).endswith("\n"):  # the empty line after a final newline
            out[(number, len(parts) + 1)] = out.get((number, len(parts)), key_line)
    return out


__all__ = ["MAX_CELLS", "Notebook", "NotebookError", "SUFFIX", "cell_count", "convert", "line_starts",
           "source_file_lines"]
