"""Steps 3-5 of the wrap on the document: validate promotions, edit each section with its semantics.

Everything here is pure: a document and a plan in, a new document and an
account of what happened out. Nothing is written until the transaction says so.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from flowgit.config import Thresholds
from flowgit.continuity.attached import attached_span
from flowgit.continuity.document import Document
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import (DEFAULT_CATEGORY, Pattern, PatternAt, document_identity_map,
                                         document_patterns, pattern_map)
from flowgit.continuity.sections import ACTIONS, DEVELOPING, PROVEN, RECENT, STATE, TOP
from flowgit.episodes import Episode
from flowgit.errors import FlowgitError
from flowgit.evidence import about, assess, bears_on, demoted_twin, everyday_weight, recorded_on
from flowgit.wrap.judgement import independent_contradiction, no_new_evidence, post_demotion, relaxed_rules
from flowgit.wrap.plan import PatternOp, Plan


@dataclass(frozen=True)
class Refusal:
    """A promotion the immune system refused: the pattern stays where it was."""

    name: str
    op: str
    level: int
    reasons: tuple[str, ...]
    codes: tuple[str, ...] = ()  # the gate's codes for the same problems (G101 …), so both speak alike
    written: str = ""  # a hand edit's line as it was written, before it was put back (nothing typed is lost)
    where: str = ""  # what asked for it: the plan's operation (`plan.json: patterns[2]`) or the line (`FILE:12`)

    def to_dict(self) -> dict:
        return {"name": self.name, "op": self.op, "stays_at": self.level, "reasons": list(self.reasons),
                "codes": list(self.codes), "written": self.written or None, "where": self.where or None,
                "fix": self.fix}

    def sentence(self, *, where: bool = True) -> str:
        """The refusal in words; ``where``: led by what asked for it (not in a commit message, which outlives
        the plan file)."""
        codes = f" [{', '.join(self.codes)}]" if self.codes else ""
        where = f"{self.where}: " if self.where and where else ""
        return f"{where}`{self.name}` stays at {self.level}x ({self.op} refused{codes}): " + "; ".join(self.reasons)

    @property
    def fix(self) -> str:
        """What to do about it: the fixes of its codes (the gate's words for the same problems), the cause
        first — an episode not about the pattern (G104) or not in the store (G102) is also why too few
        independent ones count (G103), and citing more of the same would not help."""
        codes = sorted((c for c in self.codes if c in REFUSAL_FIXES), key=FIX_ORDER.index)
        if not codes and self.op == "demote":
            codes = ["G206"]
        if not codes:
            return "record what is missing (`flowgit episode add`) and cite it, or drop the operation"
        return "; then ".join(REFUSAL_FIXES[c] for c in codes[:2])


# The fix for each problem a promotion or demotion is refused for, by the gate's code for it.
REFUSAL_FIXES = {
    "G101": "cite the episodes that record it (the plan's `evidence`, or `[evidence: ep-…]` on the line)",
    "G102": "record the episodes first (`flowgit episode add`) and cite the ids it prints, written whole",
    "G103": "cite independent episodes, from more sessions or agents (`flowgit candidates` counts them)",
    "G104": "cite episodes about this pattern (sharing its words), or record one that is",
    "G201": "raise one level per wrap: 1x -> 2x now, 2x -> 3x at a later wrap on new evidence",
    "G202": "cite new episodes, recorded since its last raise",
    "G208": "cite episodes recorded after its demotion only (not the one that contradicted it)",
    "G206": "cite a contradicting episode from another session or agent than its evidence (`reason` and "
            "`evidence` of the demote operation)",
}


# Which fix comes first when a refusal has several codes: a cause before what it causes.
FIX_ORDER = ["G102", "G104", "G208", "G201", "G202", "G101", "G103", "G206"]


def verdict_codes(verdict, *, demoted: bool = False, jump: bool = False) -> tuple[str, ...]:
    """The gate codes (see flowgit.checks.evidence_rules) matching an evidence verdict's problems."""
    codes = []
    if jump:
        codes.append("G201")
    if demoted:
        codes.append("G208")
    if not verdict.cited:
        codes.append("G101")
    if verdict.unknown:
        codes.append("G102")
    if not verdict.enough and verdict.cited:
        codes.append("G103")
    if verdict.unrelated:
        codes.append("G104")
    return tuple(codes)


@dataclass
class Outcome:
    doc: Document
    refused: list[Refusal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # operations that changed nothing, and why


def resolve_evidence(op: PatternOp, plan_ids: list[str], source: str,
                     starts: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Turn ``#N`` references to this plan's episodes into ids, and a start of a stored id (``ep-3ef9``, as
    ``flowgit episode show`` takes it; ``starts`` maps each to its id) into the whole id the file cites."""
    out = []
    for j, ref in enumerate(op.evidence):
        if ref.startswith("#"):
            try:
                out.append(plan_ids[int(ref[1:])])
            except (ValueError, IndexError):
                raise FlowgitError(f"field `plan.patterns[{op.index}].evidence[{j}]` is {ref!r}, but the plan "
                                   f"has {len(plan_ids)} episode(s)", path=source,
                                   fix="use #0 … for this plan's episodes, or an ep-… id") from None
        else:
            out.append((starts or {}).get(ref, ref))
    return tuple(dict.fromkeys(out))


class Editor:
    """Applies one plan's section and pattern operations, one at a time, to a document."""

    def __init__(self, doc: Document, plan: Plan, episodes: Mapping[str, Episode], thresholds: Thresholds,
                 date: str, plan_ids: list[str], archived_before: Callable[[str], bool],
                 batch: frozenset[str] = frozenset(), starts: Mapping[str, str] | None = None,
                 weight: Any = None, stored: Callable[[], Mapping[str, Episode]] | None = None,
                 rules: Mapping[str, str] | None = None) -> None:
        self.doc, self.plan, self.episodes = doc, plan, episodes
        self.start = doc  # the file before the plan: a demoted line the plan archives still binds its claim
        self.rules = dict(rules or {})  # the committed `[rules]` modes: a relaxed rule relaxes the wrap too
        self.stored = stored or (lambda: episodes)  # every episode the commit's store holds, read on demand
        self.weight = weight  # how rare a word is in the store the commit holds (the gate's G104 weighs so)
        self.starts = starts  # a start of an id the plan cites -> the stored id
        self.thresholds, self.date, self.plan_ids = thresholds, date, plan_ids
        self.batch = batch  # what this commit appends to the store: one source per agent (G103)
        self.archived_before = archived_before
        self.outcome = Outcome(doc)

    # ------------------------------------------------------------ sections
    def section_body(self, name: str, body: str) -> None:
        if self.doc.find(name) is None:
            self.doc = self.doc.add_section(name)
        current = self.doc.body_text(name)
        if _strip_comments(current).strip() != body.strip():
            self.doc = self.doc.replace_body(name, body)

    def apply_sections(self) -> None:
        plan = self.plan
        replaced = replaced_sections(plan)
        for name, body in replaced:
            if name != RECENT:
                self.section_body(name, body)
        if plan.actions:
            self.apply_actions(plan.actions)
        for name, body in replaced:
            if name == RECENT:
                self.section_body(name, body)

    def apply_actions(self, actions: Mapping) -> None:
        if self.doc.find(ACTIONS) is None:
            self.doc = self.doc.add_section(ACTIONS)
        added = [f"- {text}" for text in actions.get("add", [])]
        for kind in ("done", "seen", "next", "remove"):
            entries = actions.get(kind, {})
            pairs = entries.items() if isinstance(entries, dict) else ((m, None) for m in entries)
            for match, value in pairs:
                own = self._added_match(match, kind, added)
                if own is not None:  # an item this plan adds: marked before it goes in
                    first, *rest = added[own].split("\n")
                    new = _mark_done(first) if kind == "done" else (
                        _set_field(first, kind, value) if kind != "remove" else None)
                    added[own] = "\n".join([new, *rest]) if new is not None else ""
                    continue
                self._update_action(match, kind, value)
        self._insert_actions(actions.get("add", []), added)

    def _insert_actions(self, written: list[str], added: list[str]) -> None:
        """The plan's new items (``added``: as its own entries left them), each unless the file holds it.

        An item is the same item whatever its tick or ``seen:``/``next:`` say: a plan that adds an item and
        re-dates or ticks it, applied again, finds it in the file and adds nothing (no open copy of a finished
        item, no second item for the next run's entries to match)."""
        held = {_identity(i.text): _first_line(i.text) for i in self.doc.items(ACTIONS)}
        for text, line in zip(written, added):
            if not line:
                continue  # removed by this plan's own `remove`
            same = held.get(_identity(line))
            if same is not None:
                self.outcome.ignored.append(f"actions.add {text!r}: already listed ({same!r}); left as it is")
                continue
            self.doc = self.doc.insert_item(ACTIONS, line)
            held[_identity(line)] = _first_line(line)

    def _update_action(self, match: str, kind: str, value: str | None) -> None:
        """One ``done``/``seen``/``next``/``remove`` entry applied to the item of the file it names.

        An entry that changes nothing (it names no item, or the item already says so) is listed as ignored:
        a mistyped ``remove`` would otherwise leave the item in place without a word, and a plan of nothing
        else would say it committed nothing for no reason (exit 3 says why)."""
        item = self._find_action(match, kind)
        entry = f"actions.{kind} {match!r}"
        if item is None:  # `done` of an item this plan also removes (a rerun), or a `remove` that names none
            self.outcome.ignored.append(f"{entry}: matches no action item" + (
                " (this plan's `remove` names it: already removed)" if kind == "done" else
                f"; nothing removed (fix: {_items_fix(self.doc.items(ACTIONS))})"))
            return
        if kind == "remove":
            self.doc = self.doc.remove_item(ACTIONS, item)
            return
        lines = "".join(self.doc.lines[item.start:item.end]).rstrip("\r\n").split("\n")
        first = lines[0].rstrip("\r")
        new = _mark_done(first) if kind == "done" else _set_field(first, kind, value)
        if new == first:
            self.outcome.ignored.append(f"{entry}: the item already says so ({first.strip()!r}); left as it is")
            return
        self.doc = self.doc.update_item(ACTIONS, item, "\n".join([new, *lines[1:]]))

    def _added_match(self, match: str, kind: str, added: list[str]) -> int | None:
        """Which item this plan adds ``match`` names, when no item the file holds does (None: none)."""
        if any(_folded(match) in _folded(i.text) for i in self.doc.items(ACTIONS)):
            return None
        hits = [n for n, line in enumerate(added) if line and _folded(match) in _folded(line)]
        if len(hits) > 1:
            raise FlowgitError(f"field `plan.actions.{kind}` entry {match!r} matches {len(hits)} items this plan "
                               "adds", path=self.plan.source, fix="use a longer part of the item's text")
        return hits[0] if hits else None

    def _find_action(self, match: str, kind: str):
        items = self.doc.items(ACTIONS)
        added = {_identity(a) for a in self.plan.actions.get("add", []) or [] if isinstance(a, str)} \
            if kind == "remove" else set()  # (a remove never takes the item the same plan adds)
        hits = [i for i in items if _folded(match) in _folded(i.text)
                and (_identity(i.text) not in added or _identity(i.text) == _identity(match))]
        exact = [i for i in hits if _identity(i.text) == _identity(match)]
        if len(hits) > 1 and len(exact) == 1:
            hits = exact  # `deploy api` names `✓ Deploy api`, beside `Deploy api v2 behind the flag`
        if len(hits) > 1:
            raise FlowgitError(f"field `plan.actions.{kind}` entry {match!r} matches {len(hits)} action items",
                               path=self.plan.source, fix="use a longer part of the item's text")
        if not hits and (kind in ("seen", "next") or (kind == "done" and not self._was_removed(match))):
            raise FlowgitError(f"field `plan.actions.{kind}` entry {match!r} matches no action item",
                               path=self.plan.source, fix=_items_fix(items))
        return hits[0] if hits else None

    def _was_removed(self, match: str) -> bool:
        return any(_folded(match) in _folded(m) for m in self.plan.actions.get("remove", []))

    # ------------------------------------------------------------ patterns
    def apply_patterns(self) -> None:
        for op in self.plan.patterns:
            getattr(self, f"op_{op.op}")(op)

    def _at(self, op: PatternOp, *, required: bool = True) -> PatternAt | None:
        """The pattern ``op`` names: by its exact name, else by identity (NFKC, case folding: the gate's G112
        key), so ``add Retry_Budget`` beside ``retry_budget`` finds it instead of writing a duplicate."""
        if not required:
            return pattern_map(self.doc).get(op.name) or document_identity_map(self.doc).get(name_key(op.name))
        return self._named(op.name, f"plan.patterns[{op.index}].name")

    def _named(self, name: str, field: str) -> PatternAt:
        """The file's pattern ``name`` (exact, else by identity); a name it does not hold is refused with the
        plan's ``field`` and the nearest names (exit 2)."""
        patterns = pattern_map(self.doc)
        at = patterns.get(name) or document_identity_map(self.doc).get(name_key(name))
        if at is None:
            from flowgit.suggest import close_matches

            near = close_matches(name, patterns)
            fix = ("did you mean " + " or ".join(f"`{n}`" for n in near) + "?" if near else
                   "`flowgit patterns` lists the names; use op `add` for a new one")
            raise FlowgitError(f"field `{field}`: no pattern `{name}` in the continuity file",
                               path=self.plan.source, fix=fix)
        return at

    def _cited(self, op: PatternOp) -> tuple[str, ...]:
        return resolve_evidence(op, self.plan_ids, self.plan.source, self.starts)

    def _replace(self, at: PatternAt, pattern: Pattern) -> None:
        self.doc = self.doc.splice(at.line, at.line + 1, [pattern.render()])

    def _move(self, at: PatternAt, pattern: Pattern, section: str) -> None:
        """Move the pattern with the lines that continue it (a note under it moves with it, rather than be
        left to read as part of the pattern above)."""
        self.doc = self.doc.move_line(at.line, section, pattern.changed(indent="", bullet="").render(),
                                      end=attached_span(self.doc, at.line))

    def _validate(self, op: PatternOp, p: Pattern, level: int, evidence: tuple[str, ...], proven: bool) -> bool:
        problems = post_demotion(p, evidence, self.episodes, level=level, thresholds=self.thresholds, in_proven=proven,
                                 now=_now(), batch=self.batch) or self._twin_demoted(p, evidence, level, proven)
        verdict = assess(p.name, p.text, level, evidence, self.episodes, self.thresholds, in_proven=proven,
                         batch=self.batch, now=_now(), **({"weight": self.weight} if self.weight else {}))
        codes = verdict_codes(verdict, demoted=bool(problems))
        stale = [] if problems else no_new_evidence(p.evidence, evidence)  # (a demotion's G208 says more)
        problems += stale + verdict.problems()
        codes = ("G202", *codes) if stale else codes
        if not problems:
            return True
        relaxed = relaxed_rules(self.rules, codes)
        if relaxed:
            self.outcome.notes.append(let_through(p.name, op.op, relaxed, problems))
            return True
        self.outcome.refused.append(Refusal(p.name, op.op, p.level, tuple(problems), codes, where=self._where(op)))
        return False

    def _twin_demoted(self, p: Pattern, evidence: tuple[str, ...], level: int, proven: bool) -> list[str]:
        """G208 for the claim of a demoted pattern raised under another name, as the gate reads it."""
        twin = demoted_twin(p, (*document_patterns(self.doc), *document_patterns(self.start)))
        if twin is None:
            return []
        problems = post_demotion(twin.pattern, evidence, self.episodes, level=level, thresholds=self.thresholds,
                                 in_proven=proven, now=_now(), batch=self.batch)
        return [f"`{p.name}` is the claim of `{twin.pattern.name}` (the same description or evidence) — "
                f"{problems[0]}"] if problems else []

    def _where(self, op: PatternOp) -> str:
        """Where the plan asked for ``op``: its file and the operation's place in `patterns`."""
        return f"{self.plan.source}: patterns[{op.index}]"

    def op_add(self, op: PatternOp) -> None:
        at = self._at(op, required=False)
        if at is not None:
            named = "" if at.pattern.name == op.name else f" as `{at.pattern.name}`, the same name to the gate"
            self.outcome.ignored.append(f"add `{op.name}`: the pattern already exists{named} ({at.pattern.level}x "
                                        f"in {at.section}); left as it is")
            return
        parents = self._derived_from(op)
        links = (f"<- {', '.join(parents)}",) if parents else ()
        line = Pattern(name=op.name, text=op.text, level=1, category=op.category, links=links).render()
        self.doc = self.doc.insert_item(DEVELOPING, line)

    def _derived_from(self, op: PatternOp) -> list[str]:
        """The names ``op.derives_from`` gives, as the file spells them (found by identity, as ``_at`` finds a
        name); one the file does not hold, or the new pattern itself, is a mistake in the plan (exit 2)."""
        names: list[str] = []
        for n, name in enumerate(op.derives_from):
            field = f"plan.patterns[{op.index}].derives_from[{n}]"
            if name_key(name) == name_key(op.name):
                raise FlowgitError(f"field `{field}`: `{op.name}` cannot derive from itself", path=self.plan.source,
                                   fix="name the patterns it derives from, or leave `derives_from` out")
            at = self._named(name, field)
            if at.pattern.name not in names:
                names.append(at.pattern.name)
        return names

    def op_increment(self, op: PatternOp) -> None:
        at = self._at(op)
        p = at.pattern
        evidence = tuple(dict.fromkeys(p.evidence + self._cited(op)))
        if at.section == PROVEN or (p.level >= 2 and set(evidence) == set(p.evidence)):
            where = "Proven" if at.section == PROVEN else f"{p.level}x with that evidence"
            self.outcome.ignored.append(f"increment `{op.name}`: already {where}")
            return
        if not self._validate(op, p, 2, evidence, proven=False):
            return
        category = op.category or p.category or DEFAULT_CATEGORY
        self._replace(at, p.changed(level=2, evidence=evidence, category=category))

    def op_graduate(self, op: PatternOp) -> None:
        at = self._at(op)
        p = at.pattern
        if at.section == PROVEN:
            self.outcome.ignored.append(f"graduate `{op.name}`: already Proven")
            return
        evidence = tuple(dict.fromkeys(p.evidence + self._cited(op)))
        if p.level < 2:
            self.outcome.refused.append(Refusal(p.name, "graduate", p.level,
                                                ("graduation goes 2x -> 3x; increment it to 2x first",),
                                                ("G201",), where=self._where(op)))
            return
        if not self._validate(op, p, 3, evidence, proven=True):
            return
        graduated = p.changed(level=3, evidence=evidence, text=op.text or p.text,
                              category=op.category or p.category or DEFAULT_CATEGORY, date=self.date,
                              notes=tuple(n for n in p.notes if not n.lower().startswith("demoted")))
        self._move(at, graduated, PROVEN)

    def op_demote(self, op: PatternOp) -> None:
        at = self._at(op)
        p = at.pattern
        if at.section != PROVEN:
            self.outcome.ignored.append(f"demote `{op.name}`: it is not Proven ({p.level}x in {at.section})")
            return
        against = self._cited(op)
        problems = independent_contradiction(p, against, self.episodes, self.thresholds, now=_now())
        if problems:
            if not against:
                problems = problems + self._plan_contradictions(p)
            self.outcome.refused.append(Refusal(p.name, "demote", p.level, tuple(problems), where=self._where(op)))
            return
        day = self._demotion_day(p, against)
        if day != self.date:
            self.outcome.notes.append(f"`{p.name}` is demoted as of {day}, not the wrap's {self.date}: an episode "
                                      "about it was recorded then, and a demotion dated before it would let that "
                                      "episode count as recorded after the demotion")
        note = f"demoted {day}: {op.reason}" + (f" ({', '.join(against)})" if against else "")
        demoted = p.changed(level=2, date="", notes=p.notes + (note,))
        self._move(at, demoted, DEVELOPING)  # (what derives from it: annotate_dependants, every wrap's)

    def _demotion_day(self, p: Pattern, against: list[str]) -> str:
        """The wrap's day, or a later one: never before the episode that contradicted the pattern, nor before
        an episode already recorded that bears on it (a promotion counts only what is recorded after the day,
        and the gate refuses a day that would count what came before the demotion)."""
        today = _now().date()
        later = [d.isoformat() for i, e in self.stored().items() if (d := recorded_on(e)) is not None
                 and d <= today and (i in against or bears_on(p, e, self.thresholds, self.weight or everyday_weight))]
        return max([self.date, *later])

    def _plan_contradictions(self, p: Pattern) -> list[str]:
        """A demotion that cites nothing, where this plan records an episode about the pattern: name it."""
        about_it = [f"#{n}" for n, ident in enumerate(self.plan_ids)
                    if (e := self.episodes.get(ident)) is not None and about(p, e)]
        if not about_it:
            return []
        cited = ", ".join(f'"{ref}"' for ref in about_it)
        return [f"this plan records {', '.join(about_it)} about `{p.name}`: cite it, `\"evidence\": [{cited}]`"]

    def op_archive(self, op: PatternOp) -> None:
        at = self._at(op, required=not self.archived_before(op.name))
        if at is None:
            return  # archived by an earlier wrap: idempotent
        from flowgit.continuity.derivation import unlink_archived

        self.doc = unlink_archived(self.doc.splice(at.line, attached_span(self.doc, at.line), []),
                                   {at.pattern.name})


def replaced_sections(plan: Plan) -> list[tuple[str, str]]:
    """(section, new body) of each section the plan replaces whole, in the order the wrap writes them."""
    tom = plan.top_of_mind
    top = tom if tom is None or isinstance(tom, str) else "\n".join(f"- {t}" for t in tom)
    out = [(STATE, plan.state), (TOP, top), (RECENT, plan.recent)]
    return [(name, body) for name, body in out if body is not None]


def hand_edits_replaced(doc: Document, head: Document | None, plan: Plan) -> list[tuple[str, int]]:
    """(section, line) of each section the plan replaces whole that holds an uncommitted hand edit the
    replacement would not keep: its body (comment lines too) is not HEAD's, spacing aside, nor what applying
    the plan to it gives. Without a committed file, the section's content beyond its guidance comments is
    the hand edit."""
    out = []
    for name, body in replaced_sections(plan):
        here = doc.find(name)
        if here is None:
            continue
        before = head.find(name) if head is not None else None
        mine = doc.body_text(here)
        base = head.body_text(before) if before is not None else _comments_only(mine)
        if _spacing_aside(mine) == _spacing_aside(base):
            continue
        if _strip_comments(mine).strip() == body.strip():
            continue  # the plan writes what the hand wrote: nothing to replace
        if _spacing_aside(doc.replace_body(here.label, body).body_text(here.label)) != _spacing_aside(mine):
            out.append((here.label, here.heading + 1))
    return out


def _spacing_aside(text: str) -> str:
    """A body compared as a reader compares it: trailing spaces and blank lines aside (an editor trims them)."""
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def _comments_only(body: str) -> str:
    return "\n".join(ln for ln in body.splitlines() if GUIDANCE_LINE_RE.match(ln))


def apply_plan(doc: Document, plan: Plan, episodes: Mapping[str, Episode], thresholds: Thresholds, *, date: str,
               plan_ids: list[str], archived_before: Callable[[str], bool],
               batch: frozenset[str] = frozenset(), starts: Mapping[str, str] | None = None,
               weight: Any = None, stored: Callable[[], Mapping[str, Episode]] | None = None,
               rules: Mapping[str, str] | None = None) -> Outcome:
    """Apply the plan's edits; ``batch`` is what this commit appends to the store (the gate's G103 batch),
    ``starts`` the stored ids the plan names by a start of theirs, ``weight`` the store's word rarity,
    ``stored`` every episode of the store the commit holds (read only when a demotion needs its day)."""
    editor = Editor(doc, plan, episodes, thresholds, date, plan_ids, archived_before, batch, starts, weight,
                    stored, rules)
    editor.apply_sections()
    editor.apply_patterns()
    editor.outcome.doc = editor.doc
    return editor.outcome


def let_through(name: str, op: str, relaxed: list[str], problems: list[str]) -> str:
    """The note for a change the wrap lets through only because the committed configuration relaxes the rules
    that would refuse it (the gate then warns about it, and so does the wrap)."""
    return (f"`{name}` {op} let through by the committed configuration ({', '.join(relaxed)}), though: "
            + "; ".join(problems))


def annotate_dependants(outcome: Outcome, head: Document | None, day: str) -> None:
    """Step 5, for every wrap, plan or hand edit alike: patterns deriving from a demoted one that HEAD did
    not yet hold so (a demotion made now, by either way, or a derived pattern a merge brought onto one)
    carry the re-check note (:mod:`flowgit.continuity.derivation`)."""
    from flowgit.continuity import derivation

    outcome.doc, written = derivation.annotate_dependants(outcome.doc, [head], day)
    outcome.notes.extend(derivation.said(written))


GUIDANCE_LINE_RE = re.compile(r"^\s{0,3}#(\s|$)")  # a section's `# ` guidance comment line


def _strip_comments(body: str) -> str:
    return "\n".join(ln for ln in body.splitlines() if not GUIDANCE_LINE_RE.match(ln))


def _folded(text: str) -> str:
    """``text`` as an entry is matched against an item: case-folded, not lower-cased (``GRÖSSE`` is
    ``Größe``, ``ΣΟΦΟΣ`` is ``σοφος``), and composed (an accent typed decomposed is the same letter)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def _identity(text: str) -> str:
    """An action item's identity: its words without bullet (or number), tick, task box and ``seen:``/``next:``
    fields, case-folded (the merge driver's identity, which re-dated or ticked copies of one item share)."""
    from flowgit.merge.actions import item_key

    return item_key("- " + " ".join(re.sub(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(\[[ xX]\]\s+)?", "", _folded(text)).split()))


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].rstrip("\r")


BULLET_RE = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)")
TASK_BOX_RE = re.compile(r"\[([ xX])\](?=\s)")  # a task-list item's box, right after the bullet


def _mark_done(line: str) -> str:
    """The item marked done, and its ``next:`` dropped: a finished item has no next step (Step 4 updates the
    staleness fields), so it is not listed as overdue before the next wrap removes it. A task-list item
    (``- [ ] …``) has its box ticked (``- [x] …``): a ``✓`` beside an empty box would say done and not done."""
    m = BULLET_RE.match(line)
    head, rest = (m.group(1), line[m.end():]) if m else ("", line)
    if rest.startswith("✓"):
        return line
    box = TASK_BOX_RE.match(rest) if m else None
    if box is not None:
        return line if box.group(1) != " " else f"{head}[x]{_without_next(rest[box.end():])}"
    return f"{head}✓ {_without_next(rest)}"


NEXT_FIELD_RE = re.compile(r"(?P<sep>\s*,\s*|\s+[—–-]+\s+)next:\s*[^,;\]\n]*?(?=\s*(?:[,;\]]|\r?\n|$))")


def _without_next(text: str) -> str:
    """The item without its ``next:`` field (the last one written as a field, after ``—`` or ``,``) and the
    separator before it; a ``— next: …, seen: …`` keeps ``— seen: …``."""
    found = None
    for found in NEXT_FIELD_RE.finditer(text):
        pass
    if found is None:
        return text
    before, after = text[:found.start()], text[found.end():]
    if "," not in found.group("sep") and after.lstrip(" ").startswith(","):
        return before + found.group("sep") + after.lstrip(" ")[1:].lstrip(" ")
    return before + after


def _set_field(line: str, key: str, value: str | None) -> str:
    """Set ``seen:`` / ``next:`` on an action item, in place or appended as ``— key: value``."""
    pattern = re.compile(rf"(\b{key}:\s*)([^,;\]]+?)(\s*(?:[,;\]]|$))")
    if pattern.search(line):
        return pattern.sub(lambda m: f"{m.group(1)}{value}{m.group(3)}", line, count=1)
    if key == "seen":  # the order the docs and the template write: `seen:` before `next:`
        nxt = re.search(r"\bnext:", line)
        if nxt is not None:
            return f"{line[:nxt.start()]}seen: {value}, {line[nxt.start():]}"
    joiner = ", " if re.search(r"\b(seen|next):", line) else " — "
    return f"{line.rstrip()}{joiner}{key}: {value}"


def _items_fix(items) -> str:
    """The fix for an action entry that names no item: what the items are, so the next try can quote one."""
    texts = [i.text.strip().lstrip("-*+ ").split(" — ")[0][:50] for i in items[:5]]
    shown = "; ".join(f"\"{t}\"" for t in texts) + (" …" if len(items) > 5 else "")
    return ("quote part of an item's text exactly, as the file or this plan's `add` has it"
            + (f" (items now: {shown})" if texts else " (the section has no items yet)"))


def _now():
    """When the wrap's commit is made, as the gate will judge it (an episode dated later does not count)."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)
