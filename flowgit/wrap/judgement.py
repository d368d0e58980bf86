"""The protocol's judgement, beyond its syntax: what the wrap must notice, refuse or say out loud.

The seed (flow-session-wrap.md) asks for more than well-formed edits. A pattern
demoted for failing scrutiny does not come back on the same evidence (Step 5:
"the prior evidence chain doesn't survive"); a pattern that fired this session
is not stale; a demotion stands on a contradicting episode that is about the
pattern and independent of its own chain; what derives from a demoted pattern
is marked; State and Top of Mind are replaced every wrap; and a wrap with no
episodes skipped Step 1. Each check is a small pure function here, shared by
``flowgit wrap`` and ``flowgit candidates``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Collection, Iterable

from flowgit.config import Thresholds
from flowgit.continuity.document import Document, is_structural
from flowgit.continuity.identity import name_key
from flowgit.changes import GRADUATED, INCREMENTED, RENAMED, PatternEvent
from flowgit.output import counted
from flowgit.continuity.patterns import PatternAt, iter_patterns
from flowgit.continuity.sections import ACTIONS, PROVEN, RECENT, STATE, TOP
from flowgit.dates import parse_date
from flowgit.episodes import Episode
from flowgit.evidence import (  # noqa: F401 (their home is below the wrap: the gate asks them too)
    EPISODE_REF_RE, Weight, about, after_demotion, demoted_on, everyday_weight, independent_contradiction,
    post_demotion, records_it,
)

NEXT_RE = re.compile(r"\bnext:\s*([^,;\]—]+)", re.IGNORECASE)
DONE_BOX_RE = re.compile(r"\[[xX]\]\s")  # a ticked task-list box: the item is done, like one marked ``✓``


def fired(doc: Document, session_episodes: Iterable[Episode], thresholds: Thresholds,
          weight: Weight = everyday_weight, cited: Iterable[str] = (), named: Iterable[str] = ()) -> set[str]:
    """Names of the patterns that fired this session: an episode of the session records it (as G104 reads
    evidence, :func:`records_it`: one definition, so what the gate would accept as this session's evidence
    is never archived as stale), this wrap cites new evidence for it, or a plan operation names it (a refused
    increment too: the plan says it fired, and the pattern stays at its level rather than leave)."""
    eps = list(session_episodes)
    new_ids = set(cited) & {e.id for e in eps}
    keys = {name_key(n) for n in named}
    out = set()
    for at in iter_patterns(doc):
        p = at.pattern
        if name_key(p.name) in keys or new_ids & set(p.evidence) or \
                any(records_it(e, p.name, p.text, thresholds, weight) for e in eps):
            out.add(p.name)
    return out


# The gate rule behind each code the wrap's own judgement gives (flowgit.checks.evidence_rules): a committed
# `[rules]` setting that makes the rule a warning, or turns it off, lets the wrap through as it lets the gate
CODE_RULES = {"G101": "ungrounded-graduation", "G102": "evidence", "G103": "evidence", "G104": "evidence",
              "G201": "level-jump", "G202": "level-jump", "G208": "level-jump"}


def relaxed_rules(rules: dict[str, str], codes: Iterable[str]) -> list[str]:
    """The rules, as ``name = mode``, that the committed configuration sets to ``warning`` or ``off`` for every
    one of ``codes``; empty when any code's rule stands as an error (or a problem carries no code): the wrap
    then refuses, as the gate would."""
    codes = list(codes)
    named = [CODE_RULES.get(code) for code in codes]
    if not codes or None in named or any(rules.get(rule, "on") in ("on", "error") for rule in named):
        return []
    return [f"{rule} = {rules[rule]}" for rule in dict.fromkeys(named)]


def no_new_evidence(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The gate's G202 as a refusal: a level raised on the evidence the line already cites is raised on nothing
    new (a level is raised on episodes recorded since the last raise). Empty when ``after`` adds an id, or cites
    none (that is G101's)."""
    after = tuple(after)
    if not after or set(after) - set(before):
        return []
    return ["cites no new evidence: every episode it names is already on the line (a level is raised on "
            "episodes recorded since the last raise: cite this session's)"]


def unfired_raises(events: Iterable[PatternEvent], this_session: Collection[str]) -> list[str]:
    """A warning per pattern raised (1x -> 2x, 2x -> 3x) on evidence none of which is an episode of this
    session (``this_session``: its episodes in the store, those recorded since HEAD, the plan's own).

    Step 2 raises "existing 1x patterns that fired again" and "2x patterns that fired with independent
    evidence": a raise on old episodes alone says nothing fired this session. The immune system may still
    accept the evidence, so this is said, not refused (``--strict`` stops on it)."""
    out = []
    for e in events:
        if e.kind in (INCREMENTED, GRADUATED) and not set(e.evidence) & set(this_session):
            out.append(f"`{e.name}` was raised to {e.level}x ({e.section}) on evidence none of which is an "
                       f"episode of this session or recorded since the last commit: Step 2 raises a pattern that "
                       f"fired again this session — record the episode where it fired and cite it, or leave it "
                       f"at {e.old_level or 1}x")
    return out


def proven_touched(doc: Document, session_episodes: Iterable[Episode]) -> list[dict]:
    """Proven patterns a tension or outcome episode of this session is about (Step 5 must look at them)."""
    against = [e for e in session_episodes if e.type in ("tension", "outcome")]
    out = []
    for at in iter_patterns(doc):
        if at.section != PROVEN:
            continue
        hits = [e.id for e in against if about(at.pattern, e) and e.id not in at.pattern.evidence]
        if hits:
            out.append({"name": at.pattern.name, "line": at.lineno, "episodes": hits})
    return out


@dataclass(frozen=True)
class ActionState:
    """An Action Item that needs attention: done (✓) but still listed, or past its ``next:`` date."""

    line: int
    item: str  # the item's text, spacing collapsed, bullet kept
    body: str  # the same without its bullet
    due: date | None  # the ``next:`` date when it has passed
    done: bool

    def days_overdue(self, today: date) -> int:
        return (today - self.due).days if self.due else 0


def action_states(doc: Document, today: date) -> list[ActionState]:
    """Every Action Item that is done but lingering, or overdue: the one reading candidates and status share."""
    if doc.find(ACTIONS) is None:
        return []
    out = []
    for item in doc.items(ACTIONS):
        text = " ".join(item.text.split())
        body = re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", text)
        if body.startswith("✓") or DONE_BOX_RE.match(body):
            out.append(ActionState(item.first_line, text, body, None, True))
            continue
        m = NEXT_RE.search(text)
        due = parse_date(m.group(1).strip(), reference=today, nearest=True) if m else None
        if due and due < today:
            out.append(ActionState(item.first_line, text, body, due, False))
    return out


def overdue_actions(doc: Document, today: date) -> list[dict]:
    """Action Items whose ``next:`` date has passed, and done (✓) items still lingering."""
    return [{"line": a.line, "item": a.item,
             "why": "done (✓) but still listed: remove it" if a.done
             else f"next: {a.due.isoformat()} has passed ({counted(a.days_overdue(today), 'day')})"}
            for a in action_states(doc, today)]


def action_date_warnings(head: Document | None, final: Document, today: date) -> list[str]:
    """A warning per Action Item this wrap writes (new or changed) whose ``next:`` is no date flowgit reads
    (`next: tomorrow`: never listed as overdue, and wrong by tomorrow) or a date already past: it would be
    overdue from the moment it is committed."""
    if final.find(ACTIONS) is None:
        return []
    held = {" ".join(i.text.split()) for i in head.items(ACTIONS)} if head is not None and head.find(ACTIONS) \
        is not None else set()
    out = []
    for item in final.items(ACTIONS):
        text = " ".join(item.text.split())
        m = NEXT_RE.search(text)
        if text in held or m is None:
            continue
        written = m.group(1).strip()
        due = parse_date(written, reference=today, nearest=True)
        if due is None:
            out.append(f"Action Items line {item.first_line}: `next: {written[:40]}` is not a date flowgit reads, "
                       f"so it is never listed as overdue: write it as a date (`next: {today.isoformat()}` or "
                       f"`next: {today.strftime('%b')} {today.day}`)")
        elif due < today:
            out.append(f"Action Items line {item.first_line}: `next: {written[:40]}` is {due.isoformat()}, already "
                       f"past ({counted((today - due).days, 'day')}): it is overdue as committed; give the date "
                       f"it is next due")
    return out


TYPO_EDITS = 2  # letters added, dropped, changed or swapped between two names that read as one name mistyped


def typo_renames(events: Iterable[PatternEvent]) -> list[str]:
    """A warning per rename whose new name is the old one with a letter or two off (`cache_first` ->
    `cache_frist`): an edit that raises a level often retypes the line, and a slip there renames the pattern
    without a word. A rename is legitimate, so this warns; the subject names it too."""
    out = []
    for event in events:
        old = event.old_name
        if event.kind != RENAMED or not old or min(len(old), len(event.name)) < 4:
            continue
        if edits_apart(old.casefold(), event.name.casefold()) <= TYPO_EDITS:
            out.append(f"`{old}` was renamed `{event.name}`, a letter or two apart: if that is a slip, restore "
                       f"the name `{old}` (a rename is recorded as one in the history)")
    return out


def edits_apart(a: str, b: str) -> int:
    """Letters inserted, deleted, substituted or swapped (adjacent) to turn ``a`` into ``b``."""
    if abs(len(a) - len(b)) > TYPO_EDITS:
        return TYPO_EDITS + 1
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


def section_warnings(head: Document | None, final: Document, graduated_names: Iterable[str] = (), *,
                     replaced_already: bool = False) -> list[str]:
    """State / Top of Mind / Recent Context left verbatim (unless HEAD is this session's own wrap, which replaced
    them: ``replaced_already``), and Proven patterns still named in Top of Mind."""
    out = []
    if head is not None and not replaced_already:
        for name, how in ((STATE, "REPLACED every wrap with what is true now"),
                          (TOP, "REPLACED every wrap with what is true now"),
                          (RECENT, "REWRITTEN every wrap as prose, this session's work folded in")):
            before, now = head.find(name), final.find(name)
            if before is not None and now is not None and _has_content(head.body_text(before)) \
                    and head.body_text(before) == final.body_text(now):
                out.append(f"{now.label} was left verbatim: it is {how} (the protocol's Step 4, the "
                           f"section edits: see docs/wrap.md)")
    out.extend(dropped_merge_notes(head, final))
    top = final.find(TOP)
    if top is not None:
        body = final.body_text(top).casefold()
        proven = {at.pattern.name for at in iter_patterns(final) if at.section == PROVEN} | set(graduated_names)
        for name in sorted(proven):
            spaced = name.replace("_", " ").casefold()
            if re.search(rf"(?<![\w]){re.escape(name.casefold())}(?![\w])", body) or \
                    (spaced != name.casefold() and spaced in body):
                out.append(f"`{name}` is Proven but still named in Top of Mind: remove items absorbed into "
                           f"Proven knowledge (Step 4)")
    return out


def dropped_merge_notes(head: Document | None, final: Document) -> list[str]:
    """A warning per merge note (another wrap's replaced text, kept by the merge driver) this wrap drops.

    The note is the other agent's State, Top of Mind or Recent Context, there to be absorbed; a plan that
    REPLACEs the section drops it with the rest, which is meant, but never without a word: the warning
    names whose note it was and how it began, so a wrap that did not absorb it can still put it back."""
    from flowgit.merge.notes import NOTE_HEAD, QUOTE

    if head is None:
        return []
    kept = {line.rstrip("\r\n") for line in final.lines}
    out = []
    for section in head.sections:
        lines = [ln.rstrip("\r\n") for ln in head.lines[section.body_start:section.body_end]]
        for i, line in enumerate(lines):
            if not line.startswith(NOTE_HEAD) or line in kept:
                continue
            whose = re.search(r"another wrap \(([^)]*)\)", line)
            quoted = next((q[len(QUOTE):].strip() for q in lines[i + 1:] if q.startswith(QUOTE)), "")
            out.append(f"{section.label}: this wrap drops the merge note of another wrap "
                       f"({whose.group(1) if whose else 'unnamed'}), which began \"{quoted[:80]}\": make sure "
                       f"your {section.label} absorbs what still matters of it (git history keeps the note)")
    return out


def _has_content(body: str) -> bool:
    """Whether a section body says anything (the template's `# ` guidance and blank lines do not)."""
    return any(not is_structural(line) for line in body.splitlines())


def proven_patterns(doc: Document) -> list[PatternAt]:
    return [at for at in iter_patterns(doc) if at.section == PROVEN]
