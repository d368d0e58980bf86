"""The one verdict: judge a change of the continuity file and store, whoever asks.

The pre-commit hook (staged blobs against HEAD), ``flowgit wrap`` (the tree it is
about to commit), ``flowgit audit`` (each commit against each parent) and the
merge driver (its result against both sides) all describe the change as two
:class:`Side` values and call :func:`judge_change`. Rules never read the working
tree, the index or the configuration on disk themselves: the caller decides
which configuration is in force (the one committed at the base, so a commit
cannot weaken the gate that judges it) and hands over bytes as git records them.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Sequence

from flowgit.checks import paths
from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.checks.override import Override, override_of, unreadable_scope
from flowgit.checks.registry import run_rules
from flowgit.config import Config, default_config
from flowgit.repo import document_from_bytes

if TYPE_CHECKING:
    from flowgit.continuity.document import Document


class Side:
    """One side of a change as git records it. ``None`` bytes mean the path is absent.

    A large store may be given by reference instead: ``store_ref`` (blob id,
    size) and ``store_loader`` (called only when a rule needs the bytes), with
    ``store`` left None. A plain class, not a dataclass: the hook imports this
    module on every commit, and a dataclass costs about a millisecond to define.
    """

    __slots__ = ("continuity", "store", "continuity_path", "store_path", "commit", "when", "extra",
                 "store_ref", "store_loader", "config")

    def __init__(self, continuity: bytes | None, store: bytes | None, continuity_path: str, store_path: str,
                 commit: str | None = None, when: datetime | None = None,
                 extra: dict | None = None, store_ref: tuple[str, int] | None = None,
                 store_loader: Callable[[], bytes] | None = None, config: Config | None = None) -> None:
        self.continuity = continuity
        self.store = store
        self.continuity_path = continuity_path
        self.store_path = store_path
        self.commit = commit  # the commit this side is (None for the index or a tree about to be committed)
        self.when = when  # when the change is made (later episodes do not count)
        self.extra = {} if extra is None else extra
        self.store_ref = store_ref
        self.store_loader = store_loader
        self.config = config  # the configuration committed at ``commit``, when the caller read it

    def __repr__(self) -> str:
        return f"Side({self.continuity_path!r}, {self.store_path!r}, commit={self.commit!r})"

    def with_continuity(self, continuity: bytes | None) -> "Side":
        """This side with other continuity bytes (the audit's reading of a file that is not text)."""
        return Side(continuity, self.store, self.continuity_path, self.store_path, self.commit, self.when,
                    self.extra, self.store_ref, self.store_loader, self.config)

    @property
    def has_store(self) -> bool:
        return self.store is not None or self.store_ref is not None

    def store_entry(self) -> tuple[str, int] | None:
        """(blob id, size) of the store, hashing the bytes only when no reference was given."""
        if self.store_ref is not None:
            return self.store_ref
        if self.store is None:
            return None
        from flowgit.git import blob_oid

        return blob_oid(self.store), len(self.store)

    def store_bytes(self) -> bytes:
        if self.store is not None:
            return self.store
        return self.store_loader() if self.store_loader else b""


def judge_change(cfg: Config, old: Side | None, new: Side, *, message: str | None = None,
                 override: "str | Override | None" = None, new_config: Config | None = None,
                 merge_parents: Sequence[Side] = (), held_twins: dict | None = None) -> list[Finding]:
    """Every enabled rule's findings for ``old`` -> ``new`` under ``cfg`` (the base's configuration).

    ``old`` is None for a first commit. ``override`` is the reason given with
    FLOWGIT_OVERRIDE (or read from a trailer): the errors it covers are kept
    but marked overridden, so callers can record them. ``new_config`` is the
    configuration the change itself carries: it never judges, but anything in
    it that weakens ``cfg`` is an error. ``held_twins``: the letter-case twins
    the base commit holds when it holds no memory (``old`` is None): a
    memory's first commit keeps what was there.
    """
    findings: list[Finding] = []
    if new_config is not None:
        holds = (old is not None and old.continuity is not None, old is not None and old.has_store)
        base_config = cfg if old is not None else default_config(cfg.root)  # a first commit: the defaults held
        findings.extend(paths.config_weakened(base_config, new_config, new.continuity_path, holds=holds))
    findings.extend(paths.hooks_weakened(new))
    findings.extend(paths.removed(old, new))
    findings.extend(paths.unmerged(new))
    findings.extend(paths.symlinked(new))
    findings.extend(paths.case_collisions(old, new, held_twins))
    if new.continuity is None and old is not None and old.continuity is not None:
        return _overridden(findings, override) + unreadable_scope(override_of(override), "FLOWGIT_OVERRIDE")
    ctx = context_for(cfg, old, new, merge_parents=merge_parents)
    if ctx.base_unreadable:
        findings.append(Finding("G002", "structure", "warning", f"base:{old.continuity_path}", None,  # type: ignore
                                f"the base's continuity file cannot be read as text ({ctx.base_unreadable}); it "
                                "was judged as read as Windows-1252 where it is not UTF-8 (what re-saving it as "
                                "UTF-8 writes)", "commit the file re-saved as UTF-8"))
    if new.continuity is not None and not ctx.new.sections:
        findings.append(Finding("G001", "structure", "error", new.continuity_path, 1,
                                "the file has no `## ` sections, so it is not a continuity file",
                                f"restore the sections (git show HEAD:{new.continuity_path})"))
    findings.extend(_overridden(run_rules(ctx, override=None), override))
    return _overridden(findings, override) + unreadable_scope(override_of(override), "FLOWGIT_OVERRIDE")


def context_for(cfg: Config, old: Side | None, new: Side, *, merge_parents: Sequence[Side] = ()) -> CheckContext:
    """The rules' view of a change: both documents parsed, the stores by reference.

    ``merge_parents``: every parent of a merge result being judged against one
    of them (the rules that read a merge note ask what each parent held).
    """
    new_doc = document_from_bytes(cfg, new.continuity if new.continuity is not None else b"", new.continuity_path)
    old_doc, unreadable = (_base_document(cfg, old.continuity, f"base:{old.continuity_path}")
                           if old is not None and old.continuity is not None else (None, None))
    old_entry = old.store_entry() if old is not None else None
    return CheckContext(cfg=cfg, new=new_doc, old=old_doc, new_store=new.store or b"",
                        new_store_oid=new.store_ref[0] if new.store_ref else None,
                        new_raw=new.continuity if new.continuity is not None else b"",
                        old_store_in_memory=old is not None and old.store is not None,
                        path=new.continuity_path, store_path=new.store_path, old_store_entry=old_entry,
                        old_store_loader=old.store_bytes if old is not None and old.has_store else None,
                        when=new.when,
                        merge_parents=tuple(_base_document(cfg, p.continuity, f"parent:{p.continuity_path}")[0]
                                            for p in merge_parents if p is not None and p.continuity is not None),
                        appended_check=new.extra.get("appended_check") if old is not None and old.commit and
                        old.commit == new.extra.get("base") else None, base_unreadable=unreadable,
                        attributes=(old.extra.get("attributes") if old is not None else None,
                                    new.extra.get("attributes")))


def _base_document(cfg: Config, data: bytes, label: str) -> tuple["Document | None", str | None]:
    """(the base's document, None), or (it read leniently, why it could not be read as it is).

    A base that is not text (not UTF-8, a NUL byte, over the size limit) got
    past the gate (``--no-verify``, a hookless clone) and the audit reports it
    at that commit; refusing every later change for it would also refuse the
    commit that repairs it. So it is read as it was most likely meant
    (:func:`flowgit.fsio.as_text`: a Latin-1 ``é`` is the ``é`` a re-save
    writes), and what the change does is judged against that.
    """
    from flowgit.errors import UnreadableText

    try:
        return document_from_bytes(cfg, data, label), None
    except UnreadableText as exc:
        from flowgit.continuity.document import Document
        from flowgit.fsio import as_text

        where = f"line {exc.line}: " if exc.line else ""
        return Document.parse(as_text(data), aliases=cfg.aliases, path=label), where + exc.message


NO_BASE = object()  # judge_merge: the merge base was not looked up (callers that cannot tell)
# What a merge can lose that one branch had: a Proven pattern, its claim or evidence, a protected line. Other
# rules compare against the side judged (an evidence batch, the store's order) and differ between the base
# and a parent by construction, so for them only what every parent shows stands.
MERGE_LOSS_CODES = {"G205", "G207", "G208", "G401", "G402", "G404"}


def judge_merge(cfg: Config, parents: list[Side], new: Side, *, override: "str | Override | None" = None,
                new_config: Config | None = None, base: "Side | None | object" = NO_BASE,
                carried: Config | None = None) -> list[Finding]:
    """A merge result judged against each parent (and their merge base, when given).

    An error shown against every parent stands: the merge itself introduced it.
    A loss (:data:`MERGE_LOSS_CODES`) shown against only some parents stands
    too unless the merge base shows it as well: then one branch made that
    change and was judged for it when it was committed (a Proven pattern that
    branch demoted). Against the base it does not show when the base never had
    what was lost, so the result dropped what one branch added (a fresh Proven
    pattern, a Foundation line): that is the merge's own doing. ``base`` None
    means the parents share no history; without ``base`` only errors shown
    against every parent stand. A result that takes each element from one valid
    side (the union of two valid wraps) is accepted; a loss of either side's
    episodes is not (G704).

    Each parent judges under its own committed configuration (``Side.config``,
    else ``cfg``): a branch whose configuration switched rules off (an orphan
    root commit is judged by itself) cannot lend it to what another parent's
    memory brings. Nor to what the merge itself writes: each is held to the
    stricter of its own and the configuration the result carries (``carried``,
    else ``new_config``, else ``cfg``; :func:`flowgit.checks.paths.stricter`),
    so a merge that drops a scratch branch's lenient configuration is judged
    by the result's for its own edits. A result weaker than the first parent
    (one that holds the memory) needs the merge's own override (G801): the
    branch it lands on never agreed to the other's leniency.

    A parent that does not hold the continuity file (a code branch forked
    before the memory existed, an orphan branch) has no say: judged against
    it, the result would be a first commit, on which almost no rule fires, so
    its empty verdict would cancel every error the parents that hold the
    memory show. Only those parents vote.

    When two parents hold the memory and their merge base does not (or there
    is none), each memory began on its own: its first commit was an
    adoption, which counts every episode and pattern as given, so neither
    was ever judged against the other and neither vouches for what the other
    brings. Every error shown against any of them stands (which parent comes
    first does not matter: merging the team's memory into a fabricated one
    and fast-forwarding is the same merge).
    """
    if len(parents) < 2:
        return judge_change(cfg, parents[0] if parents else None, new, override=override, new_config=new_config)
    result_config = carried or new_config or cfg
    per_parent = [judge_change(paths.stricter(p.config or cfg, result_config), p, new, override=None,
                               new_config=new_config, merge_parents=parents) for p in parents]

    key = merge_key
    shown = [{key(f) for f in fs if f.is_error} for fs in per_parent]
    holds = [p.continuity is not None for p in parents]
    began_apart = base is not NO_BASE and (base is None or base.continuity is None)  # type: ignore[union-attr]
    kept = merge_answers(shown, holds, began_apart)
    if holds[0]:  # weaker than the branch merged into: the merge's own weakening, whatever the other allowed
        kept |= {k for k in shown[0] if k[0] == "G801"}
    if base is not NO_BASE and not began_apart:
        where = {key(f): f for fs in per_parent for f in fs if f.is_error}
        kept |= _answered_by_the_changers(cfg, parents, base, new, shown, holds, where)  # type: ignore[arg-type]
    if base is not NO_BASE and not (began_apart and sum(holds) > 1):
        against_base = {key(f) for f in judge_change(cfg, base, new, override=None, merge_parents=parents)  # type: ignore[arg-type]
                        if f.is_error}
        voters = [s for s, h in zip(shown, holds) if h] or shown
        losses = {k for k in set.union(*voters) - against_base if k[0] in MERGE_LOSS_CODES}
        kept |= losses - _claims_one_parent_holds(cfg, parents, shown, holds, losses)
    findings: list[Finding] = []
    seen: set[tuple] = set()
    for n, found in enumerate(per_parent):  # the first parent's order; what only others show after it
        for f in found:
            if not f.is_error:
                if n == 0:
                    findings.append(f)
            elif key(f) in kept and key(f) not in seen:
                seen.add(key(f))
                findings.append(_budget_left_to_the_next_wrap(f, parents, new))
    findings.extend(paths.merge_lost_episodes(parents, new))
    if base is not NO_BASE:
        from flowgit.checks.merge_patterns import merge_lost_patterns, merge_lowered_patterns

        findings.extend(merge_lost_patterns(cfg, parents, new, base))  # type: ignore[arg-type]
        findings.extend(merge_lowered_patterns(cfg, parents, new, base))  # type: ignore[arg-type]
        from flowgit.checks.merge_notes import one_sided_merge_notes

        findings.extend(one_sided_merge_notes(cfg, parents, new, lambda: _best_bases(cfg, base)))  # type: ignore[arg-type]
    return _overridden(findings, override) + unreadable_scope(override_of(override), "FLOWGIT_OVERRIDE")


def _budget_left_to_the_next_wrap(f: Finding, parents: list[Side], new: Side) -> Finding:
    """A size budget a merge result exceeds, as a warning, when the result is the parents' union: two wraps
    that each kept within it added their own patterns (or State lines), and the union is both; refusing it
    would leave a person to drop one side's work by hand. A later wrap, judged against the merge, may not let
    it grow (G50x), and the wrap's cleanup archives what is stale. A merge that writes lines of its own keeps
    the error: it could grow the file past the budget as no commit may."""
    if f.rule != "size-budget" or not f.is_error or not _only_parents_lines(parents, new):
        return f
    return f.replace(severity="warning", message=f"{f.message} (the union of two wraps' additions: a later wrap "
                                                 "may not let it grow; archive or graduate to bring it back)")


def _only_parents_lines(parents: list[Side], new: Side) -> bool:
    """Whether every line of the merge result is a line one of its parents holds (the driver's merge notes
    aside): a union, with nothing the merge wrote itself."""
    from flowgit.merge.notes import NOTE_LINES

    notes = tuple(n.encode() for n in NOTE_LINES)
    held: set[bytes] = set()
    for parent in parents:
        if parent.continuity is not None:
            held.update(line.rstrip(b"\r\n") for line in parent.continuity.splitlines())
    return all(line.rstrip(b"\r\n") in held or line.startswith(notes)
               for line in (new.continuity or b"").splitlines())


_NUMBER_RE = re.compile(r"\d+")
_UNQUOTED_RE = re.compile(r"`[^`]*`|[^`]+")


def merge_key(f: Finding) -> tuple:
    """What makes two parents' findings against a merge the same error: code, line, and the message with
    its numbers left out (outside backticks, where names are): "kept all 2 old item(s) and added 2"
    against one parent is "kept all 1 … added 3" against the other, the same error on the same line."""
    message = "".join(part if part.startswith("`") else _NUMBER_RE.sub("#", part)
                      for part in _UNQUOTED_RE.findall(f.message))
    return f.code, f.line, message


def _answered_by_the_changers(cfg: Config, parents: list[Side], base: Side, new: Side, shown: Sequence[set],
                              holds: Sequence[bool], where: dict) -> set:
    """The errors about a thing (a pattern, or the section holding a line that is not one) that every parent
    which changed the thing since the merge base shows, whatever code each gives it.

    A parent that left the thing as the merge base had it holds a stale view of it: judged against that
    parent, the merge's own edit reads as the other branch's change (a State item appended after a wrap
    reads as the wrap's replacement; a 2x claim reworded reads as its raise from 1x). Its verdict on the
    thing does not count; the parents that changed it decide. They may name one edit differently (a
    rename reworded against one parent, a new pattern against the other; a jump against one, a raise
    without new evidence against the other): an error about the thing is an error about it. A change is
    one of what the thing says, not a heading's suffix or a trailing space (which would buy a vote for
    nothing). A pattern no parent holds was named by the merge itself: no parent vouches for it, so any
    parent's error about it stands. When no parent changed the thing, every parent holding the memory
    votes (the rule of :func:`merge_answers`).
    """
    if not where:
        return set()  # (no error against any parent: nothing to decide)
    docs = _merge_documents(cfg, parents, base, new)
    if docs is None:
        return set()
    parent_docs, base_docs, new_doc = docs
    about: dict[tuple, set] = {}  # thing -> the error keys about it
    for key, finding in where.items():
        if finding.path == new.continuity_path and finding.line:
            thing = _thing_at(new_doc, finding.line - 1)
            if thing is not None:
                about.setdefault(thing, set()).add(key)
    holding = [(found, doc) for found, held, doc in zip(shown, holds, parent_docs) if held]
    out, contested = _by_the_changers(about, holding, base_docs, new_doc)
    if contested:  # a changer's dissent dropped an error: another best base (criss-cross) may make it stale
        more = _other_bases(cfg, base)
        if more:
            out, _ = _by_the_changers(about, holding, base_docs + more, new_doc)
    return out


def _by_the_changers(about: dict, holding: list, base_docs: list, new_doc) -> tuple[set, bool]:
    """The verdict of :func:`_answered_by_the_changers` from these bases, and whether an error was dropped
    because a parent that changed the thing did not show it (another base could make that parent stale)."""
    out: set = set()
    contested = False
    for thing, keys in about.items():
        states = [_as_of(doc, thing) for _, doc in holding]
        if thing[0] == "pattern" and all(state is None for state in states):
            if any(found & keys for found, _ in holding):
                out |= keys  # named by the merge alone
            continue
        was = [_as_of(doc, thing) for doc in base_docs]  # a parent holding it as any base did changed nothing
        voters = [found for (found, _), state in zip(holding, states) if state not in was]
        if not voters:
            continue
        claimed = _claim_of(new_doc, thing)
        if thing[0] == "section" or any(_claim_of(doc, thing) == claimed for _, doc in holding):
            # The merge says what a parent says (a claim as one branch wrote it, its evidence lists unioned),
            # or the thing is a section, whose lines are each judged on their own (a merge note quoting one
            # parent's text reads differently against each): an error every voter shows on the same line by
            # the same code is the merge's own, however each words it ("added 1" against one parent, "word
            # for word inside the new ones" against the other)
            where_shown = [{(k[0], k[1]) for k in found} for found in voters]
            kept = {key for key in keys if all((key[0], key[1]) in shown for shown in where_shown)}
        else:
            kept = keys if all(found & keys for found in voters) else set()  # a claim no parent makes
        out |= kept
        contested = contested or (len(voters) > 1 and kept != keys)
    return out, contested


def _best_bases(cfg: Config, base: Side | None) -> list:
    """Every best merge base's document (None for one that cannot be read); empty when there is no base."""
    if base is None or base.continuity is None:
        return []
    return [_base_document(base.config or cfg, base.continuity, f"base:{base.continuity_path}")[0],
            *_other_bases(cfg, base)]


def _other_bases(cfg: Config, base: Side) -> list:
    """The documents of a merge's other best bases (``Side.extra["other_bases"]``: a list, or a function
    giving one when first needed, for a caller that finds them by starting git)."""
    others = base.extra.get("other_bases") or []
    if callable(others):
        others = base.extra["other_bases"] = others()
    return [document_from_bytes(b.config or cfg, b.continuity, f"base:{b.continuity_path}") if b.continuity
            is not None else None for b in others]


def _merge_documents(cfg: Config, parents: list[Side], base: Side, new: Side):
    """The parents', the merge base's and the result's documents (None when the result cannot be read)."""
    from flowgit.errors import FlowgitError

    def read(side: Side, label: str):
        if side.continuity is None:
            return None
        return document_from_bytes(side.config or cfg, side.continuity, f"{label}:{side.continuity_path}")

    try:
        return ([read(p, "parent") for p in parents], [read(base, "base")], read(new, "merge"))
    except FlowgitError:
        return None


def _thing_at(doc, index: int) -> tuple[str, str] | None:
    """What line ``index`` of the merge result belongs to: ("pattern", its identity) for a pattern line,
    else ("section", the label of the section holding it); None outside every section."""
    from flowgit.continuity.identity import name_key
    from flowgit.continuity.patterns import parse_pattern

    if doc is None or not 0 <= index < len(doc.lines):
        return None
    pattern = parse_pattern(doc.lines[index])
    if pattern is not None:
        return "pattern", name_key(pattern.name)
    section = doc.section_at(index)
    return ("section", section.label) if section is not None else None


def _claim_of(doc, thing: tuple[str, str]):
    """What the thing claims in ``doc``: a pattern's section, level and words (not its evidence, dates or
    notes, which a merge may union); a section's content (None when ``doc`` does not hold it)."""
    from flowgit.continuity.patterns import pattern_map

    if doc is None:
        return None
    if thing[0] == "pattern":
        at = pattern_map(doc).get(thing[1])
        return None if at is None else (at.section, at.pattern.level, " ".join(at.pattern.text.split()).lower())
    return _as_of(doc, thing)


def _as_of(doc, thing: tuple[str, str]):
    """The thing as ``doc`` holds it, in what it says: a pattern's section and words, a section's body
    lines with their spacing evened out (None when ``doc`` has no memory or not the thing)."""
    from flowgit.continuity.patterns import pattern_map

    if doc is None:
        return None
    kind, name = thing
    if kind == "pattern":
        at = pattern_map(doc).get(name)
        return None if at is None else (at.section, " ".join(doc.lines[at.line].split()))
    section = doc.find(name)
    if section is None:
        return None
    return tuple(" ".join(line.split()) for line in doc.lines[section.body_start:section.body_end]
                 if line.strip())


CLAIM_LOSS_CODES = ("G401", "G404")  # a Proven claim reworded, or its evidence changed, against one parent
CLAIM_NAME_RE = re.compile(r"`([^`]+)`")


def _claims_one_parent_holds(cfg: Config, parents: list[Side], shown: Sequence[set], holds: Sequence[bool],
                             losses: set) -> set:
    """The claim losses that are a choice between two Proven claims, not a loss (:func:`holds_as_merged`)."""
    out = set()
    for key in losses:
        name = _claim_loss_name(key)
        if name is not None and any(held and holds_as_merged(cfg, name, parent, {_claim_loss_name(k) for k in found})
                                    for parent, found, held in zip(parents, shown, holds)):
            out.add(key)
    return out


def holds_as_merged(cfg: Config, name: str, parent: Side, lost_against_it: set) -> bool:
    """Whether ``parent`` holds the Proven pattern ``name`` as the merge has it (nothing of its claim or
    evidence lost against that parent: ``lost_against_it`` names the patterns that were).

    Two wraps that graduate the same pattern concurrently write it in their own words, each on its own
    evidence; the merge keeps one (the newer, by the driver). Against the other parent that reads as a
    Proven claim reworded and its evidence changed (G404, G401), yet the merge keeps a claim a parent
    holds in Proven exactly: nothing was fabricated. A claim no parent holds as the merge has it stays
    refused.
    """
    from flowgit.continuity.identity import name_key
    from flowgit.continuity.patterns import pattern_map
    from flowgit.continuity.sections import PROVEN
    from flowgit.repo import document_from_bytes

    if name in lost_against_it or parent.continuity is None:
        return False
    doc = document_from_bytes(parent.config or cfg, parent.continuity, f"parent:{parent.continuity_path}")
    at = pattern_map(doc).get(name_key(name)) if doc is not None else None
    return at is not None and at.section == PROVEN


def _claim_loss_name(key: tuple) -> str | None:
    """The pattern a G401/G404 finding (by its merge key) is about; None for any other finding."""
    named = CLAIM_NAME_RE.search(key[2]) if key[0] in CLAIM_LOSS_CODES else None
    return named.group(1) if named else None


def merge_answers(shown: Sequence[set], holds: Sequence[bool], began_apart: bool) -> set:
    """Of what each parent shows against a merge (or a commit: one parent), what the merge answers for.

    Only the parents that hold the memory vote (one without it, a code branch
    or an orphan, vouches for nothing); among them, what every one shows is the
    merge's own doing, and the rest is one branch's history, judged there;
    but when two memories began apart, none vouches for another, so what any
    shows stands. The gate's errors (:func:`judge_merge`) and the audit's
    weakened configuration (A401) are both decided here.
    """
    holders = [found for found, held in zip(shown, holds) if held]
    if began_apart and len(holders) > 1:
        return set().union(*holders)
    return set.intersection(*(holders or list(shown)))


def _overridden(findings: list[Finding], override: "str | Override | None") -> list[Finding]:
    """The errors the override covers marked as let through (see :mod:`flowgit.checks.override`)."""
    scope = override_of(override)
    if scope is None:
        return findings
    return [f.replace(overridden=True) if f.severity == "error" and scope.covers(f.code) else f for f in findings]
