"""Hint modules: the problem-specific ideas a spec names in ``hints``, and how they are loaded.

A spec's ``hints`` field names one module of ideas about that problem's mistakes:

* a **bundled** module by name (:data:`BUNDLED`: ``tied_lm_head``, this package's
  ``tied_lm_head.py``, whose ideas speak of logits, softmax and the table's transpose);
* an **instructor's** module by file: ``hints: my_hints.py``, a path relative to the spec's
  folder and inside it (``..`` is refused). It is loaded by file path with importlib in the
  grader's own (trusted) process, never added to ``sys.path`` and never looked up in a
  submission's folder. :func:`grader.spec.load_problem` checks when the spec loads that the file
  exists, parses and defines :data:`INTERFACE`'s ``ideas`` (or a stage hook), so a missing or
  broken module makes that problem unusable with its error, like any broken spec.

**The interface** (docs/authoring.md, "Hints"): the module defines

``ideas(inputs, expected, got, names) -> iterable of Idea``
    ``inputs``: parameter name -> the case's input as a NumPy array (float parameters in float64,
    integer and bool ones in their dtype), in call order; ``expected``: the exact float64
    reference output; ``got``: the submission's output as float64, the same shape; ``names``:
    :class:`Names` (the function's and parameters' names, the case dtype). Each :class:`Idea` is a
    *prediction*: the output a mistake would give, with the sentence to show when it is the
    mistake. The grader, not the module, decides (:func:`grader.hints.generic.judge`): an idea is
    named only when its prediction reproduces ``got`` within the tolerance at every element,
    would itself fail, explains ``got`` far better than the right answer does, and no idea of
    another id explains it about as well. Called only for value (tolerance) failures with
    finite outputs of the right shape; an exception in it is ignored (hints never change a
    verdict).

Optionally, stage hooks that *replace* a generic stage for the problem (the bundled
``tied_lm_head`` defines them all): ``diagnose_values(case, got, ref, scale, allowed)``,
``diagnose_shape(case, got, ref)``, ``diagnose_dtype(case, got)``, ``diagnose_type(type_name)``,
``diagnose_non_finite(case, got, ref)``, each returning a :class:`Hint` or None (signatures and
arguments as in ``grader/hints/tied_lm_head.py``; ``case`` is a ``grader.cases.Case``). An
instructor's hook returns ``Hint(idea=..., facts=..., text=...)`` with its own sentence; the
bundled modules return facts only, worded by ``grader/words/``.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

#: Bundled hint modules, by the name a spec gives in ``hints``.
BUNDLED = {"tied_lm_head": "grader.hints.tied_lm_head", "masked_mean_pool": "grader.hints.masked_mean_pool",
           "embedding_lookup": "grader.hints.embedding_lookup", "softmax": "grader.hints.softmax",
           "layer_norm": "grader.hints.layer_norm",
           "scaled_dot_product_attention": "grader.hints.scaled_dot_product_attention",
           "rms_norm": "grader.hints.rms_norm", "gelu": "grader.hints.gelu",
           "kl_divergence": "grader.hints.kl_divergence", "cross_entropy": "grader.hints.cross_entropy",
           "conv1d": "grader.hints.conv1d"}

#: Functions a hint module may define; a module must define at least one.
INTERFACE = ("ideas", "diagnose_values", "diagnose_shape", "diagnose_dtype", "diagnose_type", "diagnose_non_finite",
             "diagnose_raises")


@dataclass(frozen=True, kw_only=True)
class Hint:
    """A recognised mistake, as facts: which idea found it and the numbers and names behind it.

    No sentence: the words are chosen when the report is made, once, for the learner's
    framework (:func:`grader.words.render`, from the wording table of the module that owns the
    idea: ``grader/words/<module>.py``, then ``grader/words/generic.py``).

    Attributes:
        idea: a stable key (``"scaled"``, ``"softmax"``, ``"promoted"``...), for machines, for
            combining the hints of many cases (:func:`grader.diagnose.combine`) and for finding
            its wording.
        facts: what the wording needs and machines may read (a fitted factor, a dtype's name,
            a parameter's name...), JSON-serialisable; published as the failure's
            ``hint_params`` (a float among them withholds the hint on a seeded case,
            ``grader.reports.common.without_expected``).
        text: an instructor's idea's own sentence (their module has no wording table), shown as
            it is; None for the grader's own ideas.
    """

    idea: str
    facts: dict[str, Any] = field(default_factory=dict)
    text: str | None = None


@dataclass
class Idea:
    """A candidate mistake proposed by a hint module's ``ideas``: what the output would be.

    Attributes:
        id: a key for the mistake (``[a-z][a-z0-9_]*``); ids of the bundled hints
            (:data:`grader.hints.generic.RESERVED`) are prefixed with the module's name.
        text: the sentence shown when the idea is judged to be the mistake (an instructor's
            module); None in a bundled module, whose ideas are worded per framework by
            ``grader/words/<module>.py``.
        predicted: the output the mistake gives, any array-like of the expected output's shape.
        params: facts to report with it (JSON-serialisable).
    """

    id: str
    text: str | None
    predicted: Any
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Names:
    """The spec's own names, for wording hints.

    Attributes:
        function: the function a submission defines.
        parameters: the parameters' names, in call order.
        dtype: the case's graded dtype (``"float32"``...).
    """

    function: str
    parameters: tuple[str, ...]
    dtype: str


class HintModuleError(Exception):
    """A spec's ``hints`` names a module that is missing or does not define the interface."""


def resolve(value: str, spec_path: Path) -> str:
    """The ``hints`` value a problem keeps: a bundled name as is, a file as its absolute path.

    Args:
        value: the spec's ``hints`` field (a bundled name, or a ``.py`` path relative to the spec).
        spec_path: the YAML file.

    Raises:
        HintModuleError: an unknown name, a path outside the spec's folder, a missing file, a
            file that does not parse or defines none of :data:`INTERFACE`.
    """
    if not value.endswith(".py"):
        if value in BUNDLED:
            return value
        raise HintModuleError(f"{value!r} is neither a bundled hint module ({', '.join(BUNDLED)}) nor a .py file "
                              f"beside the spec (leave it out for generic hints only)")
    here = spec_path.resolve().parent
    path = (here / value).resolve()
    if here not in path.parents:
        raise HintModuleError(f"{value!r}: a hint module must be inside the spec's folder {here}")
    if not path.is_file():
        raise HintModuleError(f"no hint module at {path}")
    try:
        from ..siblings import parse   # one parse at a time in the process (gh-106905, siblings.parse)
        tree = parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, UnicodeDecodeError, OSError) as exc:
        raise HintModuleError(f"the hint module {path} does not parse: {exc}") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not defined & set(INTERFACE):
        raise HintModuleError(f"the hint module {path} defines none of {', '.join(INTERFACE)} "
                              f"(docs/authoring.md, 'Hints')")
    return str(path)


_LOADED: dict[str, ModuleType | None] = {}
_LOCK = threading.Lock()


def load(hints: str | None) -> ModuleType | None:
    """The hint module a problem names (its ``Problem.hints``), imported once; None for none.

    A bundled name is imported from this package; an absolute path (from :func:`resolve`) by
    file with importlib, under a private module name, not added to ``sys.path``. A file that
    fails to import gives None (hints are advice: a broken one must not break grading; the
    spec check already caught a missing file).
    """
    if not hints:
        return None
    with _LOCK:
        if hints in _LOADED:
            return _LOADED[hints]
        module: ModuleType | None
        try:
            if hints in BUNDLED:
                module = importlib.import_module(BUNDLED[hints])
            else:
                name = "grader_hints_" + hashlib.sha256(hints.encode()).hexdigest()[:12]
                spec = importlib.util.spec_from_file_location(name, hints)
                if spec is None or spec.loader is None:
                    raise ImportError(hints)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
        except Exception:  # noqa: BLE001 - a hint module that cannot load gives no hints
            module = None
        _LOADED[hints] = module
        return module


def as_float(a: Any) -> np.ndarray:
    """``a`` as a float64 array (bool and integer arrays by value)."""
    return np.asarray(a, dtype=np.float64)


def softmax_along(x: np.ndarray, axis: int | None = -1) -> np.ndarray:
    """The softmax of ``x`` (float64) along ``axis`` (None: over every entry), the maximum
    subtracted first; a slice of only ``-inf`` gives NaN, as the formula does. The one the
    bundled hint modules predict mistakes with (tied_lm_head, softmax, attention); not named
    ``softmax``, which is the bundled module ``grader.hints.softmax``."""
    with np.errstate(all="ignore"):
        top = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
        return e / np.sum(e, axis=axis, keepdims=True)


def logsumexp(x: np.ndarray) -> np.ndarray:
    """``log(sum(exp(x)))`` of ``x`` (float64) along the last axis, kept, the maximum subtracted
    first (tied_lm_head's log-softmax idea, kl_divergence's log-probabilities)."""
    top = x.max(axis=-1, keepdims=True)
    return top + np.log(np.exp(x - top).sum(axis=-1, keepdims=True))
