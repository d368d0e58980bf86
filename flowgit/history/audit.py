"""``flowgit audit``: every gate rule, re-run on every commit of the continuity file and store.

The pre-commit hook is local and optional (``--no-verify``, rebase, revert,
amend, a clone without hooks). The audit is where the verdict is enforced:
each commit that changed the continuity file or the store is judged against
each of its parents by :func:`flowgit.checks.judge.judge_change` — the same
engine the hook and the wrap call — under the configuration committed at the
parent, so a commit cannot weaken the rules that judge it. A merge is reported
only for what it introduced itself (a finding it shows against every parent).

Trailers are read, never trusted: a wrap commit whose trailers disagree with
its change is reported (A201), an override is reported (A301), and a commit
that softens flowgit's own configuration without an override is reported
(A401). A commit whose parent lies beyond a shallow clone's boundary cannot be
judged and is listed as such, never reported as a finding.

Speed: blobs are read once (the newer version of one commit is the older one
of the next), commits whose continuity and store blob ids equal a parent's are
not judged at all, configurations are parsed once per distinct blob, and a
long history is judged in slices on every core (:mod:`flowgit.history.parallel`).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from flowgit.changes import diff_pattern_maps, events_against
from flowgit.checks.attributes import attribute_files
from flowgit.checks.finding import Finding
from flowgit.checks.hooklist import HOOK_CONFIG
from flowgit.checks.judge import Side, judge_change, judge_merge, merge_answers
from flowgit.checks.override import Override, override_from_trailers, parse_override
from flowgit.checks.paths import weakenings
from flowgit.config import Config, default_config
from flowgit.continuity.patterns import PatternAt, pattern_map
from flowgit.dates import utc_from_timestamp
from flowgit.errors import FlowgitError, UnreadableText
from flowgit.history.blobstream import PlannedReads, planned_reads
from flowgit.history.commits import commit_time_of, message_of
from flowgit.history.config_at import ConfigAt, ConfigReader
from flowgit.history.notes import VersionNotes
from flowgit.history.replaced import replaced_history
from flowgit.history.treeform import TreeForms
from flowgit.history.walk import open_repo, refusing_grafts
from flowgit.output import Progress
from flowgit.repo import document_from_bytes, reusing_documents
from flowgit.trailers import episode_ids, episode_mismatches, mismatches, parse_trailers, speaks_for_a_wrap, values


@dataclass(frozen=True)
class AuditFinding:
    code: str
    commit: str
    date: str
    pattern: str
    message: str
    rule: str = ""
    path: str = ""
    line: int | None = None
    fix: str = ""
    severity: str = "error"  # "notice": recorded and shown, but the audit still passes (a deliberate override)

    def to_dict(self) -> dict:
        return {"code": self.code, "commit": self.commit, "date": self.date, "pattern": self.pattern,
                "rule": self.rule, "path": self.path, "line": self.line, "message": self.message, "fix": self.fix,
                "severity": self.severity}

    def format(self) -> str:
        where = f" {self.path}:{self.line}" if self.path and self.line else (f" {self.path}" if self.path else "")
        rule = f" [{self.rule}]" if self.rule else ""
        who = f" `{self.pattern}`" if self.pattern and f"`{self.pattern}`" not in self.message else ""  # (once)
        return f"{self.commit[:12]} {self.date} {self.code}{rule}{where}{who}: {self.message}"


@dataclass
class AuditReport:
    findings: list[AuditFinding]
    commits: int  # commits read
    judged: int  # commits the rules ran on
    shallow: bool
    oldest_visible: str | None
    unjudged: list[str] = field(default_factory=list)  # commits whose parent is beyond a shallow boundary
    range: str | None = None
    notes: VersionNotes | None = None  # what the report asked the audit to note of each version (:mod:`.notes`)
    not_pushed: set[str] | None = None  # of the failing commits, those no remote has yet (None: no remote known)

    @property
    def errors(self) -> list[AuditFinding]:
        """Findings that fail the audit; an override (A301) is recorded for people to see, not a failure."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def incomplete(self) -> bool:
        """A range asked for (CI, a push) holds commits that could not be judged (their parents lie beyond a
        shallow boundary): what was asked is not answered, so it is no pass. A whole shallow history's oldest
        commit is its baseline, not a question left open."""
        return bool(self.range and self.unjudged)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.incomplete

    def to_dict(self) -> dict:
        return {"ok": self.ok, "range": self.range, "commits_read": self.commits, "commits_judged": self.judged,
                "incomplete": self.incomplete,
                "shallow": self.shallow, "oldest_visible": self.oldest_visible, "unjudged": self.unjudged,
                "not_pushed": sorted(self.not_pushed) if self.not_pushed is not None else None,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class RangeSpec:
    """Which commits to audit: those reachable from ``include`` and not from ``exclude``."""

    include: tuple[str, ...] = ("HEAD",)
    exclude: tuple[str, ...] = ()
    label: str | None = None
    base: str | None = None  # A of ``A..B`` (or ``--since-ref A``): what the tip's branch held before
    replaces: bool = False  # B replaces A on a branch (a push's update): B may not drop what A's store held
    roots_base: str | None = None  # what a root on another included tip's first-parent line is judged against

    def with_tips(self, tips: tuple[str, ...], label: str, roots_base: str | None) -> "RangeSpec":
        """This range with more tips to judge (a push whose other refs are not named): the first stays the
        branch's update :func:`replaced_pair` judges, a root met on another's line is judged against
        ``roots_base``."""
        return RangeSpec((*self.include, *(t for t in tips if t not in self.include)), self.exclude, label,
                         self.base, self.replaces, roots_base)

    @classmethod
    def parse(cls, range_text: str | None = None, since_ref: str | None = None,
              exclude: tuple[str, ...] = (), root_base: str | None = None, replaces: bool = False) -> "RangeSpec":
        """The range as given; ``root_base`` names what a history put in place is judged against when the range
        has no base of its own (a branch new to the remote: see :func:`replaced_roots`); ``replaces``: the
        range is a branch's update from A to B (see :mod:`flowgit.history.replaced`)."""
        spec = cls._parsed(range_text, since_ref, exclude)
        own_base = spec.base is not None
        if root_base and spec.base is None:
            spec = cls(spec.include, spec.exclude, spec.label, root_base)
        if replaces:
            if not own_base:
                raise FlowgitError("--replaces needs a range A..B: the branch's old tip and its new one",
                                   fix="flowgit audit --range OLD..NEW --replaces")
            spec = cls(spec.include, spec.exclude, spec.label, spec.base, True)
        return spec

    @classmethod
    def _parsed(cls, range_text: str | None, since_ref: str | None, exclude: tuple[str, ...]) -> "RangeSpec":
        if range_text and since_ref:
            raise FlowgitError("give --range or --since-ref, not both", fix="--range A..B, or --since-ref REF")
        if since_ref:
            return cls(("HEAD",), (since_ref, *exclude), f"{since_ref}..HEAD", since_ref)
        if not range_text:
            return cls(("HEAD",), tuple(exclude), None)
        if "..." in range_text:
            raise FlowgitError(f"--range {range_text!r}: a symmetric difference is not an audit range",
                               fix="use A..B (the commits B has that A does not)")
        if ".." in range_text:
            base, _, tip = range_text.partition("..")
            return cls((tip or "HEAD",), ((base,) if base else ()) + tuple(exclude), range_text, base or None)
        shown = " ".join([range_text, *(f"--not {rev[:12]}" for rev in exclude[:3])])
        shown += " …" if len(exclude) > 3 else ""
        return cls((range_text,), tuple(exclude), shown)


@dataclass(frozen=True)
class Version:
    """What a commit holds of flowgit's: its configuration and the two blobs the rules judge."""

    config: ConfigAt
    continuity_path: str
    continuity: object | None  # blob Oid
    store_path: str
    store: object | None
    symlinked: tuple[str, ...] = ()  # the judged paths (or directories on their way) committed as links
    case_variants: tuple[tuple[str, str], ...] = ()  # (path, blob id) differing from a judged path only in case
    hooks: object | None = None  # the pre-commit framework's hook list (blob Oid), which runs the gate's hooks
    attributes: tuple = ()  # (path, blob Oid) of the .gitattributes files that can give the judged paths any
    malformed: tuple[str, ...] = ()  # what the trees on the way to the judged paths hold that git reads otherwise

    @property
    def blobs(self) -> tuple:
        return (self.continuity, self.store)

    @property
    def held(self) -> tuple:
        """What the rules judge of the commit, as git records it: the blobs, and how their paths are held
        (a file turned into a symbolic link of its own blob, G806, or a twin in another letter case, G809,
        is a change though no blob differs)."""
        return (self.continuity, self.store, self.symlinked, self.case_variants, self.malformed)


def _as_audit_findings(errors: list[Finding], sha: str, date: str) -> list[AuditFinding]:
    """The gate's errors on a commit as audit findings; one its ``Flow-Override:`` let through is a notice
    that says what the override let through (it is on record, so it does not fail the audit)."""
    return [AuditFinding(f.code, sha, date, pattern_named(f), f"let through by the override: {f.message}"
                         if f.overridden else f.message, rule=f.rule, path=f.path, line=f.line, fix=f.fix,
                         severity="notice" if f.overridden else "error") for f in errors]


# The rules about one pattern name it first, in backticks (`retry_budget` …): the audit's `pattern` field.
PATTERN_RULES = ("names", "new-pattern", "proven-exit", "proven-claim", "claim-kept", "ungrounded-graduation",
                 "evidence", "evidence-reuse", "level-jump", "protected-evidence")
_NAMED_RE = re.compile(r"`([A-Za-z0-9][A-Za-z0-9_.\-/]*)`")


def pattern_named(f: Finding) -> str:
    """The pattern a finding of a pattern rule is about, so `audit --json` can be filtered by pattern."""
    if f.rule not in PATTERN_RULES:
        return ""
    found = _NAMED_RE.search(f.message)
    return found.group(1) if found else ""


class Auditor:
    """Judges commits one by one, reading every blob and configuration at most once."""

    def __init__(self, cfg: Config, repo, overrides: dict | None = None, notes: VersionNotes | None = None,
                 stand_ins: Mapping[str, str] | None = None) -> None:
        self.cfg, self.repo = cfg, repo
        self.stand_ins = dict(stand_ins or {})  # a commit without a parent -> what it is judged against
        self.notes = notes  # the report's events and sizes, noted from the documents the rules parse
        self.configs = ConfigReader(cfg.root, repo, overrides)
        self._blobs: OrderedDict = OrderedDict()
        self._versions: OrderedDict[str, Version] = OrderedDict()  # a commit, its parents, and the plan ahead
        self._maps: OrderedDict = OrderedDict()
        self._reads: PlannedReads = planned_reads(repo, None)
        self.shallow_commits = _shallow_set(repo)
        self._known: dict = {}  # the commits being judged, by id: most parents are among them
        self._judged_paths: dict[tuple, tuple[str, str, tuple[str, ...]]] = {}
        self._sides: dict = {}  # the last few commits as sides of a change
        self._same_aliases: dict[tuple, bool] = {}  # per configuration: read under the notes' aliases?
        self._tree_names: dict = {}  # a few trees' entries by case-folded name (see _case_variants)
        self._forms = TreeForms(repo)  # trees a checkout reads otherwise than their entries say (A405)
        self._weaker: dict[tuple, list[str]] = {}  # G801's answer per (parent config, config, parent holds)
        # A commit is judged as of its committer date, which its committer chooses: one dated after this
        # audit started is judged as of now (a Proven pattern is not stale yet because the date says 2027).
        self._now = time.time()

    @contextmanager
    def reading_ahead(self, commits: list) -> Iterator["Auditor"]:
        """Judge ``commits`` (in this order) with their blobs inflated by a git process running ahead.

        The stream is stopped and git reaped when the block ends, however it ends.
        """
        self._known = {commit.id: commit for commit in commits}  # (before the plan: it looks parents up here)
        try:
            self._reads = planned_reads(self.repo, self._plan(commits))
            yield self
        finally:
            self._reads.close()
            self._reads = planned_reads(self.repo, None)
            self._known = {}

    def _plan(self, commits: list) -> Iterator:
        """The blobs judging ``commits`` reads, in order: each commit's that the one before it did not hold.

        (Store first, as :meth:`side` reads them. A parent's blobs are the ones
        just read for the commit before, except where the first parent is not
        that commit (the first of a worker's slice, or a branch met in history
        order): then its blobs follow the commit's. A merge's other sides and
        its merge base are read when they are met.)
        """
        previous: tuple = ()
        last = None
        for commit in commits:
            version = self.version(commit)
            blobs = (version.store, version.continuity)
            yield from (oid for oid in blobs if oid is not None and oid not in previous)
            parents = commit.parent_ids
            if parents and parents[0] != last:
                parent = self._known.get(parents[0]) or self._lookup(parents[0])
                if parent is not None:
                    was = self.version(parent)
                    if was.blobs != version.blobs:  # (else the commit is not judged: nothing of it is read)
                        yield from (oid for oid in (was.store, was.continuity) if oid is not None and oid not in blobs)
            previous, last = blobs, commit.id

    def _lookup(self, oid):
        """The commit ``oid`` from the repository; None when this clone does not have it (shallow, partial)."""
        try:
            return self.repo[oid]
        except KeyError:
            return None

    # ----------------------------------------------------------- reading
    def version(self, commit) -> Version:
        sha = str(commit.id)
        found = self._versions.get(sha)
        if found is None:
            tree = commit.tree
            conf = self.configs.at(tree)
            cont, store, judged = self._paths(conf)
            found = Version(conf, cont, _oid(tree, cont), store, _oid(tree, store), _links(tree, judged),
                            self._case_variants(tree, (cont, store)), self._hook_list(tree),
                            tuple((name, _oid(tree, name)) for name in attribute_files([cont, store])),
                            self._forms.problems(tree, (cont, store)))
            self._versions[sha] = found
            if len(self._versions) > 256:
                self._versions.popitem(last=False)
        return found

    def _case_variants(self, tree, judged: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        """(path, blob id) of the tree's files that differ from a judged path only in letter case (G809).

        Read level by level, each directory's names remembered by its tree id:
        most commits change the root tree only, and it holds a few dozen names.
        """
        from flowgit.checks.paths import case_variants_of, path_fold

        present: dict[str, str] = {}
        for path in judged:
            level = [("", tree)]
            parts = path.split("/")
            for depth, part in enumerate(parts):
                folded, below = path_fold(part), []
                for prefix, at in level:
                    for name, oid, is_tree in self._names(at).get(folded, ()):
                        if depth == len(parts) - 1:
                            if not is_tree:
                                present[prefix + name] = oid
                        elif is_tree:
                            below.append((f"{prefix}{name}/", self.repo[oid]))
                level = below
        return tuple(sorted(case_variants_of(list(judged), present).items()))

    def _names(self, tree) -> dict[str, list[tuple[str, str, bool]]]:
        """A tree's entries by folded name (:func:`~flowgit.checks.paths.path_fold`): (name, id, whether a
        tree), remembered by the tree's id."""
        from flowgit.checks.paths import path_fold

        found = self._tree_names.get(tree.id)
        if found is None:
            found = {}
            for entry in tree:
                found.setdefault(path_fold(entry.name), []).append((entry.name, str(entry.id),
                                                                    entry.type_str == "tree"))
            self._tree_names[tree.id] = found
            if len(self._tree_names) > 64:
                del self._tree_names[next(iter(self._tree_names))]
        return found

    def _paths(self, conf: ConfigAt) -> tuple[str, str, tuple[str, ...]]:
        """(continuity path, store path, both with every directory on their way) under one configuration
        (worked out once per configuration: each is a path computation per commit otherwise)."""
        found = self._judged_paths.get(conf.key)
        if found is None:
            from flowgit.checks.staged import with_parents

            cont, store = conf.cfg.continuity_rel, conf.cfg.store_rel
            found = self._judged_paths[conf.key] = (cont, store, tuple(with_parents([cont, store])))
        return found

    def _weaker_than_parents(self, parents: list, before: list[Version], version: Version) -> list[str]:
        """How this commit's configuration is weaker than its parents' ([] when it is not).

        A merge weakens when it is weaker than every parent that holds the
        memory (a parent without it, a code branch or an orphan holding only a
        configuration, vouches for nothing), or than the first parent, the
        branch merged into, when that one holds it (another branch's lenient
        configuration, overridden there, needs the merge's own override to land);
        when two memories began apart, than any of them: no configuration of one
        vouches for the other's.
        """
        if not before:  # a root commit: held to the defaults, as the gate holds a first commit
            return weakenings(default_config(self.cfg.root), version.config.cfg, holds=(False, False))
        found = [self._weakenings(p, version) for p in before]
        if len(before) < 2:
            return found[0]
        holds = [p.continuity is not None for p in before]
        began_apart = sum(holds) > 1 and not self._share_memory(parents, before)
        answered = merge_answers([set(w) for w in found], holds, began_apart)
        if holds[0]:  # weaker than the branch merged into (the gate's G801 of a merge, judge_merge)
            answered |= set(found[0])
        return list(dict.fromkeys(w for ws in found for w in ws if w in answered))

    def _share_memory(self, parents: list, before: list[Version]) -> bool:
        """Whether the parents holding the memory share a merge base that holds the continuity file."""
        base = self._memory_base(parents, before)
        return base is not None and base.continuity is not None

    def _memory_base(self, parents: list, before: list[Version]):
        """The merge base of the parents that hold the memory (all of them when fewer than two do): a code
        branch from before the memory, in an octopus merge, does not make the memories look begun apart."""
        holding = [p for p, was in zip(parents, before) if was.continuity is not None]
        return self._merge_base(holding if len(holding) > 1 else parents)

    def _hooks_weaker_than_parents(self, before: list[Version], version: Version) -> list[str]:
        """G810's question of a commit: how its hook list runs flowgit's hooks less than its parents' do
        (a root commit weakens none: the framework's list is not held to a default)."""
        if not before or any(p.hooks == version.hooks for p in before):
            return []
        from flowgit.checks.hooklist import merged_weakenings

        memory_changed = all(p.held != version.held for p in before)
        return merged_weakenings(self.data(version.hooks), [self.data(p.hooks) for p in before],
                                 memory_changed=memory_changed)

    def _hook_list(self, tree):
        """The blob id of the framework's hook list in ``tree``: a symbolic link is followed (one hop, inside
        the tree) to the list the framework would read."""
        try:
            entry = tree[HOOK_CONFIG]
        except KeyError:
            return None
        if entry.filemode != 0o120000:
            return entry.id if entry.type_str == "blob" else None
        from flowgit.checks.hooklist import link_target

        target = link_target(self.repo[entry.id].data)
        return _oid(tree, target) if target else None

    def _weakenings(self, base: Version, new: Version) -> list[str]:
        """G801's answer for a parent and its child, asked of what the parent held; asked once per pair of
        configurations and holdings (a history has a few configurations and thousands of commits)."""
        holds = (base.continuity is not None, base.store is not None)
        key = (base.config.key, new.config.key, holds)
        found = self._weaker.get(key)
        if found is None:
            found = self._weaker[key] = weakenings(base.config.cfg, new.config.cfg, holds=holds)
        return found

    def data(self, oid) -> bytes | None:
        if oid is None:
            return None
        if oid in self._blobs:
            self._blobs.move_to_end(oid)
            return self._blobs[oid]
        data = self._reads.read(oid)  # raw object bytes, from the git process reading ahead when it has them
        self._blobs[oid] = data
        if len(self._blobs) > 8:
            self._blobs.popitem(last=False)
        return data

    def side(self, commit, version: Version):
        """The commit as one side of a change (read-only: a commit's new side is its child's old side)."""
        key = commit.id
        found = self._sides.get(key)
        if found is None:
            found = self._sides[key] = self.fresh_side(commit, version)
            if len(self._sides) > 4:
                del self._sides[next(iter(self._sides))]
        return found

    def fresh_side(self, commit, version: Version):
        """The commit as a new :class:`Side`, not the one :meth:`side` shares (a caller may set its extras)."""
        store = self.data(version.store)
        ref = (str(version.store), len(store)) if store is not None else None  # git's own id: no re-hashing
        return Side(continuity=self.data(version.continuity), store=store, store_ref=ref,
                    extra={"symlinked": list(version.symlinked), "case_variants": dict(version.case_variants)},
                    continuity_path=version.continuity_path, store_path=version.store_path, commit=str(commit.id),
                    when=utc_from_timestamp(min(commit_time_of(commit), self._now)))

    def patterns(self, version: Version) -> Mapping[str, PatternAt]:
        """The version's patterns by name, for the trailer check.

        The rules have just parsed this version (as the commit's new side, or
        the child's old one), so the map comes from that same Document: the
        bytes and aliases find it again in :func:`reusing_documents`. A version
        the rules could not parse (not UTF-8, too large) is scanned leniently.
        """
        oid = version.continuity
        if oid is None:
            return {}
        key = (oid, version.config.key)  # the same blob under other aliases holds other sections
        found = self._maps.get(key)
        if found is None:
            found = self._maps[key] = self._pattern_map(version)
            if len(self._maps) > 8:
                self._maps.popitem(last=False)
        return found

    def _pattern_map(self, version: Version) -> Mapping[str, PatternAt]:
        data = self.data(version.continuity)
        cfg = version.config.cfg
        try:
            doc = document_from_bytes(cfg, data, version.continuity_path)
        except FlowgitError:
            from flowgit.continuity.scan import scan_patterns
            from flowgit.continuity.sections import alias_table

            return scan_patterns(data.decode("utf-8", "replace"), table=alias_table(cfg.aliases))
        return pattern_map(doc) if doc is not None else {}

    def _note(self, sha: str, version: Version, before: list[Version], events: list | None) -> None:
        """Note for the report what this commit introduced and its version's size (see :mod:`.notes`), when
        every version compared was read under the report's aliases. ``events``: this commit's against its
        only parent, when the trailer check has just derived them (the same derivation)."""
        notes = self.notes
        assert notes is not None
        parents = [p.continuity for p in before]
        if version.continuity is None or version.continuity in parents:
            return  # no version of its own: the history walk reads no events here
        if any(v.continuity is not None and not self._noted_aliases(v) for v in (version, *before)):
            return
        if events is None:
            events = events_against([self.patterns(p) for p in before], self.patterns(version))
        notes.events[sha] = (str(version.continuity), tuple(None if b is None else str(b) for b in parents), events)
        blob = str(version.continuity)
        if blob not in notes.sizes and (size := self._size(version)) is not None:
            notes.sizes[blob] = size

    def _noted_aliases(self, version: Version) -> bool:
        same = self._same_aliases.get(version.config.key)
        if same is None:
            assert self.notes is not None
            same = self._same_aliases[version.config.key] = version.config.cfg.aliases == self.notes.aliases
        return same

    def _size(self, version: Version):
        """The version's size as the report measures it: from the document the rules parsed, else its text."""
        from flowgit.report.sizes import measure, measure_document

        data = self.data(version.continuity)
        if data is None:
            return None
        try:
            doc = document_from_bytes(version.config.cfg, data, version.continuity_path)
        except FlowgitError:
            doc = None
        if doc is not None:
            return measure_document(doc)
        from flowgit.continuity.sections import alias_table

        return measure(data.decode("utf-8", "replace"), alias_table(version.config.cfg.aliases))

    # ----------------------------------------------------------- judging
    def audit_commit(self, commit) -> tuple[bool, list[AuditFinding]] | None:
        """(judged?, findings) for one commit; None when it lies on a shallow boundary."""
        sha = str(commit.id)
        parents = self._parents(commit)
        if parents is None:
            return None
        version = self.version(commit)
        date = utc_from_timestamp(commit_time_of(commit)).date().isoformat()  # (UTC, as the walk dates it)
        trailers = parse_trailers(message_of(commit))
        override = override_from_trailers(values(trailers, "Flow-Override"))
        out = [AuditFinding("A301", sha, date, "", f"the gate was overridden for {scope.describe()}: {scope}",
                            severity="notice")
               for scope in map(parse_override, values(trailers, "Flow-Override")) if scope is not None]
        before = [self.version(p) for p in parents]
        weaker = self._weaker_than_parents(parents, before, version)  # the gate's own question (G801)
        if weaker and not (override and override.covers("G801", "A401")):
            out.append(AuditFinding("A401", sha, date, "", "the flowgit configuration was weakened without an "
                                    "override: " + "; ".join(weaker), path=_config_path(version),
                                    fix="revert it, or make the change with FLOWGIT_OVERRIDE=\"why\""))
        hooks = self._hooks_weaker_than_parents(before, version) \
            if not (override and override.covers("G810", "A404")) else []
        if hooks:
            out.append(AuditFinding("A404", sha, date, "", "the hooks that judge commits were weakened without "
                                    "an override: the pre-commit framework's hook list " + "; ".join(hooks),
                                    path=HOOK_CONFIG, fix="restore flowgit's hooks in a new commit, or make "
                                    "the change with FLOWGIT_OVERRIDE=\"why\""))
        if version.malformed and (not before or before[0].malformed != version.malformed):
            out.append(AuditFinding("A405", sha, date, "", "the commit's tree is not one git writes where it "
                                    "holds the memory, so every clone checks out another file than the one "
                                    "judged: " + "; ".join(version.malformed), path=version.continuity_path,
                                    fix="rebuild the commit with git itself (check the files out and commit "
                                        "them), and set `receive.fsckObjects true` on the server"))
        if version.config.problem and (not before or before[0].config.key != version.config.key):
            out.append(AuditFinding("A402", sha, date, "", f"the committed flowgit configuration is invalid "
                                    f"({version.config.problem}); the defaults judged this commit"))
        # A merge that took one side's files whole may still have dropped the other side's episodes: it is
        # judged unless it equals every parent.
        unchanged = (all if len(before) > 1 else any)(p.held == version.held and p.attributes == version.attributes
                                                      for p in before)
        untouched = version.blobs == (None, None) and all(p.blobs == (None, None) for p in before)
        claims = speaks_for_a_wrap(trailers)
        if unchanged or untouched:  # a trailer that claims a change this commit does not make is still false
            # (a merge that changes nothing against any parent too; a rename it names is not the memory's)
            out.extend(AuditFinding("A201", sha, date, "", problem) for problem in
                       (mismatches(trailers, [], memory_changed=False) if claims else ()))
            out.extend(self._episode_claims(trailers, sha, date, version, before))
            return False, out
        try:
            out.extend(self._judge(commit, version, parents, before, override, sha, date))
        except UnreadableText as exc:  # what the hook refuses (exit 2): reported, and the change still judged,
            out.append(AuditFinding("A403", sha, date, "", f"the commit's continuity file cannot be read: "
                                    f"{exc.message}", path=version.continuity_path, line=exc.line,
                                    fix=exc.fix or ""))  # read as it was most likely meant (as later commits
            try:  # read it)
                out.extend(self._judge(commit, version, parents, before, override, sha, date, as_text=True))
            except UnreadableText:
                pass  # not text even read leniently (over the size limit): reported; the next commit is judged
        events = None  # against the first parent
        if claims:
            events = diff_pattern_maps(self.patterns(before[0]) if before else {}, self.patterns(version))
            out.extend(AuditFinding("A201", sha, date, "", problem) for problem in mismatches(trailers, events))
        out.extend(self._episode_claims(trailers, sha, date, version, before))
        if self.notes is not None:
            self._note(sha, version, before, events if len(before) <= 1 else None)
        return True, out

    def _episode_claims(self, trailers, sha: str, date: str, version: Version,
                        before: list[Version]) -> list[AuditFinding]:
        """A201 for an ``Episodes:`` id the commit's store lacks, or that it did not append (check-msg's
        question, asked of what was committed: against the first parent)."""
        ids = episode_ids([trailers])
        if not ids:
            return []
        store = self.data(version.store) or b""
        old = (self.data(before[0].store) or b"") if before else b""
        appended = store[len(old):] if store.startswith(old) else store
        return [AuditFinding("A201", sha, date, "", problem) for problem in episode_mismatches(ids, store, appended)]

    def _judge(self, commit, version: Version, parents, before: list[Version], override: Override | None, sha: str,
               date: str, as_text: bool = False) -> list[AuditFinding]:
        new = self.side(commit, version)
        if as_text:  # a file that is not text, judged as it was most likely meant (see flowgit.fsio.as_text)
            from flowgit.fsio import as_text as read_as_text

            new = new.with_continuity(read_as_text(new.continuity).encode("utf-8"))
        if len(parents) > 1:  # the hook's own merge verdict: an error stands if every parent shows it,
            olds = [self.side(p, was) for p, was in zip(parents, before)]  # and no parent's episode is lost
            for side, was in zip(olds, before):
                side.config = was.config.cfg  # each parent judges under its own configuration
            self._read_merge_attributes(olds, before, new, version)
            found = judge_merge(before[0].config.cfg, olds, new, override=override,
                                base=self._memory_base(parents, before), carried=version.config.cfg)
            return _as_audit_findings([f for f in found if f.severity == "error"], sha, date)
        per_parent: list[list[Finding]] = []
        for parent, was in zip(parents, before):
            old = self.side(parent, was) if was.blobs != (None, None) else None
            if old is not None:
                self.read_attributes(old, was, new, version)
            found = judge_change(was.config.cfg, old, new, message=message_of(commit), override=override,
                                 held_twins=dict(was.case_variants))
            per_parent.append([f for f in found if f.severity == "error"])
        if not per_parent:  # a root commit: judged as a first commit, under its own configuration
            found = judge_change(version.config.cfg, None, new, message=message_of(commit), override=override)
            per_parent.append([f for f in found if f.severity == "error"])
        kept = per_parent[0]
        for other in per_parent[1:]:  # a merge answers only for what it shows against every parent
            keys = {(f.code, f.message) for f in other}
            kept = [f for f in kept if (f.code, f.message) in keys]
        return _as_audit_findings(kept, sha, date)

    def _read_merge_attributes(self, olds: list, before: list[Version], new, version: Version) -> None:
        """:meth:`read_attributes` for a merge: the result's reading against each parent whose attributes
        differ from it (G811 then stands as any error of a merge does: where every parent shows it, so an
        attributes change the merge makes itself is found, and one a branch made and answered for is not)."""
        from flowgit.checks.attributes import side_attributes

        differs = [was.attributes != version.attributes for was in before]
        if not any(differs):
            for side in (*olds, new):
                side.extra["attributes"] = None
            return
        paths = [version.continuity_path, version.store_path]
        changed = {name: self.data(oid) or b"" for name, oid in version.attributes if oid is not None
                   and any(oid != dict(was.attributes).get(name) for was in before)}
        new.extra["attributes"] = side_attributes(self.cfg.root, {n: str(o) if o else None
                                                                  for n, o in version.attributes}, paths, changed)
        for side, was, differ in zip(olds, before, differs):
            side.extra["attributes"] = side_attributes(
                self.cfg.root, {n: str(o) if o else None for n, o in was.attributes}, paths) if differ else None

    def read_attributes(self, old, was: Version, new, version: Version) -> None:
        """Both sides' reading of the judged attributes (G811's question) when the commit changed an attributes
        file that can give them any; otherwise neither side carries one and git is not asked."""
        from flowgit.checks.attributes import side_attributes

        if was.attributes == version.attributes:
            old.extra["attributes"] = new.extra["attributes"] = None
            return
        paths = [version.continuity_path, version.store_path]
        held = dict(was.attributes)
        changed = {name: self.data(oid) or b"" for name, oid in version.attributes
                   if oid is not None and oid != held.get(name)}
        old.extra["attributes"] = side_attributes(self.cfg.root, {n: str(o) if o else None for n, o in was.attributes},
                                                  paths)
        new.extra["attributes"] = side_attributes(self.cfg.root, {n: str(o) if o else None
                                                                  for n, o in version.attributes}, paths, changed)

    def _merge_base(self, parents: list):
        """The merge base of a merge's parents as a Side (None: they share no history)."""
        try:
            found = self.repo.merge_base_octopus([p.id for p in parents])
        except (KeyError, ValueError):
            found = None
        if found is None:
            return None
        commit = self.repo[found]
        primary = self.side(commit, self.version(commit))
        # a criss-cross merge has several best bases (libgit2 names one): the others, found by starting git
        # only when a verdict could turn on them (set afresh each time: the Side is shared, read as this
        # merge's base only)
        primary.extra["other_bases"] = (
            (lambda: [self.side(self.repo[rev], self.version(self.repo[rev]))
                      for rev in self._all_merge_bases(parents) if rev != str(found)])
            if len(parents) == 2 else [])
        return primary

    def _all_merge_bases(self, parents: list) -> list[str]:
        """``git merge-base --all`` of two parents (merges are few: one git process each)."""
        from flowgit.git import git

        out = git(self.cfg.root, "merge-base", "--all", *(str(p.id) for p in parents), check=False)
        return out.decode().split()

    def _begins_a_memory(self, commit) -> bool:
        """Whether ``commit`` holds a memory its first parent (if any) does not: where a history put in place
        of a branch begins its memory (an orphan carrying one, or a commit from before ``flowgit init``
        rewound to). A history without a memory (a gh-pages orphan) begins none, and is judged as it is."""
        if self.version(commit).blobs == (None, None):
            return False
        if not commit.parent_ids:
            return True
        parent = self._lookup(commit.parent_ids[0])
        return parent is not None and self.version(parent).blobs == (None, None)

    def _parents(self, commit) -> list | None:
        if str(commit.id) in self.shallow_commits:
            return None
        parents = []
        stand_in = self.stand_ins.get(str(commit.id))
        if stand_in is not None and self._begins_a_memory(commit):
            return [self.repo[stand_in]]  # a history put in place of the range's base: judged against it
        for pid in commit.parent_ids:
            found = self._known.get(pid)
            if found is None:
                try:
                    found = self.repo[pid]
                except KeyError:
                    return None  # the parent is not here (a shallow or partial clone)
            parents.append(found)
        return parents


def _oid(tree, path: str):
    try:
        entry = tree[path]
    except KeyError:
        return None
    return entry.id if entry.type_str == "blob" else None


def _links(tree, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Which of ``paths`` (the judged files and every directory leading to them) the tree holds as
    symbolic links."""
    out = []
    for path in paths:
        try:
            entry = tree[path]
        except KeyError:
            continue
        if entry.filemode == 0o120000:
            out.append(path)
    return tuple(out)


def _config_path(version: Version) -> str:
    return ".flowgit.toml" if version.config.key[0] else "pyproject.toml"


def _shallow_set(repo) -> set[str]:
    """Commits at a shallow clone's boundary (git lists them in $GIT_DIR/shallow)."""
    if not repo.is_shallow:
        return set()
    path = Path(repo.path) / "shallow"
    try:
        return {line.strip() for line in path.read_text().splitlines() if line.strip()}
    except OSError:
        return set()


def select_commits(repo, spec: RangeSpec) -> list:
    """The commits of ``spec``, oldest first (parents before children)."""
    import pygit2

    if repo.head_is_unborn and spec.include == ("HEAD",):
        return []
    walker = repo.walk(None, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE)
    pushed = [commit for commit in (_resolve(repo, rev) for rev in spec.include) if commit is not None]
    if not pushed:
        return []  # a tag of a blob or a tree (a published key): no commit, nothing to judge
    for commit in pushed:
        walker.push(commit)
    for rev in spec.exclude:
        hidden = _resolve(repo, rev)
        if hidden is not None:  # a blob or tree hides no commit
            walker.hide(hidden)
    return list(walker)


def _resolve(repo, rev: str):
    """The commit ``rev`` names (a tag peeled), or None when it names an object that is no commit and
    holds none (a tag of a blob or a tree)."""
    import pygit2

    try:
        found = repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        if isinstance(exc, pygit2.InvalidError) and "failed to parse" in str(exc):
            raise  # a commit on the way libgit2 cannot read: said as such (flowgit.cli.main), not "unknown"
        raise FlowgitError(f"unknown revision {rev!r}", fix="name a commit, branch or tag this repository has "
                                                           "(in CI, fetch enough history first)") from None
    try:
        return found.peel(pygit2.Commit).id
    except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def replaced_pair(repo, spec: RangeSpec) -> tuple | None:
    """(old tip, new tip) when ``spec`` is a branch's update (``--replaces``) that is no fast-forward: the new
    history is put in place of the old one, so what the old tip held is judged against the new tip too."""
    if not spec.replaces or spec.base is None:
        return None
    base, tip = _resolve(repo, spec.base), _resolve(repo, spec.include[0])
    if base is None or tip is None or tip == base or repo.descendant_of(tip, base):
        return None
    return base, tip


def replaced_roots(repo, spec: RangeSpec, commits: list) -> dict[str, str]:
    """{where a history put in place of the range's base begins: that base} for ``A..B``.

    Followed first parent by first parent from B inside the range, the line
    ends at a commit without a parent (a force-push of an orphan, an amend in
    a one-commit-deep clone), or, where B does not descend from A (history
    rewritten), at a commit whose parent lies outside the range. Judged as a
    memory's first commit that commit would be judged against nothing, so a
    store rewritten or a Foundation changed would pass: where it begins a
    memory (:meth:`Auditor._begins_a_memory`) it is judged against A, what
    the branch held. An unrelated history merged in (``--allow-unrelated-
    histories``) is not on the tip's first-parent line; a fast-forward's line
    reaches A itself.
    """
    if spec.base is None or not commits:
        return {}
    base = _resolve(repo, spec.base)
    tip = _resolve(repo, spec.include[0])
    inside = {commit.id: commit for commit in commits}
    found = _other_roots(repo, spec, inside)
    at = _line_end(inside, tip) if base is not None else None
    if at is None:
        return found
    if at.parent_ids and (tip == base or repo.descendant_of(tip, base)):
        return found  # B holds A: nothing was put in place of it
    return {**found, str(at.id): str(base)}


def _line_end(inside: dict, tip):
    """Where ``tip``'s first-parent line ends inside the range (None: the tip is not in it)."""
    at = inside.get(tip)
    while at is not None and at.parent_ids and at.parent_ids[0] in inside:
        at = inside[at.parent_ids[0]]
    return at


def _other_roots(repo, spec: RangeSpec, inside: dict) -> dict[str, str]:
    """{a root on another included tip's first-parent line: ``spec.roots_base``} (a push whose refs the
    caller could not tell apart: each history begun afresh in it is judged against the remote's default)."""
    if spec.roots_base is None:
        return {}
    out = {}
    for rev in spec.include[1:]:
        tip = _resolve(repo, rev)
        at = _line_end(inside, tip) if tip is not None else None
        if at is not None and not at.parent_ids:
            out[str(at.id)] = spec.roots_base
    return out


def open_any(root: Path):
    """The repository at ``root``: a checkout, or a bare repository (a server running pre-receive).

    In pre-receive, git keeps the pushed objects in a quarantine directory it
    names in ``GIT_OBJECT_DIRECTORY``/``GIT_QUARANTINE_PATH``; it is added as an
    alternate so the new commits can be read before they are accepted.
    """
    import os

    import pygit2

    if (root / ".git").exists():
        repo = open_repo(root)
    else:
        try:
            repo = refusing_grafts(pygit2.Repository(str(root)))
        except pygit2.GitError:
            raise FlowgitError("not inside a git repository", path=root,
                               fix="run it in a checkout, or in a bare repository's directory") from None
    for var in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH"):
        extra = os.environ.get(var)
        if extra and Path(extra).is_dir():
            repo.odb.add_disk_alternate(extra)
    for extra in filter(None, os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(os.pathsep)):
        if Path(extra).is_dir():
            repo.odb.add_disk_alternate(extra)
    return repo


def run_audit(cfg: Config, spec: RangeSpec | None = None, overrides: dict | None = None, *,
              jobs: int | None = None) -> AuditReport:
    """Judge every commit of ``spec`` (default: all of HEAD's history) with every gate rule.

    A long history is judged in ``jobs`` worker processes (default: one per
    core, when each gets at least a few hundred commits); the report is the
    same either way.
    """
    from flowgit.history.parallel import jobs_for
    from flowgit.history.walk import small_object_cache
    from flowgit.memtune import steady_heap

    steady_heap()  # every store version is read whole: keep those buffers on the heap
    spec = spec or RangeSpec()
    repo = open_any(cfg.root)
    commits = select_commits(repo, spec)
    progress = Progress("auditing commits", len(commits))
    workers = jobs_for(len(commits), jobs)
    with small_object_cache():  # each commit and tree is met once or twice: libgit2's 256 MB cache buys nothing
        result = _judge_all(cfg, repo, commits, overrides, workers, progress,
                            stand_ins=replaced_roots(repo, spec, commits))
    progress.done()
    result.findings.extend(replaced_history(cfg, repo, spec, overrides))
    return _report(repo, commits, spec, result)


def _report(repo, commits: list, spec: RangeSpec, result) -> AuditReport:
    oldest = str(commits[0].id) if commits else None
    return AuditReport(result.findings, len(commits), result.judged, bool(repo.is_shallow), oldest,
                       result.unjudged, spec.label, result.notes)


class PendingAudit:
    """An audit under way in worker processes while the caller reads something else (the report, the history).

    :meth:`report` waits for it; a history too short for workers is judged
    in-process when the report is asked for. Use it as a context manager so
    the workers are reaped whatever happens in between.
    """

    def __init__(self, cfg: Config, spec: RangeSpec | None = None, overrides: dict | None = None, *,
                 jobs: int | None = None, notes: Mapping[str, str] | None = None) -> None:
        from flowgit.history.parallel import PendingJudgement, jobs_for
        from flowgit.history.walk import small_object_cache
        from flowgit.memtune import steady_heap

        steady_heap()  # (before the workers fork: they inherit it)
        self.cfg, self.spec, self.overrides, self.notes = cfg, spec or RangeSpec(), overrides, notes
        self.repo = open_any(cfg.root)
        self.commits = select_commits(self.repo, self.spec)
        self.stand_ins = replaced_roots(self.repo, self.spec, self.commits)
        workers = jobs_for(len(self.commits), jobs)
        self._pending = None
        if workers > 1:
            with small_object_cache():  # the workers fork inside: they keep libgit2's small cache
                self._pending = PendingJudgement(cfg, overrides, [str(c.id) for c in self.commits], workers,
                                                 notes=notes, stand_ins=self.stand_ins)

    def report(self) -> AuditReport:
        from flowgit.history.walk import small_object_cache

        if self._pending is not None:
            result = self._pending.result()
        else:
            with small_object_cache():
                result = _judge_all(self.cfg, self.repo, self.commits, self.overrides, 1,
                                    Progress("auditing commits", len(self.commits)), self.notes,
                                    stand_ins=self.stand_ins)
        return _report(self.repo, self.commits, self.spec, result)

    def __enter__(self) -> "PendingAudit":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pending is not None:
            self._pending.close()


def _judge_all(cfg: Config, repo, commits: list, overrides: dict | None, workers: int, progress,
               notes: Mapping[str, str] | None = None, *, stand_ins: Mapping[str, str] | None = None):
    from flowgit.history.parallel import judge_in_workers

    if workers > 1:
        return judge_in_workers(cfg, overrides, [str(c.id) for c in commits], workers, progress,
                                stand_ins=stand_ins)
    return judge_commits(cfg, repo, commits, overrides, progress.step, notes, stand_ins=stand_ins)


def judge_commits(cfg: Config, repo, commits: list, overrides: dict | None, step=lambda: None,
                  notes: Mapping[str, str] | None = None, *, stand_ins: Mapping[str, str] | None = None):
    """Judge ``commits`` in order in this process (the whole audit, or one worker's slice).

    Each version is parsed once (a commit's new side is its child's old side)
    and the blobs are read ahead by a git process, reaped when this returns.
    ``notes``: the aliases to note each version's events and size under, for
    the report (:mod:`.notes`); None notes nothing.
    """
    from flowgit.history.parallel import SliceResult
    from flowgit.memtune import collector_paused

    result = SliceResult([], 0, [], notes=VersionNotes(notes) if notes is not None else None)
    auditor = Auditor(cfg, repo, overrides, result.notes, stand_ins)
    with reusing_documents(), auditor.reading_ahead(commits), collector_paused() as collect:
        for commit in commits:
            step()
            collect()
            outcome = auditor.audit_commit(commit)
            if outcome is None:
                result.unjudged.append(str(commit.id))
                continue
            result.judged += outcome[0]
            result.findings.extend(outcome[1])
    return result
