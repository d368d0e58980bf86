"""``flowgit check``: the gate over the staged continuity file and store (never the working tree)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.checks.registry import override_reason, run_rules
from flowgit.config import Config
from flowgit.git import blobs, require_repo
from flowgit.repo import document_from_bytes


@dataclass
class CheckReport:
    path: str
    checked: bool
    findings: list[Finding] = field(default_factory=list)
    override: str | None = None

    @property
    def errors(self) -> int:
        return sum(f.is_error for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    @property
    def overridden(self) -> int:
        return sum(f.overridden for f in self.findings)

    def to_dict(self) -> dict:
        return {"file": self.path, "checked": self.checked, "ok": self.errors == 0, "errors": self.errors,
                "warnings": self.warnings, "overridden": self.overridden, "override": self.override,
                "findings": [f.to_dict() for f in self.findings]}


def staged_context(cfg: Config) -> CheckContext | None:
    """Read HEAD's and the index's continuity file and store in one git call; None if neither changed."""
    root = require_repo(cfg.root)
    cont, store = cfg.continuity_rel, cfg.store_rel
    new_doc, old_doc, new_store, old_store = blobs(root, [f":{cont}", f"HEAD:{cont}", f":{store}", f"HEAD:{store}"])
    if new_doc == old_doc and new_store == old_store:
        return None
    if new_doc is None:
        new_doc = old_doc or b""
    return CheckContext(cfg=cfg, new=document_from_bytes(cfg, new_doc, cont),
                        old=document_from_bytes(cfg, old_doc, f"HEAD:{cont}"),
                        new_store=new_store or b"", old_store=old_store or b"", path=cont, store_path=store)


def run_check(cfg: Config) -> CheckReport:
    ctx = staged_context(cfg)
    if ctx is None:
        return CheckReport(cfg.continuity_rel, checked=False)
    reason = override_reason()
    findings: list[Finding] = []
    if not ctx.new.sections:
        findings.append(Finding("G001", "structure", "error", ctx.path, 1,
                                "the staged file has no `## ` sections, so it is not a continuity file",
                                "restore the sections (git show HEAD:" + ctx.path + ")"))
    findings.extend(run_rules(ctx, override=reason))
    return CheckReport(ctx.path, checked=True, findings=findings, override=reason)


def render(report: CheckReport) -> str:
    if not report.checked:
        return f"flowgit check: nothing staged for {report.path} or the store"
    lines = [f.format() for f in report.findings]
    verdict = "commit rejected" if report.errors else "ok"
    lines.append(f"flowgit check: {report.errors} error(s), {report.warnings} warning(s) — {verdict}")
    return "\n".join(lines)


def announce_override(report: CheckReport) -> None:
    if report.override and report.overridden:
        bar = "!" * 72
        sys.stderr.write(f"{bar}\nFLOWGIT_OVERRIDE is set: {report.overridden} error(s) let through for this "
                         f"commit.\nReason: {report.override}\nThe commit-msg hook records a `Flow-Override:` "
                         f"trailer; `flowgit audit` reports it.\n{bar}\n")
