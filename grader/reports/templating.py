"""The Jinja2 environment of the instructor's HTML pages (summary.html, similarity.html): templates
read from ``grader/reports/templates/``, every value autoescaped (learner ids, hints and code are
learner-controlled), an undefined name an error rather than an empty cell."""
from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=1)
def environment() -> Any:
    """The shared :class:`jinja2.Environment` (autoescape on for every template)."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    from .common import printable
    env.filters["printable"] = lambda v: printable(v)
    return env


def render(name: str, **context: Any) -> str:
    """The template ``name`` rendered with ``context``."""
    return environment().get_template(name).render(**context)


def script(name: str) -> tuple[str, str]:
    """The text of the script file ``name`` beside the templates and its CSP source
    (``'sha256-...'``), which lets that script, and no other, run."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    return text, f"'sha256-{digest}'"
