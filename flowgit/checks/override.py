"""The one-commit override, and what it covers.

``FLOWGIT_OVERRIDE="why"`` lets every error of one commit through; naming codes
first, ``FLOWGIT_OVERRIDE="G402, G801: adopting the team's foundation"``, lets
through only those, so an override given for one deliberate change cannot
carry an unrelated violation in with it. The reason is recorded as it was
given (a ``Flow-Override:`` trailer), and every reader of it (the hook, the
wrap, the audit, a pushed history's replacement check) reads its scope back
from that same text, here.
"""

from __future__ import annotations

import re

# One or more finding codes, then a colon: "G402: why", "G402, G801: why", "g402 a401: why".
_SCOPE_RE = re.compile(r"\s*((?:[GA]\d{3})(?:\s*[,\s]\s*[GA]\d{3})*)\s*:\s*(\S.*)?$", re.IGNORECASE | re.DOTALL)
_CODE_RE = re.compile(r"[GA]\d{3}", re.IGNORECASE)


class Override:
    """An override's recorded reason and the codes it covers (``None``: every error).

    A plain class with slots: the hook builds one on every overridden commit,
    and nothing here should cost it an import.
    """

    __slots__ = ("reason", "codes")

    def __init__(self, reason: str, codes: frozenset[str] | None) -> None:
        self.reason = reason
        self.codes = codes

    def __repr__(self) -> str:
        return f"Override({self.reason!r}, codes={sorted(self.codes) if self.codes is not None else None})"

    def __str__(self) -> str:
        return self.reason

    def covers(self, *codes: str) -> bool:
        """Whether a finding with any of ``codes`` is let through (the audit's own checks pass the gate's code
        for the same question with theirs: A401 is G801 asked of history)."""
        return self.codes is None or any(code.upper() in self.codes for code in codes)

    @property
    def scoped(self) -> bool:
        return self.codes is not None

    def describe(self) -> str:
        """What it covers, for a banner or a notice: "every error" or "G402, G801 only"."""
        return "every error" if self.codes is None else ", ".join(sorted(self.codes)) + " only"


def parse_override(text: str | None) -> Override | None:
    """The override one reason gives (``None`` for no reason): scoped when it starts with codes and a colon."""
    if not text or not text.strip():
        return None
    match = _SCOPE_RE.match(text)
    if match is None:
        return Override(text, None)
    return Override(text, frozenset(code.upper() for code in _CODE_RE.findall(match.group(1))))


def override_of(value: "str | Override | None") -> Override | None:
    """``value`` as an :class:`Override`: callers hand over a reason as given or one already read."""
    if value is None or isinstance(value, Override):
        return value
    return parse_override(value)


def override_from_trailers(reasons: list[str]) -> Override | None:
    """The override a commit's ``Flow-Override:`` trailers record: every error when any of them names no
    codes, else the codes they name together."""
    read = [found for found in map(parse_override, reasons) if found is not None]
    if not read:
        return None
    if any(found.codes is None for found in read):
        codes = None
    else:
        codes = frozenset().union(*(found.codes for found in read))  # type: ignore[misc]
    return Override("; ".join(found.reason for found in read), codes)
