"""The continuity file's history as a partition: each wrap commit is a deposit of its session.

A wrap commit records what a session learned, in the strongest links a
memory has: the patterns it added, incremented, graduated or demoted (by
name, the pattern's identity across history), the episode ids it cited as
evidence, and the ``[<- other]`` derivations between patterns. The commit is
a deposit of its ``Flow-Session`` (so it merges with that session's
transcript or deposit into one node); a commit without one is a deposit of its
own. Its anchors are those pattern names and evidence ids, which is what
joins four wraps on ``retry_budget`` into one line of work; its authoritative
record is the blob at that commit.

History is read by the project's one history walk (:mod:`flowgit.history.walk`,
as ``log``, ``audit`` and ``report`` read it): every version is scanned once,
and each changed version is turned into a deposit while its parents' patterns
are still held. A shallow clone's boundary commits are a baseline, not changes
(their parents cannot be seen), so they deposit nothing.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from flowgit.ascend.model import Anchor, Coinage, Deposit, safe_id
from flowgit.changes import ARCHIVED, RENAMED
from flowgit.continuity.derivation import derives_from
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import Pattern, PatternAt
from flowgit.dates import utc_from_timestamp
from flowgit.trailers import parse_trailers, values
from flowgit.words import written_words

PATTERN_TRAILERS = ("Graduated", "Incremented", "Demoted", "Archived")


def _changes(events: list, after: Mapping[str, PatternAt]) -> tuple[list[Pattern], list[str]]:
    """(patterns the commit added or changed, as they stand after it; names it archived or renamed away), from
    the walk's events: the same reading of a commit as ``flowgit log`` and ``audit`` make."""
    changed = [after[e.name].pattern for e in events if e.kind != ARCHIVED and e.name in after]
    gone = [e.name for e in events if e.kind == ARCHIVED] + [e.old_name for e in events
                                                              if e.kind == RENAMED and e.old_name]
    return list({p.name: p for p in changed}.values()), gone


def trailer_names(trailers: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(pattern names in Graduated/Incremented/Demoted/Archived/Renamed trailers, evidence ids they cite)."""
    names, evidence = [], []
    for key in PATTERN_TRAILERS:
        for v in values(trailers, key):
            if v.split():
                names.append(v.split()[0])
            if "[evidence:" in v:
                evidence += [x.strip(" ]") for x in v.split("[evidence:", 1)[1].split(",") if x.strip(" ]")]
    for v in values(trailers, "Renamed"):
        names += [x.strip() for x in v.split("->") if x.strip()]
    for v in values(trailers, "Episodes"):
        evidence += [x.strip() for x in v.split(",") if x.strip()]
    return names, evidence


def wrap_time(seconds: int) -> str:
    """A wrap's time as ascend shows it: the UTC instant of the commit's author time (when the session wrapped;
    a rebase, amend or cherry-pick rewrites the committer time, never this)."""
    return utc_from_timestamp(seconds).isoformat()


def wrap_deposit(commit, events: list, before: Mapping[str, PatternAt], after: Mapping[str, PatternAt],
                 root, slug: str) -> Deposit:
    """One commit's deposit (``commit`` a walked :class:`~flowgit.history.walk.CommitInfo`, ``events`` what the
    walk found it changed against its parent): its session, its pattern names, evidence ids and derivations as
    anchors; the patterns it added are the terms it coined."""
    trailers = parse_trailers(commit.message)
    session = next((s for s in values(trailers, "Flow-Session") if safe_id(s) and s != "unknown"), None)
    changed, gone = _changes(events, after)
    names, evidence = trailer_names(trailers)
    names = list(dict.fromkeys([*names, *(p.name for p in changed), *gone]))
    known = {name_key(n): n for n in (*before, *after)}  # a link names a pattern by identity: `[<- Retry_Budget]`
    derived = [known.get(name_key(x), x) for p in changed for x in derives_from(p)]  # (the wrap's own reading)
    for p in changed:
        new_ids = set(p.evidence) - set(before[p.name].pattern.evidence if p.name in before else ())
        evidence += sorted(new_ids)
    evidence = list(dict.fromkeys(evidence))
    anchors = [Anchor("pattern", n) for n in names]
    anchors += [Anchor("pattern", n, "derived") for n in dict.fromkeys(derived) if n not in names]
    anchors += [Anchor("evidence", e) for e in evidence]
    if session:
        anchors.append(Anchor("session", session))
    when = wrap_time(commit.authored)
    subject = commit.subject
    described = " ".join(p.words for p in changed)
    written = written_words(described + " " + subject)
    words = [written[w] for w in sorted(written)][:60]  # as written: keywords are shown, terms are stemmed
    coined = [Coinage(p.name, 1.0) for p in changed if p.name not in before]
    return Deposit(partition="git", slug=slug, sid=session or commit.sha, cwd=str(root),
                   date=when[:10], started_at=when, last_turn_at=when,
                   topics=[subject, *names], keywords=[*names, *words], anchors=anchors, initial_request=subject,
                   fingerprint=" | ".join(p.render() for p in changed)[:2000], coined=coined,
                   outcome="; ".join(f"{p.name} at {p.level}x" for p in changed)[:300],
                   source=root, source_ref=f"{commit.sha}:{commit.path}", full=True)


def shallow_note(root, history) -> str:
    """What a shallow clone hides, said as scope: its boundary commits are a baseline (their parents are not
    here), so they deposit nothing, and no visible wrap is shown coining a pattern the file already held."""
    edge = [c for c in history.commits if c.sha in history.boundary] or history.commits[:1]
    since = min((wrap_time(c.authored)[:10] for c in edge), default="its oldest commit")
    return (f"the history of {root.name}'s continuity file is shallow before {since}: earlier wraps are not in "
            "this clone, so where the patterns it already held were coined cannot be seen")


def _surely_unborn(git_dir) -> bool:
    """True only when a plain ``.git`` directory's HEAD names a branch with no commit (loose or packed)."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, NotADirectoryError):
        return False   # a worktree's .git file, or something unusual: let pygit2 decide
    if not head.startswith("ref: "):
        return False
    ref = head[5:].strip()
    if (git_dir / ref).exists():
        return False
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return True
    return not any(line.endswith(" " + ref) for line in packed.splitlines())


class HistoryPartition:
    """Every commit that changed the continuity file, newest first, one deposit each."""

    name = "git"

    def __init__(self, cfg) -> None:
        self.cfg = cfg

    def deposits(self, notes) -> Iterator[Deposit]:
        root = self.cfg.root
        if not (root / ".git").exists() or _surely_unborn(root / ".git"):
            return   # no history: pygit2 is not even loaded (it costs more than reading ten thousand files)
        from flowgit.errors import FlowgitError
        from flowgit.history.walk import read_history

        slug = f"git:{root.name}"
        found: list[Deposit] = []

        def visit(commit, events: list, parents: list, after: Mapping[str, PatternAt]) -> None:
            if len(parents) > 1:
                return  # a merge joins two sessions' deposits: it is no session of its own
            found.append(wrap_deposit(commit, events, parents[0] if parents else {}, after, root, slug))

        try:
            history = read_history(self.cfg, on_version=visit)
        except FlowgitError as exc:
            notes.refused.append(f"{root}: {exc.message}; its history was not read")
            return
        if history.shallow:
            notes.shallow_history.append(shallow_note(root, history))
        notes.partitions[slug] += len(found)
        yield from reversed(found)   # newest first, as before

    def complete(self, deposit: Deposit, notes) -> None:
        return None
