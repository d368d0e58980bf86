"""Presentation in plain words, shaped by the unit's type, every deposit with its source and resume command.

No protocol vocabulary reaches the reader. Each claim is shown according to
its verdict: confirmed as fact, corrected with the record's value, unattested
marked "not checked" (provisional).
"""

from __future__ import annotations

from typing import Callable

from flowgit.ascend.model import CHAIN, CLUSTER, CONCEPT, Claim, Deposit, Unit, record_differs

Short = Callable[[str], str]


def _eight(sid: str) -> str:
    return sid[:8]

CAVEAT = ("This describes a past trajectory assembled from session records; check it against the current "
          "state before acting on it.")


def find_claim(claims: list[Claim], key: str, kind: str) -> Claim | None:
    """The claim of ``kind`` about deposit ``key``, if one was checked."""
    return next((c for c in claims if c.deposit == key and c.kind == kind), None)


def shown(claim: Claim | None, fallback: str = "") -> str:
    """A claim as the reader sees it: settled, corrected, or marked provisional."""
    if claim is None:
        return fallback
    text = _short(claim.shown or fallback)
    if claim.verdict == "confirmed":
        return text
    if claim.verdict == "corrected":
        return f"{text} (corrected from the session record; the index said: {_short(claim.value)})"
    return f"{text} (not confirmed by the session record: provisional)" if text else ""


def marked(claim: Claim | None, fallback: str = "") -> str:
    """A claim as a label too short for :func:`shown`'s words: led by what the record made of it
    (``provisional:``, ``corrected:``), so a label cut short still says it; a confirmed claim bare."""
    if claim is None:
        return _short(fallback)
    text = _short(claim.shown or fallback)
    return text if claim.verdict == "confirmed" else \
        f"{'corrected' if claim.verdict == 'corrected' else 'provisional'}: {text}"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_date(d: Deposit, claims: list[Claim]) -> str | None:
    """The session's date as its own record has it (a corrected date replaces the index's everywhere)."""
    c = find_claim(claims, d.key, "date")
    if c is not None and c.verdict == "corrected" and c.shown:
        return c.shown
    return d.date


PROVISIONAL_DATE = "(provisional: the session record does not date it)"


def when(d: Deposit, claims: list[Claim]) -> str:
    """A session's date as shown: the record's, saying so when it corrects the index's, and marked provisional
    where the record does not attest it (an index date is never asserted as fact)."""
    c = find_claim(claims, d.key, "date")
    if c is not None and c.verdict == "corrected":
        return f"{c.shown} (from the session record; the index said {d.date or 'nothing'})"
    if d.date and c is not None and c.verdict == "unattested":
        return f"{d.date} {PROVISIONAL_DATE}"
    return d.date or "undated"


PLACES = {"claude": "project {slug}", "transcripts": "project {slug} (transcript)",
          "git": "continuity file history", "episodes": "episodic store"}
NAMED = {**PLACES, "git": "continuity file history of {name}"}  # where several repositories may be read


def _where(d: Deposit, *, named: bool = False) -> str:
    """Where a node's records are, in words (``continuity file history + episodic store``); ``named`` adds
    which repository a history is of (a source list names each place)."""
    return " + ".join(dict.fromkeys(_place(p.partition, p.slug, named=named) for p in d.parts))


def _place(partition: str, slug: str, *, named: bool = False) -> str:
    """One partition's place in words (``project -home-dev-pay``)."""
    return (NAMED if named else PLACES).get(partition, partition).format(slug=slug, name=slug.removeprefix("git:"))


def _line(d: Deposit, claims: list[Claim], text: str, short: Short = _eight) -> str:
    return f"  {when(d, claims)} · {_where(d)} · {short(d.sid)} — {text}"


def _fragment(d: Deposit, claims: list[Claim]) -> str:
    """A cluster's fragment: where it began and what it came to, each as its own record has it."""
    began = shown(find_claim(claims, d.key, "origin"), d.initial_request or d.topic)
    if not d.outcome:
        return f"began with: {began}"
    return f"began with: {began} — came to: {shown(find_claim(claims, d.key, 'standing'), _short(d.outcome, 100))}"


def narrative(unit: Unit, claims: list[Claim], short: Short = _eight) -> list[str]:
    m = unit.members
    out: list[str] = []
    line, last = unit.timeline, unit.timeline[-1]
    if unit.type == CHAIN:
        out.append(f"A line of work across {len(m)} sessions: {unit.label}")
        origin = find_claim(claims, line[0].key, "origin")
        out += ["", "Where it began", _line(line[0], claims, shown(origin, line[0].initial_request or line[0].topic),
                                            short)]
        if len(line) > 2:
            out += ["", "How it developed"] + [_line(d, claims, _short(d.topic or d.initial_request), short)
                                             for d in line[1:-1]]
        if len(line) > 1:
            standing = find_claim(claims, last.key, "standing")
            out += ["", "Where it arrived", _line(last, claims, shown(standing, last.topic), short)]
    elif unit.type == CLUSTER:
        out.append(f"Everything on one topic, in {len(m)} sessions: {unit.label}")
        out += ["", "The fragments"] + [_line(d, claims, _fragment(d, claims), short) for d in m]
        standing = find_claim(claims, last.key, "standing")
        out += ["", "Where the topic last stood", _line(last, claims, shown(standing, last.topic), short)]
    elif unit.type == CONCEPT:
        node = unit.node or m[0]
        out.append(f"The concept “{unit.label}”, named in earlier work")
        first = find_claim(claims, node.key, "first_use")
        coined = shown(first, node.date or "")
        out += ["", "Where it was coined", _line(node, claims, f"first used: {coined}" if coined else "coined here", short)]
        out += ["", "The sessions that shaped it"] + [_line(d, claims, _short(d.topic or d.initial_request), short)
                                                       for d in m if d is not node]
    return out + _undated(unit, claims, short) + quotations(claims, short)


def quotations(claims: list[Claim], short: Short = _eight) -> list[str]:
    """Quoted statements and decisions: the people's own words, then words agents wrote down (a wrap, an
    episode: confirmed as written, never as said), then those no record confirms (provisional)."""
    quoted = [c for c in claims if c.kind in ("utterance", "decision")]
    said = [c for c in quoted if c.verdict != "unattested" and c.said_by != "agent"]
    noted = [c for c in quoted if c.verdict != "unattested" and c.said_by == "agent"]
    provisional = [c for c in quoted if c.verdict == "unattested"]
    out: list[str] = []
    if said or provisional:
        out += ["", "In their own words"]
        out += [f"  “{_short(c.shown)}”" + (" (the record's wording)" if c.verdict == "corrected" else "")
                + f" — {short(c.session)}" for c in said]
        out += [f"  “{_short(c.value)}” — {short(c.session)} "
                f"({c.detail or 'not found in the session record'}: provisional)" for c in provisional]
    if noted:
        out += ["", "As agents wrote them down (not the people's own words)"]
        out += [f"  “{_short(c.shown)}” — {short(c.session)} ({c.detail})" for c in noted]
    return out


def _undated(unit: Unit, claims: list[Claim], short: Short) -> list[str]:
    """A line's sessions that neither the index nor the record dates: part of the line, but with no place in
    its time order, so never where it began or arrived."""
    if unit.type != CHAIN or len(unit.timeline) == len(unit.members):
        return []
    return ["", "When unknown (nothing dates these sessions, so they have no place in the order above)"] + [
        _line(d, claims, _short(d.topic or d.initial_request), short) for d in unit.members if d.key in unit.undated]


def connections(unit: Unit) -> list[str]:
    bases: dict[str, int] = {}
    for e in unit.edges:
        for basis in e.basis.split("; "):
            bases[basis] = bases.get(basis, 0) + 1
    lines = [f"  - {b}" + (f" ({n} times)" if n > 1 else "") for b, n in sorted(bases.items(), key=lambda x: -x[1])]
    return ["", "What connects them"] + (lines[:8] or ["  - (no direct connection recorded)"])


def sources(unit: Unit, claims: list[Claim] | None = None) -> list[str]:
    """Every session with where each of its records is, its date as the record has it, and the ways back in."""
    out = ["", "Sources, and how to go back into each session"]
    for i, d in enumerate(unit.members, 1):
        day = record_date(d, claims or []) or "undated"
        out.append(f"  {i}. {_where(d, named=True)} · {d.sid} · {day}")
        parts = list(dict.fromkeys((p.partition, p.slug, p.sid, p.date) for p in d.parts))
        if any((sid, date) != (d.sid, d.date) for _, _, sid, date in parts):  # one node of several deposits
            out += [f"     - {_place(part, slug, named=True)} · {sid} · {date or 'undated'}"
                    for part, slug, sid, date in parts]
        out += ways_back(d, "     ")
    return out


def ways_back(d: Deposit, indent: str) -> list[str]:
    """A session's resume commands as printed wherever one is offered, each with what the reader must know
    before running it: that the session's own record places it elsewhere than its index, that the command
    loads another tree's settings and hooks. No command: why not."""
    commands = d.resumes()
    if not commands:
        return [f"{indent}not resumable: {d.why_not_resumable()}"]
    warning = d.resume_warning()
    notes = [note for note in (record_differs(d), warning and f"WARNING: {warning}") if note]
    return [f"{indent}{line}" for line in notes + commands]


def not_visible(scope: dict) -> list[str]:
    """What the read could not see (a shallow clone's cut history): said with every answer, a single session's
    too, since an older session may be the one the recall means."""
    return [f"  not visible: {note}" for note in scope.get("shallow_history", [])]


def scope_lines(scope: dict) -> list[str]:
    parts = scope.get("partitions", {})
    reached = ", ".join(f"{k} ({v})" for k, v in sorted(parts.items())) or "none"
    out = ["", "Scope", f"  read {sum(parts.values())} deposit(s) in {len(parts)} partition(s): {reached}",
           f"  followed {scope.get('edges_followed', 0)} inferred connection(s)"]
    if scope.get("scanned"):
        out.append(f"  searched {scope['scanned']} transcript(s) for the recall's words and ids; read in full only "
                   "those it reached")
    out += not_visible(scope)
    out += _listed("not yet written", [f"{note} (noted, not an error)" for note in scope.get("broken_links", [])])
    out += _listed("left out", scope.get("refused", []))
    return out


SCOPE_SHOWN = 5   # notes of one kind the text lists; --json has them all


def _listed(kind: str, notes: list[str]) -> list[str]:
    """The first notes of one kind, then how many more there are: a note past the first few is never dropped
    without a word (one may say a whole project directory was skipped)."""
    out = [f"  {kind}: {note}" for note in notes[:SCOPE_SHOWN]]
    rest = len(notes) - SCOPE_SHOWN
    return out + ([f"  {kind}: and {rest} more (--json lists them under scope)"] if rest > 0 else [])


def present(unit: Unit, claims: list[Claim], scope: dict, short: Short = _eight) -> str:
    lines = narrative(unit, claims, short) + connections(unit) + sources(unit, claims) + scope_lines(scope)
    lines += ["", CAVEAT]
    return "\n".join(lines)
