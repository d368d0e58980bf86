"""The one verdict: judge a change of the continuity file and store, whoever asks.

The pre-commit hook (staged blobs against HEAD), ``flowgit wrap`` (the tree it is
about to commit), ``flowgit audit`` (each commit against each parent) and the
merge driver (its result against both sides) all describe the change as two
:class:`Side` values and call :func:`judge_change`. Rules never read the working
tree, the index or the configuration on disk themselves: the caller decides
which configuration is in force (the one committed at the base, so a commit
cannot weaken the gate that judges it) and hands over bytes as git records them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.config import Config


@dataclass(frozen=True)
class Side:
    """One side of a change as git records it. ``None`` bytes mean the path is absent."""

    continuity: bytes | None
    store: bytes | None
    continuity_path: str
    store_path: str
    commit: str | None = None  # the commit this side is (None for the index or a tree about to be committed)
    author: str | None = None  # who makes the change (the agent of episodes that name none)
    when: datetime | None = None  # when the change is made (later episodes do not count)
    extra: dict = field(default_factory=dict)


def judge_change(cfg: Config, old: Side | None, new: Side, *, message: str | None = None,
                 override: str | None = None) -> list[Finding]:
    """Every enabled rule's findings for ``old`` -> ``new`` under ``cfg`` (the base's configuration).

    ``old`` is None for a first commit. ``override`` is the reason given with
    FLOWGIT_OVERRIDE: errors are kept but marked overridden, so callers can
    record them.
    """
    from flowgit.checks.registry import run_rules
    from flowgit.git import blob_oid
    from flowgit.repo import document_from_bytes

    new_doc = document_from_bytes(cfg, new.continuity if new.continuity is not None else b"", new.continuity_path)
    old_doc = document_from_bytes(cfg, old.continuity, f"base:{old.continuity_path}") if old else None
    old_store = old.store if old else None
    old_entry = (blob_oid(old_store), len(old_store)) if old_store is not None else None
    ctx = CheckContext(cfg=cfg, new=new_doc, old=old_doc, new_store=new.store or b"",
                       path=new.continuity_path, store_path=new.store_path, old_store_entry=old_entry,
                       old_store_loader=(lambda: old_store) if old_store is not None else None)
    findings: list[Finding] = []
    if not new_doc.sections:
        findings.append(Finding("G001", "structure", "error", new.continuity_path, 1,
                                "the file has no `## ` sections, so it is not a continuity file",
                                f"restore the sections (git show HEAD:{new.continuity_path})"))
    findings.extend(run_rules(ctx, override=override))
    return findings
