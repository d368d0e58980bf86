"""A commit's message, author and times as git itself would show them, whatever its headers hold.

History arrives by fetch and push, which do not check commit objects by default: a commit may name an
``encoding`` Python does not know (``git -c i18n.commitEncoding=…``), or carry an author line whose time is
not a number. git reads such commits (``git log`` prints them); a history reader must too, so these
readings never raise: an unknown encoding is read as UTF-8 with replacement characters, an author line
that cannot be parsed has no name and the commit's own time. (An object libgit2 refuses whole, a time that
is not a number among them, stops the command with exit 2 and says so: see :func:`flowgit.cli.main`.)
"""

from __future__ import annotations


def message_of(commit) -> str:
    """The commit's message, decoded as its ``encoding`` header says (UTF-8 where Python does not know it)."""
    try:
        return commit.message
    except (LookupError, ValueError):
        return commit.raw_message.decode("utf-8", "replace")


def commit_time_of(commit) -> int:
    """The committer time (seconds), or 0 when the committer line cannot be read."""
    try:
        return commit.commit_time
    except ValueError:
        return 0


def author_name_of(commit) -> str:
    """The author's name, or '' when there is no author line git can parse."""
    try:
        author = commit.author
        return author.name if author else ""
    except (LookupError, ValueError):
        return ""


def authored_time_of(commit) -> int:
    """When the change was written (the author time: a rebase or amend keeps it), or the commit time when the
    author line cannot be parsed."""
    try:
        author = commit.author
        return author.time if author else commit_time_of(commit)
    except (LookupError, ValueError):
        return commit_time_of(commit)

