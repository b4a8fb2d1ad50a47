"""The small expression language of problem specs: integer-domain bounds, size and relation expressions.

A parameter's integer domain ends in a :class:`Bound` (``n``, ``-ndim(x) + 1``, ``3``:
:func:`parse_bound`); an array's dimension may be a size expression (``n + 1``, ``max(a, b)``:
:func:`size_expr`, :func:`eval_size`) and a ``constraints`` entry a relation (``n <= m``:
:func:`relation_expr`, :func:`holds`). Both are parsed with ``ast`` and checked node by node
(only names, integers, ``+ - * //``, ``min``/``max`` and comparisons; :class:`SizeExprError`
otherwise), never evaluated by Python. :func:`draw_order` orders the parameters so that the
ones a domain refers to are drawn first (:func:`domain_refs`). :mod:`grader.spec` declares and
validates parameters with them and re-exports these names.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Callable

# ``Parameter`` in the annotations is grader.spec.Parameter (not imported: spec imports this module)


@dataclass(frozen=True)
class Bound:
    """One end of an integer domain: ``sign * term + offset``, where the term is an integer, a
    size symbol, or ``ndim(<parameter>)`` (the number of axes of that parameter's array in the case).

    ``"[-ndim(logits), ndim(logits))"`` gives ``Bound("ndim", "logits", -1, 0)`` and
    ``Bound("ndim", "logits", 1, -1)``.
    """

    kind: str          # "int", "size" or "ndim"
    name: str = ""     # the size symbol or the parameter (kind size / ndim)
    sign: int = 1
    offset: int = 0

    def value(self, sizes: dict[str, Any], ndims: dict[str, int] | None = None) -> int:
        """The bound in a case with ``sizes`` (size symbol -> int) and ``ndims`` (parameter -> axes).

        Raises:
            KeyError: the symbol or parameter is not known in this case.
        """
        if self.kind == "int":
            base = 0
        elif self.kind == "size":
            base = int(sizes[self.name])
        else:
            base = int((ndims or {})[self.name])
        return self.sign * base + self.offset


_BOUND = re.compile(r"^(-)?\s*(?:(ndim)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)|([A-Za-z_][A-Za-z0-9_]*)|([0-9]+))"
                    r"\s*(?:([+-])\s*([0-9]+))?$")


def parse_bound(text: str) -> Bound | None:
    """A :class:`Bound` from its text (``"vocab_size"``, ``"-ndim(x) + 1"``, ``"3"``), or None."""
    m = _BOUND.match(text.strip())
    if m is None:
        return None
    sign = -1 if m.group(1) else 1
    offset = (int(m.group(7)) * (-1 if m.group(6) == "-" else 1)) if m.group(6) else 0
    if m.group(2):
        return Bound("ndim", m.group(3), sign, offset)
    if m.group(4):
        return Bound("size", m.group(4), sign, offset)
    return Bound("int", "", 1, sign * int(m.group(5)) + offset)


class SizeExprError(ValueError):
    """A size expression uses something other than integers, names and ``+ - * // %``."""


_SIZE_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
             ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_SIZE_FUNCS = {"min": min, "max": max}


def size_expr(text: str) -> ast.expr:
    """The parsed size expression ``text`` (``"D // n_heads"``, ``"(L + 2*padding - K) // stride + 1"``):
    integers, names (size symbols or int scalar parameters), ``+ - * // %``, unary minus,
    parentheses and ``min(...)`` / ``max(...)``; nothing is ever evaluated by Python's ``eval``.

    Raises:
        SizeExprError: a syntax error or any other construct (one line naming it).
    """
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise SizeExprError(f"{text!r} is not an expression of sizes") from None
    _check_nodes(text, tree, relations=False)
    return tree


_RELATIONS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
              ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
              ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def relation_expr(text: str) -> ast.expr:
    """The parsed constraint ``text`` (``"D % n_heads == 0"``, ``"d % 2 == 0"``,
    ``"K <= L + 2 * padding"``, ``"n in (2, 4, 8)"``): size expressions (:func:`size_expr`)
    compared with ``== != < <= > >=``, ``in`` / ``not in`` a tuple or list of integers, joined
    by ``and`` / ``or`` / ``not``.

    Raises:
        SizeExprError: a syntax error, any other construct, or no comparison at all.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise SizeExprError(f"{text!r} is not a constraint (a comparison of sizes)") from None
    if not isinstance(tree, (ast.Compare, ast.BoolOp)) and not (isinstance(tree, ast.UnaryOp)
                                                                 and isinstance(tree.op, ast.Not)):
        raise SizeExprError(f"{text!r} is not a comparison: write e.g. 'D % n_heads == 0' or 'K <= L'")
    _check_nodes(text, tree, relations=True)
    return tree


def _check_nodes(text: str, tree: ast.expr, relations: bool) -> None:
    """Refuse every node outside the whitelist of a size expression (and, with ``relations``,
    of a constraint)."""
    for node in ast.walk(tree):
        kind = type(node)
        ok = (kind in (ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.USub) or kind in _SIZE_OPS
              or (kind is ast.Constant and type(node.value) is int)
              or (kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id in _SIZE_FUNCS
                  and not node.keywords and bool(node.args)))
        if relations:
            ok = ok or kind in (ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.Not) or kind in _RELATIONS \
                or (kind in (ast.Tuple, ast.List) and all(isinstance(e, ast.Constant) and type(e.value) is int
                                                          for e in node.elts))  # type: ignore[attr-defined]
        if kind is ast.BinOp and type(node.op) not in _SIZE_OPS:  # type: ignore[attr-defined]
            ok = False
        if kind is ast.UnaryOp and not (isinstance(node.op, ast.USub)  # type: ignore[attr-defined]
                                        or (relations and isinstance(node.op, ast.Not))):  # type: ignore[attr-defined]
            ok = False
        if not ok:
            what = "integers, sizes, + - * // %, parentheses, min and max" + \
                (", comparisons, in (1, 2, ...), and, or, not" if relations else "")
            raise SizeExprError(f"{text!r}: only {what} are allowed ({type(node).__name__} is not)")


def holds(tree: ast.expr, env: dict[str, int]) -> bool:
    """Whether the parsed constraint holds with ``env`` (name -> int).

    Raises:
        KeyError: a name not in ``env``; ZeroDivisionError: ``// 0`` or ``% 0``.
    """
    return bool(_value(tree, env))


def _value(tree: ast.expr, env: dict[str, int]) -> Any:
    if isinstance(tree, ast.Compare):
        left = _value(tree.left, env)
        for op, right_node in zip(tree.ops, tree.comparators):
            right = _value(right_node, env)
            if not _RELATIONS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(tree, ast.BoolOp):
        results = (_value(v, env) for v in tree.values)
        return all(results) if isinstance(tree.op, ast.And) else any(results)
    if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not):
        return not _value(tree.operand, env)
    if isinstance(tree, (ast.Tuple, ast.List)):
        return tuple(int(e.value) for e in tree.elts)  # type: ignore[attr-defined]
    return eval_size(tree, env)


def size_names(tree: ast.expr) -> set[str]:
    """The names a parsed size expression reads (``min``/``max`` excluded)."""
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs}


def eval_size(tree: ast.expr, env: dict[str, int]) -> int:
    """The value of a parsed size expression with ``env`` (name -> int).

    Raises:
        KeyError: a name not in ``env``; ZeroDivisionError: ``// 0`` or ``% 0``.
    """
    if isinstance(tree, ast.Constant):
        return int(tree.value)
    if isinstance(tree, ast.Name):
        return int(env[tree.id])
    if isinstance(tree, ast.UnaryOp):
        return -eval_size(tree.operand, env)
    if isinstance(tree, ast.Call):
        return int(_SIZE_FUNCS[tree.func.id](*(eval_size(a, env) for a in tree.args)))  # type: ignore[union-attr]
    assert isinstance(tree, ast.BinOp)
    return int(_SIZE_OPS[type(tree.op)](eval_size(tree.left, env), eval_size(tree.right, env)))


def domain_refs(param: "Parameter", params: tuple["Parameter", ...]) -> set[str]:
    """The parameters ``param``'s domain refers to: int scalar parameters named by a bound (a
    name that is also a size symbol is the size) and the arrays of its ``ndim(...)`` bounds."""
    symbols = {s for q in params if q.scalar is None for s in q.shape if isinstance(s, str)}
    int_scalars = {q.name for q in params if q.scalar == "int"}
    out: set[str] = set()
    for b in param.domain or ():
        if isinstance(b, Bound) and b.kind == "size" and b.name in int_scalars and b.name not in symbols:
            out.add(b.name)
        elif isinstance(b, Bound) and b.kind == "ndim":
            out.add(b.name)
    return out


def draw_order(params: tuple["Parameter", ...], fail: Callable[[int, str], Exception]) -> tuple[str, ...]:
    """The order in which a case's values are made: every parameter after those its domain
    refers to (:func:`domain_refs`: labels in ``[0, num_classes)`` after the int scalar
    ``num_classes``; an axis in ``[-ndim(x), ndim(x))`` after ``x``). Among those ready, arrays
    come before scalars and then the spec's order, so a spec whose domains refer to sizes only
    keeps the order (and the values) it always had. ``graphlib`` sorts and finds cycles.

    Raises:
        the exception ``fail(index, message)`` gives, for the first parameter of a cycle
        (``k`` in ``[0, n)`` and ``n`` in ``[k, 10]``), naming the cycle.
    """
    import heapq
    from graphlib import CycleError, TopologicalSorter

    index = {p.name: i for i, p in enumerate(params)}
    sorter: TopologicalSorter[str] = TopologicalSorter({p.name: domain_refs(p, params) for p in params})
    try:
        sorter.prepare()
    except CycleError as exc:
        cycle = list(dict.fromkeys(exc.args[1])) if len(exc.args) > 1 else []
        first = min(cycle, key=lambda n: index.get(n, 0)) if cycle else params[0].name
        chain = " -> ".join(exc.args[1]) if len(exc.args) > 1 else ""
        raise fail(index.get(first, 0), f"the domains refer to each other in a cycle ({chain}): bound one of them "
                                        f"by an integer or a size instead") from None
    rank = {p.name: (p.scalar is not None, i) for i, p in enumerate(params)}
    ready = [(rank[n], n) for n in sorter.get_ready()]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        out.append(name)
        sorter.done(name)
        for n in sorter.get_ready():
            heapq.heappush(ready, (rank[n], n))
    return tuple(out)
