"""Framework knowledge, one module per framework: ``numpy``, ``jax``, ``torch``.

Each module says how a submission written for it is recognised (:data:`MODULES`, the top-level
import names), how its process is set up (``setup``), how a NumPy input becomes the framework's
array (``to_framework``) and how a returned value becomes a NumPy array (``to_numpy``), what
must be installed (``REQUIREMENT``) and how code is written in it (``CODE``: the templates
``grader.words`` fills when it words a hint for that framework's learners).

The modules are imported here, in the trusted grader, and loaded by path in the submission's
process (``grader/_child.py``; the sandbox shows these files, ``grader.sandbox.CHILD_FILES``).
So a module uses only the standard library, NumPy, ml_dtypes and its own framework, imported
inside its functions: importing the module never imports the framework.
"""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from . import jax as _jax
from . import numpy as _numpy
from . import torch as _torch

#: every framework the grader knows, the default (no framework import) first
FRAMEWORKS = ("numpy", "jax", "torch")
_MODULES: dict[str, ModuleType] = {"numpy": _numpy, "jax": _jax, "torch": _torch}
FOLDER = Path(__file__).resolve().parent
#: the files the submission's process loads by path (the sandbox must show them)
CHILD_FILES = tuple(FOLDER / f"{name}.py" for name in FRAMEWORKS)


def get(name: str) -> ModuleType:
    """The module of framework ``name``.

    Raises:
        KeyError: not a framework the grader knows.
    """
    return _MODULES[name]


#: an import statement of a file whose AST is lost: ``import a.b as c, d`` (group 1: ``a.b as c,
#: d``) or ``from a.b import c`` (group 2: ``a.b``); relative imports do not match
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import[ \t]+([\w., \t]+)|from[ \t]+(\w[\w.]*)[ \t]+import\b)", re.MULTILINE)


def detect(tree: ast.Module | None, source: str | None = None) -> str:
    """The framework a submission is written for, from its import statements (never comments
    or strings): the first import, in source order, of a framework other than NumPy
    (``import torch``, ``from jax.numpy import ...``, ``import torch.nn.functional as F``),
    anywhere in the file (inside a function too); ``"numpy"`` when there is none. Relative
    imports (``from .torch import x``) do not count. A file that does not parse (``tree`` None)
    is read by a tolerant scan of ``source``'s lines that start with ``import`` or ``from``
    (:data:`_IMPORT_LINE`): a PyTorch file with a syntax error was reported as a NumPy
    submission graded in NumPy's dtypes (a newcomer's trial).
    """
    if tree is None:
        for match in _IMPORT_LINE.finditer(source or ""):
            names = [match.group(2)] if match.group(2) else \
                [item.split()[0] for item in match.group(1).split(",") if item.strip()]
            for name in names:
                top = name.split(".")[0]
                for fw in FRAMEWORKS[1:]:
                    if top in _MODULES[fw].MODULES:
                        return fw
        return "numpy"
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            for fw in FRAMEWORKS[1:]:
                if top in _MODULES[fw].MODULES:
                    found.append((node.lineno, node.col_offset, fw))
    return min(found)[2] if found else "numpy"


def installed(name: str) -> bool:
    """Whether framework ``name`` can be imported by this Python (found, not imported: cheap).

    The submission's process runs this same interpreter with ``-I``, so what is found here is
    what it finds (a ``pip install --user`` is the exception, see docs/security.md).
    """
    return all(importlib.util.find_spec(m) is not None for m in _MODULES[name].MODULES) and too_old(name) is None


def too_old(name: str) -> str | None:
    """The installed version of framework ``name`` when it is older than its ``MIN_VERSION``
    (read from the package's metadata, never imported), else None."""
    minimum = getattr(_MODULES[name], "MIN_VERSION", None)
    if minimum is None:
        return None
    try:
        version = importlib.metadata.version(_MODULES[name].MODULES[0])
    except importlib.metadata.PackageNotFoundError:
        return None
    parts = tuple(int(x) for x in re.findall(r"\d+", version)[:len(minimum[0])])
    return version if parts < minimum[0] else None


def missing_message(name: str) -> str:
    """The one line a submission of framework ``name`` gets where that framework is not
    installed (``ModuleNotFoundError: ...``), or installed in a release older than the grader
    supports."""
    fw = _MODULES[name]
    old = too_old(name)
    if old is not None:
        (need, why) = fw.MIN_VERSION
        return (f"this is a {fw.LABEL} submission (it imports {fw.MODULES[0]}), but {fw.LABEL} {old} is installed "
                f"where the grader runs, older than the {'.'.join(map(str, need))} it needs ({why}): install a "
                f"newer one with {fw.REQUIREMENT}")
    return (f"ModuleNotFoundError: this is a {fw.LABEL} submission (it imports {fw.MODULES[0]}), but {fw.LABEL} "
            f"is not installed where the grader runs: install it with {fw.REQUIREMENT} (or pass --framework if "
            f"the submission is not {fw.LABEL} code)")


__all__ = ["CHILD_FILES", "FRAMEWORKS", "detect", "get", "installed", "missing_message", "too_old"]
