"""A gate finding: code, rule, severity, where, what, and how to fix it."""

from __future__ import annotations

from flowgit.record import Record

FIELDS = ("code", "rule", "severity", "path", "line", "message", "fix", "overridden")


class Finding(Record):
    """One thing the gate says about a change: code, rule, severity, where, what and how to fix it.

    A :class:`~flowgit.record.Record` rather than a dataclass (the hook
    imports it on every commit) and not a named tuple (JSON would write a
    tuple as a list without asking :meth:`to_dict`). Never changed in place:
    :meth:`replace` makes a changed copy.
    """

    __slots__ = FIELDS

    def __init__(self, code: str, rule: str, severity: str, path: str, line: int | None, message: str,
                 fix: str = "", overridden: bool = False) -> None:
        self.code = code
        self.rule = rule
        self.severity = severity  # "error" | "warning"
        self.path = path
        self.line = line
        self.message = message
        self.fix = fix
        self.overridden = overridden

    @property
    def is_error(self) -> bool:
        return self.severity == "error" and not self.overridden

    def format(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        tag = f"{self.severity}{' (overridden)' if self.overridden else ''}"
        fix = f"\n    fix: {self.fix}" if self.fix else ""
        return f"{where}: {self.code} {tag} [{self.rule}] {self.message}{fix}"

    def to_dict(self) -> dict:
        return dict(zip(FIELDS, self._values()))
