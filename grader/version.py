"""The grader's version, in a module of its own so that any module can read it without importing
the package ``grader`` (whose ``__init__`` is the notebook-facing facade, above everything else)."""

__version__ = "0.2.0"
