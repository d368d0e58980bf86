"""``flowgit patterns``: every pattern line with its level, section and evidence."""

from __future__ import annotations

from flowgit.config import Config
from flowgit.continuity.patterns import PatternAt, iter_patterns
from flowgit.repo import load_document


def run_patterns(cfg: Config, path: str | None, *, section: str | None = None,
                 level: int | None = None) -> list[PatternAt]:
    """Every pattern line, optionally only those in ``section`` (name or alias) and at ``level``."""
    doc = load_document(cfg, path)
    found = list(iter_patterns(doc))
    if section:
        from flowgit.continuity.sections import alias_table
        from flowgit.suggest import section_filter

        wanted = section_filter(section, alias_table(cfg.aliases), [s.label for s in doc.sections]).lower()
        found = [p for p in found if wanted in p.section.lower()]
    if level:
        found = [p for p in found if p.pattern.level == level]
    return found


def to_json(found: list[PatternAt]) -> list[dict]:
    return [{"name": p.pattern.name, "level": p.pattern.level, "section": p.section,
             "category": p.pattern.category, "date": p.pattern.date,
             "evidence": list(p.pattern.evidence), "links": list(p.pattern.links),
             "line": p.lineno, "text": p.pattern.text} for p in found]


def render(found: list[PatternAt]) -> str:
    if not found:
        return "no pattern lines"
    from flowgit.continuity.identity import name_as_shown

    shown = {p.pattern.name: name_as_shown(p.pattern.name) for p in found}
    width = max(len(name) for name in shown.values())
    lines = []
    for p in found:
        ev = f"  evidence: {', '.join(p.pattern.evidence)}" if p.pattern.evidence else ""
        lines.append(f"{p.lineno:>5}  {shown[p.pattern.name]:<{width}}  {p.pattern.level}x  {p.section}{ev}")
    return "\n".join(lines)


MISREAD = {"unparsed": "looks like a pattern but does not parse, so no rule judges it (the gate refuses it: G110)",
           "levels": "shows two levels; the gate judges one, a reader may take another (G110)",
           "commented": "a pattern hidden in a `#` comment line is not judged (G111)"}


def misread_warnings(cfg: Config, path: str | None, doc=None) -> list[str]:
    """What the listing leaves out: lines a reader takes for patterns that are not read as one, each with its
    line and the fix (said on stderr, so --json stays the list it was). ``lint`` says the same: its
    FlowScript may be clean where the gate refuses a line. ``doc``: the file as the caller loaded it."""
    from flowgit.checks.recognition import misread_lines
    from flowgit.continuity.patterns import grammar_fix

    doc = doc if doc is not None else load_document(cfg, path)
    shown = doc.path or path or cfg.continuity  # (as the file is named: it may lie outside the repository)
    return [f"warning: {shown}:{index + 1}: {section}: {MISREAD[how]}: {doc.lines[index].strip()[:70]}"
            + (f"\n    fix: {grammar_fix(doc.lines[index])}" if how == "unparsed" else "")
            for index, section, how in misread_lines(doc)]
