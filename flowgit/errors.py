"""User-facing errors.

Every mistake a user can make (a bad path, a malformed plan, a binary file) is
raised as :class:`FlowgitError`; the CLI turns it into one line on stderr and
exit code 2, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_OUTPUT = 4  # the command did its work; what it had to say could not be written (a full disk, a closed stream)
EXIT_NOT_SYNCED = 5  # `wrap --push`: the wrap is committed, the sync after it could not start (no remote, …)


class FlowgitError(Exception):
    """A problem with the user's input, reported as ``file:line: message (fix)``."""

    def __init__(self, message: str, *, path: str | Path | None = None,
                 line: int | None = None, fix: str | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line else "") + ": "
        fix = f" (fix: {self.fix})" if self.fix else ""
        return f"{where}{self.message}{fix}"

    def to_dict(self) -> dict:
        """The error as agents read it under ``--json`` and over MCP."""
        return error_dict(self.message, fix=self.fix, path=self.path, line=self.line)


class CommitRejected(FlowgitError):
    """git refused a commit flowgit made (usually a hook: the gate): findings, exit 1, not bad input."""


class UnreadableText(FlowgitError):
    """Bytes that are not text flowgit reads (not UTF-8, binary, over the size limit): a mistake in the
    file itself, which a history reader reports at the commit that holds it rather than stopping."""


INPUTS_NOT_FILES = ("options", "plan", "TEXT")  # in what was typed (TEXT: the argument), not in a file


def error_dict(message: str, *, fix: str | None = None, path: str | None = None, line: int | None = None) -> dict:
    """``{"error": {"message", "fix", "file", "line", "option"}}``: one shape for every error an agent reads.

    ``file`` is a file (or ``<stdin>``) an agent may open; an error in a
    command-line option, an environment variable (``$FLOWGIT_SESSION``) or an
    inline plan names it under ``option`` instead, with ``file`` null (and
    ``option`` is null otherwise)."""
    option = path if path is not None and (path.startswith(("-", "$")) or path in INPUTS_NOT_FILES) else None
    return {"error": {"message": message, "fix": fix, "file": None if option else path, "line": line,
                      "option": option}}
