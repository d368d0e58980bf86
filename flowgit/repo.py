"""Load the continuity document and the store from the working tree, the index or HEAD.

One place knows the three places a document can come from, so the gate, the
wrap and the CLI read them the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from flowgit.config import Config
from flowgit.continuity.document import Document
from flowgit.errors import FlowgitError
from flowgit.fsio import decode_text, read_text


def load_document(cfg: Config, path: str | Path | None = None, *, require_sections: bool = True) -> Document:
    """Parse the continuity file on disk (or ``path``), refusing what is not one."""
    target = Path(path) if path else cfg.continuity
    text = read_text(target)
    refuse_mid_merge(text, _shown(cfg, target))
    doc = Document.parse(text, aliases=cfg.aliases, path=_shown(cfg, target))
    if require_sections:
        doc.require_sections()
    return doc


_REUSE: OrderedDict | None = None  # set only inside reusing_documents()
_REUSE_KEEP = 4


@contextmanager
def reusing_documents(keep: int = 4) -> Iterator[None]:
    """Inside this block, the same bytes parse to the same (read-only) Document.

    The history audit judges each version twice — as one commit's new side and
    as its child's old side — so each version is parsed once. Outside the
    block (the hook, the wrap) nothing is cached.
    """
    global _REUSE, _REUSE_KEEP
    outer, _REUSE, _REUSE_KEEP = _REUSE, OrderedDict(), keep
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
                           fix="finish the merge first: `flowgit init` registers the merge driver (then "
                               "`git merge --abort` and merge again), or resolve the markers by hand and "
                               "`git add` the file")


def document_from_bytes(cfg: Config, data: bytes | None, label: str) -> Document | None:
    if data is None:
        return None
    cache = _REUSE
    key = (data, tuple(sorted(cfg.aliases.items()))) if cache is not None else None
    if cache is not None and key in cache:
        cache.move_to_end(key)
        return cache[key]
    doc = Document.parse(decode_text(data, label), aliases=cfg.aliases, path=label)
    if cache is not None:
        cache[key] = doc
        if len(cache) > _REUSE_KEEP:
            cache.popitem(last=False)
    return doc


def _shown(cfg: Config, target: Path) -> str:
    try:
        return str(target.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(target)
