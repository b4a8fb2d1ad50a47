"""grader: grade numeric coding exercises (NumPy, JAX and PyTorch submissions) against a reference.

The pipeline is spec -> cases -> run (sandboxed) -> compare -> report:
``grader.spec`` loads a problem, ``grader.cases`` makes the test cases, ``grader.runner`` runs the
submission in its own limited process, ``grader.compare`` judges each output, and
``grader.reports`` renders the :class:`grader.results.Report`. The module ``grader.check`` ties
them together.

In a notebook, ``from grader import check; check(fn)`` grades a function just defined
(``grader.notebook_check``). The package attribute ``check`` is that function until the module
``grader.check`` is imported, which Python binds to the same attribute; the module is then made
callable (it calls :func:`grader.notebook_check.check`), so ``from grader import check;
check(fn)`` works whatever was imported before, and ``from grader.check import ...`` and
``import grader.check`` keep working as before.
"""
import sys as _sys
import types as _types

__version__ = "0.2.0"


class _CallableModule(_types.ModuleType):
    """The module ``grader.check``, callable as :func:`grader.notebook_check.check`."""

    def __call__(self, fn, problem=None, **kwargs):
        from .notebook_check import check as _check
        return _check(fn, problem, **kwargs)


class _Package(_types.ModuleType):
    """The ``grader`` package: binding the module ``grader.check`` makes it callable."""

    def __setattr__(self, name, value):
        if name == "check" and isinstance(value, _types.ModuleType) and type(value) is _types.ModuleType:
            value.__class__ = _CallableModule
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

from .notebook_check import check  # noqa: E402 - after the package class is set

__all__ = ["__version__", "check"]
