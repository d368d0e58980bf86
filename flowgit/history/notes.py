"""What the report needs of each version, noted by the audit from the documents its rules just parsed.

The report judges every commit (the audit, in worker processes) and draws
every version's pattern events and size (the history walk). Both read and
parse the same versions; the walk doing it again in the parent process cost
as much CPU as a third of the audit. So the audit, asked to, notes for each
commit the events between its parents' versions and its own (the walk's
definition, :func:`flowgit.changes.events_against`) and each version's size
(the gate's own figures, :func:`flowgit.report.sizes.measure_document`), and
the walk takes a commit's events from these notes only when they were read
from exactly the blobs it would read, under the aliases it reads with.
Anything else (a rename the walk follows and the configuration does not, a
version the audit never met, another alias table) the walk reads itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass
class VersionNotes:
    """Per commit the events it introduced, per blob its size: all read under ``aliases``."""

    aliases: Mapping[str, str]
    events: dict[str, tuple[str, tuple[str | None, ...], list]] = field(default_factory=dict)  # commit -> noted
    sizes: dict[str, object] = field(default_factory=dict)  # blob id (hex) -> Size

    def add(self, other: "VersionNotes | None") -> None:
        """Take in a worker's notes (its commits are not this one's: slices do not overlap)."""
        if other is not None:
            self.events.update(other.events)
            self.sizes.update(other.sizes)

    def events_for(self, commit: str, blob: object, parents: list) -> list | None:
        """The events noted for ``commit`` if they were read from ``blob`` against exactly ``parents``."""
        noted = self.events.get(commit)
        if noted is None or noted[0] != str(blob):
            return None
        if noted[1] != tuple(None if b is None else str(b) for b in parents):
            return None
        return noted[2]

    def size_of(self, blob: object) -> object | None:
        return self.sizes.get(str(blob))
