"""``flowgit lint``: FlowScript markers in the continuity file."""

from __future__ import annotations

from flowgit.config import Config
from flowgit.continuity.flowscript import Finding, lint_text
from flowgit.repo import load_document


def run_lint(cfg: Config, path: str | None) -> tuple[str, list[Finding], list[str]]:
    """(the file as named, its FlowScript findings, warnings for lines a reader takes for patterns that do
    not parse: FlowScript can be clean where the gate refuses such a line, G110/G111)."""
    from flowgit.commands.patterns import misread_warnings

    doc = load_document(cfg, path, require_sections=False)
    findings = sorted(lint_text(doc.text), key=lambda f: (f.line, f.col, f.code))
    return doc.path or str(cfg.continuity), findings, misread_warnings(cfg, path, doc)


def to_json(path: str, findings: list[Finding]) -> dict:
    return {"file": path,
            "errors": sum(f.is_error for f in findings),
            "warnings": sum(not f.is_error for f in findings),
            "findings": [{"line": f.line, "col": f.col, "code": f.code, "message": f.message}
                         for f in findings]}


def render(path: str, findings: list[Finding], misread: int = 0) -> str:
    if not findings:
        return f"{path}: FlowScript clean" + (f" (but {misread} line(s) that read as patterns do not parse: "
                                              "the gate refuses them, see the warnings)" if misread else "")
    errors = sum(f.is_error for f in findings)
    lines = [f.format(path) for f in findings]
    lines.append(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines)
