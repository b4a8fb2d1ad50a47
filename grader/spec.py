"""Problem specs: YAML files validated against ``grader/schemas/problem.schema.json``.

A problem is a YAML file in a problems folder plus a reference solution in the sibling
``reference/`` folder; nothing in the grader is specific to one problem. Validation is done by
``jsonschema`` (Draft 2020-12); errors name the file, the line (from PyYAML's node marks) and the
dotted field, e.g. ``problems/x.yaml:52: tolerance.model: 'ulp' is not one of [...]``.

Where problems are looked up (:func:`problem_catalog`): the bundled problems, ``problems/``
beside the ``grader`` package (a source checkout or editable install) or else
``grader/_bundled/problems`` (a wheel install; see pyproject.toml), plus the folder given with
``--problems-dir`` (or the ``GRADER_PROBLEMS_DIR`` environment variable), which *adds* to them:
a problem of the same id there replaces the bundled one (the catalog says which, and the CLI
says so once on stderr). A problem's reference module is ``reference/<module>.py`` inside its
problems folder, or, only when there is none there, in the folder beside it (the bundled
layout); the one beside is then never opened (see :func:`_reference_file`).
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from . import memo
from .errors import GraderError, SpecError

SCHEMA_PATH = Path(__file__).parent / "schemas" / "problem.schema.json"
LEAD = "..."  # the symbol for any number of leading (batch) axes


INT_DTYPES = ("int32", "int64")
FLOAT_DTYPES = ("bfloat16", "float16", "float32", "float64")


NO_DEFAULT = object()  # a required parameter's ``default``
_DOMAIN2 = re.compile(r"^\[\s*([^,]+?)\s*,\s*([^,]+?)\s*([\])])$")


# the expression language of domains, sizes and constraints (defined in spec_expr)
from .spec_expr import (Bound, SizeExprError, draw_order, holds, parse_bound, relation_expr, size_expr,
                        size_names)


@dataclass(frozen=True)
class WithoutAxis:
    """A ``returns.shape`` of ``{of: x, without_axis: axis}``: the shape of the array parameter
    ``of`` with the axis ``axis`` removed (an int scalar parameter's name, or an integer;
    negative counts from the end), the result of a reduction along a given axis."""

    of: str
    axis: str | int

    def __str__(self) -> str:
        return f"{{of: {self.of}, without_axis: {self.axis}}}"

    def resolve(self, shapes: dict[str, tuple[int, ...]], env: dict[str, int]) -> tuple[int, ...] | None:
        """The concrete shape, from the arrays' ``shapes`` and the int scalars in ``env``; None
        when the array or the axis is not in the case, or the axis is out of range (the
        reference raises there)."""
        if self.of not in shapes:
            return None
        shape = tuple(shapes[self.of])
        axis = self.axis if isinstance(self.axis, int) else env.get(self.axis)
        if axis is None or not -len(shape) <= axis < len(shape):
            return None
        axis %= len(shape)
        return shape[:axis] + shape[axis + 1:]


def shape_text(shape: "tuple[Any, ...] | WithoutAxis") -> str:
    """A ``returns.shape`` as a spec writes it, for messages."""
    return str(shape) if isinstance(shape, WithoutAxis) else str(list(shape))


@dataclass(frozen=True)
class Output:
    """One named output of a function with several (``returns.outputs``).

    ``shape`` as ``returns.shape`` (symbols, ints, size expressions, ``"..."``); ``dtype``:
    ``"same_as_inputs"``, a float parameter's name, or a dtype name (then also
    ``fixed_dtype``); ``python_scalar``: a 0-d output may be a Python number; ``tolerance``: the
    problem's ``tolerance`` mapping with this output's own keys over it; ``checker``: the
    output's own checker (as :attr:`Problem.checker`), or None.
    """

    name: str
    shape: "tuple[str | int, ...] | WithoutAxis"
    dtype: str
    fixed_dtype: str | None
    python_scalar: bool
    tolerance: dict[str, Any]
    checker: dict[str, Any] | None = None


@dataclass(frozen=True)
class Parameter:
    """One parameter of the function under test: its name, role, symbolic shape, dtype kind.

    ``shape`` holds size symbols (``"d_model"``), fixed sizes (ints) and at most one ``"..."``
    for the leading axes; a scalar parameter (``scalar``: ``"int"``, ``"float"`` or ``"bool"``)
    has shape ``()`` and reaches the function as a Python value. ``dtype`` is ``"float"`` (the
    case's graded float dtype), ``"bool"``, an integer or float dtype name, or a tuple of integer
    dtype names cycled over the cases (:meth:`dtype_for`). ``domain`` is, for integer
    parameters, ``(lo, hi)`` with both bounds included, each a :class:`Bound`
    (``"[0, vocab_size)"`` gives ``(Bound("int"), Bound("size", "vocab_size", 1, -1))``); None:
    any value the fill makes. ``values``: a scalar's values, taken in turn by the cases.
    ``default``: :data:`NO_DEFAULT` for a required parameter, else its default (the call then
    leaves it out where a case does not give it); ``passed``: how a case that gives an optional
    parameter passes it, ``"keyword"`` or ``"positional"``.
    """

    name: str
    role: str
    shape: tuple[str | int, ...]
    dtype: str | tuple[str, ...] = "float"
    domain: tuple[Any, Any] | None = None
    scalar: str | None = None
    default: Any = NO_DEFAULT
    passed: str = "keyword"
    values: tuple[Any, ...] | None = None

    @property
    def kind(self) -> str:
        """``"float"``, ``"int"`` or ``"bool"`` for arrays; ``"scalar"`` for a scalar parameter."""
        if self.scalar is not None:
            return "scalar"
        first = self.dtype[0] if isinstance(self.dtype, tuple) else self.dtype
        if first == "float" or first in ("bfloat16", "float16", "float32", "float64"):
            return "float"
        return "bool" if first == "bool" else "int"

    @property
    def optional(self) -> bool:
        """Whether the parameter has a default (a case may leave it out)."""
        return self.default is not NO_DEFAULT

    @property
    def graded(self) -> bool:
        """Whether this is an array in the case's graded float dtype (``dtype: float``)."""
        return self.kind == "float" and self.dtype == "float"

    def dtype_for(self, float_dtype: str, index: int) -> str:
        """The concrete dtype name of this parameter in a case of ``float_dtype``.

        ``index`` picks from a list of integer dtypes (cycled); float parameters take the case's
        graded dtype; a scalar is held as int64, float64 or bool.
        """
        if self.scalar is not None:
            return {"int": "int64", "float": "float64", "bool": "bool"}[self.scalar]
        if isinstance(self.dtype, tuple):
            return self.dtype[index % len(self.dtype)]
        return float_dtype if self.dtype == "float" else self.dtype

    def bounds(self, sizes: dict[str, Any], ndims: dict[str, int] | None = None) -> tuple[int, int] | None:
        """The domain with its symbols resolved in ``sizes`` (and ``ndims``, parameter -> axes):
        ``(lo, hi)``, both included, or None."""
        if self.domain is None:
            return None
        lo, hi = self.domain
        return (lo.value(sizes, ndims) if isinstance(lo, Bound) else int(lo),
                hi.value(sizes, ndims) if isinstance(hi, Bound) else int(hi))


@dataclass(frozen=True)
class Group:
    """A case group: ``points`` (a float >= 0) shared by its cases, and its visibility."""

    name: str
    points: float
    visibility: str = "visible"
    description: str = ""


@dataclass
class Problem:
    """A validated problem spec.

    Attributes:
        id, title, statement: as in the YAML.
        function: the name a submission must define.
        parameters: the function's parameters, in call order.
        returns_shape: the symbolic output shape, e.g. ``("...", "vocab_size")``.
        returns_dtype: ``"same_as_inputs"`` (the case's graded dtype), the name of the
            parameter whose dtype the output has, or a dtype name (then also in
            ``returns_fixed_dtype``: ``"int64"`` for indices, ``"float32"`` for a table).
        returns_fixed_dtype: the output's fixed dtype, or None (it follows the inputs).
        python_scalar: a 0-d result may be a Python float/int/bool.
        checker: ``{"module": name or absolute path, "function": ..., "options": {...}}`` that
            judges the values instead of the tolerance (``grader.checkers``), or None.
        alternatives: ``{"dir": ..., "margin": ...}`` of correct implementations for ``grader validate``.
        outputs: the named outputs of a function returning several (``returns.outputs``), in
            order; empty for one output (then ``returns_*`` describe it).
        returns_as: ``"tuple"`` or ``"dict"`` for several outputs, else "".
        select: for :meth:`output_view`, the output's index and name in the reference's result.
        draw_order: the parameters' names in the order a case's values are made
            (:func:`draw_order`): what a domain refers to comes before it.
        constraints: ``(text, parsed)`` of each ``constraints`` entry (:func:`relation_expr`): what
            every case's sizes and int scalars satisfy (a case that must raise may break them).
        hints: the problem's hint module: a bundled name (``"tied_lm_head"``), the absolute path of
            a ``.py`` file beside the spec (``grader.hints.resolve``), or None (generic hints only).
        frameworks: framework name -> tuple of graded dtype names.
        framework_notes: framework name -> the note the report shows.
        tolerance: the ``tolerance`` mapping (``model``, default ``derived``; ``contraction``, ``count``, ``factor``).
        groups: group name -> :class:`Group`, in YAML order.
        cases: the fixed case mappings (validated).
        generated: the ``generated`` mapping, or None.
        path: the YAML file; reference_path: the reference module file.
        raw: the whole parsed YAML, for hashing.
        spec_sha256: SHA-256 (hex) of the spec text this was parsed from (:func:`problem_digest`).
    """

    id: str
    title: str
    statement: str
    function: str
    parameters: tuple[Parameter, ...]
    returns_shape: "tuple[str | int, ...] | WithoutAxis"
    frameworks: dict[str, tuple[str, ...]]
    framework_notes: dict[str, str]
    tolerance: dict[str, Any]
    groups: dict[str, Group]
    cases: list[dict[str, Any]]
    generated: dict[str, Any] | None
    path: Path
    reference_path: Path
    reference_function: str
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    returns_dtype: str = "same_as_inputs"
    hints: str | None = None
    returns_fixed_dtype: str | None = None
    python_scalar: bool = False
    checker: dict[str, Any] | None = None
    alternatives: dict[str, Any] | None = None
    outputs: tuple[Output, ...] = ()
    returns_as: str = ""
    select: tuple[int, str] | None = None
    constraints: tuple[tuple[str, Any], ...] = ()
    draw_order: tuple[str, ...] = ()
    spec_sha256: str = ""

    def size_env(self, sizes: dict[str, Any], inputs: dict[str, Any]) -> dict[str, int]:
        """The names size expressions and constraints read in a case: every size symbol (not
        ``"..."``) and every int scalar parameter (its value in ``inputs``, else its default)."""
        env = {k: int(v) for k, v in sizes.items() if k != LEAD and not isinstance(v, (tuple, list))}
        for p in self.parameters:
            if p.scalar == "int":
                if p.name in inputs:
                    env[p.name] = int(np.asarray(inputs[p.name]))
                elif p.optional and isinstance(p.default, int):
                    env[p.name] = int(p.default)
        return env

    def violated(self, sizes: dict[str, Any], inputs: dict[str, Any]) -> str | None:
        """The first of ``constraints`` that a case with ``sizes`` and ``inputs`` breaks (its
        text), or None; a constraint naming something the case lacks is not judged."""
        env = self.size_env(sizes, inputs)
        for text, tree in self.constraints:
            try:
                if not holds(tree, env):
                    return text
            except (KeyError, ZeroDivisionError):
                continue
        return None

    @property
    def several(self) -> bool:
        """Whether the function returns several named outputs (``returns.outputs``)."""
        return bool(self.outputs)

    def output_view(self, index: int) -> "Problem":
        """This problem as if it returned only its ``index``-th output: that output's shape,
        dtype and tolerance, and ``select`` set so that the reference's value is that item
        (``grader.reference.call``). Everything that judges one array judges an output through it."""
        o = self.outputs[index]
        return dataclasses.replace(self, returns_shape=o.shape, returns_dtype=o.dtype, returns_fixed_dtype=o.fixed_dtype,
                                   python_scalar=o.python_scalar, tolerance=o.tolerance, outputs=(), returns_as="",
                                   select=(index, o.name), checker=o.checker)

    @property
    def parameter(self) -> dict[str, Parameter]:
        """Parameter name -> :class:`Parameter`."""
        return {p.name: p for p in self.parameters}

    @property
    def functions(self) -> list[str]:
        """The function names a submission defines for this problem: ``[function]`` (an
        assignment, :class:`grader.assignment.Assignment`, has one per problem)."""
        return [self.function]

    @property
    def max_score(self) -> float:
        """Sum of the points of every group (the report's ``max_score``)."""
        return float(sum(g.points for g in self.groups.values()))


def bundled_dir() -> Path | None:
    """The bundled problems folder: ``problems/`` beside the package, else ``grader/_bundled/problems``."""
    here = Path(__file__).resolve().parent
    return next((p for p in (here.parent / "problems", here / "_bundled" / "problems") if p.is_dir()), None)


def problem_dirs(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """The folders searched for problem specs: the bundled one, then the given one (which wins).

    ``explicit`` is ``--problems-dir``; without it ``GRADER_PROBLEMS_DIR`` is used if set.
    """
    given = explicit or os.environ.get("GRADER_PROBLEMS_DIR") or None
    out = [d for d in (bundled_dir(),) if d is not None]
    if given:
        g = Path(given)
        if not any(g.resolve() == d.resolve() for d in out if g.exists()):
            out.append(g)
    return out


@dataclass
class Catalog:
    """The problems the grader can see.

    Attributes:
        paths: problem id (the spec file's stem) -> spec path, ids sorted.
        replaced: id -> the bundled spec path that a ``--problems-dir`` spec of that id replaces.
    """

    paths: dict[str, Path]
    replaced: dict[str, Path]


def problem_catalog(problems_dir: str | os.PathLike[str] | None = None) -> Catalog:
    """Every ``*.yaml`` of the bundled folder and of ``problems_dir`` (it wins on a shared id).

    Raises:
        GraderError: ``problems_dir`` was given but is not a folder.
    """
    given = problems_dir or os.environ.get("GRADER_PROBLEMS_DIR") or None
    if given and not Path(given).is_dir():
        raise GraderError(f"--problems-dir {str(given)!r} is not a folder")
    paths: dict[str, Path] = {}
    replaced: dict[str, Path] = {}
    dirs = problem_dirs(problems_dir)
    for i, folder in enumerate(dirs):
        for p in sorted(folder.glob("*.yaml")):
            if p.stem in paths and i > 0:
                replaced[p.stem] = paths[p.stem]
            paths[p.stem] = p
    return Catalog(dict(sorted(paths.items())), replaced)


def available_problems(problems_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Problem id -> spec path (:func:`problem_catalog`)."""
    return problem_catalog(problems_dir).paths


def load_all(problems_dir: str | os.PathLike[str] | None = None) -> tuple[dict[str, Problem], dict[str, SpecError]]:
    """Every visible problem, loaded: ``(problems, broken)``, both keyed by id.

    A spec that fails to load makes only its own problem unusable: it lands in ``broken`` with
    its error, and the others load.
    """
    problems: dict[str, Problem] = {}
    broken: dict[str, SpecError] = {}
    for pid, path in available_problems(problems_dir).items():
        try:
            problems[pid] = load_problem(path)
        except SpecError as exc:
            broken[pid] = exc
    return problems, broken


def problem_digest(problem: Problem) -> str:
    """SHA-256 (hex) of the problem's spec (the text it was parsed from) and reference module: the
    problem's identity, part of the case-cache key (``grader.cache.case_key``) and of ``grader grade``'s settings record.

    Raises:
        GraderError: either file cannot be read.
    """
    h = hashlib.sha256()
    try:
        # the spec as it was parsed, not the file read again: an edit in between gave the old
        # spec's cases and memos the new one's key (attack round 36)
        h.update((problem.spec_sha256 or hashlib.sha256(problem.path.read_bytes()).hexdigest()).encode() + b"\0")
        h.update(problem.reference_path.read_bytes())
    except OSError as exc:
        raise GraderError(f"cannot read the spec of {problem.id!r}: {exc.strerror or exc}") from None
    return h.hexdigest()


def find_problem(problem_id: str, problems_dir: str | os.PathLike[str] | None = None) -> Path:
    """The spec path of ``problem_id``.

    Raises:
        GraderError: no such problem; the message lists the known ones and a close match.
    """
    known = available_problems(problems_dir)
    if problem_id in known:
        return known[problem_id]
    close = difflib.get_close_matches(problem_id, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    names = ", ".join(known) or "none found"
    raise GraderError(f"unknown problem {problem_id!r} (known: {names}){hint}")


@lru_cache(maxsize=1)
def _validator() -> Any:
    """The validator of problem specs. The bundled schema is not itself checked against its
    meta-schema here (that took about 0.1 s of every check); tests/test_problems.py does it."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    return jsonschema.validators.validator_for(schema)(schema)


#: sub-folder of the cache folder holding one empty file per spec text found valid
VALID_SPECS = "specs-valid"


def _known_valid(text: str) -> Path | None:
    """The marker file of ``text`` having fit the schema (``<cache>/specs-valid/<sha256 of schema
    and text>``), or None when caching is off. A warm check of an unchanged spec then needs
    neither jsonschema (about 0.2 s to import) nor the validation: the digest covers every byte
    of the schema and of the spec, so an edited spec or schema is validated again."""
    from .cachedir import cache_root

    root = cache_root()
    if root is None:
        return None
    digest = hashlib.sha256(SCHEMA_PATH.read_bytes() + b"\0" + text.encode("utf-8")).hexdigest()
    return root / VALID_SPECS / digest


def _marked(marker: Path | None) -> bool:
    """Whether the marker file exists; False when it cannot be looked at (a cache folder this
    user may not enter: ``Path.is_file`` raises on EACCES, which ended a check with exit 2,
    attack round 42): the spec is then validated again."""
    try:
        return marker is not None and marker.is_file()
    except OSError:
        return False


#: PyYAML's safe loader, in C (libyaml) where the wheel has it: parsing the bundled specs in pure
#: Python took about 0.25 s of every check.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose(text: str) -> yaml.Node | None:
    """The YAML node tree of ``text``, with line marks: built only for an error message."""
    try:
        return yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return None


def _line_of(node: yaml.Node | None, path: list[Any]) -> int | None:
    """1-based line of the YAML node at ``path`` (keys and indices), or of its deepest parent."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(key):
                    node = v
                    line = k.start_mark.line + 1
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _dotted(path: list[Any]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(top level)"


def _schema_message(error: Any) -> str:
    """A one-line message for a schema error, with a 'did you mean' for misspelled keys/values."""
    msg = error.message
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)' was unexpected", msg) or re.findall(r"'([^']+)'", msg)
        allowed = list(error.schema.get("properties", {}))
        for name in extra:
            close = difflib.get_close_matches(name, allowed, n=1)
            msg = f"unknown field {name!r}; allowed: {', '.join(allowed)}"
            if close:
                msg += f"; did you mean {close[0]!r}?"
            break
    elif error.validator == "enum" and isinstance(error.instance, str):
        close = difflib.get_close_matches(error.instance, [str(v) for v in error.validator_value], n=1)
        msg = f"{error.instance!r} is not one of {error.validator_value}"
        if close:
            msg += f"; did you mean {close[0]!r}?"
    return msg


def _leaves(values: Any) -> list[Any]:
    """The numbers and booleans of a nested list (a bare number is its own leaf)."""
    if isinstance(values, list):
        return [leaf for v in values for leaf in _leaves(v)]
    return [values]


def _reference_file(spec_path: Path, module: str, problem_id: str, fail: Callable[[list[Any], str], Exception]) -> Path:
    """The reference module file of the spec at ``spec_path``: ``reference/<module>.py`` inside
    the spec's folder, else beside it (``../reference/<module>.py``, the bundled layout).

    Inside comes first, and beside is used only when inside has no such file: beside a folder
    given with ``--problems-dir`` may be a shared place (``/tmp/reference``) anyone can write
    to, and the reference runs in the grader's process, so a file there never wins over, nor
    (refusing, or read whole to compare) blocks, the one inside; it is not even opened.

    Raises:
        SpecError (from ``fail``): no such file in either place (both named).
    """
    here = spec_path.resolve().parent
    inside = here / "reference" / f"{module}.py"
    beside = here.parent / "reference" / f"{module}.py"
    if inside.is_file():
        return inside
    if beside.is_file():
        return beside
    raise fail(["reference", "module"], f"no reference solution {module}.py: looked at {inside} and {beside}")


def read_yaml(path: Path, what: str = "spec") -> tuple[str, Any]:
    """The text of the YAML file ``path`` and what it parses to, with the safe loader; ``what``
    names the file in messages (``"spec"``, ``"assignment"``).

    Raises:
        SpecError: the file cannot be read, or is not YAML (with the line where YAML gives one).
    """
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(shown, f"cannot read the {what}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return text, yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (SafeLoader or its libyaml twin)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        lines, at = text.splitlines(), getattr(exc, "context_mark", None) or mark   # [0, C) unquoted: YAML's flow
        quote = re.search(r":\s*(\[[^\]\"'#]*\)|\([^)\"'#]*\])", lines[at.line] if at and at.line < len(lines) else "")
        problem += f"; quote a half-open interval: \"{quote.group(1)}\"" if quote else ""
        raise SpecError(shown, f"not valid YAML: {problem}", line=mark.line + 1 if mark else None) from None


def field_error(shown: str, text: str, where: list[Any], message: str) -> SpecError:
    """A :class:`SpecError` of the YAML ``text`` of file ``shown`` at the field ``where`` (keys
    and indices): ``file:line: dotted.field: message``."""
    return SpecError(shown, f"{_dotted(where)}: {message}", line=_line_of(_compose(text), where), field=_dotted(where))


def schema_error(shown: str, text: str, errors: list[Any]) -> SpecError:
    """The :class:`SpecError` of the most relevant of jsonschema's ``errors`` (``best_match``),
    naming the field, its line and a close match of a misspelled key or value."""
    import jsonschema

    best = jsonschema.exceptions.best_match(errors)
    where = list(best.absolute_path)
    return field_error(shown, text, where, _schema_message(best))


def load_problem(path: str | os.PathLike[str]) -> Problem:
    """Read, validate and return the problem spec at ``path``.

    Raises:
        SpecError: the file is missing or unreadable, is not YAML, does not fit the schema
            (the message names the field and, where YAML gives one, the line), or is
            inconsistent (an unknown group or size symbol, a missing reference module).
    """
    path = Path(path)
    if not memo.ENABLED:
        return _load_problem(path)
    from .spec_memo import remembered_problem   # a fork server's: what the memo of a spec stands on
    return remembered_problem(path, _load_problem)


def _load_problem(path: Path) -> Problem:
    shown = str(path)
    text, data = read_yaml(path, "spec")
    if not isinstance(data, dict):
        raise SpecError(shown, "the spec must be a YAML mapping (id: ..., title: ..., ...)")

    marker = _known_valid(text)
    errors = [] if _marked(marker) else \
        sorted(_validator().iter_errors(data), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        import jsonschema

        best = jsonschema.exceptions.best_match(errors)
        where = list(best.absolute_path)
        line_path = where
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            extra = [k for k in best.instance if k not in best.schema.get("properties", {})]
            line_path = where + extra[:1]  # point at the unknown key itself
        raise SpecError(shown, f"{_dotted(where)}: {_schema_message(best)}",
                        line=_line_of(_compose(text), line_path), field=_dotted(where))
    if marker is not None and not _marked(marker):
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass    # a read-only cache: the spec is validated again next time

    def fail(where: list[Any], message: str) -> SpecError:
        return SpecError(shown, f"{_dotted(where)}: {message}", line=_line_of(_compose(text), where),
                         field=_dotted(where))

    raw_params = data["function"]["parameters"]
    symbols = {s for p in raw_params for s in p.get("shape", ()) if isinstance(s, str)}
    scalar_names = {p["name"] for p in raw_params if "scalar" in p}
    int_scalar_names = {p["name"] for p in raw_params if p.get("scalar") == "int"}
    params_list: list[Parameter] = []
    for i, p in enumerate(raw_params):
        where = ["function", "parameters", i]
        shape = tuple(p.get("shape", ()))
        scalar = p.get("scalar")
        if shape.count(LEAD) > 1:
            raise fail(where + ["shape"], "at most one '...' per shape")
        if scalar is not None and "dtype" in p:
            raise fail(where + ["dtype"], "a scalar parameter has no dtype: it is a Python int, float or bool")
        dtype = p.get("dtype", "float")
        dtype = tuple(dtype) if isinstance(dtype, list) else dtype
        if scalar is None and "values" in p:
            raise fail(where + ["values"], "values are for scalar parameters; arrays take a fill")
        for v in p.get("values", ()):
            if (scalar == "bool") != isinstance(v, bool) or (scalar == "int" and not float(v).is_integer()):
                raise fail(where + ["values"], f"{v!r} is not a {scalar}")
        domain = None
        if "domain" in p:
            kind = "int" if scalar == "int" else (Parameter("", "", (), dtype).kind if scalar is None else scalar)
            if kind != "int":
                raise fail(where + ["domain"], f"a domain needs an integer parameter (int32, int64 or scalar: int), "
                                               f"not {scalar or dtype!r}")
            m = _DOMAIN2.match(p["domain"])
            if m is None:
                raise fail(where + ["domain"], "write a domain as '[lo, hi)' or '[lo, hi]'")
            bounds: list[Any] = []
            # (the bound is not called ``text``: that is the spec's source, which fail() reads for lines)
            for bound_src, shift in ((m.group(1), 0), (m.group(2), -1 if m.group(3) == ")" else 0)):
                bound = parse_bound(bound_src)
                known = sorted(symbols - {LEAD})
                if bound is None or (bound.kind == "size" and (bound.name not in symbols | int_scalar_names
                                                               or bound.name == LEAD)) \
                        or (bound.kind == "ndim" and bound.name not in {q["name"] for q in raw_params if "shape" in q}):
                    raise fail(where + ["domain"], f"bound {bound_src!r} is neither an integer, a size symbol "
                                                   f"({', '.join(known) or 'none'}), an int scalar parameter "
                                                   f"({', '.join(sorted(int_scalar_names)) or 'none'}) "
                                                   f"nor ndim(<array parameter>)")
                bounds.append(Bound(bound.kind, bound.name, bound.sign, bound.offset + shift))
            domain = (bounds[0], bounds[1])
        if scalar is not None and domain is None and "values" not in p and "default" not in p:
            raise fail(where, "a scalar parameter needs values (or, for int, a domain) to draw its cases from")
        default = p["default"] if "default" in p else NO_DEFAULT
        if params_list and params_list[-1].optional and default is NO_DEFAULT:
            raise fail(where, "a parameter without a default cannot follow one with a default")
        values = tuple(p["values"]) if "values" in p else None
        params_list.append(Parameter(p["name"], p.get("role", ""), shape, dtype if scalar is None else "float", domain,
                                     scalar=scalar, default=default, passed=p.get("passed", "keyword"), values=values))
    params = tuple(params_list)
    by_name = {p.name: p for p in params}
    if len(by_name) != len(params):
        raise fail(["function", "parameters"], "parameter names must differ")
    order = draw_order(params, lambda i, message: fail(["function", "parameters", i, "domain"], message))
    returns = data["function"]["returns"]
    int_scalars = {q.name for q in params if q.scalar == "int"}

    def one_return(r: dict[str, Any], where: list[Any]) -> tuple[tuple[Any, ...], str, str | None]:
        """``(shape, dtype rule, fixed dtype)`` of one output mapping (``returns`` or an item of
        ``returns.outputs``), checked against the parameters."""
        rdtype, fixed = r["dtype"], None
        if isinstance(rdtype, dict):
            rdtype = rdtype["same_as"]
            if rdtype not in by_name:
                raise fail(where + ["dtype", "same_as"], f"unknown parameter {rdtype!r}; parameters: {', '.join(by_name)}")
            if by_name[rdtype].kind != "float":
                raise fail(where + ["dtype", "same_as"], "the output dtype must be a float parameter's")
        elif rdtype != "same_as_inputs":
            fixed = rdtype
        if not any(q.graded for q in params) and fixed is None:
            raise fail(["function", "parameters"], "with no parameter of dtype 'float' (the graded dtype), the output "
                                                   "needs a fixed dtype (returns.dtype: float32, int64 or bool)")
        if rdtype == "same_as_inputs" and not any(q.graded for q in params):
            raise fail(where + ["dtype"], "same_as_inputs needs a parameter of dtype 'float'")
        if isinstance(r["shape"], dict):   # {of: x, without_axis: axis}
            of, axis = r["shape"]["of"], r["shape"]["without_axis"]
            if of not in by_name or by_name[of].scalar is not None:
                raise fail(where + ["shape", "of"], f"{of!r} is not an array parameter; array parameters: "
                                                    f"{', '.join(q.name for q in params if q.scalar is None)}")
            if isinstance(axis, str) and axis not in int_scalars:
                raise fail(where + ["shape", "without_axis"], f"{axis!r} is not an int scalar parameter (int "
                                                              f"scalars: {', '.join(sorted(int_scalars)) or 'none'}); "
                                                              f"or give an integer")
            if r.get("python_scalar"):
                raise fail(where + ["python_scalar"], "only a 0-d result (shape: []) can be a Python scalar")
            return WithoutAxis(of, axis), rdtype, fixed   # type: ignore[return-value]
        shape = tuple(r["shape"])
        if shape.count(LEAD) > 1:
            raise fail(where + ["shape"], "at most one '...' per shape")
        for j, entry in enumerate(shape):
            if not isinstance(entry, str) or entry == LEAD:
                continue
            try:
                used = size_names(size_expr(entry))
            except SizeExprError as exc:
                raise fail(where + ["shape", j], str(exc)) from None
            unknown = sorted(used - (symbols - {LEAD}) - int_scalars)
            if unknown:
                raise fail(where + ["shape", j], f"size {unknown[0]!r} is not in any parameter's shape "
                                                 f"nor an int scalar parameter")
        if r.get("python_scalar") and shape:
            raise fail(where + ["python_scalar"], "only a 0-d result (shape: []) can be a Python scalar")
        return shape, rdtype, fixed

    from .checkers import from_spec
    outputs: list[Output] = []
    base_tolerance = dict(data.get("tolerance") or {})
    if "outputs" in returns:
        for j, o in enumerate(returns["outputs"]):
            shape, rdtype, fixed = one_return(o, ["function", "returns", "outputs", j])
            tol = {**base_tolerance, **(o.get("tolerance") or {})}
            tol.setdefault("model", "derived")
            own = from_spec(o.get("checker"), path, fail, ["function", "returns", "outputs", j, "checker"])
            outputs.append(Output(o["name"], shape, rdtype, fixed, bool(o.get("python_scalar")), tol, own))
        if len({o.name for o in outputs}) != len(outputs):
            raise fail(["function", "returns", "outputs"], "output names must differ")
        if data.get("checker") is not None:
            raise fail(["checker"], "a checker judges one output: give a function of several outputs one per "
                                    "output that needs it (returns.outputs[i].checker)")
        returns_shape, returns_dtype, fixed_dtype = (), outputs[0].dtype, outputs[0].fixed_dtype
    else:
        returns_shape, returns_dtype, fixed_dtype = one_return(returns, ["function", "returns"])
    hints = data.get("hints")
    if hints is not None:
        from .hints import HintModuleError, resolve
        try:
            hints = resolve(hints, path)  # a bundled name, or the module file's absolute path
        except HintModuleError as exc:
            raise fail(["hints"], str(exc)) from None
    checker = from_spec(data.get("checker"), path, fail, ["checker"])

    groups = {name: Group(name, float(g["points"]), g.get("visibility", "visible"), g.get("description", ""))
              for name, g in data["groups"].items()}
    names = [p.name for p in params]
    array_names = [p.name for p in params if p.scalar is None]
    seen: set[str] = set()
    for i, case in enumerate(data["cases"]):
        if case["name"] in seen:
            raise fail(["cases", i, "name"], f"duplicate case name {case['name']!r}")
        seen.add(case["name"])
        if case["group"] not in groups:
            raise fail(["cases", i, "group"], f"unknown group {case['group']!r}; groups: {', '.join(groups)}")
        for key in ("inputs", "fill", "shapes"):
            for pname in case.get(key, {}):
                if pname not in array_names:
                    raise fail(["cases", i, key, pname], f"unknown array parameter; array parameters: "
                                                         f"{', '.join(array_names) or 'none'}")
        for pname in case.get("args", {}):
            if pname not in scalar_names:
                raise fail(["cases", i, "args", pname], f"not a scalar parameter; scalar parameters: "
                                                        f"{', '.join(sorted(scalar_names)) or 'none'}")
        for key in ("omit", "pass"):
            for j, pname in enumerate(case.get(key, ())):
                if pname not in by_name or not by_name[pname].optional:
                    raise fail(["cases", i, key, j], f"{pname!r} is not an optional parameter; optional ones: "
                                                     f"{', '.join(q.name for q in params if q.optional) or 'none'}")
        if "inputs" in case:
            required = {q.name for q in params if q.name in array_names and not q.optional}
            given = set(case["inputs"])
            if not required <= given:
                raise fail(["cases", i, "inputs"], f"give every array parameter without a default: "
                                                   f"{', '.join(sorted(required - given))} missing")
        for sym in case.get("sizes", {}):
            if sym not in symbols:
                raise fail(["cases", i, "sizes", sym], f"unknown size; sizes: {', '.join(sorted(symbols))}")
        if "inputs" not in case:   # sizes: {} may be left out where the problem has no size symbol
            missing = symbols - set(case.get("sizes", {}))
            if missing:
                raise fail(["cases", i, "sizes"], f"missing sizes: {', '.join(sorted(missing))}")
        for pname in case.get("input_dtypes", {}):
            if pname not in names:
                raise fail(["cases", i, "input_dtypes", pname], f"unknown parameter; parameters: {', '.join(names)}")
        for pname, values in case.get("inputs", {}).items():
            given = case.get("input_dtypes", {}).get(pname)
            kind = by_name[pname].kind if given is None else Parameter("", "", (), given).kind
            bad = [v for v in _leaves(values) if (kind == "int" and (isinstance(v, bool) or not float(v).is_integer()))
                   or (kind == "bool" and not isinstance(v, bool) and v not in (0, 1))]
            if bad:
                raise fail(["cases", i, "inputs", pname], f"{bad[0]!r} is not a valid {kind} value "
                                                          f"(give input_dtypes: {{{pname}: float}} for other values)")
        if outputs and "expected" in case:
            if not isinstance(case["expected"], dict):
                raise fail(["cases", i, "expected"], f"with several outputs, give a mapping of output names to "
                                                     f"literals ({', '.join(o.name for o in outputs)}), e.g. "
                                                     f"{{{outputs[0].name}: [...]}}")
            for oname in case["expected"]:
                if oname not in {o.name for o in outputs}:
                    raise fail(["cases", i, "expected", oname], f"unknown output; outputs: "
                                                                f"{', '.join(o.name for o in outputs)}")
        elif isinstance(case.get("expected"), dict):
            raise fail(["cases", i, "expected"], "a mapping of output names is for several outputs "
                                                 "(returns.outputs); give the output's literal")
        if "raises" in case and ("expected" in case or "compare" in case):
            raise fail(["cases", i, "raises"], "a case that must raise has no 'expected' or 'compare'")
        for pname, fill in case.get("fill", {}).items():
            if (fill.get("kind") == "mask") != (by_name[pname].kind == "bool"):
                raise fail(["cases", i, "fill", pname], "bool parameters take 'kind: mask', and only they do")
    gen = data.get("generated")
    if gen:
        if gen["group"] not in groups:
            raise fail(["generated", "group"], f"unknown group {gen['group']!r}; groups: {', '.join(groups)}")
        missing = symbols - set(gen.get("sizes", {}))
        if missing:
            raise fail(["generated", "sizes"], f"missing sizes: {', '.join(sorted(missing))}")
        for sym in gen.get("sizes", {}):   # a misspelled size was drawn and never used (an instructor's trial)
            if sym not in symbols:
                raise fail(["generated", "sizes", sym], f"unknown size; sizes: {', '.join(sorted(symbols))}")
        for sym, bounds in gen.get("sizes", {}).items():
            if isinstance(bounds, dict):
                if sym == LEAD:
                    raise fail(["generated", "sizes", sym], "the leading axes take a range [lo, hi]")
                continue
            lo, hi = bounds
            if lo > hi:
                raise fail(["generated", "sizes", sym], f"range [{lo}, {hi}] is empty")
        for pname, fill in gen.get("values", {}).items():
            if pname not in array_names:
                raise fail(["generated", "values", pname], f"unknown array parameter; array parameters: "
                                                           f"{', '.join(array_names)}")
            if (fill.get("kind") == "mask") != (by_name[pname].kind == "bool"):
                raise fail(["generated", "values", pname], "bool parameters take 'kind: mask', and only they do")
    tolerance_spec = dict(data.get("tolerance") or {})
    tolerance_spec.setdefault("model", "derived")
    checked = [(tolerance_spec, ["tolerance"])] + [
        (o.tolerance, ["function", "returns", "outputs", j, "tolerance"] if "tolerance" in returns["outputs"][j]
         else ["tolerance"]) for j, o in enumerate(outputs)]
    for tol, where in checked:
        model = tol["model"]
        if model == "sum_of_products":
            contraction = tol.get("contraction")
            if contraction not in symbols:
                raise fail(where + ["contraction"], f"{contraction!r} is not a size of the parameters")
        if model == "masked_mean":
            count = tol.get("count")
            bools = ', '.join(p.name for p in params if p.kind == 'bool') or 'none'
            if count is None:
                raise fail(where, f"model masked_mean needs 'count', the bool parameter whose True entries "
                                  f"are the terms of each mean (bool parameters: {bools})")
            if count not in by_name or by_name[count].kind != "bool":
                raise fail(where + ["count"], f"{count!r} is not a bool parameter (bool parameters: {bools})")

    constraints: list[tuple[str, Any]] = []
    for j, text_j in enumerate(data.get("constraints", ())):
        try:
            tree = relation_expr(text_j)
        except SizeExprError as exc:
            raise fail(["constraints", j], str(exc)) from None
        unknown = sorted(size_names(tree) - (symbols - {LEAD}) - int_scalars)
        if unknown:
            raise fail(["constraints", j], f"{unknown[0]!r} is neither a size symbol nor an int scalar parameter "
                                           f"(known: {', '.join(sorted((symbols - {LEAD}) | int_scalars)) or 'none'})")
        constraints.append((text_j, tree))

    ref_module = data["reference"]["module"]
    ref_path = _reference_file(path, ref_module, str(data["id"]), fail)

    return Problem(
        id=data["id"], title=data["title"], statement=data["statement"],
        function=data["function"]["name"], parameters=params,
        returns_shape=returns_shape,
        frameworks={k: tuple(v["dtypes"]) for k, v in data["frameworks"].items()},
        framework_notes={k: v.get("note", "") for k, v in data["frameworks"].items()},
        tolerance=tolerance_spec, groups=groups, cases=list(data["cases"]),
        generated=gen, path=path, reference_path=ref_path,
        reference_function=data["reference"].get("function", data["function"]["name"]),
        raw=data, returns_dtype=returns_dtype, hints=hints,
        returns_fixed_dtype=fixed_dtype, python_scalar=bool(returns.get("python_scalar")), checker=checker,
        alternatives=data.get("alternatives"), outputs=tuple(outputs),
        returns_as=returns.get("as", "tuple") if outputs else "", constraints=tuple(constraints),
        draw_order=order, spec_sha256=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    )
