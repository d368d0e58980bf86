"""Colours for sessions and agents: distinct within one report, stable for a name across reports.

The first dozen sessions (and agents) of a report take a qualitative palette in
the order they first appear, so neighbours never look alike; past that a hash
of the name picks the hue.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

SESSION_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                   "#9c755f", "#17becf", "#bcbd22", "#8c564b")
AGENT_PALETTE = ("#1b1f24", "#b35806", "#542788", "#006d2c", "#a50026", "#084594", "#7f2704", "#3f007d")
NO_SESSION, NO_AGENT = "#9aa0a6", "#5f6368"


def _hue(name: str, salt: str) -> int:
    digest = hashlib.sha256((salt + name).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:2], "big") % 360


class Palette:
    """The colours of one report: fills for sessions, rings for agents."""

    def __init__(self, sessions: Iterable[str] = (), agents: Iterable[str] = ()) -> None:
        self._sessions = {s: SESSION_PALETTE[i] for i, s in enumerate(dict.fromkeys(x for x in sessions if x))
                          if i < len(SESSION_PALETTE)}
        self._agents = {a: AGENT_PALETTE[i] for i, a in enumerate(dict.fromkeys(x for x in agents if x))
                        if i < len(AGENT_PALETTE)}

    def session(self, name: str) -> str:
        if not name:
            return NO_SESSION
        return self._sessions.get(name) or f"hsl({_hue(name, 's:')},62%,52%)"

    def agent(self, name: str) -> str:
        if not name:
            return NO_AGENT
        return self._agents.get(name) or f"hsl({_hue(name, 'a:')},70%,28%)"
