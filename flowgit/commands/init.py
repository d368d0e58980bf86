"""``flowgit init``: the continuity skeleton, the store and its merge rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write
from flowgit.git import require_repo
from flowgit.resources import template


@dataclass
class InitResult:
    continuity: str
    store: str
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def run_init(cfg: Config) -> InitResult:
    """Create the continuity file, the store and the ``merge=union`` rule; never overwrite."""
    root = require_repo(cfg.root if (cfg.root / ".git").exists() else None)
    if cfg.continuity.exists():
        raise FlowgitError("already exists; flowgit init never overwrites a continuity file",
                           path=cfg.continuity_rel, fix="edit it, or remove it yourself to start over")
    result = InitResult(cfg.continuity_rel, cfg.store_rel)
    atomic_write(cfg.continuity, template("continuity.md"))
    result.created.append(cfg.continuity_rel)
    if cfg.store.exists():
        result.unchanged.append(cfg.store_rel)
    else:
        atomic_write(cfg.store, b"")
        result.created.append(cfg.store_rel)
    if _ensure_union_merge(root, cfg.store_rel):
        result.created.append(".gitattributes (merge=union for the store)")
    else:
        result.unchanged.append(".gitattributes")
    return result


def _ensure_union_merge(root: Path, store_rel: str) -> bool:
    path = root / ".gitattributes"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    rule = f"{store_rel} merge=union"
    if any(line.split()[:2] == rule.split() for line in text.splitlines() if line.strip()):
        return False
    sep = "" if not text or text.endswith("\n") else "\n"
    atomic_write(path, f"{text}{sep}{rule}\n")
    return True


def render(result: InitResult) -> str:
    lines = [f"created {c}" for c in result.created]
    lines += [f"kept    {u}" for u in result.unchanged]
    lines.append(f"next: edit {result.continuity}, record episodes with `flowgit episode add`, "
                 "and wrap with `flowgit wrap`")
    return "\n".join(lines)
