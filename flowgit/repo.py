"""Load the continuity document and the store from the working tree, the index or HEAD.

One place knows the three places a document can come from, so the gate, the
wrap and the CLI read them the same way.
"""

from __future__ import annotations

from pathlib import Path

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
    return Document.parse(decode_text(data, label), aliases=cfg.aliases, path=label)


def _shown(cfg: Config, target: Path) -> str:
    try:
        return str(target.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(target)
