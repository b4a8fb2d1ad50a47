"""``check(fn)``: grade a function just defined in a notebook (or any interactive session).

``from grader import check; check(tied_lm_head)`` grades ``tied_lm_head`` against the problem of
the same function name (or ``problem=``) and returns a :class:`CheckResult`, which Jupyter shows
as HTML (verdict, score, the failing cases with kind, message, hint and worst element, and for a
tolerance failure a heat map of ``|got - expected|`` over the output, the element worst for its
allowance framed) and a terminal as the usual text report. (``grader.check`` is the module of
that name made callable: ``grader/__init__.py``.)

The picture is drawn from what the JSON report holds: the values of cases with at most 64
elements per array (``compare.SMALL``), and the worst element's error and allowance. The report
has no per-element allowance, so the map shows the error, and its caption how many elements
exceed their allowance; a map of the larger cases (the real-size one) would need a coarse
error/allowance grid in ``Failure.data`` from ``grader.compare``.

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

Matplotlib is optional (``pip install 'grader[notebook]'``); without it the HTML has no picture.
"""
from __future__ import annotations

import ast
import base64
import builtins
import html
import importlib
import inspect
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from .siblings import parse as parse_python  # one parse at a time (CPython 3.11, gh-106905)

#: value types sent as ``NAME = repr(value)`` (exact types: a NumPy scalar's repr needs NumPy)
CONSTANT_TYPES = (int, float, complex, str, bytes, bool, type(None))
#: failure kinds of the run rather than the values (``grader.results.RUN_KINDS``)
RUN_KINDS = ("exception", "timeout", "crash", "memory", "import")
#: failing cases shown in the HTML, as in the text report
MAX_CASES = 5
#: seconds the grader gets to clean up after an interrupt before it is killed
INTERRUPT_GRACE = 5.0


def _is_constant(value: Any) -> bool:
    if type(value) in CONSTANT_TYPES:
        return True
    return type(value) is tuple and all(_is_constant(v) for v in value)


def _code_names(code: types.CodeType) -> set[str]:
    """Every name a code object and the code nested in it (inner functions, comprehensions,
    lambdas) look up as a global or an attribute."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _source_of(fn: Callable[..., Any], what: str) -> str:
    if not isinstance(fn, types.FunctionType):
        raise ValueError(f"check() needs a function defined with def; {what} is a {type(fn).__name__}")
    if fn.__name__ == "<lambda>":
        raise ValueError(f"check() cannot send {what}: it is a lambda; define it with def NAME(...): "
                         "in a cell, so that its source can be found")
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        raise ValueError(f"the source of {what} cannot be found (was it made by exec, or defined in a "
                         "console without a history?); define it with def in a notebook cell or a file") from None
    return textwrap.dedent(source)


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
    ordered = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(n for n in ordered if n in looked_up or n in outer))


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
    """The Python source of a module defining ``fn`` and what it needs from its globals.

    Modules become ``import`` lines (``import numpy as np``); objects importable from a module
    (``from scipy.special import softmax``) their ``from`` import; the notebook's other
    functions their own source, with what *they* need (recursively); simple constants (int,
    float, str, bool, None, bytes, complex, tuples of them) ``NAME = repr(value)``. Names that
    are not globals (builtins, locals) need nothing.

    Raises:
        ValueError: ``fn`` is not a function defined with ``def``, its source (or a helper's)
            cannot be found, it is a closure, or it uses a global that cannot be sent as source
            (the message names it and says what to do).
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
        for name in _global_names(f, source):
            if name not in glb:
                if hasattr(builtins, name) or name == f.__name__:
                    continue
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
                constants.append(f"{name} = {value!r}")
            else:
                raise ValueError(
                    f"{f.__name__} uses the global {name!r} ({type(value).__name__}), which check() cannot send "
                    "to the grader: only modules, functions defined with def, and simple constants (numbers, "
                    "strings, None, tuples of them) are sent; build it inside the function instead")
        functions.append(source)

    add(fn, f"the function {getattr(fn, '__name__', fn)!r}")
    parts = ["# built by grader.check() from the notebook", *dict.fromkeys(imports), *dict.fromkeys(constants)]
    return "\n".join(parts) + "\n\n\n" + "\n\n".join(s.rstrip() + "\n" for s in functions)


def _problem_of(fn: Callable[..., Any], problem: str | None) -> tuple[str, str]:
    """The problem id and the name of its function: ``problem`` if given, else the problem
    whose function is named like ``fn``.

    Raises:
        ValueError: no such problem, or several.
    """
    from .errors import GraderError
    from .spec import find_problem, load_all, load_problem

    if problem is not None:
        try:
            found = load_problem(find_problem(problem))
        except GraderError as exc:
            raise ValueError(str(exc)) from None
        return found.id, found.function
    name = getattr(fn, "__name__", "")
    loaded, _ = load_all()
    matches = [p for p in loaded.values() if p.function == name]
    if len(matches) != 1:
        known = ", ".join(p.id if p.function == p.id else f"{p.id} ({p.function})" for p in loaded.values())
        raise ValueError(f"no single problem has a function named {name!r}; pass problem=ID "
                         f"(problems: {known or 'none'})")
    return matches[0].id, matches[0].function


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
    def score(self) -> float:
        """Points earned."""
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


def check(fn: Callable[..., Any], problem: str | None = None, *, seed: int = 0,
          max_examples: int | None = None, timeout: float | None = None) -> CheckResult:
    """Grade the function ``fn`` (just defined in a notebook) and return a :class:`CheckResult`.

    The problem is the one whose function is named like ``fn`` unless ``problem`` (an id) is
    given. The grading runs in a separate process (``python -I -m grader check``, sandboxed)
    on the source of ``fn`` and of what it uses (:func:`build_source`); nothing of the kernel is
    changed. ``seed``, ``max_examples`` and ``timeout`` (seconds per call) are the CLI's flags.

    Raises:
        ValueError: ``fn`` cannot be sent as source (the message says why), or no problem fits.
        RuntimeError: the grader could not run (its one-line error).
    """
    import time

    t0 = time.monotonic()
    pid, function = _problem_of(fn, problem)
    source = build_source(fn)
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
        argv = [sys.executable, "-I", "-m", "grader", "check", path, "--problem", pid, "--format", "json",
                "--audience", "learner"]
        if seed:
            argv += ["--seed", str(int(seed))]
        if max_examples is not None:
            argv += ["--max-examples", str(int(max_examples))]
        if timeout is not None:
            argv += ["--timeout", str(float(timeout))]
        out, err, code = _run(argv, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if code not in (0, 1):
        line = next((x for x in err.splitlines() if x.startswith("grader:")), err.strip()[-500:])
        raise RuntimeError(f"the grader could not run (exit {code}): {line}")
    try:
        # the file was temporary: positions name it without its folder, and no replay command
        # points at it (call check() again instead)
        # (the grader's private copy repeats the path under its own folder: that goes too)
        report = json.loads(re.sub(r"[^\s\"'(]*" + re.escape(json.dumps(folder + os.sep)[1:-1]), "", out))
    except ValueError:
        raise RuntimeError(f"the grader gave no JSON report (exit {code}): {err.strip()[-500:]}") from None
    for case in report.get("cases") or []:
        case.pop("replay", None)
    return CheckResult(report, source, time.monotonic() - t0)


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


# -- HTML ----------------------------------------------------------------------------------

def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def heat_map_png(case: dict[str, Any]) -> str | None:
    """A base64 PNG of where a failing case's output is off, or None (no values nor grid, a
    scalar output, or matplotlib missing).

    A small case (its values are in the report when every array has 64 elements or fewer):
    ``|got - expected|`` per element, the worst element framed. A larger one: the coarse grid of
    its tolerance failure (``failure.data.grid``, :func:`grader.compare.error_grid`), the largest
    ``|got - expected| / allowed`` per block of the output (leading axes as rows), on a log
    colour scale, the block holding the worst element framed. The case name is drawn without
    mathtext."""
    values = case.get("values") or {}
    failure = case.get("failure") or {}
    grid = (failure.get("data") or {}).get("grid")
    if ("got" not in values or "expected" not in values) and not isinstance(grid, dict):
        return None
    try:
        import numpy as np
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
    except ImportError:
        return None
    if "got" in values and "expected" in values:
        return _heat_map_of_values(case, np, Figure)
    return _heat_map_of_grid(case, grid, np, Figure)


def _png_of(fig: Any) -> str:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _heat_map_of_values(case: dict[str, Any], np: Any, Figure: Any) -> str | None:
    values, failure = case["values"], case.get("failure") or {}
    got = np.asarray(values["got"], dtype=float)
    want = np.asarray(values["expected"], dtype=float)
    if got.shape != want.shape or got.ndim == 0 or got.size == 0:
        return None
    err = np.abs(got - want)
    grid = err.reshape(-1, err.shape[-1])
    fig = Figure(figsize=(min(max(3.5, 1.5 + 0.4 * grid.shape[1]), 7.0),
                          min(max(2.2, 1.2 + 0.4 * grid.shape[0]), 5.0)), dpi=90)
    ax = fig.subplots()
    im = ax.imshow(grid, cmap="Reds", aspect="auto", interpolation="nearest", vmin=0)
    fig.colorbar(im, ax=ax, label="|got - expected|")
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    worst = (failure.get("data") or {}).get("worst_index")
    if isinstance(worst, list) and len(worst) == got.ndim:
        flat = int(np.ravel_multi_index(tuple(worst[:-1]), got.shape[:-1])) if got.ndim > 1 else 0
        from matplotlib.patches import Rectangle
        ax.add_patch(Rectangle((worst[-1] - 0.5, flat - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2))
    ax.set_xlabel("index on the last axis")
    ax.set_ylabel("row" if got.ndim > 1 else "")
    ax.set_title(f"{case.get('name')}: output {tuple(got.shape)}; framed: worst for its tolerance", fontsize=9,
                 parse_math=False)
    return _png_of(fig)


def _heat_map_of_grid(case: dict[str, Any], grid: dict[str, Any], np: Any, Figure: Any) -> str | None:
    try:
        rows, cols = (int(v) for v in grid["shape"])
        ratio = np.array([[float(v) for v in str(line).split()] for line in grid["max_ratio"]], dtype=float)
    except (KeyError, TypeError, ValueError):
        return None
    if ratio.ndim != 2 or ratio.size == 0 or rows <= 0 or cols <= 0:
        return None
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    finite = ratio[np.isfinite(ratio) & (ratio > 0)]
    top = max(float(finite.max()) if finite.size else 1.0, 10.0)
    low = min(float(finite.min()) if finite.size else 0.1, 0.1)
    shown = np.where(np.isfinite(ratio), np.clip(ratio, low, None), top * 10)  # no allowance: off the scale
    fig = Figure(figsize=(6.5, 4.2), dpi=90)
    ax = fig.subplots()
    # block i covers rows i * rows // nr up to (i + 1) * rows // nr: draw the blocks at their extents
    nr, nc = ratio.shape
    y = [i * rows // nr for i in range(nr + 1)]
    x = [j * cols // nc for j in range(nc + 1)]
    mesh = ax.pcolormesh(x, y, shown, cmap="Reds", norm=LogNorm(vmin=low, vmax=top * 10))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    fig.colorbar(mesh, ax=ax, label="largest |got - expected| / allowed in the block")
    worst = grid.get("worst")  # [row, column] of the worst element, leading axes flattened
    if isinstance(worst, list) and len(worst) == 2:
        i = next((k for k in range(nr) if y[k] <= worst[0] < y[k + 1]), None)
        j = next((k for k in range(nc) if x[k] <= worst[1] < x[k + 1]), None)
        if i is not None and j is not None:
            ax.add_patch(Rectangle((x[j], y[i]), x[j + 1] - x[j], y[i + 1] - y[i], fill=False, edgecolor="black",
                                   linewidth=2))
    ax.set_xlabel("index on the last axis")
    ax.set_ylabel("row (leading axes flattened)")
    ax.set_title(f"{case.get('name')}: output {rows} x {cols} in {nr} x {nc} blocks; framed: the worst",
                 fontsize=8, parse_math=False)
    return _png_of(fig)


def _worst(failure: dict[str, Any]) -> str:
    return next((d for d in failure.get("details") or [] if d.startswith(("worst at", "first at"))), "")


def render_html(report: dict[str, Any], text: str = "", source: str = "") -> str:
    """The HTML of a JSON report: verdict and score, the failure pattern, up to
    :data:`MAX_CASES` failing cases (kind, message, hint, worst element, the traceback of an
    error, a heat map for a tolerance failure: per element for a small case, per block of the
    output for a large one), and folded away the full text report and
    the ``source`` that was graded (tracebacks' line numbers are its lines). Every value is
    escaped."""
    passed = bool(report.get("passed"))
    counts = report.get("counts") or {}
    colour = "#1a7f37" if passed else "#cf222e"
    verdict = "PASS" if passed else "FAIL"
    out = [f'<div class="grader-report" style="font-family:sans-serif;line-height:1.4">',
           f'<div style="font-size:1.2em"><b style="color:{colour}">{verdict}</b> {_e(report.get("problem"))}: '
           f'score {report.get("score", 0):g} / {report.get("max_score", 0):g}'
           + (f' ({counts.get("passed", 0)} of {counts.get("total", 0)} cases passed)' if counts else "")
           + "</div>"]
    env = report.get("environment") or {}
    out.append(f'<div style="color:#57606a">{_e(env.get("framework"))} submission, graded in '
               f'{_e(", ".join(env.get("dtypes") or []))}; sandbox {_e(env.get("sandbox"))}</div>')
    if f := report.get("failure"):
        out.append(f'<p><b>{_e(f.get("kind"))}</b>: {_e(f.get("message"))}</p>')
        if f.get("hint"):
            out.append(f"<p>hint: {_e(f['hint'])}</p>")
        if f.get("details"):
            out.append(f'<pre style="font-size:0.85em">{_e(chr(10).join(f["details"])[-3000:])}</pre>')
    if report.get("summary"):
        out.append("<p><b>What failed</b> (by kind, dtype and rank):</p><ul>")
        for entry in report["summary"]:
            out.append(f"<li>{_e(entry.get('text'))}")
            hints = entry.get("hints") or ([entry["hint"]] if entry.get("hint") else [])
            out += [f"<br>hint ({h.get('count')} of {h.get('of')} cases): {_e(h.get('text'))}" for h in hints]
            out.append("</li>")
        out.append("</ul>")
    failing = [c for c in report.get("cases") or [] if c.get("status") not in ("passed", "skipped")
               and c.get("visibility") != "hidden" and c.get("failure")]
    failing.sort(key=lambda c: (not c.get("shrunk"), sum(_numel(i.get("shape", [])) for i in (c.get("inputs") or {}).values())))
    hints = {c["name"]: c["failure"]["hint"] for c in failing if c["failure"].get("hint")}
    distinct: dict[tuple[str, str], dict[str, Any]] = {}
    for c in failing:  # one entry per case and kind; one per message for errors of the run
        f = c["failure"]
        key = f.get("message", "") if f.get("kind") in RUN_KINDS else c["name"].split("[")[0].removeprefix("shrunk:")
        distinct.setdefault((key, f["kind"]), c)
    if distinct:
        out.append(f"<p><b>Failing cases</b> (smallest first; {min(len(distinct), MAX_CASES)} of {len(distinct)}):</p>")
    for c in list(distinct.values())[:MAX_CASES]:
        f = c["failure"]
        shapes = ", ".join(f"{k} {tuple(v.get('shape', []))} {v.get('dtype')}" for k, v in (c.get("inputs") or {}).items())
        out.append('<div style="border-left:3px solid #cf222e;padding-left:8px;margin:6px 0">')
        out.append(f"<code>{_e(c['name'])}</code> ({_e(c.get('group'))}): {_e(shapes)}<br>")
        out.append(f"<b>{_e(f.get('kind'))}</b>: {_e(f.get('message'))}<br>")
        if worst := _worst(f):
            out.append(f"{_e(worst)}<br>")
        if hint := f.get("hint") or hints.get(c["name"].removeprefix("shrunk:")):
            out.append(f"<b>hint</b>: {_e(hint)}<br>")
        if f.get("kind") in RUN_KINDS and f.get("details"):
            tail = "\n".join("\n".join(f["details"]).rstrip().splitlines()[-15:])
            out.append(f'<pre style="font-size:0.85em">{_e(tail)}</pre>')
        out.append("</div>")
    # one picture: where the error is, for the tolerance failure with the most output values
    # shown; else, for the largest one, its coarse grid (failure.data.grid)
    tolerance_failures = [c for c in failing if c["failure"].get("kind") == "tolerance"]
    pictured = [c for c in tolerance_failures if (c.get("values") or {}).get("got")]
    pictured.sort(key=lambda c: -_numel(list(_shape_of(c["values"]["got"]))))
    gridded = [c for c in tolerance_failures if isinstance((c["failure"].get("data") or {}).get("grid"), dict)]
    gridded.sort(key=lambda c: -_numel(c["failure"]["data"]["grid"].get("shape") or []))
    for c in (pictured or gridded)[:1]:
        if png := heat_map_png(c):
            data = c["failure"].get("data") or {}
            over = (f'{data["mismatched"]} of {data["total"]} elements exceed their allowance; '
                    if "mismatched" in data and "total" in data else "")
            what = ("|got - expected| per element; the allowance at the framed worst one: "
                    + (_worst(c["failure"]).partition(", allowed ")[2] or "see above")) if pictured else \
                "the largest |got - expected| / allowed per block of the output; over 1 is outside the tolerance"
            out.append(f'<p>Where the output is off, in {_e(c["name"])} ({_e(over)}{_e(what)}):<br>'
                       f'<img alt="error per output element of {_e(c["name"])}" src="data:image/png;base64,{png}"></p>')
    hidden = [c for c in report.get("cases") or [] if c.get("visibility") == "hidden"]
    if hidden:
        ok = sum(c.get("status") == "passed" for c in hidden)
        out.append(f"<p>hidden cases: {ok} of {len(hidden)} passed</p>")
    if text:
        out.append(f'<details><summary>full report</summary><pre style="font-size:0.85em">{_e(text)}</pre></details>')
    if source:
        numbered = "\n".join(f"{i:4d}  {line}" for i, line in enumerate(source.splitlines(), start=1))
        out.append(f'<details><summary>the source that was graded</summary><pre style="font-size:0.85em">'
                   f'{_e(numbered)}</pre></details>')
    out.append("</div>")
    return "\n".join(out)


def _shape_of(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


__all__ = ["CheckResult", "build_source", "check", "heat_map_png", "render_html"]
