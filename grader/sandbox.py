"""Sandbox tiers: how strongly the submission's process is isolated on this machine.

Tiers, strongest first:

``none``     the process runs with rlimits, its own process group, a scrubbed environment and a
             temporary working directory (always applied; see ``grader.runner``), nothing more.
             Also what ``--sandbox none`` asks for, for trusted local runs.

:func:`choose_tier` returns the tier name for ``environment.sandbox`` and a function that wraps
the child's argv accordingly.
"""
from __future__ import annotations

from typing import Any, Callable

from .errors import GraderError

Wrap = Callable[[list[str], str, str], list[str]]


def choose_tier(request: str) -> tuple[str, Wrap | None]:
    """The tier to use for ``request`` (``auto``, ``strict`` or ``none``) and its argv wrapper.

    Raises:
        GraderError: ``strict`` was asked for and no namespace sandbox works here.
    """
    if request == "none":
        return "none", None
    if request == "strict":
        raise GraderError("--sandbox strict: no namespace sandbox is available on this machine")
    return "rlimits", None


def describe(tier: str) -> str:
    """One line on what a tier isolates, for reports."""
    return {"none": "rlimits and a process group only (trusted run)",
            "rlimits": "rlimits, a process group, a scrubbed environment"}.get(tier, tier)


__all__: list[Any] = ["choose_tier", "describe"]
