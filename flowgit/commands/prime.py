"""``flowgit prime``: what an agent reads first, as text, as JSON, or as a SessionStart hook answer."""

from __future__ import annotations

from flowgit.errors import FlowgitError
from flowgit.primer import Primer


def hook_answer(primer: Primer) -> dict:
    """The JSON a SessionStart hook prints: Claude Code adds ``additionalContext`` to the session's context."""
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": primer.text}}


def hook_problem(exc: FlowgitError) -> dict:
    """The SessionStart answer when the memory cannot be read (conflict markers, bytes that are not text, an
    invalid ``.flowgit.toml``): the session starts without it, and is told so, with the fix, instead of starting
    as if there were none."""
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": (
        f"flowgit could not read this project's memory, so this session starts without it: {exc.render()}. "
        "Fix that first, then run `flowgit prime` to read it.")}}


def render(primer: Primer) -> str:
    return primer.text
