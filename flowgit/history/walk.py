"""Walking the continuity file's history in-process with pygit2.

The walk visits every commit reachable from HEAD, newest first, to learn the
file's path at each commit (following renames backwards), then replays the
versions oldest first. Each distinct blob is scanned once (the scanner in
:mod:`flowgit.continuity.scan`); a commit whose blob equals a parent's changed
nothing. A merge reports only what it introduced itself: events it shows
against *every* parent.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

from flowgit.changes import RENAMED, PatternEvent, events_against, standing
from flowgit.config import Config
from flowgit.continuity.patterns import PatternAt
from flowgit.continuity.scan import scan_pattern_bytes
from flowgit.continuity.sections import alias_table
from flowgit.dates import utc_from_timestamp
from flowgit.errors import FlowgitError
from flowgit.history.commits import author_name_of, authored_time_of, commit_time_of, message_of
from flowgit.output import Progress
from flowgit.trailers import parse_trailers, values

if TYPE_CHECKING:
    from flowgit.history.notes import VersionNotes


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    time: int
    author: str
    message: str
    path: str | None  # the continuity file's path at this commit (None: not there)
    blob: object | None  # the blob's pygit2 Oid
    authored: int = 0  # the author's time: when the change was made (a rebase or cherry-pick keeps it)

    # Read once each (a report asks every commit's date and session several times; the fields never change).
    @cached_property
    def date(self) -> str:
        return utc_from_timestamp(self.time).date().isoformat()

    @property
    def trailers(self) -> list[tuple[str, str]]:
        return parse_trailers(self.message)

    @cached_property
    def session(self) -> str:
        found = values(self.trailers, "Flow-Session")
        return found[0] if found else ""

    @cached_property
    def override(self) -> str:
        """The commit's ``Flow-Override:`` reason ("" when the gate was not overridden): an event it let
        through is not one the rules vouch for, and ``flowgit log`` says so next to it."""
        return "; ".join(values(self.trailers, "Flow-Override"))

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


@dataclass(frozen=True)
class HistoryEvent:
    commit: CommitInfo
    event: PatternEvent

    def to_dict(self) -> dict:
        c = self.commit
        return {"commit": c.sha, "date": c.date, "author": c.author, "session": c.session, "path": c.path,
                "override": c.override or None, **self.event.to_dict()}


@dataclass
class History:
    """Every version of the continuity file and the pattern events between them."""

    commits: list[CommitInfo] = field(default_factory=list)  # oldest first, only those with the file
    events: list[HistoryEvent] = field(default_factory=list)
    shallow: bool = False
    oldest_visible: str | None = None
    maps: dict[object, Mapping[str, PatternAt]] = field(default_factory=dict)  # no longer filled: kept for callers
    measures: dict[object, object] = field(default_factory=dict)  # blob -> what ``measure`` said of its text
    boundary: frozenset[str] = frozenset()  # a shallow clone's boundary commits (their parents are not here)


def open_repo(root: Path):
    import pygit2

    from flowgit.git import require_repo

    require_repo(root)
    try:
        return refusing_grafts(pygit2.Repository(str(root)))
    except pygit2.GitError as exc:
        from flowgit.git import git, object_format

        common = git(root, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False).strip()
        if common:
            _refuse_grafts_in(Path(common.decode("utf-8", "surrogateescape")))
        if object_format(root) == "sha256":
            raise FlowgitError("this is a SHA-256 repository, which the history reader (libgit2) cannot open; "
                               "nothing was read or written", path=root,
                               fix="wrap, check and episodes work here; read the history with "
                                   "`git log -- CONTINUITY.md` until libgit2 supports SHA-256") from None
        raise FlowgitError(f"cannot open the repository ({exc})", path=root) from None


def refusing_grafts(repo):
    """``repo``, unless it has a graft file (git's deprecated ``info/grafts``): its lines give commits other
    parents than they record. The history reader (libgit2) reads them (and cannot open a repository whose
    file holds a comment), git run by flowgit does not, and a commit judged against a parent it does not
    have could pass any rule (re-graduated over its demotion, say). Refused with the way out, never read
    half one way."""
    common = Path(repo.path)
    pointer = common / "commondir"  # a linked worktree's git directory names the shared one
    if pointer.is_file():
        common = (common / pointer.read_text(encoding="utf-8", errors="replace").strip()).resolve()
    _refuse_grafts_in(common)
    return repo


def _refuse_grafts_in(common: Path) -> None:
    grafts = common / "info" / "grafts"
    try:
        held = grafts.is_file() and grafts.read_bytes().strip() != b""
    except OSError:
        held = True  # there, and not readable: what it says cannot be known
    if held:
        raise FlowgitError("this repository has a graft file, which gives commits other parents than they "
                           "record (a deprecated git feature); flowgit reads history as the commits record it, "
                           "which the history reader cannot while the file is there: nothing was read",
                           path=grafts, fix="convert it to replace refs (`git replace --convert-graft-file`: "
                                            "flowgit reads history without them), or remove it")


def _entry(tree, path: str):
    try:
        return tree[path]
    except KeyError:
        return None


def _renamed_from(repo, parent, commit, path: str) -> str | None:
    diff = repo.diff(parent, commit)
    diff.find_similar()
    for delta in diff.deltas:
        if delta.new_file.path == path and delta.old_file.path != path and delta.status_char() == "R":
            return delta.old_file.path
    return None


def collect_commits(cfg: Config, repo, on_blob=None) -> tuple[list[CommitInfo], bool]:
    """Commits reachable from HEAD that hold the continuity file, oldest first, paths followed through renames.

    ``on_blob`` sees each version's blob id as the walk meets it, newest first:
    reading blobs in that order lets libgit2 resolve each delta from a base it
    has just read, about twice as fast as reading them oldest first.
    """
    import pygit2

    if repo.head_is_unborn:
        return [], False
    # Commits met as a parent and not yet visited: the file's path there, and its blob id when the child's
    # look-up already found it (each tree is then read once, not once as a parent and again as itself).
    # A commit is visited after all its children, so it leaves the table when visited: only the frontier stays.
    ahead: dict[str, tuple[str, object | None]] = {str(repo.head.target): (cfg.continuity_rel, None)}
    newest_first: list[CommitInfo] = []
    progress = Progress("reading history")
    for commit in repo.walk(repo.head.target, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_TIME):
        progress.step()
        sha = str(commit.id)
        path, blob = ahead.pop(sha, (None, None))
        if path and blob is None:
            entry = _entry(commit.tree, path)
            blob = entry.id if entry is not None else None
        parents = tuple(str(p) for p in commit.parent_ids)
        info = CommitInfo(sha=sha, parents=parents, time=commit_time_of(commit),
                          author=author_name_of(commit), message=message_of(commit),
                          path=path if blob is not None else None, blob=blob,
                          authored=authored_time_of(commit))
        newest_first.append(info)
        if blob is None:
            if path:  # taken away here: an older commit may hold it at the same path (deleted, then restored)
                for parent in _parents(commit):
                    ahead.setdefault(str(parent.id), (path, None))
            continue
        if on_blob is not None:
            on_blob(blob)
        for parent in _parents(commit):
            pid = str(parent.id)
            if pid in ahead:
                continue
            entry = _entry(parent.tree, path)
            if entry is not None:
                ahead[pid] = (path, entry.id)
            else:
                # renamed from another path, or not there at all (deleted in the parent, or not yet made: its own
                # parents are looked at the same path, so a file taken away and restored keeps its history)
                ahead[pid] = (_renamed_from(repo, parent, commit, path) or path, None)
    progress.done()
    return newest_first[::-1], bool(repo.is_shallow)


def _parents(commit) -> list:
    try:
        return list(commit.parents)
    except KeyError:  # a shallow clone's boundary: the parent objects are not here
        return []


VersionVisitor = Callable[[CommitInfo, list[PatternEvent], list[Mapping[str, PatternAt]], Mapping[str, PatternAt]],
                          None]


def read_history(cfg: Config, measure: Callable[[str], object] | None = None, *,
                 known: "VersionNotes | None" = None, walked: tuple[list[CommitInfo], bool] | None = None,
                 on_version: VersionVisitor | None = None) -> History:
    """Every version's pattern events, with memory flat in the length of history.

    A version's pattern map is kept only while a later commit still needs it
    as a parent (counted up front from the commit graph) and dropped at its
    last use, so 30,000 commits hold a handful of maps, not 30,000. The
    boundary commits of a shallow clone have parents git cannot show: they are
    the baseline, not changes, so they yield no events (never a false finding).
    The versions are read in replay order from a ``git cat-file`` process that
    inflates the next ones while this one is scanned (:mod:`.blobstream`).
    ``measure``, when given, is applied to the text of every version the walk
    reads, into ``history.measures`` (the report's sizes: no second read).
    ``known``: events and sizes the audit noted as it judged the same commits
    (:mod:`.notes`); a commit whose events are noted for exactly the blobs
    this walk would compare is not read again. ``walked``: the commits
    :func:`collect_commits` already listed (the caller walked them meanwhile).
    ``on_version``, when given, sees each changed version with its events, its parents' pattern maps and its
    own, in replay order, while they are still held (ascend's history partition: no second scan or diff).
    """
    from flowgit.history.blobstream import planned_reads
    from flowgit.memtune import collector_paused

    repo = open_repo(cfg.root)
    table = alias_table(cfg.aliases)
    if walked is None:
        with small_object_cache():
            walked = collect_commits(cfg, repo)
    commits, shallow = walked
    boundary = _shallow_boundary(repo) if shallow else frozenset()
    history = History(shallow=shallow, boundary=boundary)
    by_sha = {c.sha: c for c in commits}

    def parent_blobs(commit: CommitInfo) -> list:
        return [by_sha[p].blob if p in by_sha else None for p in commit.parents]

    def changed(commit: CommitInfo, parents: list) -> bool:  # a version no parent has: its events are read
        return commit.sha not in boundary and commit.blob not in parents

    noted: dict[str, list] = {}  # the commits whose events the audit noted, read from the blobs compared here
    if known is not None:
        for commit in commits:
            if commit.blob is not None and changed(commit, parents := parent_blobs(commit)):
                found = known.events_for(commit.sha, commit.blob, parents)
                if found is not None:
                    noted[commit.sha] = found
                    size = known.size_of(commit.blob) if measure is not None else None
                    if size is not None:
                        history.measures[commit.blob] = size

    uses: dict[object, int] = {}  # how many commits still to replay compare a version (as a parent)
    for commit in commits:
        if commit.blob is not None and commit.sha not in noted:
            for blob in set(parent_blobs(commit)) - {None}:
                uses[blob] = uses.get(blob, 0) + 1
    live: dict[object, Mapping[str, PatternAt]] = {}

    def patterns_of(blob) -> Mapping[str, PatternAt]:
        if blob is None:
            return {}
        if blob not in live:
            data = reads.read(blob)
            live[blob] = scan_pattern_bytes(data, table=table)  # decodes only the lines the last version lacks
            if measure is not None and blob not in history.measures:
                history.measures[blob] = measure(data.decode("utf-8", "replace"))
        return live[blob]

    def used(blob) -> None:
        left = uses.get(blob, 0) - 1
        uses[blob] = left
        if left <= 0:
            live.pop(blob, None)

    progress = Progress("replaying versions", len(commits))
    plan = (c.blob for c in commits if c.blob is not None and c.sha not in noted
            and changed(c, parent_blobs(c)))  # the scanning order
    with planned_reads(repo, plan) as reads, collector_paused() as collect:
        for commit in commits:
            progress.step()
            collect()
            if commit.blob is None:
                continue
            history.commits.append(commit)
            if commit.sha in noted:
                history.events.extend(HistoryEvent(commit, e) for e in noted[commit.sha])
                continue
            parents = parent_blobs(commit)
            if changed(commit, parents):
                events = _events(commit, parents, patterns_of)
                history.events.extend(HistoryEvent(commit, e) for e in events)
                if on_version is not None:
                    on_version(commit, events, [patterns_of(b) for b in parents], patterns_of(commit.blob))
            for blob in set(parents) - {None}:
                used(blob)
            if uses.get(commit.blob, 0) <= 0:
                live.pop(commit.blob, None)
    progress.done()
    if history.commits:
        history.oldest_visible = history.commits[0].sha
    return history


@contextmanager
def small_object_cache(limit: int = 1 << 20):
    """Walk with libgit2's object cache at ``limit`` bytes (default 256 MB), then put it back.

    The walk meets each commit and tree once, so caching them buys nothing and
    costs tens of megabytes over 30,000 commits.
    """
    import pygit2

    _, before = pygit2.settings.cached_memory
    pygit2.settings.cache_max_size(limit)
    try:
        yield
    finally:
        pygit2.settings.cache_max_size(before)


def _events(commit: CommitInfo, parent_blobs: list, patterns_of) -> list[PatternEvent]:
    """What ``commit`` changed: against its first parent, and for a merge only what every parent lacks."""
    after = patterns_of(commit.blob)
    return events_against([patterns_of(b) for b in parent_blobs], after)


def _shallow_boundary(repo) -> frozenset[str]:
    """Commits listed in the shallow file: their parents exist but this clone cannot see them."""
    try:
        text = (Path(repo.path) / "shallow").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def standing_at(cfg: Config, history: History, commit: CommitInfo | None) -> list[HistoryEvent]:
    """The patterns ``commit``'s version holds that none of its own events names, as ``present`` events.

    A range of history that opens after a pattern's last event (``--since``, or
    the boundary of a shallow clone, which yields no events at all) would
    otherwise leave out every pattern that simply stood in the file through it.
    Log, report and their graphs seed their timelines with these, so all of
    them show the same patterns for the same range. One version is read.
    """
    if commit is None or commit.blob is None:
        return []
    named = {n for item in history.events if item.commit.sha == commit.sha
             for n in (item.event.name, item.event.old_name) if n}
    data = open_repo(cfg.root)[commit.blob].data
    held = scan_pattern_bytes(data, table=alias_table(cfg.aliases))
    return [HistoryEvent(commit, standing(at)) for name, at in held.items() if name not in named]


def window_events(cfg: Config, history: History, within: Callable[[CommitInfo], bool]) -> list[HistoryEvent]:
    """The events a window of history shows (``within`` tells the commits in it), oldest first.

    First what stood in the file where the window opens (:func:`standing_at`
    its first commit), then each commit's events. A merge inside the window
    that joins a line of work from before it is read against its parents
    inside the window alone: what that line changed before the window comes
    in with the merge. (Against every parent, a merge shows only what all of
    them lack; the branch's own commits lie outside the window, so the change
    would show nowhere and the lane would end at a level the file never held.)
    """
    inside = [c for c in history.commits if within(c)]
    seeds = standing_at(cfg, history, inside[0] if inside else None)
    by_sha = {c.sha: c for c in history.commits}
    joins: dict[str, list[CommitInfo]] = {}  # merge -> its parents inside the window, when some are not
    for commit in inside[1:]:
        if len(commit.parents) > 1 and commit.sha not in history.boundary:
            kept = [by_sha[p] for p in commit.parents if p in by_sha]
            seen = [c for c in kept if within(c)]
            if seen and len(seen) < len(kept):  # (a parent without the file is read as the walk reads it)
                joins[commit.sha] = seen
    events: dict[str, list[HistoryEvent]] = {}
    for item in history.events:
        events.setdefault(item.commit.sha, []).append(item)
    if joins:
        repo, table = open_repo(cfg.root), alias_table(cfg.aliases)

        def patterns(blob) -> Mapping[str, PatternAt]:
            return scan_pattern_bytes(repo[blob].data, table=table)
    out = list(seeds)
    for commit in inside:
        seen = joins.get(commit.sha)
        if seen is None:
            out.extend(events.get(commit.sha, ()))
        else:
            out.extend(HistoryEvent(commit, e) for e in
                       events_against([patterns(p.blob) for p in seen], patterns(commit.blob)))
    return out


def names_at_boundary(cfg: Config, history: History) -> set[str]:
    """Names that stood in the file at a shallow clone's oldest visible commit: real patterns, though no event
    in what the clone can see names them (a name asked for by ``log NAME`` or ``report --pattern``)."""
    if not history.commits or history.commits[0].sha not in history.boundary:
        return set()
    return {i.event.name for i in standing_at(cfg, history, history.commits[0])}


def iter_pattern_events(history: History, names: set[str] | None = None) -> Iterator[HistoryEvent]:
    for item in history.events:
        if names is None or item.event.name in names or (item.event.old_name or "") in names:
            yield item


class Lives:
    """Which life each pattern event belongs to, so a life is one timeline however often it was renamed.

    A name is followed through its renames; a name a rename freed and a later
    commit takes again begins a new life (``alpha`` renamed ``beta``, then a
    new, unrelated ``alpha``: two lanes, not one). A life is known by the last
    name it bore. Built from the events oldest first: a name's *tenure* says
    from which commit on it names which life.
    """

    def __init__(self, history: History) -> None:
        self._order = {c.sha: n for n, c in enumerate(history.commits)}
        self._tenures: dict[str, list[tuple[int, int]]] = {}  # name -> [(first commit index, life)]
        self._finals: list[str] = []  # life -> its last name
        live: dict[str, int] = {}
        for item in history.events:
            event, at = item.event, self._order.get(item.commit.sha, len(self._order))
            if event.kind == RENAMED and event.old_name:
                life = live.pop(event.old_name, None)
                if life is None:
                    life = self._begin(event.old_name, at, live)
                    live.pop(event.old_name)
                self._bind(event.name, life, at, live)
            elif event.name not in live:
                self._begin(event.name, at, live)

    def _begin(self, name: str, at: int, live: dict[str, int]) -> int:
        self._finals.append(name)
        life = len(self._finals) - 1
        self._bind(name, life, at, live)
        return life

    def _bind(self, name: str, life: int, at: int, live: dict[str, int]) -> None:
        live[name] = life
        self._finals[life] = name
        self._tenures.setdefault(name, []).append((at, life))

    def at(self, sha: str, name: str) -> str:
        """The name the life ``name`` stood for at commit ``sha`` ended up with (a commit the walk did not
        keep, such as one that took the file away, reads the name's latest life)."""
        tenures = self._tenures.get(name)
        if not tenures:
            return name
        at = self._order.get(sha)
        life = tenures[-1][1]
        if at is not None:
            for start, which in tenures:
                if start > at:
                    break
                life = which
        return self._finals[life]

    def key(self, item: HistoryEvent) -> str:
        """The lane an event belongs to: its life's last name."""
        return self.at(item.commit.sha, item.event.name)

    def named(self, names: Iterable[str]) -> set[str]:
        """The lives that ever bore one of ``names`` (``log alpha`` shows alpha's life under its new name,
        and the new alpha's, when the name was freed and taken again)."""
        out = set()
        for name in names:
            tenures = self._tenures.get(name)
            out.update({self._finals[life] for _, life in tenures} if tenures else {name})
        return out
