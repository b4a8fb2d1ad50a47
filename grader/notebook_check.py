"""``check(fn)``: grade a function just defined in a notebook (or any interactive session).

``from grader import check; check(tied_lm_head)`` grades ``tied_lm_head`` against the problem of
the same function name (or ``problem=``) and returns a :class:`CheckResult`, which Jupyter shows
as HTML (verdict, score, the failing cases with kind, message, hint and worst element, and for a
tolerance failure a heat map of ``|got - expected|`` over the output, the element worst for its
allowance framed) and a terminal as the usual text report. (``grader.check`` is the module of
that name made callable: ``grader/__init__.py``.)

The HTML and its picture are a reporter's: :mod:`grader.reports.notebook_html`.

How the function reaches the grader (decided, issue 11 part 3): **as source, in a separate
process.** :func:`build_source` writes the function's source (``inspect.getsource``: IPython
keeps each cell's source in ``linecache``), preceded by what it needs from the notebook's
globals: modules as ``import`` lines (a module of the notebook's folder, ``from helper import
f``, goes along as its file: :func:`take_siblings`), the notebook's other functions as their source
(recursively), simple constants (int, float, str, bool, None, tuples of them) as
``NAME = repr(value)``. Anything else is refused in the kernel with a :class:`ValueError` naming
the global. :func:`check` saves that source in a temporary folder and runs
``python -I -m grader check FILE --problem ID --format json --audience learner``: the normal,
sandboxed path. The grader never runs in the kernel's process, so JAX's x64 flag, the signal
handlers, the environment, the caches and the kernel's other child processes stay as they were
(the grader's process hardens itself and reaps *its own* orphans).

Why not cloudpickle: the sandboxed child would have to unpickle the function's closure (a second
deserialiser of learner data inside the grader's trust boundary), and functions defined in
``__main__`` that use notebook globals pickle by value only partly. Why not in the kernel's
process: the learner's code would run unsandboxed in the kernel. (The grader's own steps no
longer change process state, issue 10: the reference scopes ``jax_enable_x64`` to its calls, the
JAX cache folder is an option, orphan reaping spares the caller's children;
tests/test_no_global_state.py. The reference's persistent compilation cache folder is still a
process-wide JAX setting, set once if the caller set none.)
"""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import os
import re
import shutil
import signal
import math
import subprocess
import sys
import tempfile
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from .reports.notebook_html import heat_map_png, render_html  # noqa: F401 - heat_map_png: this module's API
from .siblings import parse as parse_python  # one parse at a time (CPython 3.11, gh-106905)
from .isolation import neutral_folder
from .warm import WARM_ENV, WarmGrader

#: value types sent as ``NAME = repr(value)`` (exact types: a NumPy scalar's repr needs NumPy)
CONSTANT_TYPES = (int, float, complex, str, bytes, bool, type(None))
#: seconds the grader gets to clean up after an interrupt before it is killed
INTERRUPT_GRACE = 5.0


def _is_constant(value: Any) -> bool:
    if type(value) in CONSTANT_TYPES:
        return True
    return type(value) is tuple and all(_is_constant(v) for v in value)


def _literal(value: Any) -> str:
    """The source text of a constant (:func:`_is_constant`) that reads back as the same value:
    its repr, but ``float('inf')``, ``float('-inf')`` and ``float('nan')`` for the floats whose repr
    is a bare name (``NEG_INF = -np.inf``, a common mask constant, was sent as ``NEG_INF = -inf``:
    a correct function failed with NameError at a line the learner never wrote; attack round 47)."""
    if type(value) is float and not math.isfinite(value):
        return f"float({repr(value)!r})"
    if type(value) is complex and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        return f"complex({_literal(value.real)}, {_literal(value.imag)})"
    if type(value) is tuple and any(_literal(v) != repr(v) for v in value):
        return "(" + "".join(f"{_literal(v)}, " for v in value) + ")"
    return repr(value)


def _code_names(code: types.CodeType) -> set[str]:
    """Every name a code object and the code nested in it (inner functions, comprehensions,
    lambdas) look up as a global or an attribute."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _source_of(fn: Callable[..., Any], what: str) -> str | None:
    """The source of ``fn``, or None where Python kept none (a plain ``python`` console, a script
    read from stdin, ``exec``): :func:`_compiled_definition` sends its code instead."""
    if not isinstance(fn, types.FunctionType):
        raise ValueError(f"check() needs a function defined with def; {what} is a {type(fn).__name__}")
    if fn.__name__ == "<lambda>":
        raise ValueError(f"check() cannot send {what}: it is a lambda; define it with def NAME(...): "
                         "in a cell, so that its source can be found")
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    return textwrap.dedent(source)


def _compiled_definition(fn: types.FunctionType, what: str) -> str:
    """Source that defines ``fn`` from its compiled code, for a function whose source Python did
    not keep: a ``def`` of its name and parameters (what the grader reads: the function is
    defined, and with which parameters), then the name rebound to the function made from
    ``marshal.dumps(fn.__code__)`` (the same interpreter runs it in the submission's sandboxed
    process; the grader itself never loads it) with its defaults.

    Raises:
        ValueError: a default that is not a simple constant (it could not be written as source).
    """
    import marshal

    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    for value in (*defaults, *kwdefaults.values()):
        if not _is_constant(value):
            raise ValueError(f"{what} has a default of type {type(value).__name__}, which check() cannot send "
                             "without the function's source; define it in a notebook cell or a file")
    params = str(inspect.signature(fn).replace(return_annotation=inspect.Signature.empty,
                                               parameters=[p.replace(annotation=inspect.Parameter.empty)
                                                           for p in inspect.signature(fn).parameters.values()]))
    name = fn.__name__
    return (f"def {name}{params}:  # Python kept no source of this function (a console): its compiled code\n"
            f"    raise NotImplementedError  # replaces this body below\n\n\n"
            f"{name} = __import__('types').FunctionType(__import__('marshal').loads({marshal.dumps(fn.__code__)!r}), "
            f"globals(), {name!r}, {defaults!r})\n"
            f"{name}.__kwdefaults__ = {kwdefaults!r} or None\n")


def _global_names(fn: types.FunctionType, source: str) -> list[str]:
    """The globals ``fn`` uses, in the order they first appear in its source: names loaded in
    the source that its code looks up as globals, plus every name in its decorators, defaults
    and annotations (evaluated where it was defined)."""
    tree = parse_python(source)
    definition = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    looked_up = _code_names(fn.__code__)
    outer: set[str] = set()
    if definition is not None:
        args = definition.args
        evaluated: list[ast.AST] = [*definition.decorator_list, *args.defaults,
                                    *(d for d in args.kw_defaults if d is not None)]
        evaluated += [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                             args.kwarg) if a is not None and a.annotation is not None]
        if definition.returns is not None:
            evaluated.append(definition.returns)
        outer = {n.id for node in evaluated for n in ast.walk(node) if isinstance(n, ast.Name)}
    # a name the function binds itself (``from math import erf`` inside it: ``erf`` is in
    # co_names for the import, yet a local) is no global, unless a decorator or default uses it
    local = _local_names(fn.__code__)
    ordered = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(n for n in ordered if (n in looked_up and n not in local) or n in outer))


def _local_names(code: types.CodeType) -> set[str]:
    """The local variables of a code object and of the code nested in it."""
    names = set(code.co_varnames) | set(code.co_cellvars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _local_names(const)
    return names


def _import_line(name: str, value: Any) -> str | None:
    """``import``/``from ... import`` line binding ``name`` to ``value`` (a module, or an
    object importable under its ``__module__`` and ``__qualname__``), or None."""
    if isinstance(value, types.ModuleType):
        mod = value.__name__
        return f"import {mod}" if mod == name else f"import {mod} as {name}"
    mod, qual = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(mod, str) or not isinstance(qual, str) or mod == "__main__" or "." in qual or "<" in qual:
        return None
    try:
        found = getattr(importlib.import_module(mod), qual)
    except Exception:  # noqa: BLE001 - not importable so: not sendable as an import
        return None
    if found is not value:
        return None
    return f"from {mod} import {qual}" + ("" if qual == name else f" as {name}")


def build_source(fn: Callable[..., Any]) -> str:
    """The Python source of a module defining ``fn`` and what it needs from its globals
    (:func:`build_source_and_places`, the source alone)."""
    return build_source_and_places(fn)[0]


def build_source_and_places(fn: Callable[..., Any]) -> tuple[str, list[list[Any]]]:
    """The Python source of a module defining ``fn`` and what it needs from its globals, and
    where its functions' lines came from: runs ``[first line, count, cell label, its line there]``
    for each function defined in a kernel cell (the label as IPython names the cell in its own
    tracebacks, ``"In[5]"``: ``get_ipython().compile.format_code_name``), so that a traceback
    through the built file names the learner's cell and line (:func:`kernel_places`).

    Modules become ``import`` lines (``import numpy as np``); objects importable from a module
    (``from scipy.special import softmax``) their ``from`` import; the notebook's other
    functions their own source, with what *they* need (recursively); simple constants (int,
    float, str, bool, None, bytes, complex, tuples of them) ``NAME = repr(value)``. Names that
    are not globals (builtins, locals) need nothing.

    Raises:
        ValueError: ``fn`` is not a function defined with ``def``, it is a closure, it uses a
            global that cannot be sent as source, or it has no source and a default that is not
            a simple constant (the message names it and says what to do). A function whose source
            Python did not keep (a console) is sent as its compiled code
            (:func:`_compiled_definition`).
    """
    imports: list[str] = []
    constants: list[str] = []
    functions: list[str] = []
    seen: set[int] = set()

    def add(f: Callable[..., Any], what: str) -> None:
        # a decorated function (jax.jit, functools.wraps): its source, decorator lines included
        f = inspect.unwrap(f) if callable(f) else f
        if id(f) in seen:
            return
        seen.add(id(f))
        source = _source_of(f, what)
        assert isinstance(f, types.FunctionType)
        if f.__closure__:
            free = ", ".join(f.__code__.co_freevars)
            raise ValueError(f"{what} uses variables of the function it was defined in ({free}); "
                             "define it at the top level of a cell")
        glb = f.__globals__
        compiled = source is None
        if compiled:   # no source kept (a console): the names its code looks up, globals and attributes alike
            names = list(dict.fromkeys([*f.__code__.co_names, *sorted(_code_names(f.__code__))]))
            source = _compiled_definition(f, what)
        else:
            names = _global_names(f, source)
        for name in names:
            if name not in glb:
                if hasattr(builtins, name) or name == f.__name__ or compiled:
                    continue   # (compiled: an attribute name, np.asarray's asarray, is no global)
                raise ValueError(f"{what} uses the name {name!r}, which is not defined in the notebook; "
                                 "run the cell that defines it first")
            value = glb[name]
            if value is f:
                continue
            if isinstance(value, types.FunctionType) and value.__module__ == f.__module__:
                if value.__name__ != name:
                    raise ValueError(f"{f.__name__} uses {name!r}, another name of the function "
                                     f"{value.__name__!r}; call it by its own name")
                add(value, f"the function {name!r} (used by {f.__name__})")
            elif (line := _import_line(name, value)) is not None:
                imports.append(line)
            elif _is_constant(value):
                constants.append(f"{name} = {_literal(value)}")
            else:
                raise ValueError(
                    f"{f.__name__} uses the global {name!r} ({type(value).__name__}), which check() cannot send "
                    "to the grader: only modules, functions defined with def, and simple constants (numbers, "
                    "strings, None, tuples of them) are sent; build it inside the function instead")
        functions.append((source, None if compiled else _cell_of(f)))

    add(fn, f"the function {getattr(fn, '__name__', fn)!r}")
    parts = ["# built by grader.check() from the notebook", *dict.fromkeys(imports), *dict.fromkeys(constants)]
    text = "\n".join(parts) + "\n\n\n"
    places: list[list[Any]] = []
    for i, (source, cell) in enumerate(functions):
        body = source.rstrip() + "\n"
        if cell is not None:
            places.append([text.count("\n") + 1, body.count("\n"), cell[0], cell[1]])
        text += body + ("\n" if i < len(functions) - 1 else "")
    return text, places


def _cell_of(f: types.FunctionType) -> tuple[str, int] | None:
    """``(label, first line)`` of the kernel cell that defined ``f`` (``"In[5]"`` and the line of
    its ``def`` or first decorator there), or None outside an IPython kernel's cells."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - IPython's builtin in a kernel
    except NameError:
        return None
    try:
        named = shell.compile.format_code_name(f.__code__.co_filename)
        first = inspect.getsourcelines(f)[1]
    except Exception:  # noqa: BLE001 - no such IPython API, no source: the built file's lines stay
        return None
    return (str(named[1]), int(first)) if named else None


def _problem_of(fn: Callable[..., Any], problem: str | None) -> tuple[str, str]:
    """The problem id and the name of its function: ``problem`` if given, else the problem
    whose function is named like ``fn``.

    Raises:
        ValueError: no such problem, or several.
    """
    from .errors import GraderError
    from .spec import find_problem, load_problem

    if problem is not None:
        try:
            found = load_problem(find_problem(problem))
        except GraderError as exc:
            raise ValueError(str(exc)) from None
        return found.id, found.function
    name = getattr(fn, "__name__", "")
    functions = _functions_of_problems()
    matches = [(pid, function) for pid, function in functions.items() if function == name]
    if len(matches) != 1:
        known = ", ".join(pid if function == pid else f"{pid} ({function})" for pid, function in functions.items())
        raise ValueError(f"no single problem has a function named {name!r}; pass problem=ID "
                         f"(problems: {known or 'none'})")
    return matches[0]


def _functions_of_problems() -> dict[str, str]:
    """Problem id -> its function's name, for every problem that loads (as :func:`load_all`).
    Each spec's pair is kept for the kernel's life while its :func:`grader.memo.stamp` holds
    (:func:`grader.memo.remember`): a kernel's every check(fn) matched its function against all
    specs, parsing each one's YAML (0.15 s of a 0.6 s served check); an edited spec is read again."""
    from . import memo
    from .errors import GraderError
    from .spec import available_problems, load_problem

    def pair(path: str) -> tuple[str, str]:
        found = load_problem(path)
        return found.id, found.function

    out: dict[str, str] = {}
    for path in available_problems().values():
        try:
            pid, function = memo.remember("function", str(path), memo.stamp(path), lambda: pair(path))
        except GraderError:
            continue
        out[pid] = function
    return out


@dataclass
class CheckResult:
    """The outcome of :func:`check`: shown as HTML in Jupyter, as the text report elsewhere.

    Attributes:
        report: the JSON report (``grader check --format json --audience learner``) as a dict.
        source: the module source that was graded.
        seconds: wall time of the whole check (seconds).
    """

    report: dict[str, Any]
    source: str = ""
    seconds: float = 0.0
    _text: str | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        """True when every case ran and passed."""
        return bool(self.report.get("passed"))

    @property
    def score(self) -> float | None:
        """Points earned; None for a partial run (one case replayed with ``case=``, or
        ``max_examples=0``), which the report shows as "a partial run: no score" (it was 0.0,
        which read as a score of nothing)."""
        if (self.report.get("environment") or {}).get("partial"):
            return None
        return float(self.report.get("score") or 0.0)

    @property
    def max_score(self) -> float:
        """Points available."""
        return float(self.report.get("max_score") or 0.0)

    def text(self) -> str:
        """The text report (as ``grader check`` prints it)."""
        if self._text is None:
            from .batch.gradebook import report_from_json
            from .reports import text

            self._text = text.render(report_from_json(self.report), audience="learner")
        return self._text

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text().rstrip("\n")

    def _repr_html_(self) -> str:
        return render_html(self.report, self.text(), self.source)


def framework_of(fn: Callable[..., Any], source: str) -> str | None:
    """The framework ``fn`` is graded in when the caller names none: None when its source (with
    the imports :func:`build_source` wrote for the names it uses) imports NumPy, JAX or PyTorch,
    which the CLI detects; else the one of ``torch`` and ``jax`` bound in the function's globals
    (the notebook's), when exactly one is, unless that is torch and the function uses NumPy's
    array idioms and none of torch's (:func:`_idioms`); else None (NumPy). A correct PyTorch
    function that never names ``torch`` (``hidden.matmul(embedding_matrix.t())``) was graded as
    NumPy and got 0/10; a NumPy one in a notebook importing torch, as PyTorch."""
    if re.search(r"^\s*(import|from)\s+(torch|jax|numpy)\b", source, re.M):
        return None     # it names its framework: the CLI's detection decides, as for a file
    bound = notebook_framework(fn)
    if bound == "torch" and _idioms(source) == "numpy":
        # NumPy's own methods and keywords (.astype, axis=, keepdims=) and none of torch's: a NumPy
        # function in a notebook that imports torch too (a newcomer's: graded as PyTorch, 0/10)
        return None
    return bound


#: attributes and keywords only NumPy's (and JAX's) arrays take, and only PyTorch's tensors take
NUMPY_IDIOMS = frozenset({"astype", "axis", "keepdims", "newaxis", "tobytes"})
TORCH_IDIOMS = frozenset({"dim", "keepdim", "unsqueeze", "masked_fill", "clamp", "float", "long", "to", "t",
                          "permute", "numel", "detach", "matmul", "logsumexp", "new_zeros", "new_ones",
                          "contiguous", "half", "double", "bfloat16"})


def _idioms(source: str) -> str | None:
    """``"numpy"`` when ``source`` uses NumPy-only array methods or keywords and no torch-only
    ones, ``"torch"`` for the reverse, else None (both, neither, or a source that does not parse)."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
    numpy, torch = bool(used & NUMPY_IDIOMS), bool(used & TORCH_IDIOMS)
    return "numpy" if numpy and not torch else "torch" if torch and not numpy else None


def check(fn: Callable[..., Any], problem: str | None = None, *, seed: int = 0,
          max_examples: int | None = None, timeout: float | None = None,
          framework: str | None = None, case: str | None = None, replay: str | None = None,
          shrink: bool = True) -> CheckResult:
    """Grade the function ``fn`` (just defined in a notebook) and return a :class:`CheckResult`.

    The problem is the one whose function is named like ``fn`` unless ``problem`` (an id) is
    given. The grading runs in a separate process (``python -I -m grader check``, sandboxed)
    on the source of ``fn`` and of what it uses (:func:`build_source`); nothing of the kernel is
    changed. ``seed``, ``max_examples``, ``timeout`` (seconds per call) and ``shrink`` (False:
    ``--no-shrink``, no search for a smaller failing input) are the CLI's flags, and so are ``framework`` (``"numpy"``, ``"jax"`` or ``"torch"``; by default
    :func:`framework_of`), ``case`` (one case by name, ``--case``) and ``replay`` (one case as
    its JSON literal, ``--replay``): each failing case's ``replay:`` line is the call that runs
    it again, ``check(fn, case='batch[float16]')`` (:func:`kernel_replay`). A JAX function defined in a cell keeps its compilations for the
    kernel, so an edited one compiles only what changed; one run from a file (``%run f.py``)
    keeps them for the kernel and that file; one imported from a module keeps them for its
    source (:func:`scope_of`). A kernel's cells are one learner's: to check several people's
    code in one kernel, import each from its file or ``%run`` it, never paste it into cells
    (or use ``grader grade``).

    Raises:
        ValueError: ``fn`` cannot be sent as source (the message says why), or no problem fits.
        RuntimeError: the grader could not run (its one-line error).
    """
    import time

    t0 = time.monotonic()
    pid, function = _problem_of(fn, problem)
    source, places = build_source_and_places(fn)
    name = getattr(fn, "__name__", "submission")
    if name != function:  # graded under the problem's function name
        source += f"\n\n{function} = {name}\n"
    folder = tempfile.mkdtemp(prefix="grader-nb-")
    try:
        path = os.path.join(folder, f"{name}.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        # the notebook's own modules it imports (``from helper import f``): the .py files of the
        # kernel's working folder, read as the grader reads siblings (no link followed, capped),
        # go beside it, and ``grader check`` takes them along into the sandbox
        for sibling, data in take_siblings(source, f"{name}.py"):
            with open(os.path.join(folder, sibling), "xb") as fh:
                fh.write(data)
        # --shown: the report names the file (and its siblings) as the learner knows them,
        # "tied_lm_head.py" and "helper.py", never this temporary folder
        argv = [sys.executable, "-I", "-m", "grader", "check", path, "--shown", f"{name}.py", "--problem", pid,
                "--format", "json", "--audience", "learner"]
        scope = scope_of(fn)
        if scope is not None:
            argv += ["--jax-cache-scope", scope]
        if seed:
            argv += ["--seed", str(int(seed))]
        if max_examples is not None:
            argv += ["--max-examples", str(int(max_examples))]
        if timeout is not None:
            argv += ["--timeout", str(float(timeout))]
        if not shrink:
            argv.append("--no-shrink")
        chosen = framework or framework_of(fn, source)
        if chosen:
            argv += ["--framework", chosen]
        # (as one --flag=value word each: a value starting with "-" is never read as a flag)
        if case is not None:
            argv.append(f"--case={case}")
        if replay is not None:
            argv.append(f"--replay={replay if isinstance(replay, str) else json.dumps(replay)}")
        answer = _served(argv[4:])
        if answer is None and os.environ.get(WARM_ENV, "1") != "0":
            answer = _warm().run(argv[4:], INTERRUPT_GRACE)
        out, err, code = answer if answer is not None else _run(argv, neutral_folder())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if code not in (0, 1):
        line = next((x for x in err.splitlines() if x.startswith("grader:")), err.strip()[-500:])
        raise RuntimeError(f"the grader could not run (exit {code}): {line}")
    try:
        report = json.loads(out)
    except ValueError:
        raise RuntimeError(f"the grader gave no JSON report (exit {code}): {err.strip()[-500:]}") from None
    for entry in report.get("cases") or []:   # the file was temporary: the call that runs the case again
        facts = entry.pop("replay_facts", None)
        entry["replay"] = kernel_replay(name, facts, problem, framework) if isinstance(facts, dict) else None
    kernel_places(report, places)
    graded = (report.get("environment") or {}).get("framework")
    handin = notebook_framework(fn)
    if framework is None and handin and graded and handin != graded:
        # said where the learner looks (a JAX notebook's function of np calls passed 10/10 as NumPy,
        # and the hand-in, graded as JAX, failed 7.5/10: a newcomer's trial)
        env = report.setdefault("environment", {})
        label = {"numpy": "NumPy", "jax": "JAX", "torch": "PyTorch"}
        said = (f"Graded as {label.get(graded, graded)}, the framework the function's own code uses; the notebook "
                f"imports {label[handin]}, so a hand-in of it is graded as {label[handin]}: "
                f"check(fn, framework={handin!r}) grades it so.")
        env["framework_note"] = " ".join(x for x in (env.get("framework_note") or "", said) if x)
    return CheckResult(report, source, time.monotonic() - t0)


def notebook_framework(fn: Callable[..., Any]) -> str | None:
    """The framework a hand-in of ``fn``'s notebook would be graded in, as far as its globals
    tell: ``torch`` or ``jax`` when exactly one of them is imported there, else None."""
    bound = {name for name in ("torch", "jax")
             if any(isinstance(v, types.ModuleType) and (v.__name__ or "").split(".")[0] == name
                    for v in getattr(fn, "__globals__", {}).values())}
    return bound.pop() if len(bound) == 1 else None


def kernel_places(report: dict[str, Any], places: list[list[Any]]) -> None:
    """Give the frames of ``report`` (a JSON report of the built file) in a function from a
    kernel cell that cell's label and line (``cell_label``, ``cell_line``: facts, from
    :func:`build_source_and_places`'s runs), and word each traceback again from them
    (``grader.words.places``: ``Cell In[5], line 3``, as IPython names it)."""
    from .results import Failure
    from .words.places import traceback_text

    if not places:
        return
    for fc in [report.get("failure")] + [c.get("failure") for c in report.get("cases") or []]:
        if not isinstance(fc, dict) or not fc.get("frames"):
            continue
        for frame in fc["frames"]:
            line = frame.get("line")
            if frame.get("ref") != "submission" or type(line) is not int:
                continue
            for start, count, label, first in places:
                if start <= line < start + count:
                    frame.update(cell_label=label, cell_line=first + line - start)
                    break
        fc["traceback"] = traceback_text(Failure.from_json(fc), str(report.get("submission") or ""))


def kernel_replay(name: str, facts: dict[str, Any], problem: str | None = None,
                  framework: str | None = None) -> str:
    """The ``check(...)`` call that runs one case again in the kernel, from the case's replay facts
    (``grader.results.Replay`` as JSON): ``check(tied_lm_head, case='batch[float16]', seed=3)``,
    or with ``replay='{...}'`` for a case given as its literal (a shrunk one). ``problem`` and
    ``framework``: what the learner gave, repeated (else found again as before)."""
    args = [name] + ([repr(problem)] if problem else [])
    if facts.get("literal") is not None:
        args.append(f"replay={facts['literal']!r}")
    else:
        args.append(f"case={facts.get('case')!r}")
        if facts.get("seed"):
            args.append(f"seed={int(facts['seed'])}")
        if facts.get("max_examples") is not None:
            args.append(f"max_examples={int(facts['max_examples'])}")
    if framework:
        args.append(f"framework={framework!r}")
    return f"check({', '.join(args)})"


def take_siblings(source: str, main_name: str, folder: str | None = None) -> list[tuple[str, bytes]]:
    """The ``(file name, bytes)`` of the modules of ``folder`` (default: the kernel's working
    folder, the notebook's) that ``source`` imports, directly or through each other
    (``grader.siblings.find_siblings``: plain ``NAME.py`` files, links never followed, size and
    count capped, no module name of the standard library or the grader's install). Nothing is
    imported or run."""
    from .siblings import find_siblings

    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return find_siblings(folder if folder is not None else os.getcwd(), tree, main_name).files


_WARM: WarmGrader | None = None
_SCOPE: str | None = None


def scope_of(fn: Callable[..., Any]) -> str | None:
    """The ``--jax-cache-scope`` of a ``check(fn)``, or None (its compilations keyed by its
    source; docs/security.md, class 3).

    - A function defined in the kernel's own namespace (``fn.__module__ == "__main__"``) from a
      cell (its code names no file on disk): this kernel's token (:func:`_kernel_scope`), the
      learner's own code, edited and checked again.
    - One run into the kernel from a file (IPython's ``%run alice.py``: ``__main__``, its code
      naming the file): a scope of the kernel and that file, so that the same file edited and
      run again shares its compilations and two learners' files never do (a learner trial:
      ``%run alice.py`` then ``%run bob.py`` in one kernel shared the kernel's scope).
    - One imported from a module (``from alice import f``: an instructor's script checking each
      learner's file): None (attack round thirty).
    """
    if getattr(fn, "__module__", None) != "__main__":
        return None
    filename = getattr(getattr(fn, "__code__", None), "co_filename", "") or ""
    cell = not os.path.isfile(filename) or os.path.basename(os.path.dirname(filename)).startswith("ipykernel_")
    if cell:
        return _kernel_scope()
    import hashlib
    return hashlib.sha256(f"{_kernel_scope()}\0{os.path.realpath(filename)}".encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _kernel_scope() -> str:
    """This kernel's ``--jax-cache-scope`` token (random, made on the first ``check(fn)``): the
    checks of one kernel are one learner's, whose edited JAX functions then reuse each other's
    compilations; another kernel, or a restarted one, starts its own."""
    global _SCOPE
    if _SCOPE is None:
        import secrets
        _SCOPE = secrets.token_hex(16)
    return _SCOPE


def _warm() -> WarmGrader:
    """The kernel's warm grader (:mod:`grader.warm`), made on the first ``check(fn)`` and
    stopped when the kernel's Python exits."""
    global _WARM
    if _WARM is None:
        import atexit
        _WARM = WarmGrader()
        atexit.register(_WARM.stop)
    return _WARM


def _served(args: list[str]) -> tuple[str, str, int] | None:
    """``grader <args>`` run by this user's ``grader serve`` when one runs (a forked grader with
    a spare child: no warm grader of the kernel's own is started or asked), from a neutral
    working folder, its output caught in two temporary files: (stdout, stderr, exit code), or
    None when no server answers. An interrupt reaches the check as SIGINT (a second one kills
    it), which ends with exit 130: raised again here as KeyboardInterrupt, as the warm grader's
    path does."""
    from .forkserver_client import run_served_captured

    answer = run_served_captured(args, cwd=neutral_folder())
    if answer is None:
        return None
    code, out, err = answer
    if code == 130:
        raise KeyboardInterrupt
    return out, err, code


def _run(argv: list[str], cwd: str) -> tuple[str, str, int]:
    """Run the grader; an interrupt (the notebook's stop button) reaches it as SIGINT, and it is
    killed if it has not finished ``INTERRUPT_GRACE`` seconds later. Only this one child is
    waited for: the kernel's other children are left alone."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=INTERRUPT_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise
    return out, err, proc.returncode


__all__ = ["CheckResult", "build_source", "check", "heat_map_png", "render_html"]
