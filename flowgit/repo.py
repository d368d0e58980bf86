"""Load the continuity document and the store from the working tree, the index or HEAD.

One place knows the three places a document can come from, so the gate, the
wrap and the CLI read them the same way.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from flowgit.config import Config
from flowgit.continuity.document import Document
from flowgit.continuity.textdiff import shared_lines
from flowgit.errors import FlowgitError
from flowgit.fsio import MAX_TEXT_BYTES, decode_text, read_text


def load_document(cfg: Config, path: str | Path | None = None, *, require_sections: bool = True) -> Document:
    """Parse the continuity file on disk (or ``path``), refusing what is not one."""
    target = Path(path) if path else cfg.continuity
    text = read_text(target)
    refuse_mid_merge(text, _shown(cfg, target))
    doc = Document.parse(text, aliases=cfg.aliases, path=_shown(cfg, target))
    if require_sections:
        doc.require_sections()
    return doc


_REUSE: list | None = None  # (bytes, aliases, document), the latest last; set only inside reusing_documents()
_REUSE_KEEP = 4


@contextmanager
def reusing_documents(keep: int = 4) -> Iterator[None]:
    """Inside this block, the same bytes parse to the same (read-only) Document.

    The history audit judges each version twice — as one commit's new side and
    as its child's old side — so each version is parsed once. Outside the
    block (the hook, the wrap) nothing is cached.
    """
    global _REUSE, _REUSE_KEEP
    outer, _REUSE, _REUSE_KEEP = _REUSE, [], keep
    try:
        yield
    finally:
        _REUSE = outer


def refuse_mid_merge(text: str, shown: str) -> None:
    """A file holding git conflict markers is mid-merge: say so rather than read both sides as one."""
    from flowgit.merge.markers import find_markers

    found = find_markers(text)
    if found is not None:
        raise FlowgitError(f"is mid-merge: {found.describe()}; read now, it would list both sides' "
                           "patterns twice", path=shown, line=found.first,
                           fix=MID_MERGE_FIX)


# What to do with a file git left conflicted: resolving comes first (the driver is usually registered: the
# conflict is a real one), and re-merging through the driver is for a clone that never ran `flowgit init`.
MID_MERGE_FIX = ("resolve the conflict: edit the marked lines, `git add` the file and commit; or undo it with "
                 "`git merge --abort` (`git rebase --abort` in a rebase). In a clone that never ran `flowgit init` "
                 "(`flowgit status` says so), run it after the abort, then merge again: its merge driver merges "
                 "the memory without markers")


def document_from_bytes(cfg: Config, data: bytes | None, label: str) -> Document | None:
    if data is None:
        return None
    kept = _REUSE
    if kept is None:
        return Document.parse(decode_text(data, label), aliases=cfg.aliases, path=label)
    aliases = tuple(sorted(cfg.aliases.items()))
    found = _reused(kept, data, aliases)
    if found is not None:
        return found
    # read against the version parsed last (a walk's neighbour): the lines both share are taken from it
    doc = _read_against(kept[-1], data, cfg, label) if kept else None
    if doc is None:
        doc = Document.parse(decode_text(data, label), aliases=cfg.aliases, path=label)
    kept.append((data, aliases, doc))
    if len(kept) > _REUSE_KEEP:
        del kept[0]
    return doc


def _read_against(base: tuple, data: bytes, cfg: Config, label: str) -> Document | None:
    """``data``'s document read as an edit of a kept one: only the lines between those both share are
    decoded and parsed. None when it cannot be (then the whole text is read, and refused if it must be)."""
    base_data, _, base_doc = base
    if len(data) > MAX_TEXT_BYTES or b"\x00" in data[:8192]:
        return None  # decode_text's refusals, given by the full read
    shared = shared_lines(base_data, data, len(base_doc.lines))
    start, end = shared.new_mid
    try:
        middle = data[start:end].decode("utf-8")  # the rest is base's, already decoded from equal bytes
    except UnicodeDecodeError:
        return None
    return Document.parse_against(base_doc, shared.top, shared.bottom, middle, aliases=cfg.aliases, path=label)


def _reused(kept: list, data: bytes, aliases: tuple) -> Document | None:
    """The document already parsed from these bytes under these aliases, if one is kept (then kept longest).

    The few kept versions are compared directly (the same object, else equal
    bytes): far cheaper than hashing a long file's bytes to look it up.
    """
    for at in range(len(kept) - 1, -1, -1):
        other, other_aliases, doc = kept[at]
        if (other is data or (len(other) == len(data) and other == data)) and other_aliases == aliases:
            kept.append(kept.pop(at))
            return doc
    return None


def _shown(cfg: Config, target: Path) -> str:
    try:
        return str(target.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(target)
