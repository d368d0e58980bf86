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
    from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, INCREMENTED

    kinds = {"Graduated": GRADUATED, "Incremented": INCREMENTED, "Demoted": DEMOTED, "Archived": ARCHIVED}
    happened: dict[str, set[str]] = {kind: set() for kind in kinds.values()}
    for e in events:
        if e.kind in happened:
            happened[e.kind].add(e.name)
    problems = []
    for key, kind in kinds.items():
        claimed = set(names(trailers, key))
        for name in sorted(claimed - happened[kind]):
            problems.append(f"trailer `{key}: {name}` but the change does not show `{name}` {kind}")
        for name in sorted(happened[kind] - claimed):
            problems.append(f"the change shows `{name}` {kind} but there is no `{key}: {name}` trailer")
    return problems
