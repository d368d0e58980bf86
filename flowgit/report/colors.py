"""Stable colours for sessions and agents: the same name gets the same colour in every report."""

from __future__ import annotations

import hashlib


def _hue(name: str, salt: str) -> int:
    digest = hashlib.sha256((salt + name).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:2], "big") % 360


def session_color(session: str) -> str:
    """A fill for a session's dots (grey when the episode recorded no session)."""
    if not session:
        return "#9aa0a6"
    return f"hsl({_hue(session, 's:')},62%,52%)"


def agent_color(agent: str) -> str:
    """A darker ring for an agent, so dots from one session but two agents still differ."""
    if not agent:
        return "#5f6368"
    return f"hsl({_hue(agent, 'a:')},70%,28%)"
