"""``flowgit check``: the gate over the staged continuity file and store (never the working tree)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from flowgit.background import Background
from flowgit.checks.context import CheckContext, is_prefix
from flowgit.checks.finding import Finding
from flowgit.checks.registry import override_reason, run_rules
from flowgit.config import Config
from flowgit.git import blobs, head_entries, index_entries, read_blob, require_repo
from flowgit.continuity.document import _parser
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
    """HEAD's and the index's continuity file and store; None when neither is staged differently.

    Blob ids decide what changed without reading anything; the continuity
    blobs come out of one ``git cat-file --batch``; the staged store is read
    from the working tree when it hashes to the staged blob; HEAD's store is
    read only if a rule asks for it.
    """
    root = require_repo(cfg.root)
    warm_parser = Background(_parser)  # markdown-it imports while git answers
    cont, store = cfg.continuity_rel, cfg.store_rel
    entries = index_entries(root, [cont, store])
    staged = {path: e.oid for path, e in entries.items()}
    head = head_entries(root, [cont, store])
    if staged.get(cont) == head.get(cont, (None,))[0] and staged.get(store) == head.get(store, (None,))[0]:
        return None
    wanted = [oid for oid in (staged.get(cont), head.get(cont, (None,))[0]) if oid]
    texts = dict(zip(wanted, blobs(root, wanted)))
    new_doc = texts.get(staged.get(cont) or head.get(cont, ("",))[0]) or b""
    old_doc = texts.get(head[cont][0]) if cont in head else None
    new_store = read_blob(root, store, entries[store]) if store in entries else b""
    old_entry = head.get(store)
    appended_only = Background(is_prefix, new_store, old_entry)  # hashed while the rules run
    warm_parser.result()
    return CheckContext(cfg=cfg, new=document_from_bytes(cfg, new_doc, cont),
                        old=document_from_bytes(cfg, old_doc, f"HEAD:{cont}"),
                        new_store=new_store, path=cont, store_path=store, old_store_entry=old_entry,
                        old_store_loader=(lambda: blobs(root, [old_entry[0]])[0] or b"") if old_entry else None,
                        appended_check=appended_only)


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


def main(cfg: Config, as_json: bool) -> int:
    """Run the gate and print its report; the exit code the hook returns (0 pass, 1 rejected)."""
    report = run_check(cfg)
    if as_json:
        from flowgit.output import emit_json

        emit_json(report.to_dict())
    else:
        stream = sys.stderr if report.errors else sys.stdout
        stream.write(render(report) + "\n")
    announce_override(report)
    return 1 if report.errors else 0
