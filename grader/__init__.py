"""grader: grade numeric coding exercises (NumPy and JAX submissions) against a reference.

The pipeline is spec -> cases -> run (sandboxed) -> compare -> report:
``grader.spec`` loads a problem, ``grader.cases`` makes the test cases, ``grader.runner`` runs the
submission in its own limited process, ``grader.compare`` judges each output, and
``grader.reports`` renders the :class:`grader.results.Report`. ``grader.check`` ties them together.
"""

__version__ = "0.2.0"
