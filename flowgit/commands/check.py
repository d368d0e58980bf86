"""``flowgit check``: the gate over the staged continuity file and store (never the working tree)."""

from __future__ import annotations

import sys

from flowgit.checks.finding import Finding
from flowgit.checks.override import Override, parse_override
from flowgit.checks.registry import override_reason
from flowgit.config import Config


class CheckReport:
    """The gate's verdict on the index: the file judged, whether anything was, the findings."""

    def __init__(self, path: str, checked: bool, findings: list[Finding] | None = None,
                 override: str | None = None) -> None:
        self.path = path
        self.checked = checked
        self.findings: list[Finding] = [] if findings is None else findings
        self.override = override

    @property
    def errors(self) -> int:
        return sum(f.is_error for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    @property
    def overridden(self) -> int:
        return sum(f.overridden for f in self.findings)

    @property
    def override_covers(self) -> list[str] | None:
        """The codes the override names, None when it covers every error (or none is set)."""
        scope = parse_override(self.override)
        return sorted(scope.codes) if scope is not None and scope.codes is not None else None

    def let_through(self) -> str:
        """The codes the override let through, with counts: "G402 ×2, G101"."""
        counts: dict[str, int] = {}
        for finding in self.findings:
            if finding.overridden:
                counts[finding.code] = counts.get(finding.code, 0) + 1
        return ", ".join(f"{code} ×{n}" if n > 1 else code for code, n in sorted(counts.items()))

    def to_dict(self) -> dict:
        return {"file": self.path, "checked": self.checked, "ok": self.errors == 0, "errors": self.errors,
                "warnings": self.warnings, "overridden": self.overridden, "override": self.override,
                "override_covers": self.override_covers, "findings": [f.to_dict() for f in self.findings]}


def _explicit(cfg: Config, attr: str) -> str | None:
    """A path given on the command line (``--file``/``--store``), else None (the base's config decides)."""
    from flowgit.config import DEFAULT_CONTINUITY, DEFAULT_STORE

    chosen = getattr(cfg, attr + "_rel")
    default = DEFAULT_CONTINUITY if attr == "continuity" else DEFAULT_STORE
    configured = cfg.source is not None
    return chosen if (chosen != default and not configured) else None


def run_check(cfg: Config, *, amend: bool | None = None) -> CheckReport:
    """Judge the index against its base(s) with the base's committed configuration."""
    from flowgit.checks.staged import staged_change
    from flowgit.git import require_repo

    root = require_repo(cfg.root)
    reason = override_reason()
    scope = parse_override(reason)
    pending = _wrap_pending(root, scope)  # any commit now, of any file, moves HEAD past the wrap's recovery
    change = staged_change(root, amend=amend, continuity=_explicit(cfg, "continuity"),
                           store=_explicit(cfg, "store"))
    if change is None:
        return CheckReport(cfg.continuity_rel, checked=False, findings=pending, override=reason)
    findings = _judge(change, scope)
    if not change.new.extra["proof"].holds():  # the working tree is not what is staged: judge git's blob
        change = staged_change(root, amend=amend, continuity=_explicit(cfg, "continuity"),
                               store=_explicit(cfg, "store"), verified=True)
        findings = _judge(change, scope)
    findings.extend(pending)
    if change.config_problem:
        problem = change.config_problem
        findings.append(Finding("G808", "config", "warning", problem.path, problem.line,
                                f"the configuration committed at the base is invalid ({problem.message}); "
                                "the defaults judge this commit, as the audit judges every commit after it",
                                "repair or remove it in a commit of its own"))
    if reason and any(f.overridden for f in findings):
        findings.extend(_override_unrecorded(root))
    return CheckReport(change.new.continuity_path, checked=True, findings=findings, override=reason)


def _judge(change, scope: Override | None) -> list[Finding]:
    from flowgit.checks.judge import judge_change, judge_merge

    if change.other_parents:
        return judge_merge(change.cfg, change.parents, change.new, override=scope, new_config=change.new_cfg,
                           base=change.merge_base)
    return judge_change(change.cfg, change.old, change.new, override=scope,
                        new_config=change.new_cfg if change.config_changed else None)


def _wrap_pending(root, scope: Override | None) -> list[Finding]:
    """G807: an interrupted wrap's journal is pending and no wrap is running (the wrap's own commit runs
    while it holds the repository lock). The staged files may be its half-written ones, and any commit,
    whatever it holds, moves HEAD, after which the recovery can only refuse: undo the wrap first."""
    import os

    from flowgit.git import git_dir
    from flowgit.journal import WRAP_COMMIT_VARIABLE, WRAP_JOURNAL, pending_journal

    gdir = git_dir(root)
    if pending_journal(gdir) is None:
        return []
    from flowgit.lock import LOCK_NAME, lock_taken, read_holder  # (only now: imported only while a journal is there)

    if lock_taken(gdir):
        holder = read_holder(gdir / LOCK_NAME)
        if holder is not None and os.environ.get(WRAP_COMMIT_VARIABLE) == str(holder.pid):
            return []  # the running wrap's own commit
        return [Finding("G807", "wrap-pending", "error", f".git/{WRAP_JOURNAL}", None,
                        "a wrap is running now: the continuity file, the store and the index hold its "
                        "uncommitted edits, and a commit now would take them in (and leave the wrap unable to "
                        "finish or undo)", "wait for the wrap to finish, then commit",
                        overridden=bool(scope and scope.covers("G807")))]
    return [Finding("G807", "wrap-pending", "error", f".git/{WRAP_JOURNAL}", None,
                    "an interrupted wrap awaits recovery: the continuity file, the store and the index may "
                    "hold its half-written changes, and a commit now (whatever it holds) moves HEAD, after "
                    "which the recovery can no longer undo the wrap",
                    "run `flowgit wrap --recover` (it undoes the interrupted wrap when it can prove nothing "
                    "else changed, or explains what did), then stage and commit again",
                    overridden=bool(scope and scope.covers("G807")))]


def _override_unrecorded(root) -> list[Finding]:
    """An override must leave a trace in the commit: refuse it when no commit-msg hook will record it."""
    from flowgit.commands.install_hook import records_overrides

    if records_overrides(root):
        return []
    return [Finding("G802", "override", "error", "FLOWGIT_OVERRIDE", None,
                    "FLOWGIT_OVERRIDE is set but no flowgit commit-msg hook is installed to record it in "
                    "the commit, so the override would leave no trace",
                    "run `flowgit install-hook` (or add the flowgit-commit-msg hook to "
                    ".pre-commit-config.yaml), then commit again")]


def render(report: CheckReport) -> str:
    if not report.checked and not report.findings:
        return (f"flowgit check: nothing staged for {report.path} or the store (the gate judges what git will "
                f"record: `git add {report.path}` first to check an edit)")
    lines = [f.format() for f in report.findings]
    verdict = "commit rejected" if report.errors else "ok"
    overridden = f" ({report.overridden} let through by FLOWGIT_OVERRIDE)" if report.overridden else ""
    if report.overridden and not report.errors:
        verdict = "ok only by the override (recorded in the commit)"
    lines.append(f"flowgit check: {report.errors} error(s){overridden}, {report.warnings} warning(s) — {verdict}")
    return "\n".join(lines)


def announce_override(report: CheckReport) -> None:
    if report.override and report.overridden:
        bar = "!" * 72
        covers = report.override_covers
        scope = (f"It names {', '.join(covers)}: other errors still stop the commit." if covers else
                 "It names no codes, so it lets every error through; name the ones you mean to override "
                 "(`FLOWGIT_OVERRIDE=\"G402: why\"`) so nothing else slips in with them.")
        sys.stderr.write(f"{bar}\nFLOWGIT_OVERRIDE is set: {report.overridden} error(s) let through for this "
                         f"commit ({report.let_through()}).\nReason: {report.override}\n{scope}\nThe commit-msg "
                         f"hook records a `Flow-Override:` trailer; `flowgit audit` reports it.\n{bar}\n")


def main(cfg: Config, as_json: bool, *, amend: bool | None = None) -> int:
    """Run the gate and print its report; the exit code the hook returns (0 pass, 1 rejected)."""
    report = run_check(cfg, amend=amend)
    if as_json:
        from flowgit.output import emit_json

        emit_json(report.to_dict())
    else:
        from flowgit.output import terminal_safe

        stream = sys.stderr if report.errors else sys.stdout
        stream.write(terminal_safe(render(report), stream) + "\n")
    announce_override(report)
    return 1 if report.errors else 0
