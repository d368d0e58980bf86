"""A gate finding: code, rule, severity, where, what, and how to fix it."""

from __future__ import annotations

FIELDS = ("code", "rule", "severity", "path", "line", "message", "fix", "overridden")


class Finding:
    """One thing the gate says about a change: code, rule, severity, where, what and how to fix it.

    A plain immutable class rather than a dataclass (the hook imports it on
    every commit, and a dataclass costs about a millisecond to define) and not
    a named tuple (JSON would turn a tuple into a list without asking
    :meth:`to_dict`).
    """

    __slots__ = FIELDS

    def __init__(self, code: str, rule: str, severity: str, path: str, line: int | None, message: str,
                 fix: str = "", overridden: bool = False) -> None:
        set_ = object.__setattr__
        set_(self, "code", code)
        set_(self, "rule", rule)
        set_(self, "severity", severity)  # "error" | "warning"
        set_(self, "path", path)
        set_(self, "line", line)
        set_(self, "message", message)
        set_(self, "fix", fix)
        set_(self, "overridden", overridden)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Finding is immutable: use replace({name}=…)")

    def _values(self) -> tuple:
        return (self.code, self.rule, self.severity, self.path, self.line, self.message, self.fix, self.overridden)

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if isinstance(other, Finding) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "Finding(" + ", ".join(f"{k}={v!r}" for k, v in zip(FIELDS, self._values())) + ")"

    def __reduce__(self):  # forked audit workers send findings back by pickle
        return (Finding, self._values())

    def replace(self, **changes: object) -> "Finding":
        """A copy with some fields changed."""
        values = dict(zip(FIELDS, self._values()))
        values.update(changes)
        return Finding(**values)  # type: ignore[arg-type]

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
