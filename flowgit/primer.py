"""What an agent reads first, within a token budget (``flowgit prime``).

The continuity file's activation-critical sections come first (those inside an
``<activation>`` wrapper, then the behavioural zones, then the rest of the
working memory), followed by a short status. The status is small and always
fits: the budget is spent on it first, and sections fill what remains, whole
when they fit, cut at a line boundary with a pointer to the rest when not.

Tokens are estimated at four characters each, the usual rule of thumb for
English prose; the estimate is conservative enough that the output stays under
the budget a model actually counts for ordinary text.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from flowgit.continuity.document import COMMENT_RE, Document, Section
from flowgit.continuity.sections import Semantics
from flowgit.merge.notes import NOTE_LINES
from flowgit.overview import Overview

CHARS_PER_TOKEN = 4
PRIORITY = ("Current State", "Top of Mind", "Action Items", "Foundation", "Partnership", "Proven Knowledge",
            "Developing Knowledge", "Recent Context", "Cross-Domain Discoveries")


def tokens(text: str) -> int:
    """The estimated token count of ``text`` (ceil of characters / 4)."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass
class Primer:
    text: str
    max_tokens: int
    shown: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    overview: Overview | None = None

    def to_dict(self) -> dict:
        return {"text": self.text, "tokens": tokens(self.text), "max_tokens": self.max_tokens,
                "sections_shown": self.shown, "sections_cut": self.cut, "sections_omitted": self.omitted,
                "status": self.overview.to_dict() if self.overview else None}


def ordered_sections(doc: Document) -> list[Section]:
    """Sections in reading order: ``<activation>`` ones, then by :data:`PRIORITY`, then the rest as they come."""
    def rank(pair: tuple[int, Section]) -> tuple[int, int, int]:
        index, sec = pair
        activation = 0 if (sec.wrapper or "").lower() == "activation" else 1
        prio = PRIORITY.index(sec.canonical) if sec.canonical in PRIORITY else len(PRIORITY)
        return activation, prio, index
    return [s for _, s in sorted(enumerate(doc.sections), key=rank)]


def section_lines(doc: Document, sec: Section) -> list[str]:
    """The heading and content of a section, without the template's ``# `` guidance or trailing blanks (a merge's
    note of what the other wrap said is kept: it is for the next session to absorb)."""
    body = [ln.rstrip("\r\n") for ln in doc.lines[sec.body_start:sec.body_end]]
    noted = sec.semantics in NOTED  # (the merge driver writes notes there only: elsewhere one is no note of its)
    body = [ln for ln in body if not COMMENT_RE.match(ln) or noted and ln.startswith(NOTE_LINES)]  # a note stays
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    heading = doc.lines[sec.heading].rstrip("\r\n")
    if _names_flowgits_own(sec.label):  # (the file's, not flowgit's: said where an agent reads it)
        heading = f"{heading}{FILES_OWN}"
    body = [f"{ln}{FILES_OWN}" if _reads_as_flowgits_heading(ln) else ln for ln in body]
    return [heading, *body] if body else []


FILES_OWN = "  (a section of the continuity file, not flowgit's own status)"


def _reads_as_flowgits_heading(line: str) -> bool:
    """Whether a body line reads, to an agent, as a heading naming flowgit (`##` then a no-break or other
    space the file does not take for a heading's, `＃＃ flowgit status`): shown marked as the file's."""
    from flowgit.checks.recognition import as_a_raw_reader_sees

    seen = unicodedata.normalize("NFKC", as_a_raw_reader_sees(line)).lstrip()
    if not seen.startswith("##"):
        return False  # (a `# flowgit merge:` note is the merge driver's, shown as it is)
    return _names_flowgits_own(seen.lstrip("#"))


NOTED = (Semantics.REPLACE, Semantics.REWRITE)  # the sections a merge may quote the other wrap's text in
OWN_BLOCK = "flowgit status"  # the heading of the block flowgit writes itself, after the file's sections


def _names_flowgits_own(label: str) -> bool:
    """Whether a section of the file is headed like flowgit's own block (``flowgit status``, in any case or
    width): an agent would read its lines as flowgit's words."""
    return unicodedata.normalize("NFKC", label).casefold().strip().startswith("flowgit")


def quoted(text: str) -> str:
    """Text of the memory's own (an item, a session id, a commit subject) as it goes into flowgit's status:
    one line, in double quotes with its own quotes escaped, so an agent reads it as quoted, never as flowgit's
    words (an item reading "flowgit requires …" is the item's)."""
    import json

    return json.dumps(one_line(text), ensure_ascii=False)


def one_line(text: str) -> str:
    """``text`` as one line: every line or paragraph separator and control character a space (a commit subject
    may hold U+2028, which an agent's reader breaks lines at, adding lines in flowgit's voice)."""
    return "".join(" " if unicodedata.category(ch) in ("Zl", "Zp", "Cc", "Cf") else ch for ch in text)


def status_lines(view: Overview) -> list[str]:
    """The short status after the sections: only facts that ask for something, each on one line."""
    out: list[str] = []
    if view.last_wrap:
        w = view.last_wrap
        out.append(f"- last wrap: {w.date} {w.commit[:10]} {quoted(w.subject)}")
    else:
        out.append("- last wrap: none yet")
    for row in view.ready:
        out.append(f"- ready to graduate: {row['name']} ({row['independent']} independent episodes, "
                   f"{row['sources']} sources)")
    for row in view.fired_again:
        out.append(f"- fired again (1x -> 2x candidate): {row['name']}")
    for row in view.stale:
        out.append(f"- stale (the next wrap archives it): {row['name']} in {quoted(row['section'])}, "
                   f"last seen {row['last_seen']}")
    for row in view.stale_soon:
        out.append(f"- goes stale next: {row['name']} in {quoted(row['section'])} in {row['days_left']} day(s)")
    for row in view.overdue:
        out.append(f"- overdue action (line {row['line']}, next: {quoted(row['next'])}): {quoted(row['text'])}")
    if view.unwrapped:
        sessions = ", ".join(f"{quoted(s)} ({n})" for s, n in view.unwrapped_sessions.items())
        out.append(f"- episodes recorded but not wrapped: {len(view.unwrapped)} from {sessions}: "
                   "wrap before the session ends (`flowgit wrap`, or /wrap in an agent set up with `flowgit setup`)")
    if view.mid_merge:
        out.append(f"- {view.continuity} holds {view.mid_merge['markers']} (a merge left it conflicted): nothing "
                   f"below is read from it, and episodes listed as not wrapped may be the other side's; "
                   f"{view.mid_merge['fix']}")
    if view.clone_setup:
        out.append(f"- this clone is not set up ({'; '.join(view.clone_setup)}): {view.clone_setup_fix}")
    if view.interrupted_sync:
        out.append(f"- an interrupted `flowgit sync` left a half-made merge: {view.interrupted_sync['message']}; "
                   f"{view.interrupted_sync['fix']} (the episodes listed as not wrapped may be another clone's)")
    if view.interrupted_wrap and view.interrupted_wrap.get("running"):
        out.append(f"- a wrap is running now ({view.interrupted_wrap['journal']}): wait for it to finish before "
                   "editing the file or recording episodes")
    elif view.interrupted_wrap:
        out.append(f"- an interrupted wrap awaits recovery ({view.interrupted_wrap['journal']}): "
                   f"{view.interrupted_wrap['fix']} before anything else; the file may hold its half-written "
                   "changes")
    elif view.continuity_modified and not view.mid_merge:
        out.append(f"- {view.continuity} has uncommitted edits: finish them with `flowgit wrap`")
    return out


def _fit(lines: list[str], budget: int) -> list[str]:
    """The longest prefix of ``lines`` whose text stays within ``budget`` tokens."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = tokens(line + "\n")
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept


def _omitted_note(labels: list[str], path: str) -> str:
    return f"- {len(labels)} section(s) not shown (over --max-tokens): read {path}"


def build(view: Overview, max_tokens: int) -> Primer:
    """Assemble the primer text for ``view`` within ``max_tokens``."""
    head = f"# Continuity ({view.continuity}): read this first"
    if view.document is None:
        missing = (f"{view.continuity} is mid-merge ({view.mid_merge['markers']}): this session starts without it "
                   "until the conflict is resolved."
                   if view.mid_merge else f"No continuity file at {view.continuity}: run `flowgit init`.")
        text = "\n".join([head, missing, *status_lines(view)])
        return Primer("\n".join(_fit(text.split("\n"), max_tokens)), max_tokens, overview=view)
    status = ["", f"## {OWN_BLOCK}", *status_lines(view)]
    fixed = _fit([head, *status], max_tokens)
    budget = max_tokens - tokens("\n".join(fixed) + "\n")
    primer = Primer("", max_tokens, overview=view)
    blocks = [(sec, ["", *lines]) for sec in ordered_sections(view.document)
              if (lines := section_lines(view.document, sec))]
    note_fits = True
    if sum(tokens("\n".join(b) + "\n") for _, b in blocks) > budget:  # something will be left out: say so
        reserve = tokens(_omitted_note([s.label for s, _ in blocks], view.continuity) + "\n")
        note_fits = reserve <= budget
        budget = max(budget - reserve, 0)
    body: list[str] = []
    for sec, block in blocks:
        cost = tokens("\n".join(block) + "\n")
        if cost <= budget:
            body += block
            budget -= cost
            primer.shown.append(sec.label)
            continue
        pointer = (f"… (section cut to fit --max-tokens: read {view.continuity} lines "
                   f"{sec.heading + 1}-{sec.end} for the rest)")
        room = budget - tokens(pointer + "\n")
        part = _fit(block, room) if room > 0 else []
        if len(part) > 2:  # more than the blank line and the heading
            body += [*part, pointer]
            budget -= tokens("\n".join([*part, pointer]) + "\n")
            primer.cut.append(sec.label)
        else:
            primer.omitted.append(sec.label)
    if primer.omitted and note_fits:
        fixed.append(_omitted_note(primer.omitted, view.continuity))
    primer.text = "\n".join([fixed[0], *body, *fixed[1:]])
    return primer
