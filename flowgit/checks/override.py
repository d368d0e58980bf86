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
import unicodedata

# One or more finding codes, then a colon: "G402: why", "G402, G801: why", "g402 a401: why" (ASCII digits only).
_SCOPE_RE = re.compile(r"\s*((?:[GA]\d{3})(?:\s*[,\s]\s*[GA]\d{3})*)\s*:\s*(\S.*)?$",
                       re.IGNORECASE | re.DOTALL | re.ASCII)
_CODE_RE = re.compile(r"[GA]\d{3}", re.IGNORECASE | re.ASCII)
# A reason whose first word reads as a code to a person ("[G402]", "G4O2", "Ｇ４０２", "G402;", a Cyrillic G):
# a letter, then three digits (of any script) or look-alikes of them, after any opening brackets.
_CODE_LIKE_RE = re.compile(r"\s*[\[({<\"'`*_]*\s*[^\W\d_][\s\-]?(?=[OoIl]{0,2}\d)[\dOoIl]{3}(?![^\W_])")


class Override:
    """An override's recorded reason and the codes it covers (``None``: every error).

    A plain class with slots: the hook builds one on every overridden commit,
    and nothing here should cost it an import.
    """

    __slots__ = ("reason", "codes", "unreadable")

    def __init__(self, reason: str, codes: frozenset[str] | None, unreadable: bool = False) -> None:
        self.reason = reason
        self.codes = codes
        self.unreadable = unreadable  # it begins like a list of codes but does not read as one: it covers nothing

    def __repr__(self) -> str:
        return f"Override({self.reason!r}, codes={sorted(self.codes) if self.codes is not None else None})"

    def __str__(self) -> str:
        return self.reason

    def covers(self, *codes: str) -> bool:
        """Whether a finding with any of ``codes`` is let through (the audit's own checks pass the gate's code
        for the same question with theirs: A401 is G801 asked of history)."""
        return self.codes is None or any(code.upper() in self.codes for code in codes)

    def describe(self) -> str:
        """What it covers, for a banner or a notice: "every error", "G402, G801 only" or "nothing"."""
        if self.unreadable:
            return "nothing (its codes do not read as `G402, G801: why`)"
        return "every error" if self.codes is None else ", ".join(sorted(self.codes)) + " only"


def parse_override(text: str | None) -> Override | None:
    """The override one reason gives (``None`` for no reason): scoped when it starts with codes and a colon."""
    if not text or not text.strip():
        return None
    plain = unicodedata.normalize("NFKC", text)  # (full-width `Ｇ４０２` is G402)
    match = _SCOPE_RE.match(plain)
    if match is not None:
        return Override(text, frozenset(code.upper() for code in _CODE_RE.findall(match.group(1))))
    if _CODE_LIKE_RE.match(plain):  # meant as codes, written otherwise: it covers nothing (fails closed)
        return Override(text, frozenset(), unreadable=True)
    return Override(text, None)


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
    readable = [found for found in read if not found.unreadable]
    if any(found.codes is None for found in readable):
        codes = None
    else:
        codes = frozenset().union(*(found.codes for found in readable))  # type: ignore[misc]
    return Override("; ".join(found.reason for found in read), codes, unreadable=not readable)


def unreadable_scope(scope: Override | None, where: str) -> list:
    """G812 for an override that begins like a list of codes but does not read as one (``[G402]: why``,
    ``G402; G801: why``, ``G4O2: why``): read as no codes it would let every error through, read as codes it
    names none; it covers nothing, and says so."""
    if scope is None or not scope.unreadable:
        return []
    from flowgit.checks.finding import Finding

    return [Finding("G812", "override", "error", where, None,
                    f"the override \"{scope.reason[:80]}\" begins like a list of codes but does not read as one, so "
                    "it lets nothing through", "write the codes first, separated by commas or spaces, then one "
                    "colon: `G402, G801: why` (or a reason that names no codes, which covers every error)")]
