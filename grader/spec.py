"""Problem specs: YAML files validated against ``grader/schemas/problem.schema.json``.

A problem is a YAML file in a problems folder plus a reference solution in the sibling
``reference/`` folder; nothing in the grader is specific to one problem. Validation is done by
``jsonschema`` (Draft 2020-12); errors name the file, the line (from PyYAML's node marks) and the
dotted field, e.g. ``problems/x.yaml:52: tolerance.model: 'ulp' is not one of [...]``.

Where problems are looked up, first match wins:

1. ``--problems-dir`` on the command line, or the ``GRADER_PROBLEMS_DIR`` environment variable;
2. ``problems/`` beside the ``grader`` package (a source checkout or editable install);
3. ``grader/_bundled/problems`` (a wheel install; see pyproject.toml).
"""
from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .errors import GraderError, SpecError

SCHEMA_PATH = Path(__file__).parent / "schemas" / "problem.schema.json"
LEAD = "..."  # the symbol for any number of leading (batch) axes


@dataclass(frozen=True)
class Parameter:
    """One parameter of the function under test: its name, role and symbolic shape.

    ``shape`` holds size symbols (``"d_model"``), fixed sizes (ints) and at most one ``"..."``
    for the leading axes. ``dtype`` is ``"float"`` for the case's graded dtype, or a fixed name.
    """

    name: str
    role: str
    shape: tuple[str | int, ...]
    dtype: str = "float"


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
        frameworks: framework name -> tuple of graded dtype names.
        framework_notes: framework name -> the note the report shows.
        tolerance: the ``tolerance`` mapping (``model``, ``contraction``).
        groups: group name -> :class:`Group`, in YAML order.
        cases: the fixed case mappings (validated).
        generated: the ``generated`` mapping, or None.
        path: the YAML file; reference_path: the reference module file.
        raw: the whole parsed YAML, for hashing.
    """

    id: str
    title: str
    statement: str
    function: str
    parameters: tuple[Parameter, ...]
    returns_shape: tuple[str | int, ...]
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

    @property
    def max_score(self) -> float:
        """Sum of the points of every group (the report's ``max_score``)."""
        return float(sum(g.points for g in self.groups.values()))


def problem_dirs(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """The folders searched for problem specs, in order (see the module docstring)."""
    if explicit:
        return [Path(explicit)]
    if os.environ.get("GRADER_PROBLEMS_DIR"):
        return [Path(os.environ["GRADER_PROBLEMS_DIR"])]
    here = Path(__file__).resolve().parent
    return [p for p in (here.parent / "problems", here / "_bundled" / "problems") if p.is_dir()]


def available_problems(problems_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Problem id -> spec path for every ``*.yaml`` in the first problems folder that exists."""
    for folder in problem_dirs(problems_dir):
        if folder.is_dir():
            return {p.stem: p for p in sorted(folder.glob("*.yaml"))}
    return {}


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
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


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


def _schema_message(error: jsonschema.ValidationError) -> str:
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


def load_problem(path: str | os.PathLike[str]) -> Problem:
    """Read, validate and return the problem spec at ``path``.

    Raises:
        SpecError: the file is missing or unreadable, is not YAML, does not fit the schema
            (the message names the field and, where YAML gives one, the line), or is
            inconsistent (an unknown group or size symbol, a missing reference module).
    """
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(shown, f"cannot read the spec: {exc.strerror or exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(shown, f"not valid YAML: {problem}",
                        line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise SpecError(shown, "the spec must be a YAML mapping (id: ..., title: ..., ...)")

    errors = sorted(_validator().iter_errors(data), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        where = list(best.absolute_path)
        line_path = where
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            extra = [k for k in best.instance if k not in best.schema.get("properties", {})]
            line_path = where + extra[:1]  # point at the unknown key itself
        raise SpecError(shown, f"{_dotted(where)}: {_schema_message(best)}",
                        line=_line_of(node, line_path), field=_dotted(where))

    def fail(where: list[Any], message: str) -> SpecError:
        return SpecError(shown, f"{_dotted(where)}: {message}", line=_line_of(node, where),
                         field=_dotted(where))

    params = tuple(Parameter(p["name"], p.get("role", ""), tuple(p["shape"]), p.get("dtype", "float"))
                   for p in data["function"]["parameters"])
    symbols = {s for p in params for s in p.shape if isinstance(s, str)}
    for i, p in enumerate(params):
        if p.shape.count(LEAD) > 1:
            raise fail(["function", "parameters", i, "shape"], "at most one '...' per shape")
    for s in data["function"]["returns"]["shape"]:
        if isinstance(s, str) and s not in symbols:
            raise fail(["function", "returns", "shape"], f"size {s!r} is not in any parameter's shape")

    groups = {name: Group(name, float(g["points"]), g.get("visibility", "visible"), g.get("description", ""))
              for name, g in data["groups"].items()}
    names = [p.name for p in params]
    seen: set[str] = set()
    for i, case in enumerate(data["cases"]):
        if case["name"] in seen:
            raise fail(["cases", i, "name"], f"duplicate case name {case['name']!r}")
        seen.add(case["name"])
        if case["group"] not in groups:
            raise fail(["cases", i, "group"], f"unknown group {case['group']!r}; groups: {', '.join(groups)}")
        for key in ("inputs", "fill"):
            for pname in case.get(key, {}):
                if pname not in names:
                    raise fail(["cases", i, key, pname], f"unknown parameter; parameters: {', '.join(names)}")
        if "inputs" in case and set(case["inputs"]) != set(names):
            raise fail(["cases", i, "inputs"], f"give every parameter: {', '.join(names)}")
        for sym in case.get("sizes", {}):
            if sym not in symbols:
                raise fail(["cases", i, "sizes", sym], f"unknown size; sizes: {', '.join(sorted(symbols))}")
        if "sizes" in case:
            missing = symbols - set(case["sizes"])
            if missing:
                raise fail(["cases", i, "sizes"], f"missing sizes: {', '.join(sorted(missing))}")
    gen = data.get("generated")
    if gen:
        if gen["group"] not in groups:
            raise fail(["generated", "group"], f"unknown group {gen['group']!r}; groups: {', '.join(groups)}")
        missing = symbols - set(gen["sizes"])
        if missing:
            raise fail(["generated", "sizes"], f"missing sizes: {', '.join(sorted(missing))}")
        for sym, (lo, hi) in gen["sizes"].items():
            if lo > hi:
                raise fail(["generated", "sizes", sym], f"range [{lo}, {hi}] is empty")
    contraction = data["tolerance"].get("contraction")
    if data["tolerance"]["model"] == "sum_of_products":
        if contraction not in symbols:
            raise fail(["tolerance", "contraction"], f"{contraction!r} is not a size of the parameters")

    ref_module = data["reference"]["module"]
    ref_path = path.resolve().parent.parent / "reference" / f"{ref_module}.py"
    if not ref_path.is_file():
        raise fail(["reference", "module"], f"no reference solution at {ref_path}")

    return Problem(
        id=data["id"], title=data["title"], statement=data["statement"],
        function=data["function"]["name"], parameters=params,
        returns_shape=tuple(data["function"]["returns"]["shape"]),
        frameworks={k: tuple(v["dtypes"]) for k, v in data["frameworks"].items()},
        framework_notes={k: v.get("note", "") for k, v in data["frameworks"].items()},
        tolerance=dict(data["tolerance"]), groups=groups, cases=list(data["cases"]),
        generated=gen, path=path, reference_path=ref_path,
        reference_function=data["reference"].get("function", data["function"]["name"]),
        raw=data,
    )
