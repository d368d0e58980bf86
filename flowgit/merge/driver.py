"""git's merge driver for the continuity file and the store (``merge=flowgit``).

git runs ``flowgit merge-driver %O %A %B %P`` with the base, ours and theirs of
one path in temporary files; the driver writes the result over ``%A`` and exits
0 (merged) or 1 (conflict: git stops and says so). The path decides which merge
runs: the configured store gets the store merge, anything else the continuity
merge. A merged continuity file is judged by the gate against both parents
(the merged store in force); an error the merge itself introduced turns a
clean merge into a conflict, explained on stderr — a merge never lands what
the gate would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write, decode_text


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
    if rel == cfg.store_rel:
        from flowgit.merge.store import merge_store

        atomic_write(ours, merge_store(data[1], data[2]))
        return DriverResult(rel, "store", True)
    try:
        texts = [decode_text(d, f"{rel} ({side})") for d, side in zip(data, ("base", "ours", "theirs"))]
    except FlowgitError as exc:
        return _text_merge(cfg, base, ours, theirs, rel, f"not merged by meaning: {exc.render()}")
    return _continuity(cfg, data, texts, ours, rel)


def _continuity(cfg: Config, data: list[bytes], texts: list[str], ours_path: str, rel: str) -> DriverResult:
    from flowgit.episodes import lookup
    from flowgit.merge import sides
    from flowgit.merge.continuity import Side, merge_continuity
    from flowgit.merge.store import merge_store

    root = cfg.root
    ours_c, theirs_c = sides.describe(root, "HEAD", sides.other_commit(root))
    store_o, store_t = sides.stores(root, cfg.store_rel, ours_c, theirs_c)
    store = merge_store(store_o, store_t)
    newer = "ours" if ours_c and theirs_c and ours_c.timestamp > theirs_c.timestamp else "theirs"
    labels = (Side("ours" + (f" {ours_c.sha[:10]}" if ours_c else ""), ours_c.date if ours_c else ""),
              Side("theirs" + (f" {theirs_c.sha[:10]}" if theirs_c else ""), theirs_c.date if theirs_c else ""))
    result = merge_continuity(*texts, aliases=cfg.aliases, thresholds=cfg.thresholds,
                              lookup=lambda ids: lookup(store, ids), newer=newer, sides=labels)
    out = DriverResult(rel, "continuity", result.clean, list(result.conflicts), list(result.notes))
    if theirs_c is None:
        out.notes.append("the other side's commit was not found: evidence was checked against our store only")
    if result.clean:
        out.refused = refused_by_gate(cfg, data, result.text.encode("utf-8"), store, rel)
        out.clean = not out.refused
    atomic_write(ours_path, result.text)
    return out


def refused_by_gate(cfg: Config, data: list[bytes], merged: bytes, store: bytes, rel: str) -> list[str]:
    """Gate errors of the merged file against either parent that the merge itself is answerable for.

    Judging a merge against one parent also judges what the *other* parent
    brings in, and that is the other side's history, gated commit by commit as
    it was made (and audited since): a pattern another clone raised 1x -> 2x -> 3x
    in two wraps looks like a jump against a clone still at 1x. So an error is
    the merge's own unless

    * the parent's own change from the base already carried it (an override,
      an over-budget file it did not make worse), or
    * it sits on a line, or in a section, that the merge took verbatim from the
      other parent.

    What the merge made itself (unioned evidence, a combined level, merged
    action items, notes) differs from both parents and is judged in full. The
    store is the merged one on every side: the store merge answers for the
    store, this answers for the continuity file.
    """
    from flowgit.checks.judge import Side, claim_loss_name, holds_as_merged, judge_change

    def side(text: bytes) -> Side:
        return Side(text, store, rel, cfg.store_rel)

    def lines(text: bytes) -> list[bytes]:
        return [ln.rstrip(b"\r") for ln in text.split(b"\n")]

    base, ours, theirs = data
    new, merged_lines = side(merged), lines(merged)
    merged_doc = _doc(cfg, merged)
    refused: list[str] = []
    judged = {parent: [] if parent == merged else  # (the merge took this parent whole: nothing changed)
              [f for f in judge_change(cfg, side(parent), new, merge_parents=(side(ours), side(theirs))) if f.is_error]
              for parent in (ours, theirs)}
    for parent, other in ((ours, theirs), (theirs, ours)):
        lost_against_other = {claim_loss_name(f) for f in judged[other]}
        errors = [f for f in judged[parent]
                  if (name := claim_loss_name(f)) is None or not holds_as_merged(cfg, name, side(other),
                                                                                 lost_against_other)]
        if not errors:
            continue
        carried = {(f.code, f.message) for f in judge_change(cfg, side(base) if base else None, side(parent))
                   if f.is_error}
        other_lines, parent_lines, other_doc = set(lines(other)), set(lines(parent)), _doc(cfg, other)
        for f in errors:
            text = merged_lines[f.line - 1] if f.line and f.line <= len(merged_lines) else None
            from_other = text is not None and text in other_lines and text not in parent_lines
            if not from_other and f.line:
                from_other = _section_as_other(merged_doc, other_doc, f.line - 1)
            if (f.code, f.message) not in carried and not from_other:
                refused.append(f.format())
    return list(dict.fromkeys(refused))


def _doc(cfg: Config, data: bytes):
    from flowgit.repo import document_from_bytes

    return document_from_bytes(cfg, data, "merge")


def _section_as_other(merged, other, index: int) -> bool:
    """Whether the section holding line ``index`` says exactly what the other parent's does (notes aside)."""
    from flowgit.continuity.document import is_structural

    section = merged.section_at(index)
    theirs = other.find(section.label) if section is not None else None
    if section is None or theirs is None:
        return False

    def content(doc, sec) -> list[str]:
        return [ln.rstrip("\r\n") for ln in doc.lines[sec.body_start:sec.body_end] if not is_structural(ln)]

    return content(merged, section) == content(other, theirs)


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
