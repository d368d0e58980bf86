"""A branch's update that rewrites its history (a force-push, a rewind), judged as the change it makes.

Every commit of the new history is judged on its own against its parents, so
what those commits did is answered for. What they cannot show is the step
from the old tip to the new one: a rewind has no commit of its own to judge,
and a history rebuilt from the old one's commits (a rewind with a commit on
top) only shows its own small changes. Yet the branch moves from the old tip's
memory to the new tip's in one step, and that step can take away what the
branch held (episodes, a Proven pattern, a demotion) or bring back what the
branch had undone: a raise let through by an override for its own commit and
reverted since, a configuration weakened under an override and restored.

So the old tip's memory is judged against the new tip's as one change, under
the old tip's configuration (what the branch held), with every rule about
what a memory holds (all but :data:`TRANSITION_CODES`). What the new history changed
itself (it shows against the commit where the two histories part, every one
of them for a criss-cross) was judged in its own commits and is not asked
again, so a rebase or an amend passes.
"""

from __future__ import annotations

from flowgit.checks.finding import Finding
from flowgit.checks.override import Override, override_from_trailers
from flowgit.checks.judge import judge_change, merge_key
from flowgit.config import Config
from flowgit.dates import utc_from_timestamp
from flowgit.history.commits import commit_time_of, message_of
from flowgit.trailers import parse_trailers, values

# Rules about how one wrap rewrites the last (REPLACE, REWRITE, compression, growth, dates rewritten by a
# re-graduation) read two consecutive wraps; two tips are siblings, and an amend that adds a sentence to
# State would be "State appended" against the tip it replaces. The store's own rules read appends: what the
# update does to the store is A501's question. Every other rule judges what the memory holds.
TRANSITION_CODES = frozenset({"G105", "G301", "G302", "G303", "G304", "G405", "G501", "G701", "G702", "G703",
                              "G704", "G705", "G706", "G707"})


def replaced_history(cfg: Config, repo, spec, overrides: dict | None) -> list:
    """What a branch's update that rewrote its history does to its old tip's memory: episodes it drops
    (A501) and the step from the old tip to the new one judged with the gate's codes (:func:`replaced_change`).
    A ``Flow-Override:`` on the new tip, when it is a commit of the update's own, records them as notices."""
    from flowgit.history.audit import Auditor, replaced_pair

    pair = replaced_pair(repo, spec)
    if pair is None:
        return []
    auditor = Auditor(cfg, repo, overrides)
    new_commit = repo[pair[1]]
    override = override_from_trailers(values(parse_trailers(message_of(new_commit)), "Flow-Override"))
    if override and repo.descendant_of(pair[0], pair[1]):
        override = None  # a rewind to a commit the old history holds: its override was for its own change
    date = utc_from_timestamp(commit_time_of(new_commit)).date().isoformat()
    return dropped_episodes(auditor, pair, date, override) + replaced_change(auditor, pair, date, override)


def dropped_episodes(auditor, pair: tuple, date: str, override: Override | None) -> list:
    """A501 where the new tip's store lacks episodes the old tip's held: the store is append-only for the
    branch too, and a force-push that drops commits would otherwise take their episodes with it, each commit
    of the new history judged clean."""
    from flowgit.checks.paths import ID_RE
    from flowgit.history.audit import AuditFinding

    old, new = (auditor.version(auditor.repo[rev]) for rev in pair)
    if old.store == new.store:
        return []
    kept = {line.rstrip(b"\r") for line in (auditor.data(new.store) or b"").split(b"\n")} \
        if new.store is not None else set()
    lost = []  # each episode line the old tip held must be in the new store as it was (an id kept over new
    for line in (auditor.data(old.store) or b"").split(b"\n") if old.store is not None else ():  # words is lost)
        ids = ID_RE.findall(line)
        if ids and line.rstrip(b"\r") not in kept:
            lost.append(ids[0].decode("utf-8", "replace"))
    lost = list(dict.fromkeys(lost))
    if not lost:
        return []
    base, tip = pair
    sample = ", ".join(lost[:5]) + (" …" if len(lost) > 5 else "")
    return [AuditFinding("A501", str(tip), date, "",
                         f"this update replaces {str(base)[:12]}, whose store held {len(lost)} episode(s) the new "
                         f"history lacks or holds altered: {sample}", rule="store-append-only", path=new.store_path,
                         fix="push a history that keeps every episode (rebase keeps them; dropping a commit drops "
                             "its episodes), or record why with FLOWGIT_OVERRIDE on the new tip",
                         severity="notice" if override and override.covers("A501", "G701") else "error")]


def replaced_change(auditor, pair: tuple, date: str, override: Override | None) -> list:
    """The step from the old tip's memory to the new tip's, judged as one change under the old tip's
    configuration: a raise on too little evidence or by two levels, a demotion or a Proven pattern taken away,
    a protected line, the configuration, attributes or hook list weakened (G201, G208, G205, G402, G801 …),
    less what the new history did itself."""
    from flowgit.history.audit import AuditFinding, pattern_named

    repo = auditor.repo
    base, tip = pair
    old_commit, new_commit = repo[base], repo[tip]
    old, new = auditor.version(old_commit), auditor.version(new_commit)
    if old.blobs == (None, None):
        return []  # the old tip held no memory: the new history's first memory commit is judged against it
    if old.held == new.held and old.config.key == new.config.key and old.attributes == new.attributes \
            and old.hooks == new.hooks:
        return []  # the same memory under the same rules: the step changes nothing
    forks = [repo[rev] for rev in _merge_bases(auditor, base, tip)]
    stores = [old_commit, *forks]  # the batch the step appends: what the new store holds past the one it extends
    found = _step(auditor, old_commit, new_commit, _extended_store(auditor, stores, new))
    if found and forks:
        own = None
        for fork in forks:
            keys = {merge_key(f) for f in _step(auditor, fork, new_commit, None)}
            own = keys if own is None else own & keys
        found = [f for f in found if merge_key(f) not in own]
    where = f"this update replaces {str(base)[:12]} (a rewritten history: its memory is judged against the new tip's)"
    again = (f"push a history that keeps what {str(base)[:12]} held, or make the change again in a new commit on "
             "top of it (with FLOWGIT_OVERRIDE=\"why\" on the new tip, if it must pass)")
    return [AuditFinding(f.code, str(tip), date, pattern_named(f), f"{where}: {f.message}", rule=f.rule,
                         path=f.path, line=f.line, fix=f"{f.fix}; or {again}" if f.fix else again,
                         severity="notice" if override and override.covers(f.code) else "error") for f in found]


def _step(auditor, old_commit, new_commit, store_from) -> list[Finding]:
    """The errors of ``old_commit`` -> ``new_commit`` judged as one change under the old one's configuration
    (less :data:`TRANSITION_CODES`); ``store_from``: the commit whose store stands as the old side's."""
    from flowgit.checks.hooklist import merged_weakenings

    old_v, new_v = auditor.version(old_commit), auditor.version(new_commit)
    old_side = auditor.fresh_side(old_commit, old_v) if old_v.blobs != (None, None) else None  # (extras set below)
    new_side = auditor.fresh_side(new_commit, new_v)
    if old_side is not None:
        if store_from is not None and store_from is not old_commit:
            donor = auditor.version(store_from)
            old_side.store = auditor.data(donor.store)
            old_side.store_ref = (str(donor.store), len(old_side.store)) if old_side.store is not None else None
        auditor.read_attributes(old_side, old_v, new_side, new_v)
    if old_v.hooks != new_v.hooks:
        new_side.extra["hooks_weakened"] = merged_weakenings(auditor.data(new_v.hooks), [auditor.data(old_v.hooks)],
                                                             memory_changed=False)
    found = judge_change(old_v.config.cfg, old_side, new_side, new_config=new_v.config.cfg)
    return [f for f in found if f.is_error and f.code not in TRANSITION_CODES]


def _extended_store(auditor, candidates: list, new) -> object:
    """Of ``candidates`` (the old tip, then the forks), the one whose store the new tip's extends, longest
    first: the step appends what the new history appended, one batch, as each of its commits did (a pure
    rewind appends nothing). None of them (the old tip's store not a prefix, no fork): the old tip's."""
    target = auditor.data(new.store) or b""
    best, size = candidates[0], -1
    for commit in candidates:
        data = auditor.data(auditor.version(commit).store)
        if data is not None and len(data) > size and target.startswith(data):
            best, size = commit, len(data)
    return best


def _merge_bases(auditor, base, tip) -> list[str]:
    """Every best common ancestor of the two tips (a criss-cross has several; libgit2 names one)."""
    found = auditor.repo.merge_base(base, tip)
    if found is None:
        return []
    from flowgit.git import git

    out = git(auditor.cfg.root, "merge-base", "--all", str(base), str(tip), check=False).decode().split()
    return out or [str(found)]

