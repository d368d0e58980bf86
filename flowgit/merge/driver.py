"""git's merge driver for the continuity file and the store (``merge=flowgit``).

git runs ``flowgit merge-driver %O %A %B %P`` with the base, ours and theirs of
one path in temporary files; the driver writes the result over ``%A`` and exits
0 (merged) or 1 (conflict: git stops and says so). The path decides which merge
runs: the configured store gets the store merge, the configured continuity file
the continuity merge, and any other file git's own text merge. A merged
continuity file is judged by the gate against both parents (the merged store in
force); an error the merge itself introduced turns a clean merge into a
conflict, explained on stderr — a merge never lands what the gate would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write, decode_text

if TYPE_CHECKING:
    from flowgit.merge.continuity import Side
    from flowgit.merge.sides import CommitSide


@dataclass
class DriverResult:
    path: str
    kind: str  # "continuity" | "store" | "text"
    clean: bool
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # gate findings that made a clean merge a conflict

    def to_dict(self) -> dict:
        return {"path": self.path, "kind": self.kind, "clean": self.clean, "conflicts": self.conflicts,
                "notes": self.notes, "refused": self.refused}


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise FlowgitError(f"cannot be read ({exc.strerror})", path=path,
                           fix="git runs this as `flowgit merge-driver %O %A %B %P`") from None


def run_driver(cfg: Config, base: str, ours: str, theirs: str, rel: str) -> DriverResult:
    """Merge one path; whatever goes wrong past reading the inputs ends as git's own text merge.

    A driver that fails and leaves ``%A`` as it was would let ``git add`` take
    ours whole, silently; a text merge leaves the markers, which nothing passes.
    """
    data = [_read(p) for p in (base, ours, theirs)]
    try:
        return _merge(cfg, data, base, ours, theirs, rel)
    except Exception as exc:  # noqa: BLE001 - any failure must still leave a visible conflict
        why = exc.render() if isinstance(exc, FlowgitError) else f"{type(exc).__name__}: {exc}"
        return _text_merge(cfg, base, ours, theirs, rel, f"not merged by meaning ({why})")


def _merge(cfg: Config, data: list[bytes], base: str, ours: str, theirs: str, rel: str) -> DriverResult:
    kind = memory_kind(cfg, rel)
    if kind is None:
        name = rel.rsplit("/", 1)[-1]
        return _text_merge(cfg, base, ours, theirs, rel,
                           f"not the continuity file or the store ({cfg.continuity_rel}, {cfg.store_rel}): merged "
                           f"as text, as git merges it (a `.gitattributes` line without a slash matches every "
                           f"`{name}`: anchor it, `/{name} merge=flowgit`, as `flowgit init` writes it)")
    if kind == "store":
        return _store(data, ours, rel)
    try:
        texts = [decode_text(d, f"{rel} ({side})") for d, side in zip(data, ("base", "ours", "theirs"))]
    except FlowgitError as exc:
        return _text_merge(cfg, base, ours, theirs, rel, f"not merged by meaning: {exc.render()}")
    return _continuity(cfg, data, texts, ours, rel)


def memory_kind(cfg: Config, rel: str) -> str | None:
    """Which memory path git's ``%P`` is: "store", "continuity", or None for any other file that reaches the
    driver (an unanchored attribute line an older init wrote matches a `CONTINUITY.md` in every directory, a
    package's own notes too: merged by meaning, a line changed two ways would be kept twice, not a conflict).
    The configuration in the working tree names the paths, and so does the one committed at HEAD or on the
    other side (a side that moved the memory)."""
    for named in _configurations(cfg):
        if rel == named.store_rel:
            return "store"
        if rel == named.continuity_rel:
            return "continuity"
    return None


def _configurations(cfg: Config):
    """``cfg``, then the configurations committed at HEAD and at the commit being merged, read only when the
    one before did not name the path (most merges stop at the first)."""
    from flowgit.config import load_config_from_blobs
    from flowgit.git import blobs
    from flowgit.history.config_at import CONFIG_FILES
    from flowgit.merge import sides

    yield cfg
    for rev in ("HEAD", sides.other_commit(cfg.root)):
        if rev is None:
            continue
        found = blobs(cfg.root, [f"{rev}:{name}" for name in CONFIG_FILES])
        try:
            yield load_config_from_blobs(cfg.root, dict(zip(CONFIG_FILES, found)), "commit")
        except FlowgitError:
            continue  # an unreadable committed configuration names no path


def _store(data: list[bytes], ours_path: str, rel: str) -> DriverResult:
    """The store merged three-way; a line one side removed since the base (a redaction) is said, not hidden."""
    from flowgit.merge.store import merge_store, other_records, removed_since_base

    base, ours, theirs = data
    atomic_write(ours_path, merge_store(ours, theirs, base))
    out = DriverResult(rel, "store", True)
    gone = removed_since_base(base, ours, theirs)
    if gone:
        out.notes.append(f"{len(gone)} line(s) of the base that one side removed (a redaction) stay removed, "
                         "though the other side still held them")
    records = other_records(ours, theirs)
    out.notes.extend(records)
    out.clean = not records  # one side's record would be rewritten (G708): a person decides, the merge stops
    return out


def _continuity(cfg: Config, data: list[bytes], texts: list[str], ours_path: str, rel: str) -> DriverResult:
    from flowgit.episodes import lookup
    from flowgit.evidence import store_weight
    from flowgit.merge import sides
    from flowgit.merge.continuity import merge_continuity
    from flowgit.merge.patterns import SinceBase
    from flowgit.merge.store import added_since_base, merge_store

    root = cfg.root
    replay = sides.replayed(root)  # (a cherry-pick or revert: git's base is the replayed commit's parent)
    ours_c, theirs_c = sides.describe(root, "HEAD", replay.theirs if replay else sides.other_commit(root))
    store_o, store_t = sides.stores(root, cfg.store_rel, ours_c, theirs_c)
    base_store = sides.store_at(root, cfg.store_rel, replay.base) if replay and theirs_c else \
        sides.base_store(root, cfg.store_rel, ours_c, theirs_c)
    store = merge_store(store_o, store_t, base_store)
    since_base = None  # a side or the base unknown: nothing is known to be new, and an archival stands
    if ours_c is not None and theirs_c is not None:
        since_base = SinceBase(added_since_base(store_o, base_store), added_since_base(store_t, base_store),
                               store_weight(store))
    elif theirs_c is None:
        since_base = SinceBase(theirs_unknown=True)
    ours_w, theirs_w = sides.wrote(root, rel, ours_c), sides.wrote(root, rel, theirs_c)  # not a sync's merge
    newer = "ours" if ours_w and theirs_w and ours_w.timestamp > theirs_w.timestamp else "theirs"
    labels = (_side("ours", ours_w), _side("theirs", theirs_w))
    result = merge_continuity(*texts, aliases=cfg.aliases, thresholds=cfg.thresholds,
                              lookup=lambda ids: lookup(store, ids), newer=newer, sides=labels,
                              notes=sides.quotes_the_other_side(root), since_base=since_base)
    out = DriverResult(rel, "continuity", result.clean, list(result.conflicts), list(result.notes))
    if theirs_c is None:
        out.notes.append("the other side's commit was not found: evidence was checked against our store only")
    if result.clean:
        out.refused = refused_by_gate(cfg, data, result.text.encode("utf-8"), store, rel)
        out.refused += evidence_left_behind(cfg, result.text, store, {"ours": store_o, "theirs": store_t}, rel)
        out.clean = not out.refused
    atomic_write(ours_path, result.text)
    return out


def _side(which: str, wrap: "CommitSide | None") -> "Side":
    """A side as the merge names it: "ours e1c0f9f3cc" in conflict markers (git's words), the wrap's id with its
    author and session in a note ("e1c0f9f3cc by Bob, session b1": a teammate reading it later was not there)."""
    from flowgit.merge.continuity import Side  # noqa: F811  (the driver imports the merge lazily)

    if wrap is None:
        return Side(which)
    commit = " ".join(part for part in (wrap.sha[:10], wrap.who()) if part)
    return Side(f"{which} {wrap.sha[:10]}", wrap.date, commit)


def refused_by_gate(cfg: Config, data: list[bytes], merged: bytes, store: bytes, rel: str) -> list[str]:
    """The gate's errors on the merged file, reached as the hook's and the audit's merge verdict is
    (:func:`flowgit.checks.judge.judge_merge`: one engine): judged against each parent, an error stands where
    every parent that changed the thing since the base shows it, so what a branch did (gated commit by
    commit as it was made) is not held against the merge, and what the merge made itself (unioned evidence,
    a combined level, merged action items, notes) is. The store is the merged one on every side: the store
    merge answers for the store, this answers for the continuity file.
    """
    from flowgit.checks.judge import Side, judge_merge

    def side(text: bytes) -> Side:
        return Side(text, store, rel, cfg.store_rel)

    base, ours, theirs = data
    found = judge_merge(cfg, [side(ours), side(theirs)], side(merged), base=side(base) if base else None)
    return list(dict.fromkeys(f.format() for f in found if f.is_error))


WHOSE = {"ours": "our", "theirs": "the other side's"}


def evidence_left_behind(cfg: Config, merged: str, store: bytes, side_stores: dict[str, bytes],
                         rel: str) -> list[str]:
    """A citation in the merged file of an episode a side's own store holds but the merged store does not.

    The gate judges every side with the merged store, so a side whose pattern
    cites such an episode shows the same missing id and the error reads as that
    side's own. It is the merge's: the store merge left the line out (one side
    never had it: a cherry-pick of a wrap whose episode an earlier, unpicked
    commit recorded; or removed it since the base). The pattern would keep a
    level on evidence no longer on record.
    """
    from flowgit.continuity.document import Document
    from flowgit.continuity.patterns import iter_patterns
    from flowgit.episodes import lookup

    cited = {}
    for at in iter_patterns(Document.parse(merged, aliases=cfg.aliases)):
        for ident in at.pattern.evidence:
            cited.setdefault(ident, (at.pattern.name, at.line + 1))
    if not cited:
        return []
    kept = lookup(store, list(cited))
    held = {WHOSE[side]: lookup(data, list(cited)) for side, data in side_stores.items() if data}
    out = []
    for ident, (name, line) in cited.items():
        owners = [side for side, found in held.items() if ident in found]
        if ident not in kept and owners:
            out.append(f"{rel}:{line}: `{name}` cites {ident}, which {owners[0]} store holds but the merged store "
                       f"does not (the store merge left it out: the commit that recorded it is not part of this "
                       f"merge, or a side removed it since the base)\n    fix: bring the commit that recorded "
                       f"{ident} first (cherry-pick it too, or merge its branch), or cite episodes the merged store "
                       "holds")
    return out


def _text_merge(cfg: Config, base: str, ours: str, theirs: str, rel: str, why: str) -> DriverResult:
    """A plain line merge (git's own), for a file flowgit cannot read as a continuity file."""
    import subprocess

    proc = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs],
                          cwd=cfg.root, capture_output=True)
    clean = proc.returncode == 0
    return DriverResult(rel, "text", clean, [] if clean else [rel], [why])


def render(result: DriverResult) -> str:
    lines = [f"flowgit merge-driver: {result.path}: {n}" for n in result.notes]
    for label in result.conflicts:
        lines.append(f"flowgit merge-driver: {result.path}: CONFLICT in {label}: both sides changed it "
                     "differently (protected: resolve by hand, remove the markers, `git add`)")
    for finding in result.refused:
        lines.append(f"flowgit merge-driver: the merged file would fail the gate:\n  {finding}")
    if result.refused:
        lines.append(f"flowgit merge-driver: {result.path}: left as merged but marked conflicted: fix the "
                     "finding(s), then `git add` it")
    if result.clean and not lines:
        return ""
    return "\n".join(lines)
