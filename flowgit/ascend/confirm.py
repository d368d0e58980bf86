"""Confirm: every claim shown as fact is checked against its own deposit's authoritative record.

The deposit files are an index, lossy by design. A claim the presentation
would state as fact — where a line began, when a term was first used, a quoted
decision or utterance, a date — is checked against the transcript of the
session it comes from (or the commit's blob, or the store): *confirmed*,
*corrected* (the record's value is shown instead) or *unattested* (shown as
provisional, never as fact).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence
from functools import lru_cache

from flowgit.ascend import surrogates
from flowgit.ascend.assertion import denied, doubted, taken_back, unasserted
from flowgit.ascend.model import CHAIN, CLUSTER, CONCEPT, Claim, Deposit, Unit
from flowgit.words import content_words

FUZZY = 0.75


@dataclass(frozen=True)
class Turn:
    ts: str
    role: str      # "person" | "assistant" | "note" (text an agent wrote down: a wrap commit, an episode)
    text: str
    cwd: str = ""  # the working directory the line was written in (a transcript's lines record it)


def dirs_of(turns: Sequence[Turn] | None) -> tuple[str, ...]:
    """The working directories a record's turns were written in, first first: where the session really ran,
    which its index may misname (a slug reads `/home/dev-p` and `/home/dev/p` alike)."""
    return tuple(dict.fromkeys(t.cwd for t in turns or () if t.cwd))


def _blocks_text(content) -> tuple[str, bool]:
    """(text, is_tool_result) of a message's content."""
    if isinstance(content, str):
        return content, False
    if isinstance(content, list):
        texts, tool = [], False
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result":
                    tool = True
        return "\n".join(texts), tool and not texts
    return "", False


RECORD_LIMIT = 32 << 20   # a transcript read for confirmation: bounded like every other read
TURN_LIMIT = 4 << 20      # one line of it: longer is a paste or a tool's output, passed over unread


def read_transcript(path: str, root: str | None = None, sid: str | None = None) -> tuple[Turn, ...] | None:
    """The person's and assistant's text turns of session ``sid``'s transcript; None when it is missing or refused
    (:func:`read_record` also says why it was refused)."""
    return read_record(path, root, sid)[0]


@lru_cache(maxsize=256)
def read_record(path: str, root: str | None = None,
                sid: str | None = None) -> tuple[tuple[Turn, ...] | None, tuple[str, ...]]:
    """(turns, refusals): the person's and assistant's text turns of session ``sid``'s transcript (None when it
    is missing or refused), and the scope notes of a refusal (a FIFO, a link leading out of the tree).

    Streamed line by line, at most :data:`RECORD_LIMIT` bytes; inside ``root``
    (the deposit tree) only regular files are read and links must stay inside.
    A person's turn is what the transcripts partition reads as one (no command
    markup such as ``<command-name>/model</command-name>``, no caveat or
    reminder): a session begun with a slash command began with the request that
    followed it. Lines of another session (``sessionId``: carried over from the
    one this session resumes) are not this session's record: they would date it
    and begin it with its predecessor.
    """
    from flowgit.ascend.safeio import Tree, bounded_lines

    tree = Tree(root or os.path.dirname(path))
    fh = tree.open(path)
    if fh is None:
        return None, tuple(tree.refused)
    turns: list[Turn] = []
    read = 0
    with fh:
        for raw, size in bounded_lines(fh, TURN_LIMIT, RECORD_LIMIT):
            read += size
            if read > RECORD_LIMIT:
                break
            if raw is None:
                continue  # (a line longer than any turn worth reading: a paste, a tool's output)
            try:
                obj = surrogates.loads(raw)
            except ValueError:
                continue
            turn = _turn(obj, sid) if isinstance(obj, dict) else None
            if turn is not None:
                turns.append(turn)
    return tuple(turns), ()


def _turn(obj: dict, sid: str | None) -> Turn | None:
    """One transcript line as a turn of session ``sid``, or None (another session's, meta, a tool's, markup)."""
    from flowgit.ascend.formats import as_path
    from flowgit.ascend.transcripts import main_line, person_text

    other = obj.get("sessionId")
    if (sid and isinstance(other, str) and other != sid) or not main_line(obj):
        return None   # another session's line, or a sub-agent's (its prompt is the agent's, not the person's)
    cwd = as_path(obj.get("cwd")) or ""
    if obj.get("type") == "user":
        text = person_text(obj)
        return Turn(str(obj.get("timestamp", "")), "person", text, cwd) if text else None
    if obj.get("type") != "assistant" or obj.get("isMeta"):
        return None
    message = obj.get("message") or {}
    text, tool = _blocks_text(message.get("content") if isinstance(message, dict) else None)
    if tool or not text.strip():
        return None
    return Turn(str(obj.get("timestamp", "")), "assistant", text, cwd)


def _norm(text: str) -> str:
    """Text to compare: lower case, spacing collapsed, end punctuation (and an index's "…" cut mark) dropped."""
    return " ".join(text.lower().split()).strip(" .!?\"'“”…")


def _cut(text: str, limit: int = 300) -> str:
    """A record's text as shown: its own words, cut to ``limit`` characters."""
    return text.strip()[:limit]


def _flat(text: str) -> str:
    """A turn's text to search a quote in: lower case, spacing collapsed, its punctuation kept (a question
    mark says the words were asked, not said)."""
    return " ".join(text.lower().split())


def _negated_before(said: str, at: int, quoted: str) -> bool:
    """Whether the sentence ``said`` holds before offset ``at`` turns the quote around: a negation the quote
    itself does not carry ("please do not delete the production database" does not say "delete the
    production database")."""
    from flowgit.checks.claims import NOT, claim_words

    start = max(said.rfind(mark, 0, at) for mark in (". ", "! ", "? ", "\n")) + 1
    return claim_words(said[start:at])[NOT] > 0 and claim_words(quoted)[NOT] == 0


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def find_words(said: str, target: str, start: int = 0) -> int:
    """Where ``target`` occurs in ``said`` as whole words, from ``start``, or -1: "ship it" is not in
    "the relationship it has", nor "use postgres" in "reuse postgresql"."""
    at = said.find(target, start) if target else -1
    while at != -1:
        end = at + len(target)
        before = at > 0 and _word(target[0]) and _word(said[at - 1])
        after = end < len(said) and _word(target[-1]) and _word(said[end])
        if not (before or after):
            return at
        at = said.find(target, at + 1)
    return -1


SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
OPTION_AFTER = re.compile(r"\s*,?\s*(?:or|vs\.?|versus)\b")
OPTION_BEFORE = re.compile(r"\b(?:whether(?: or not)?(?: to)?|either|options?:?|instead of)\s*$")


def _asked(said: str, end: int) -> bool:
    """Whether the sentence that goes on at ``end`` is a question ("should we drop redis? no - keep it")."""
    stop = SENTENCE_END.search(said, end)
    return stop is not None and said[stop.start()] == "?"


def _asserted(said: str, at: int, target: str, quoted: str) -> bool:
    """Whether the quote found at ``at`` is said, not negated, asked or weighed as one option among others.

    A decision is confirmed only by words that make it: "should we drop redis? no", "we decided not to
    drop redis" and "options: drop redis or keep it" hold the words and say otherwise (or nothing yet).
    """
    end = at + len(target)
    if _negated_before(said, at, target):
        return False
    if _asked(said, end) and not quoted.rstrip().endswith("?"):
        return False
    return not (OPTION_AFTER.match(said, end) or OPTION_BEFORE.search(said, max(0, at - 40), at))


# words that take a proposal up ("ok, do it"); a bare "ok" or "thanks" only acknowledges it
AGREED_RE = re.compile(r"\b(?:yes|yep|yeah|agreed|go ahead|do it|let'?s do (?:it|that|this)|lgtm|approved|"
                       r"sounds good|makes sense|ship it)\b", re.I)


def _their_words(turns: Sequence[Turn], kind: str) -> list[Turn]:
    """The turns that may confirm a quote of ``kind``: the person's, and for a decision an assistant's turn the
    person's next turn agrees to. A record agents wrote (a wrap commit, episodes) confirms only that an agent
    wrote the words down, never that the person said them (:attr:`Claim.said_by`)."""
    if all(t.role == "note" for t in turns):
        return list(turns)
    if kind != "decision":
        return [t for t in turns if t.role == "person"]
    return [t for i, t in enumerate(turns) if t.role == "person" or (t.role == "assistant" and _agreed(turns, i))]


def _agreed(turns: Sequence[Turn], at: int) -> bool:
    """Whether the person's next turn after ``turns[at]`` agrees to it: its first sentence takes it up, asks
    nothing and negates nothing ("ok, do it"; not "ok, thanks", "no. we keep redis" nor "ignore that, it's
    spam")."""
    from flowgit.checks.claims import NOT, claim_words

    reply = next((t for t in turns[at + 1:] if t.role == "person"), None)
    first = _sentences(reply.text)[0] if reply is not None and _sentences(reply.text) else ""
    return bool(AGREED_RE.search(first)) and not first.endswith("?") and claim_words(first)[NOT] == 0


def _said_in(pool: Sequence[Turn], target: str, quoted: str) -> tuple[Turn | None, bool]:
    """(the first turn of ``pool`` that says ``target``, whether some turn holds its words but only asks,
    negates or weighs them)."""
    doubted = False
    for t in pool:
        said = _flat(t.text)
        at = find_words(said, target)
        while at != -1:
            if _asserted(said, at, target, quoted):
                return t, doubted
            doubted, at = True, find_words(said, target, at + 1)
    return None, doubted


RANK = {"unattested": 0, "corrected": 1, "confirmed": 2}


class Confirmer:
    """Checks claims, each against the record of the deposit it came from.

    A session seen in several partitions is one node (:mod:`merge`); each claim
    is checked against the own record of each of its deposits that holds the
    claim (the face's first), never against their records pooled: a
    continuity file's blob holds every earlier session's text, and an
    episode is an agent's note, not what the person said.
    """

    def __init__(self, record_of) -> None:
        self.record_of = record_of  # one deposit's own record: Deposit -> tuple[Turn, ...] | None

    def _by_parts(self, d: Deposit, holds, check) -> Claim:
        """``check(d, record)`` against the own record of ``d`` and of each folded deposit that ``holds`` the
        claim; the best verdict wins (the first of equals: the face's)."""
        tried = [check(d, self.record_of(p)) for p in d.parts if p is d or holds(p)]
        return max(tried, key=lambda c: RANK[c.verdict])

    def origin(self, d: Deposit) -> Claim:
        return self._by_parts(d, lambda p: p.initial_request == d.initial_request, _origin)

    def date(self, d: Deposit) -> Claim:
        return self._by_parts(d, lambda p: p.date == d.date, _date)

    def quote(self, d: Deposit, text: str, kind: str) -> Claim:
        """A quoted statement or decision, confirmed only by the people's own words.

        A statement is the person's turns; a decision is the person's turns, or
        an assistant's proposal the person's next turn agrees to ("ok, do it").
        Words only the assistant said — a proposal turned down, a tool result's
        injected text it repeated — are not anyone's decision.
        """
        field = "decisions" if kind == "decision" else "key_utterances"
        return self._by_parts(d, lambda p: text in getattr(p, field), lambda n, turns: _quote(n, turns, text, kind))

    def standing(self, d: Deposit) -> Claim:
        return self._by_parts(d, lambda p: (p.outcome or p.topic) == (d.outcome or d.topic), _standing)

    def first_use(self, d: Deposit, term: str, others: Sequence[Deposit] = ()) -> Claim:
        """Where the term was first used: the node's own record says when; an earlier member of the unit whose
        record uses it first (an index may leave out what a record holds) corrects it (Phase 1 §5)."""
        low = term.lower()
        return self._by_parts(d, lambda p: any(c.token.lower() == low for c in p.coined),
                              lambda n, turns: self._first_use(n, turns, term, others))

    def _first_use(self, d: Deposit, turns, term: str, others: Sequence[Deposit]) -> Claim:
        claim = Claim(d.key, "first_use", f"where “{term}” was coined", d.date or "", session=d.sid)
        if turns is None:
            return _unattested(claim, "no session record to check against")
        hit = _first_hit(turns, term)
        if hit is None:
            return _unattested(claim, f"“{term}” does not occur in this session's record")
        day = hit.ts[:10] or (d.date or "")
        # every other member's record is read, whatever its index dates it: an index may date a session later
        # than its record does, and the record is what says when the term was first used
        uses = [(t.ts[:10] or other.date or day, other.sid) for other in others if other.key != d.key
                for t in self._hits(other, term)]
        earlier, where = min(uses, default=(day, ""))
        if earlier < day:
            return _settle(claim, "corrected", earlier, f"first used on {earlier}, in session {where} of "
                                                        "this unit, which the coinage index leaves out")
        if d.date and day and day != d.date:
            return _settle(claim, "corrected", day, f"first used on {day} in the record")
        return _settle(claim, "confirmed", day, f"first used on {day} ({hit.role})")

    def _hits(self, d: Deposit, term: str) -> list[Turn]:
        """The first turn using ``term`` in the own record of each of the session's deposits."""
        found = (_first_hit(self.record_of(p) or (), term) for p in d.parts)
        return [t for t in found if t is not None]


def _first_hit(turns, term: str) -> Turn | None:
    low = term.lower()
    return next((t for t in turns if find_words(t.text.lower(), low) != -1), None)


def _opening(turns: Sequence[Turn]) -> Turn | None:
    """What a record began with: the person's first turn; in a record agents wrote (a wrap commit, episodes),
    its first note."""
    return next((t for t in turns if t.role == "person"), None) or \
        next((t for t in turns if t.role == "note"), None)


def _origin(d: Deposit, turns) -> Claim:
    claim = Claim(d.key, "origin", "where it began", d.initial_request, session=d.sid)
    first = _opening(turns or ())
    if first is None:
        return _unattested(claim, "no session record to check against")
    claimed, said = _norm(d.initial_request), _norm(first.text)
    if claimed and said.startswith(claimed):   # every word of it, in the record's order: the index may cut
        return _settle(claim, "confirmed", _cut(first.text),   # the request short, never add to it (a tail
                       "matches the first request in the session record")  # the person never said)
    return _settle(claim, "corrected", _cut(first.text), "the session record's first request differs from the index")


def _date(d: Deposit, turns) -> Claim:
    claim = Claim(d.key, "date", "when the session took place", d.date or "", session=d.sid)
    stamps = [t.ts[:10] for t in turns or () if re.match(r"\d{4}-\d{2}-\d{2}", t.ts)]
    if not stamps:
        return _unattested(claim, "no dated turn in the session record")
    if d.date == stamps[0]:
        return _settle(claim, "confirmed", d.date, "the record starts that day")
    return _settle(claim, "corrected", stamps[0], f"the record starts on {stamps[0]}, not {d.date or 'an unknown day'}")


def _quote(d: Deposit, turns, text: str, kind: str) -> Claim:
    """One quote against one record (see :meth:`Confirmer.quote`)."""
    claim = Claim(d.key, kind, "a quoted " + ("decision" if kind == "decision" else "statement"), text, session=d.sid)
    if turns is None:
        return _unattested(claim, "no session record to check against")
    pool = _their_words(turns, kind)
    target = _norm(text)
    found, doubted = _said_in(pool, target, text)
    if found is not None:
        how = {"assistant": "agreed to on", "note": "written down by an agent on"}.get(found.role, "said on")
        claim.said_by = _speaker(found)
        return _settle(claim, "confirmed", text, f"{how} {found.ts[:10] or 'record'}")
    best, best_ratio, by = "", 0.0, None
    for t in pool:
        for sentence in _sentences(t.text):
            if sentence.endswith("?") and not text.rstrip().endswith("?"):
                continue   # a question is no wording of what was said
            ratio = SequenceMatcher(None, target, _norm(sentence)).ratio()
            if ratio > best_ratio:
                best, best_ratio, by = sentence.strip(), ratio, t
    if best_ratio >= FUZZY and by is not None:
        claim.said_by = _speaker(by)
        return _settle(claim, "corrected", best, "the record words it differently")
    if doubted:
        return _unattested(claim, "the session record only asks it, negates it or weighs it as an option")
    if _said_in([t for t in turns if t not in pool], target, text)[0] is not None:
        return _unattested(claim, "only the assistant said it; the person did not agree to it")
    return _unattested(claim, "not found in the session record")


def _speaker(turn: Turn) -> str:
    """Whose words a confirming turn holds: the person's (or a proposal they agreed to), or an agent's note."""
    return "agent" if turn.role == "note" else "person"


def _standing(d: Deposit, turns) -> Claim:
    """Where the session ended, checked sentence by sentence against its record's last turns.

    The latest sentence about the outcome (half its words) settles it: one
    that holds all its words, said the same way, confirms it; one that holds
    most of them corrects it to the record's own sentence (a word that
    differs may be the one that changes the fact: "in staging", not "in
    production"); one that negates what the outcome does not (or the other way round)
    corrects it ("we decided not to drop redis" holds every word of
    "we decided to drop redis"). Words scattered over several sentences
    confirm nothing: "failed its dry run. Nothing was shipped. Production
    stays on the old job" holds most words of "job shipped to production".
    A question settles nothing, nor does the opening request ("ship the job"),
    nor a sentence that says its words are not so: one that calls them false,
    wishes, pretends or reports them, or one the next sentence takes back
    (:mod:`flowgit.ascend.assertion`).
    """
    claim = Claim(d.key, "standing", "where it last stood", d.outcome or d.topic, session=d.sid)
    if not turns or not claim.value:
        return _unattested(claim, "no session record to check against" if not turns else "no outcome recorded")
    opening = turns[0] if turns[0].role == "person" else None   # what was asked for, not where it went
    said = [s for t in turns[-6:] if t is not opening for s in _sentences(t.text) if not s.endswith("?")]
    at, verdict = next(((i, v) for i in reversed(range(len(said))) if (v := _carries(claim.value, said[i]))),
                       (-1, None))
    return _read_ending(claim, verdict, *((said[at], said[at + 1:]) if verdict else ("", [])))


def _read_ending(claim: Claim, verdict: str | None, sentence: str, after: Sequence[str]) -> Claim:
    """The verdict on where a session ended, from the latest sentence that holds it and those said after it:
    a sentence that calls its words false, only hopes, pretends or reports them, or is taken back by the next
    one ("No, it did not") never confirms them."""
    says_it = verdict in ("same", "changed")
    if says_it and denied(sentence):   # "the blog claimed it shipped, which is false"
        return _settle(claim, "corrected", sentence, "the end of the session record says otherwise")
    if verdict and unasserted(sentence):
        return _unattested(claim, "the end of the session record only asks, hopes for, pretends or reports "
                                  f"this, or makes a condition of it: “{_cut(sentence)}”")
    if verdict == "contrary":
        return _settle(claim, "corrected", sentence, "the end of the session record says otherwise")
    if says_it and (back := taken_back(after)):   # "it shipped." then "No, it did not."
        return _settle(claim, "corrected", back, f"the session record says “{_cut(sentence)}”, then takes it back")
    if says_it and (doubt := doubted(after)):   # "it shipped." then "We rolled it back an hour later."
        return _unattested(claim, f"the session record says “{_cut(sentence)}”, then may take it back: "
                                  f"“{_cut(doubt)}”")
    if verdict == "same":
        return _settle(claim, "confirmed", claim.value, "the end of the session record says as much")
    if verdict == "changed":  # (most of it, another word where one differs: "in staging", not "in production")
        return _settle(claim, "corrected", sentence, "the end of the session record says it with other words")
    return _unattested(claim, "the end of the session record does not say this")


CARRIES = 0.75     # a sentence that says an outcome holds this share of its words
CONTRADICTS = 0.5  # one that holds this share and negates what the outcome does not turns it around


def _carries(outcome: str, sentence: str) -> str | None:
    """Whether ``sentence`` is about ``outcome`` and how: says all of it ("same"), most of it ("changed"), says
    it turned around ("contrary"), holds only some of it ("part"); None when it is about something else."""
    from flowgit.checks.claims import NOT, claim_words

    words = content_words(outcome)
    if not words:
        return None
    share = len(words & content_words(sentence)) / len(words)
    if share < CONTRADICTS:
        return None
    if (claim_words(sentence)[NOT] > 0) != (claim_words(outcome)[NOT] > 0):
        return "contrary"
    if share == 1:
        return "same"
    return "changed" if share >= CARRIES else "part"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _settle(claim: Claim, verdict: str, shown: str, detail: str) -> Claim:
    claim.verdict, claim.shown, claim.detail = verdict, shown, detail
    return claim


def _unattested(claim: Claim, detail: str) -> Claim:
    claim.verdict, claim.shown, claim.detail = "unattested", claim.value, detail
    return claim


def claims_for(unit: Unit, confirmer: Confirmer, recalled: Sequence[str] = ()) -> list[Claim]:
    """The claims the unit's presentation surfaces, each checked against its own deposit's record."""
    out: list[Claim] = []
    members = unit.members
    for d in members:
        out.append(confirmer.date(d))
    timeline = unit.timeline   # where a line began and arrived: never a session with no place in time
    out.extend(confirmer.origin(d) for d in members)   # every member's first request is surfaced (--json)
    if unit.type == CHAIN:
        out.append(confirmer.standing(timeline[-1]))
    elif unit.type == CLUSTER:   # each fragment is shown with where it began and what it came to
        out.extend(confirmer.standing(d) for d in members if d.outcome or d is timeline[-1])
    elif unit.type == CONCEPT and unit.node is not None:
        out.append(confirmer.first_use(unit.node, unit.label, members))
    words = set(recalled)
    focused = bool(words) and any(words & content_words(said) for d in members
                                  for said in (*d.key_utterances, *d.decisions))
    for d in members:
        for said, kind in ((d.key_utterances, "utterance"), (d.decisions, "decision")):
            quoted = _on_the_recall(said, words, focused)
            if quoted is not None:
                out.append(confirmer.quote(d, quoted, kind))
    return out


def _on_the_recall(said: Sequence[str], words: set[str], focused: bool) -> str | None:
    """What to quote of a session: its first line that says a word of the recall, when any session of the unit
    has one (a session that worked on two things is quoted on the one asked about, or not at all); else its
    first line."""
    if not said:
        return None
    if not focused:
        return said[0]
    return next((s for s in said if words & content_words(s)), None)
