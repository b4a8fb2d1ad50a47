"""grader: grade numeric coding exercises (NumPy, JAX and PyTorch submissions) against a reference.

The pipeline flows one way (docs/architecture.md): ``grader.submission`` loads the file,
``grader.plan`` decides the cases and their reference values (``grader.spec``, ``grader.cases``),
``grader.run`` runs the submission in its own limited process, ``grader.grading`` judges each
outcome (``grader.compare``) and builds the :class:`grader.results.Report`, which
``grader.reports`` renders. ``grader.check.check_submission`` ties them together.

In a notebook, ``from grader import check; check(fn)`` grades a function just defined
(:func:`grader.notebook_check.check`). ``grader.check`` is one object whatever was imported
before: the module ``grader.check`` (Python binds a submodule to the package attribute of its
name), made callable here, so ``check(fn)``, ``check.check_submission`` and
``from grader.check import ...`` all work. Importing it changes no process state (no
environment variable, signal handler or JAX flag); grading happens in a separate process.
"""
import sys as _sys
import types as _types

from .version import __version__


class _CallableModule(_types.ModuleType):
    """The module ``grader.check``, callable as :func:`grader.notebook_check.check`."""

    def __call__(self, fn, problem=None, **options):
        """Grade the function ``fn`` in a separate process: :func:`grader.notebook_check.check`,
        whose keyword options (``seed``, ``case``, ...) are passed on as they are, so the two
        can never disagree (a learner's trial: ``check(fn, case=...)``, printed by check()
        itself, was refused here)."""
        from .notebook_check import check
        return check(fn, problem, **options)

    @property
    def __signature__(self):
        """``check(fn)``'s own signature (``inspect.signature(grader.check)``), without annotations."""
        import inspect
        from .notebook_check import check
        sig = inspect.signature(check)
        return sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                           return_annotation=inspect.Signature.empty)

    @property
    def __doc__(self):
        """What ``help(check)`` shows first: ``check(fn)``'s own documentation, then the module's."""
        import inspect
        from .notebook_check import check
        return (f"check{self.__signature__}\n\n"
                f"{inspect.getdoc(check)}\n\n"
                f"(check is also the module grader.check, documented below.)\n\n{self.__dict__.get('__doc__') or ''}")

    @__doc__.setter
    def __doc__(self, text):
        self.__dict__["__doc__"] = text


class _Package(_types.ModuleType):
    """The ``grader`` package: the module ``grader.check`` is made callable when it is bound."""

    def __setattr__(self, name, value):
        if name == "check" and type(value) is _types.ModuleType:
            value.__class__ = _CallableModule
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def __getattr__(name):
    """``grader.check`` on first use (``from grader import check``): the callable module."""
    if name == "check":
        import importlib
        return importlib.import_module(f"{__name__}.check")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__", "check"]
