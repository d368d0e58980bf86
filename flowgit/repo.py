"""Load the continuity document and the store from the working tree, the index or HEAD.

One place knows the three places a document can come from, so the gate, the
wrap and the CLI read them the same way.
"""

from __future__ import annotations

from pathlib import Path

from flowgit.config import Config
from flowgit.continuity.document import Document
from flowgit.fsio import decode_text, read_text


def load_document(cfg: Config, path: str | Path | None = None, *, require_sections: bool = True) -> Document:
    """Parse the continuity file on disk (or ``path``), refusing what is not one."""
    target = Path(path) if path else cfg.continuity
    doc = Document.parse(read_text(target), aliases=cfg.aliases, path=_shown(cfg, target))
    if require_sections:
        doc.require_sections()
    return doc


def document_from_bytes(cfg: Config, data: bytes | None, label: str) -> Document | None:
    if data is None:
        return None
    return Document.parse(decode_text(data, label), aliases=cfg.aliases, path=label)


def _shown(cfg: Config, target: Path) -> str:
    try:
        return str(target.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(target)
