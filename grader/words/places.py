"""Where the submission raised, in words: a traceback's frames (``grader.results.Frame``, facts)
written as the reader has the files.

The one place a frame becomes text (``grader.reports.view.build`` calls it for every report it
builds, after ``view.learner_paths`` has named a learner's files as the learner has them): the
graded file as the report names it (``class/bob/solution.py`` for an instructor, ``solution.py``
for bob's feedback), a sibling beside it, a notebook's own frame as its code
cell and line, a library's file as Python named it (a learner's report then passes through
``view.learner_paths``, which names the Python install and site-packages neutrally). The layout
is Python's own (``traceback.format_list``), so an editor or a terminal that links
``File "x.py", line 3`` still does.
"""
from __future__ import annotations

import os

from ..results import Failure, Frame


def file_name(frame: Frame, submission: str) -> str:
    """The file of ``frame`` as the reader has it: ``submission`` (the report's path of the
    graded file) for the submission's own frame, a sibling beside it, else the frame's file."""
    if frame.ref == "submission":
        return submission
    if frame.ref == "sibling":
        folder = os.path.dirname(submission)
        return os.path.join(folder, frame.file) if folder else frame.file
    return frame.file


def place(frame: Frame, submission: str) -> str:
    """``File "solution.py", line 7`` or, for a notebook's frame, ``File "nb.ipynb", cell 2, line 3``,
    or, for a kernel cell's (``check(fn)``), ``Cell In[5], line 3`` as IPython writes it."""
    if frame.cell_label and frame.cell_line:
        return f"Cell {frame.cell_label}, line {frame.cell_line}"
    where = f"cell {frame.cell}, line {frame.cell_line}" if frame.cell else \
        (f"line {frame.line}" if frame.line else "line ?")
    return f'File "{file_name(frame, submission)}", {where}'


def traceback_text(failure: Failure, submission: str) -> str:
    """``failure``'s frames and exception as Python prints a traceback ("" when it has neither):
    ``Traceback (most recent call last):``, each frame's place, function and line of code, then
    the exception. A ``SyntaxError``'s place (a frame with no function) is written as Python
    writes it, without ``in``."""
    if not failure.frames and not failure.exception:
        return ""
    lines = ["Traceback (most recent call last):"] if any(f.function for f in failure.frames) else []
    for frame in failure.frames:
        head = "  " + place(frame, submission) + (f", in {frame.function}" if frame.function else "")
        lines.append(head)
        if frame.code:
            lines.append(f"    {frame.code}")
            if frame.marks:
                lines.append(f"    {frame.marks}")
    if failure.exception:
        lines.append(failure.exception)
    return "\n".join(lines) + "\n"
