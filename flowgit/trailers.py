"""Git trailers: read from a commit message, without a process per commit."""

from __future__ import annotations

import re

TRAILER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s?(.*)$")


def parse_trailers(message: str) -> list[tuple[str, str]]:
    """The ``Key: value`` lines of the message's last paragraph (continuation lines folded)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:
        return []
    out: list[tuple[str, str]] = []
    for line in paragraphs[-1].splitlines():
        if line[:1] in (" ", "\t") and out:
            key, value = out[-1]
            out[-1] = (key, f"{value} {line.strip()}")
            continue
        m = TRAILER_RE.match(line)
        if not m:
            return []  # not a trailer block
        out.append((m.group(1), m.group(2).strip()))
    return out


def values(trailers: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in trailers if k.lower() == key.lower()]


def names(trailers: list[tuple[str, str]], key: str) -> list[str]:
    """Pattern names of ``Graduated: name [evidence: …]``-style trailers."""
    return [v.split()[0] for v in values(trailers, key) if v.split()]


def mismatches(trailers: list[tuple[str, str]], events) -> list[str]:
    """Where a wrap commit's trailers and the change it records disagree (both directions)."""
    kinds = _trailer_kinds()
    claimed: dict[str, set[str]] = {kind: set() for kind in kinds.values()}
    happened: dict[str, set[str]] = {kind: set() for kind in kinds.values()}
    by_key = {key.lower(): kind for key, kind in kinds.items()}
    for key, value in trailers:
        kind = by_key.get(key.lower())
        words = value.split() if kind is not None else None
        if words:
            claimed[kind].add(words[0])  # type: ignore[index]
    for e in events:
        if e.kind in happened:
            happened[e.kind].add(e.name)
    if claimed == happened:
        return []  # (every wrap commit of a history is asked: most agree)
    problems = []
    for key, kind in kinds.items():
        for name in sorted(claimed[kind] - happened[kind]):
            problems.append(f"trailer `{key}: {name}` but the change does not show `{name}` {kind}")
        for name in sorted(happened[kind] - claimed[kind]):
            problems.append(f"the change shows `{name}` {kind} but there is no `{key}: {name}` trailer")
    return problems


_KINDS: dict[str, str] | None = None


def _trailer_kinds() -> dict[str, str]:
    """Trailer key -> the event kind it claims (imported when first asked: the hook starts without it)."""
    global _KINDS
    if _KINDS is None:
        from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, INCREMENTED

        _KINDS = {"Graduated": GRADUATED, "Incremented": INCREMENTED, "Demoted": DEMOTED, "Archived": ARCHIVED}
    return _KINDS
