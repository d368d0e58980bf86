"""The facts a session starts from: what `flowgit prime` gives an agent and `flowgit status` a person.

One function gathers them (:func:`gather`); the two commands only render. The
facts: the continuity file's sections, patterns that fired and are ready, what
goes stale next, overdue actions, episodes recorded but not yet wrapped, the
last wrap, and whether the continuity file has uncommitted edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.continuity.sections import DEVELOPING, PROVEN
from flowgit.dates import today
from flowgit.episodes import Episode, EpisodeStore, parse_store
from flowgit.git import blob_oid, blobs, git, literal, operation_in_progress

SOON_DAYS = 3  # "goes stale next": within this many days of its limit

if TYPE_CHECKING:  # the Stop hook runs every turn: parse the document only when it is needed
    from flowgit.continuity.document import Document


@dataclass
class LastWrap:
    commit: str
    date: str
    subject: str
    session: str

    def to_dict(self) -> dict:
        return {"commit": self.commit, "date": self.date, "subject": self.subject, "session": self.session}


@dataclass
class Overview:
    """Everything prime and status report, as plain data (``to_dict`` is the ``--json`` form)."""

    continuity: str
    store: str
    exists: bool
    document: "Document | None" = None
    ready: list[dict] = field(default_factory=list)
    fired_again: list[dict] = field(default_factory=list)
    stale: list[dict] = field(default_factory=list)
    stale_soon: list[dict] = field(default_factory=list)
    overdue: list[dict] = field(default_factory=list)
    unwrapped: list[Episode] = field(default_factory=list)
    last_wrap: LastWrap | None = None
    continuity_modified: bool = False
    session: str = ""
    session_wrapped: bool = False
    interrupted_wrap: dict | None = None
    interrupted_sync: dict | None = None  # a killed sync's half-merged files: message and fix (None: none)
    outside_sparse: list[str] = field(default_factory=list)  # memory files a sparse checkout leaves out
    merge_driver: str | None = None  # why the registered merge driver cannot start (None: it can, or none is set)
    merge_attributes: list[str] = field(default_factory=list)  # a .gitattributes line overriding the driver
    unpushed: dict | None = None  # commits no remote has that fail the audit (None: none, or no remote known)
    clone_setup: list[str] = field(default_factory=list)  # what `flowgit init` would set up here that is missing
    clone_setup_fix: str = ""  # the one fix for all of it (`flowgit init`, or the framework's install)
    mid_merge: dict | None = None  # the continuity file holds conflict markers: where, and how to finish

    @property
    def unwrapped_sessions(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ep in self.unwrapped:
            out[ep.session or "(none)"] = out.get(ep.session or "(none)", 0) + 1
        return out

    def to_dict(self) -> dict:
        return {"continuity": self.continuity, "store": self.store, "exists": self.exists,
                "ready_to_graduate": self.ready, "fired_again": self.fired_again,
                "stale": self.stale, "stale_soon": self.stale_soon, "overdue_actions": self.overdue,
                "unwrapped_episodes": [e.id for e in self.unwrapped],
                "unwrapped_by_session": self.unwrapped_sessions,
                "last_wrap": self.last_wrap.to_dict() if self.last_wrap else None,
                "continuity_modified": self.continuity_modified,
                "session": self.session or None, "session_wrapped": self.session_wrapped,
                "interrupted_wrap": self.interrupted_wrap, "interrupted_sync": self.interrupted_sync,
                "outside_sparse_checkout": self.outside_sparse, "merge_driver_problem": self.merge_driver,
                "merge_attribute_problems": self.merge_attributes, "unpushed_failing": self.unpushed,
                "clone_setup_problems": self.clone_setup, "clone_setup_fix": self.clone_setup_fix or None,
                "mid_merge": self.mid_merge}


RECOVER = "run `flowgit wrap --recover`"
UNPUSHED_AUDITED = 200  # commits no remote has that status judges itself; more, and it names the command instead
RUNNING = "wait for it to finish"


def unpushed_failures(cfg: Config, root: Path) -> dict | None:
    """The commits no remote has yet that fail the audit: a push of them is refused (pre-push, CI), and each
    wrap on top makes that later. ``{"commits": n, "failing": [sha, ...], "codes": [...], "fix": ...}``, with
    ``failing`` None when there are too many commits to judge here; None when every one passes, or when the
    clone tracks no remote (then nothing tells what a push would carry)."""
    from flowgit.git import object_format
    from flowgit.history.remote import remote_tips, unpushed_count

    tips = remote_tips(root)
    if not tips or object_format(root) != "sha1":  # (the audit's history reader cannot open SHA-256 objects)
        return None
    count = unpushed_count(root, tips)
    if count == 0:
        return None
    upstream = "@{upstream}" if git_ok(root, "rev-parse", "--verify", "--quiet", "@{upstream}") else None
    fix = (f"`flowgit audit --since-ref {upstream}` names each finding and its repair" if upstream else
           "`flowgit audit` names each finding and its repair")
    if count > UNPUSHED_AUDITED:
        return {"commits": count, "failing": None, "codes": [], "fix": fix + " (too many commits to judge here)"}
    from flowgit.history.audit import RangeSpec, run_audit

    try:
        report = run_audit(cfg, RangeSpec(("HEAD",), tips, "not on any remote"), jobs=1)
    except FlowgitError as exc:  # (a graft file, say): status still says everything else
        return {"commits": count, "failing": None, "codes": [], "fix": f"the audit cannot judge them here "
                f"({exc.message}): `flowgit audit` says why"}
    failing = list(dict.fromkeys(f.commit for f in report.errors))
    if not failing:
        return None
    from flowgit.merge.replayed import rebased_from, undo_the_rebase

    before = rebased_from(root)  # (wraps a pull replayed: undo the pull, do not repair each commit)
    return {"commits": count, "failing": failing, "codes": sorted({f.code for f in report.errors}),
            "fix": undo_the_rebase(before) if before else
            fix + "; rewrite them before pushing (no remote has them yet)"}


def _mid_merge(cfg: Config, data: bytes) -> dict | None:
    """Where the continuity file holds git conflict markers, and how to finish (None: it holds none)."""
    from flowgit.merge.markers import find_markers
    from flowgit.repo import MID_MERGE_FIX

    found = find_markers(data)
    if found is None:
        return None
    in_progress = operation_in_progress(cfg.root)
    return {"file": cfg.continuity_rel, "line": found.first, "markers": found.describe(),
            "operation": in_progress[0] if in_progress else None, "fix": MID_MERGE_FIX}


def git_ok(root: Path, *args: str) -> bool:
    """Whether ``git args`` succeeds in ``root``."""
    try:
        git(root, *args)
    except FlowgitError:
        return False
    return True


def interrupted_wrap(root: Path) -> dict | None:
    """The pending journal of an interrupted wrap in the repository at ``root`` (None: none).

    While it is pending the continuity file and the store may hold the wrap's
    half-written changes: they are not edits to wrap, and nothing else may be
    written until ``flowgit wrap --recover`` has undone (or cleared) it.
    """
    from flowgit.git import enclosing_git_dir
    from flowgit.journal import pending_journal
    from flowgit.lock import lock_taken

    gdir = enclosing_git_dir(root)
    journal = pending_journal(gdir) if gdir else None
    if journal is None:
        return None
    if lock_taken(gdir):  # a wrap holds the repository lock: it is running now, not interrupted
        return {"journal": str(journal), "running": True, "fix": RUNNING}
    return {"journal": str(journal), "running": False, "fix": RECOVER}


def interrupted_sync(root: Path) -> dict | None:
    """What a killed ``flowgit sync`` left half-merged in the working tree (None: nothing): until it is
    settled, the other clone's episodes there look like this clone's unwrapped ones, and wrap, ``episode add``
    and sync refuse."""
    from flowgit.merge.sync import interrupted_sync as found_sync

    found = found_sync(root)
    if found is None or found.problem is None:
        return None
    return {"message": found.problem.message, "fix": found.problem.fix, "mark": str(found.mark)}


def last_wrap(root: Path, rel: str, session: str = "") -> tuple[LastWrap | None, bool]:
    """The newest wrap commit (one with a ``Flow-Session`` trailer), and whether ``session`` ever wrapped
    (under any spelling of its name the immune system takes for it)."""
    from flowgit.evidence import same_source

    # (trailers joined by a control character: a session id may hold a comma, `review, part 2`, and a comma
    # must not make `Flow-Session: a, b` read as sessions a and b)
    fmt = "%H%x1f%cs%x1f%s%x1f%(trailers:key=Flow-Session,valueonly,separator=%x1d)%x1e"
    out = git(root, "log", "-n", "500", f"--format={fmt}", "--", *literal(rel), check=False).decode("utf-8", "replace")
    newest: LastWrap | None = None
    wrapped = False
    for record in out.split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) != 4 or not parts[3].strip():
            continue
        sessions = [s.strip() for s in parts[3].split("\x1d") if s.strip()]
        if newest is None:
            newest = LastWrap(parts[0], parts[1], parts[2], sessions[0] if sessions else "")
        if session and any(same_source(session, other) for other in sessions):
            wrapped = True
        if newest is not None and (wrapped or not session):
            break
    return newest, wrapped


def _same_as_head(data: bytes | None, head: tuple[str, int] | None) -> bool:
    """Whether the working bytes are HEAD's blob, decided from sizes and blob ids without reading HEAD's copy."""
    if data is None or head is None:
        return data is None and head is None
    return len(data) == head[1] and blob_oid(data, len(head[0])) == head[0]


def unwrapped_episodes(root: Path, cfg: Config, head: tuple[str, int] | None, raw: bytes) -> list[Episode]:
    """Episodes in the store's working copy that no commit holds yet (a wrap commits them)."""
    if _same_as_head(raw, head) or not raw:
        return []
    (committed,) = blobs(root, [head[0]]) if head else (b"",)
    committed = committed or b""
    if raw.startswith(committed):
        return list(parse_store(raw[len(committed):])[0].values())
    known = parse_store(committed)[0]
    return [e for i, e in parse_store(raw)[0].items() if i not in known]


def overdue_actions(doc: Document, when: date) -> list[dict]:
    """Open action items whose ``next:`` date has passed (done ones are the wrap's business)."""
    from flowgit.wrap.judgement import action_states

    return [{"line": a.line, "text": a.body, "next": a.due.isoformat(), "days_overdue": a.days_overdue(when)}
            for a in action_states(doc, when) if not a.done]


def staleness(cfg: Config, root: Path, doc: Document, when: date) -> tuple[list[dict], list[dict]]:
    """Patterns already past their staleness limit, and those within :data:`SOON_DAYS` of it."""
    from flowgit.continuity.patterns import iter_patterns
    from flowgit.wrap.cleanup import blame_dates, last_seen

    limits = {DEVELOPING: cfg.thresholds.stale_developing_days, PROVEN: cfg.thresholds.stale_proven_days}
    patterns = [at for at in iter_patterns(doc) if at.section in limits]
    if not patterns:
        return [], []
    cited = {i for at in patterns for i in at.pattern.evidence}
    episodes = EpisodeStore(cfg.store).get(cited) if cited else {}
    blamed = blame_dates(root, cfg.continuity_rel)
    stale, soon = [], []
    for at in patterns:
        seen = last_seen(at, episodes, blamed, when)
        left = limits[at.section] - (when - seen).days
        row = {"name": at.pattern.name, "section": at.section, "line": at.lineno, "last_seen": seen.isoformat(),
               "days_left": left}
        if left < 0:
            stale.append(row)
        elif left <= SOON_DAYS:
            soon.append(row)
    soon.sort(key=lambda r: r["days_left"])
    return stale, soon


def gather(cfg: Config, *, session: str = "", when: date | None = None, candidates: bool = True,
           light: bool = False) -> Overview:
    """Collect the overview; a missing continuity file is a fact, not an error.

    ``light`` collects only what the Stop hook needs on every turn (unwrapped
    episodes, uncommitted edits, whether the session wrapped), deciding "nothing
    changed" from blob ids so an idle turn reads neither HEAD's store nor the file.
    """
    from flowgit.git import head_entries, require_repo
    from flowgit.repo import document_from_bytes

    root = require_repo(cfg.root)
    when = when or today()
    view = Overview(cfg.continuity_rel, cfg.store_rel, cfg.continuity.is_file(), session=session,
                    interrupted_wrap=interrupted_wrap(root), interrupted_sync=interrupted_sync(root))
    head = head_entries(root, [cfg.continuity_rel, cfg.store_rel])
    view.unwrapped = unwrapped_episodes(root, cfg, head.get(cfg.store_rel), EpisodeStore(cfg.store).raw())
    view.last_wrap, view.session_wrapped = last_wrap(root, cfg.continuity_rel, session)
    if not view.exists:
        from flowgit.git import outside_sparse_checkout

        view.outside_sparse = outside_sparse_checkout(root, [cfg.continuity_rel, cfg.store_rel])
        return view
    data = cfg.continuity.read_bytes()
    view.continuity_modified = not _same_as_head(data, head.get(cfg.continuity_rel))
    if view.continuity_modified or not light:  # (the light view of the hooks: only an edit can be mid-merge)
        view.mid_merge = _mid_merge(cfg, data)
    if light:
        return view
    from flowgit.clonesetup import clone_setup
    from flowgit.merge.setup import driver_problem, shadowed_attributes

    view.merge_driver = driver_problem(root)  # a sync would refuse it, and a `git pull` would take ours whole
    view.merge_attributes = shadowed_attributes(root, [cfg.continuity_rel, cfg.store_rel], overriding_only=True)
    setup = clone_setup(root)
    view.clone_setup, view.clone_setup_fix = setup.problems, setup.fix
    view.unpushed = unpushed_failures(cfg, root)
    if view.mid_merge is not None:
        return view  # both sides' lines at once: no pattern, item or date read from it would be true
    view.document = document_from_bytes(cfg, data, cfg.continuity_rel)
    if view.document is None or not view.document.sections:
        return view
    view.overdue = overdue_actions(view.document, when)
    view.stale, view.stale_soon = staleness(cfg, root, view.document, when)
    if candidates:
        from flowgit.wrap.candidates import gather_candidates

        found = gather_candidates(cfg, None, when)
        view.ready, view.fired_again = found.ready_to_graduate, found.fired_again
    return view
