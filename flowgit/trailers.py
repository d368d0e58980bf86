"""Git trailers: read from a commit message, without a process per commit."""

from __future__ import annotations

import re

# A trailer line as git reads one: a key of letters, digits and hyphens, whitespace allowed before the colon.
TRAILER_RE = re.compile(r"^([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*)$")
# Lines git itself writes into a trailer block: with one of them, a block of at least a quarter trailers counts.
GIT_WRITTEN = ("Signed-off-by:", "(cherry picked from commit ")


def parse_trailers(message: str) -> list[tuple[str, str]]:
    """The trailers of the message's last paragraph, read as ``git interpret-trailers --parse`` reads them.

    The gate, the audit and ``git log --format=%(trailers)`` must agree on what
    a commit claims: a stricter reader would let ``Graduated : x`` claim a
    graduation git reports and flowgit never checks. So, as git does: the
    subject is never a trailer block; the last paragraph is one when every line
    is a trailer, or when a line git writes itself (``Signed-off-by:``, a
    cherry-pick note) is among them and trailers make up at least a quarter of
    it; whitespace may stand before the colon; an indented line continues the
    trailer above; a ``#`` comment line is passed over.
    """
    lines = _log_message(message.replace("\r\n", "\n").split("\n"))  # (a CRLF message: git reads its blank
    while lines and (not lines[-1].strip(" \t\r") or lines[-1].startswith("#")):  # lines as blank)
        lines.pop()  # comment and blank lines at the end are not the last paragraph, to git
    message = "\n".join(lines)
    # Lines end at "\n" alone (a form feed or U+2028 is no line break to git), and a line of spaces, tabs
    # and carriage returns only is blank (git's own idea of whitespace: not a form feed or vertical tab).
    paragraphs = [p for p in re.split(r"\n[ \t\r]*(?=\n)", message.strip(" \t\r\n")) if p.strip(" \t\r\n")]
    if len(paragraphs) < 2:
        return []
    out: list[tuple[str, str]] = []
    trailers = others = 0
    written = False
    last_was_trailer = False
    for line in paragraphs[-1].strip("\n").split("\n"):
        if line.startswith("#"):
            last_was_trailer = False  # a comment line: git passes over it, and nothing after it continues
            continue
        if line[:1] in (" ", "\t") and last_was_trailer:
            key, value = out[-1]
            out[-1] = (key, f"{value} {line.strip()}")
            continue
        written = written or line.startswith(GIT_WRITTEN)
        if line.startswith(GIT_WRITTEN[1]):  # a trailer line to git, with no key of its own
            trailers += 1
            last_was_trailer = False
            continue
        m = TRAILER_RE.match(line)
        last_was_trailer = m is not None
        if m:
            trailers += 1
            out.append((m.group(1), m.group(2).strip()))
        else:
            others += 1
    if others and not (written and trailers * 3 >= others):
        return []  # not a trailer block
    return out


SCISSORS = "# ------------------------ >8 ------------------------"


def _log_message(lines: list[str]) -> list[str]:
    """The lines git reads trailers from: the message above a scissors line (a message kept verbatim still
    holds one), without the run at its end of comment lines, empty lines and an old-style ``Conflicts:``
    block (``Conflicts:``, then tab-indented paths), which git passes over, so the paragraph above is the
    one its ``%(trailers)`` reports."""
    if SCISSORS in lines:
        lines = lines[:lines.index(SCISSORS)]
    tail: int | None = None  # where the run git passes over begins
    in_conflicts = False
    for at, line in enumerate(lines):
        if not line or line.startswith("#"):
            tail = at if tail is None else tail
        elif line == "Conflicts:":
            in_conflicts, tail = True, at if tail is None else tail
        elif in_conflicts and line.startswith("\t"):
            continue  # a path of the conflicts block
        elif tail is not None:
            tail, in_conflicts = None, False
    return lines if tail is None else lines[:tail]


WRAP_KEYS = ("flow-session", "graduated", "incremented", "demoted", "archived", "lowered", "renamed")


def speaks_for_a_wrap(trailers: list[tuple[str, str]]) -> bool:
    """Whether a message carries a trailer that says what a wrap did (checked against the change: a claim
    git reports must be true whether or not a session is named)."""
    return any(key.lower() in WRAP_KEYS for key, _ in trailers)


def values(trailers: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in trailers if k.lower() == key.lower()]


def names(trailers: list[tuple[str, str]], key: str) -> list[str]:
    """Pattern names of ``Graduated: name [evidence: …]``-style trailers."""
    return [v.split()[0] for v in values(trailers, key) if v.split()]


def mismatches(trailers: list[tuple[str, str]], events, *, memory_changed: bool = True) -> list[str]:
    """Where a wrap commit's trailers and the change it records disagree (both directions).

    ``memory_changed``: whether the commit changes the continuity file or the store. A ``Renamed:`` trailer
    is held to the change only then: ascend reads it from the memory's own history, and an ordinary commit
    may well say `Renamed: a.py -> b.py` of its own files."""
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
    raised = (kinds["Graduated"], kinds["Incremented"])
    problems = _detail_mismatches(trailers, events, by_key, raised) if any(claimed[k] for k in raised) else []
    if memory_changed:
        problems += _rename_mismatches(trailers, events)
    if claimed == happened:
        return problems  # (every wrap commit of a history is asked: most agree)
    for key, kind in kinds.items():
        for name in sorted(claimed[kind] - happened[kind]):
            problems.append(f"trailer `{key}: {name}` but the change does not show `{name}` {kind}")
        if key in CLAIMED_ONLY:
            continue
        for name in sorted(happened[kind] - claimed[kind]):
            problems.append(f"the change shows `{name}` {kind} but there is no `{key}: {name}` trailer")
    return problems


RENAME_ARROW_RE = re.compile(r"\s*(?:->|\u2192)\s*")


def _rename_mismatches(trailers: list[tuple[str, str]], events) -> list[str]:
    """``Renamed: old -> new`` held to the change: it must be a rename the change makes.

    ascend's git partition reads these as the names a wrap gave a pattern, so
    a rename that never happened would tie two lines of work together on the
    record. Held when given, not asked for when missing (a hand rename with no
    trailer says nothing false), as :data:`CLAIMED_ONLY`.
    """
    claims = values(trailers, "Renamed")
    if not claims:
        return []
    from flowgit.changes import RENAMED

    made = {(e.old_name, e.name) for e in events if e.kind == RENAMED}
    problems = []
    for value in claims:
        parts = RENAME_ARROW_RE.split(value.strip(), maxsplit=1)
        if len(parts) != 2 or not all(part and len(part.split()) == 1 for part in parts):
            problems.append(f"trailer `Renamed: {value.strip()}` does not read as `old_name -> new_name`")
        elif (parts[0], parts[1]) not in made:
            problems.append(f"trailer `Renamed: {parts[0]} -> {parts[1]}` but the change does not rename "
                            f"`{parts[0]}` to `{parts[1]}`")
    return problems


# The level step a trailer gives right after the name (`1x->2x`, `2x → 3x`, a bare `3x`), read as the pattern
# grammar reads a level; numbers elsewhere in its words (`p99 10x lower`) are prose, not levels
_LEVEL_STEP_RE = re.compile(r"\s*(\d{1,3})\s*[xX\u00d7](?:\s*(?:->|\u2192)\s*(\d{1,3})\s*[xX\u00d7])?(?!\w)")


def _detail_mismatches(trailers: list[tuple[str, str]], events, by_key: dict[str, str],
                       raised: tuple[str, str]) -> list[str]:
    """What a ``Graduated:``/``Incremented:`` trailer says beyond the name, held to the change: the level
    step it gives after the name must be the step the change makes, and its ``[evidence: …]`` the ids the
    pattern's line cites (one list: a second would put ids on record that no rule compared).

    ``git log --format=%(trailers)`` reports these words as the record of what
    earned a level; a trailer naming ids the change does not cite would put
    evidence on record that no rule ever judged. A trailer without a step or
    an evidence list says nothing more, and is held to its name alone.
    """
    from flowgit.continuity.patterns import EVIDENCE_ID_RE, EVIDENCE_VALUE_RE

    found = {(e.kind, e.name): e for e in events}
    problems: list[str] = []
    for key, value in trailers:
        kind = by_key.get(key.lower())
        words = value.split()
        event = found.get((kind, words[0])) if kind in raised and words else None
        if event is None:
            continue  # a name the change does not show: reported by name
        rest = value[value.find(words[0]) + len(words[0]):]
        lists = EVIDENCE_VALUE_RE.findall(rest)
        if len(lists) > 1:
            problems.append(f"trailer `{key}: {words[0]}` gives {len(lists)} evidence lists: give one, the ids "
                            "the pattern's line cites")
        elif not lists and "evidence" in rest.lower():
            problems.append(f"trailer `{key}: {value}` names evidence, but not as `[evidence: ep-…, …]`: "
                            "the change's evidence cannot be compared with it")
        elif lists:
            claimed, cited = set(EVIDENCE_ID_RE.findall(lists[0])), set(event.evidence)
            if claimed != cited:
                problems.append(f"trailer `{key}: {words[0]}` lists evidence "
                                f"{', '.join(sorted(claimed)) or '(none)'} but the change cites "
                                f"{', '.join(sorted(cited)) or 'none'}")
        step = _LEVEL_STEP_RE.match(rest)
        levels = {int(n) for n in step.groups() if n} if step else set()
        reversed_step = bool(step and step.group(2)) and event.old_level is not None and \
            (int(step.group(1)), int(step.group(2))) != (event.old_level, event.level)  # `2x->1x` for a raise
        if reversed_step or levels - {n for n in (event.old_level, event.level) if n is not None}:
            shown = f"{event.old_level}x->{event.level}x" if event.old_level is not None else f"{event.level}x"
            problems.append(f"trailer `{key}: {value}` gives level(s) {', '.join(f'{n}x' for n in sorted(levels))}"
                            f" but the change takes `{words[0]}` {shown}")
    return problems


def episode_ids(readings: list[list[tuple[str, str]]]) -> list[str]:
    """The episode ids ``Episodes:`` trailers name, over every reading of the message, in order, once each."""
    return list(dict.fromkeys(i.strip() for t in readings for v in values(t, "Episodes") for i in v.split(",")
                              if i.strip()))


def episode_mismatches(ids: list[str], store: bytes, appended: bytes) -> list[str]:
    """Where ``Episodes:`` claims disagree with the store: each id must be in the commit's ``store`` and among
    the episodes the commit itself ``appended`` (its trailer says this wrap recorded them)."""
    if not ids:
        return []
    from flowgit.episodes import lookup

    held, fresh = lookup(store, ids), lookup(appended, ids)
    problems = []
    for ident in ids:
        if ident not in held:
            problems.append(f"trailer `Episodes` names {ident}, which is not in the store the commit records")
        elif ident not in fresh:
            problems.append(f"trailer `Episodes` names {ident}, which was already committed before")
    return problems


_KINDS: dict[str, str] | None = None
# Trailers held to the change when given, not asked for when missing: wraps before `Lowered:` was written lowered
# patterns without one, and their history stays clean
CLAIMED_ONLY = frozenset({"Lowered"})


def _trailer_kinds() -> dict[str, str]:
    """Trailer key -> the event kind it claims (imported when first asked: the hook starts without it)."""
    global _KINDS
    if _KINDS is None:
        from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, INCREMENTED, LOWERED

        _KINDS = {"Graduated": GRADUATED, "Incremented": INCREMENTED, "Demoted": DEMOTED, "Archived": ARCHIVED,
                  "Lowered": LOWERED}
    return _KINDS
