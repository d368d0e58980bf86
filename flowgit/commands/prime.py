"""``flowgit prime``: what an agent reads first, as text, as JSON, or as a SessionStart hook answer."""

from __future__ import annotations

from flowgit.primer import Primer


def hook_answer(primer: Primer) -> dict:
    """The JSON a SessionStart hook prints: Claude Code adds ``additionalContext`` to the session's context."""
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": primer.text}}


def render(primer: Primer) -> str:
    return primer.text
