"""The ordered rule list and the runner that applies configuration to it."""

from __future__ import annotations

import os
from typing import Callable, Iterable, NamedTuple

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding

RuleFn = Callable[[CheckContext], Iterable[Finding]]


class Rule(NamedTuple):
    """A gate rule: the name configuration switches by, a one-line summary, the function."""

    name: str
    summary: str
    fn: RuleFn


def _rules() -> list[Rule]:
    from flowgit.checks import (attributes, claims, compression, evidence_rules, identity_rules, lint_rule,
                                recognition, semantics, size, store)
    from flowgit.checks.conflict import conflict_markers

    return [
        Rule("conflict-markers", "git conflict markers in the continuity file or store", conflict_markers),
        Rule("recognition", "pattern-like lines that do not parse, hidden patterns", recognition.unreadable_patterns),
        Rule("names", "duplicate names after NFKC/case folding; mixed-script names", recognition.names),
        Rule("new-pattern", "a new pattern enters at 1x in Developing", identity_rules.new_patterns_enter_at_1x),
        Rule("proven-exit", "Proven leaves only stale or demoted with a reason", identity_rules.proven_leaves_properly),
        Rule("proven-claim", "a Proven claim is not reworded in place", identity_rules.proven_claims_stay),
        Rule("claim-kept", "a raised pattern gains no words its evidence was not recorded for",
             claims.claims_kept),
        Rule("ungrounded-graduation", "a 2x/3x or Proven pattern without [evidence: …]", evidence_rules.ungrounded),
        Rule("evidence", "cited evidence must exist, be about the pattern and be enough", evidence_rules.evidence_holds),
        Rule("evidence-reuse", "one episode cited by many patterns (warning)", evidence_rules.evidence_reuse),
        Rule("level-jump", "1x -> 3x in one commit, or a level raised without new evidence", evidence_rules.level_jumps),
        Rule("performance-compression", "same items restated in fewer words", compression.performance_compression),
        Rule("append-not-replace", "State / Top of Mind appended to instead of replaced", semantics.append_not_replace),
        Rule("append-not-rewrite", "Recent Context appended to instead of rewritten", semantics.append_not_rewrite),
        Rule("protected-evidence", "a Proven pattern's evidence dropped or altered", semantics.protected_evidence),
        Rule("protected-zone", "Foundation / Partnership / Cross-Domain changed without override",
             identity_rules.protected_zone),
        Rule("catastrophic-shrink", "the file losing more than shrink_max (archival aside)", size.catastrophic_shrink),
        Rule("size-budget", "State, Developing and file size budgets", size.budgets),
        Rule("flowscript", "FlowScript lint errors on changed lines", lint_rule.flowscript),
        Rule("store-append-only", "the episodic store only ever grows", store.append_only),
        Rule("attributes", ".gitattributes re-encoding, filtering or re-merging the memory",
             attributes.attribute_changes),
    ]


RULES: list[Rule] = []


def rules() -> list[Rule]:
    if not RULES:
        RULES.extend(_rules())
    return RULES


def run_rules(ctx: CheckContext, *, override: str | None = None) -> list[Finding]:
    """Run every enabled rule; apply per-rule severity from config and the one-commit override."""
    settings = ctx.cfg.rules
    findings: list[Finding] = []
    for rule in rules():
        mode = settings.get(rule.name, "on")
        if mode == "off":
            continue
        for finding in rule.fn(ctx):
            if mode == "warning" and finding.severity == "error":
                finding = finding.replace(severity="warning")
            if override and finding.severity == "error":
                finding = finding.replace(overridden=True)
            findings.append(finding)
    return findings


def override_reason() -> str | None:
    """FLOWGIT_OVERRIDE as the one line it is recorded as: a paragraph's line breaks, tabs and other control
    characters become single spaces. A ``Flow-Override:`` trailer holds one line, and a reason written over
    several would add lines of its own to the message (a second ``Flow-Session:`` that names a session which
    never wrapped); the audit, ``git log`` and the hook all read the same single line."""
    reason = os.environ.get("FLOWGIT_OVERRIDE", "")
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in reason).split())
    return flat or None
