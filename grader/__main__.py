"""``python -m grader``: the same as the ``grader`` console script.

Run it as ``python -I -m grader`` where the working directory may hold learners' files: plain
``python -m`` puts the working directory first on ``sys.path``, so a learner's ``argparse.py``
or ``json.py`` there would be imported by the grader itself. In case ``-I`` was left out, the
working directory is taken off ``sys.path`` here, before the CLI imports anything more (what
Python imported before this module ran is beyond its reach; see docs/security.md).
"""
import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import main  # noqa: E402 - after the working directory is off sys.path

sys.exit(main())
