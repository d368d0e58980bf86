"""A gate finding: code, rule, severity, where, what, and how to fix it."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Finding:
    """One thing the gate says about a change: code, rule, severity, where, what and how to fix it."""

    code: str
    rule: str
    severity: str  # "error" | "warning"
    path: str
    line: int | None
    message: str
    fix: str = ""
    overridden: bool = False

    @property
    def is_error(self) -> bool:
        return self.severity == "error" and not self.overridden

    def format(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        tag = f"{self.severity}{' (overridden)' if self.overridden else ''}"
        fix = f"\n    fix: {self.fix}" if self.fix else ""
        return f"{where}: {self.code} {tag} [{self.rule}] {self.message}{fix}"

    def to_dict(self) -> dict:
        return asdict(self)
