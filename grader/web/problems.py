"""What the exercise page shows of a problem: its statement rendered from the spec's Markdown,
the function's signature and shapes, the graded dtypes per framework, and a starter stub for
each framework installed here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt

from ..spec import NO_DEFAULT, Problem, load_all

#: the frameworks the page offers, in its order, with their display names and stub imports
FRAMEWORKS = {"numpy": ("NumPy", "import numpy as np"),
              "jax": ("JAX", "import jax.numpy as jnp"),
              "torch": ("PyTorch", "import torch")}

#: the lesson's problems, listed first in this order (then the others by id)
LESSON = ("tied_lm_head", "embedding_lookup", "masked_mean_pool")

# CommonMark without raw HTML: a spec's statement is text, never markup passed through
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def render_markdown(text: str) -> str:
    """HTML of a statement's Markdown (raw HTML in it is escaped, not passed through)."""
    return _MARKDOWN.render(text)


def shape_text(shape: tuple[Any, ...]) -> str:
    """A symbolic shape as the statement writes it: ``("...", "d_model")`` -> ``(..., d_model)``;
    a ``{of, without_axis}`` shape as the spec writes it."""
    from ..spec import WithoutAxis

    if isinstance(shape, WithoutAxis):
        return str(shape)
    if not shape:
        return "()"
    parts = [str(s) for s in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def dtype_text(dtype: Any) -> str:
    """A parameter's dtype kind in words."""
    if dtype == "float":
        return "the graded float dtype"
    if isinstance(dtype, (tuple, list)):
        return " or ".join(dtype)
    return str(dtype)


def stub(problem: Problem, framework: str) -> str:
    """The starter file of ``problem`` for ``framework``: the import, the signature (defaults
    included), a docstring with the shapes (and the result's dtype where the spec fixes it), and
    ``raise NotImplementedError``."""
    params = []
    for p in problem.parameters:
        params.append(p.name if p.default is NO_DEFAULT else f"{p.name}={p.default!r}")
    doc = [f"{p.name}: " + (f"a Python {p.scalar}" if p.scalar else shape_text(p.shape)) for p in problem.parameters]
    # the dtype too where the statement fixes one (a newcomer's top_k_indices starter left out int64)
    fixed = f", {problem.returns_fixed_dtype}" if problem.returns_fixed_dtype else ""
    doc.append(f"returns: {shape_text(problem.returns_shape)}{fixed}")
    lines = [FRAMEWORKS[framework][1], "", "", f"def {problem.function}({', '.join(params)}):",
             '    """' + problem.title + ".", ""]
    lines += ["    " + d for d in doc]
    lines += ['    """', "    raise NotImplementedError", ""]
    return "\n".join(lines)


@dataclass
class Catalog:
    """The problems the page offers (loaded once) and the frameworks installed here."""

    problems: dict[str, Problem]
    installed: tuple[str, ...]

    @classmethod
    def load(cls, problems_dir: str | None = None) -> "Catalog":
        """Load every usable problem spec (of ``problems_dir``, else the bundled ones)."""
        from ..frameworks import installed
        loaded, _broken = load_all(problems_dir)
        order = sorted(loaded, key=lambda pid: (LESSON.index(pid) if pid in LESSON else len(LESSON), pid))
        return cls({pid: loaded[pid] for pid in order}, tuple(f for f in FRAMEWORKS if installed(f)))

    def frameworks_of(self, problem: Problem) -> list[str]:
        """The frameworks ``problem`` grades that are installed here, in page order."""
        return [f for f in FRAMEWORKS if f in problem.frameworks and f in self.installed]

    def summary(self, problem: Problem) -> dict[str, Any]:
        """One problem as ``GET /api/problems`` lists it."""
        return {"id": problem.id, "title": problem.title, "function": problem.function,
                "frameworks": self.frameworks_of(problem), "lesson": problem.id in LESSON}

    @staticmethod
    def returns_dtype(problem: Problem) -> str:
        """The result's dtype in words: the inputs', a parameter's, or a fixed one."""
        if problem.returns_dtype == "same_as_inputs":
            return "the inputs' dtype"
        if any(p.name == problem.returns_dtype for p in problem.parameters):
            return f"the dtype of {problem.returns_dtype}"
        return dtype_text(problem.returns_dtype)

    def detail(self, problem: Problem) -> dict[str, Any]:
        """One problem as the page shows it: statement (Markdown and HTML), signature, shapes,
        dtypes per framework and a stub per installed framework."""
        return {
            **self.summary(problem),
            "statement": problem.statement,
            "statement_html": render_markdown(problem.statement),
            "signature": f"{problem.function}(" + ", ".join(
                p.name if p.default is NO_DEFAULT else f"{p.name}={p.default!r}" for p in problem.parameters) + ")",
            "parameters": [{"name": p.name, "shape": "scalar" if p.scalar else shape_text(p.shape),
                            "dtype": f"a Python {p.scalar}" if p.scalar else dtype_text(p.dtype)}
                           for p in problem.parameters],
            "returns": {"shape": shape_text(problem.returns_shape), "dtype": self.returns_dtype(problem)},
            "dtypes": {f: list(problem.frameworks[f]) for f in self.frameworks_of(problem)},
            "notes": {f: problem.framework_notes.get(f, "") for f in self.frameworks_of(problem)},
            "framework_names": {f: FRAMEWORKS[f][0] for f in self.frameworks_of(problem)},
            "stubs": {f: stub(problem, f) for f in self.frameworks_of(problem)},
        }
