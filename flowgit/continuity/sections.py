"""Canonical section names, their aliases and the wrap semantics each one carries."""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from typing import Mapping


class Semantics(str, Enum):
    """How the wrap may change a section (and what the gate holds it to)."""

    REPLACE = "replace"        # rewritten whole each wrap: what is true now
    LIFECYCLE = "lifecycle"    # items marked done / seen / next, removed when resolved
    REWRITE = "rewrite"        # prose narrative rewritten, never appended to
    PATTERNS = "patterns"      # 1x add, 2x increment, 3x graduate out
    PROVEN = "proven"          # graduation in, demotion/archival out, evidence protected
    PROTECTED = "protected"    # behavioural instructions: rarely touched, never shrunk
    FREE = "free"              # anything else the user keeps


CANONICAL: dict[str, tuple[tuple[str, ...], Semantics]] = {
    "Current State": (("State",), Semantics.REPLACE),
    "Top of Mind": ((), Semantics.REPLACE),
    "Action Items": (("Actions",), Semantics.LIFECYCLE),
    "Recent Context": (("Recent",), Semantics.REWRITE),
    "Developing Knowledge": (("Developing",), Semantics.PATTERNS),
    "Proven Knowledge": (("Proven",), Semantics.PROVEN),
    "Cross-Domain Discoveries": ((), Semantics.PROTECTED),
    "Foundation": ((), Semantics.PROTECTED),
    "Partnership": ((), Semantics.PROTECTED),
}

CANONICAL_ORDER: tuple[str, ...] = tuple(CANONICAL)

# Short names used in code and on the command line.
STATE, TOP, ACTIONS, RECENT, DEVELOPING, PROVEN = (
    "Current State", "Top of Mind", "Action Items", "Recent Context",
    "Developing Knowledge", "Proven Knowledge")


def alias_table(extra: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """Map every lower-cased name or alias to its canonical section name (a fresh dict the caller may keep)."""
    key = tuple(sorted((k, tuple(v)) for k, v in extra.items())) if extra else ()
    return dict(_alias_table(key))


@lru_cache(maxsize=64)
def _alias_table(extra: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, str]:
    table: dict[str, str] = {}
    for canonical, (aliases, _) in CANONICAL.items():
        table[canonical.lower()] = canonical
        for alias in aliases:
            table[alias.lower()] = canonical
    for canonical, aliases in extra:
        target = next((c for c in CANONICAL if c.lower() == canonical.lower()), canonical)
        for alias in aliases:
            table[alias.lower()] = target
    return table


def semantics_of(canonical: str | None) -> Semantics:
    if canonical is None or canonical not in CANONICAL:
        return Semantics.FREE
    return CANONICAL[canonical][1]
