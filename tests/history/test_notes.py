"""The audit's notes give the report exactly what the history walk reads, and the walk reads the rest itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowgit.config import load_config
from flowgit.continuity.sections import alias_table
from flowgit.history import walk
from flowgit.history.audit import PendingAudit
from flowgit.history.notes import VersionNotes
from flowgit.report.sizes import measure
from tests.conftest import git

BASE = "# Memory\n\n## Current State\nFocus: {focus}.\n\n## Developing Knowledge\n{dev}\n## Proven Knowledge\n{proven}"


ALIASES = '[aliases]\n"Current State" = ["Now"]\n'


def _commit(root: Path, message: str, *, focus: str, dev: str = "", name: str = "CONTINUITY.md",
            heading: str = "Now", config: str | None = ALIASES) -> None:
    text = BASE.format(focus=focus, dev=dev, proven="").replace("## Current State", f"## {heading}")
    (root / name).write_text(text, encoding="utf-8")
    (root / ".flowgit.toml").write_text(config or "", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def awkward_history(root: Path) -> None:
    """Renames the walk follows and the configuration does not, a merge, a byte order mark and a stretch
    under other aliases: versions the audit notes and versions only the walk can read."""
    git(root, "init", "-q")
    _commit(root, "start under another name", focus="a", dev="! early: an early idea | 1x\n", name="OLD.md")
    _commit(root, "a second idea", focus="b", dev="! early: an early idea | 1x\n! second: another | 1x\n",
            name="OLD.md")
    git(root, "mv", "OLD.md", "CONTINUITY.md")  # the walk follows this back; the audit's default path starts here
    _commit(root, "renamed into place", focus="c", dev="! early: an early idea | 1x\n! second: another | 1x\n")
    _commit(root, "one more", focus="c2", dev="! early: an early idea | 1x\n! second: another | 2x\n")
    git(root, "checkout", "-qb", "side")
    _commit(root, "side adds", focus="d", dev="! early: an early idea | 1x\n! second: another | 2x\n"
                                             "! side_idea: from the side | 1x\n")
    git(root, "checkout", "-q", "main")
    _commit(root, "main drops one", focus="e", dev="! early: an early idea | 1x\n")
    git(root, "merge", "-q", "--no-ff", "--no-commit", "side", "-X", "theirs")
    _commit(root, "merge side", focus="merged", dev="! early: an early idea | 1x\n! side_idea: from the side | 2x\n")
    (root / "CONTINUITY.md").write_bytes("\ufeff".encode() + (root / "CONTINUITY.md").read_bytes())
    git(root, "commit", "-qam", "a byte order mark")
    _commit(root, "aliases dropped", focus="f", heading="Current State", config="",
            dev="! early: an early idea | 1x\n! later: a later one | 1x\n")
    _commit(root, "aliases back", focus="g",
            dev="! early: an early idea | 1x\n! later: a later one | 1x\n! third: and a third | 1x\n")
    _commit(root, "one more under the aliases", focus="h", dev="! early: an early idea | 1x\n! third: and a third | 1x\n")


def _read(root: Path, noted: bool) -> tuple[walk.History, VersionNotes | None]:
    cfg = load_config(root)
    table = alias_table(cfg.aliases)
    notes = None
    if noted:
        with PendingAudit(cfg, notes=cfg.aliases, jobs=1) as pending:
            notes = pending.report().notes
    return walk.read_history(cfg, measure=lambda text: measure(text, table), known=notes), notes


def _events(history: walk.History) -> list[tuple[str, dict]]:
    return [(item.commit.sha, item.event.to_dict()) for item in history.events]


def test_notes_and_the_walk_give_one_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "r"
    root.mkdir()
    awkward_history(root)
    plain, _ = _read(root, noted=False)
    read_again: list[str] = []
    real = walk._events
    monkeypatch.setattr(walk, "_events", lambda c, p, of: read_again.append(c.sha) or real(c, p, of))
    with_notes, notes = _read(root, noted=True)
    assert _events(with_notes) == _events(plain)
    assert [c.sha for c in with_notes.commits] == [c.sha for c in plain.commits]
    assert {b: s for b, s in with_notes.measures.items()} == {b: s for b, s in plain.measures.items()
                                                              if b in with_notes.measures}
    assert notes is not None and notes.events  # some versions came from the notes...
    assert read_again  # ...and the walk read the ones the audit could not note for it
    renamed_from = {c.sha for c in plain.commits if c.path == "OLD.md"}
    assert renamed_from and renamed_from <= set(read_again)  # a rename the configuration never named
    messages = {c.sha: c.subject for c in plain.commits}
    walked = {messages[s] for s in read_again}
    taken = {"one more", "merge side", "a byte order mark", "one more under the aliases"}
    assert taken <= {messages[s] for s in notes.events} and not taken & walked
    # Read by the walk: a parent version the audit's configuration never named, versions under other aliases.
    assert {"renamed into place", "aliases dropped", "aliases back"} <= walked


def test_notes_from_workers_equal_notes_from_one_process(tmp_path: Path) -> None:
    from tests.history.test_walk import fast_history

    fast_history(tmp_path, 1200, patterns=8)
    cfg = load_config(tmp_path)
    with PendingAudit(cfg, notes=cfg.aliases, jobs=1) as pending:
        alone = pending.report().notes
    with PendingAudit(cfg, notes=cfg.aliases, jobs=2) as pending:
        split = pending.report().notes
    assert alone is not None and split is not None
    assert len(alone.events) == 1200 and alone.events == split.events and alone.sizes == split.sizes


def test_a_note_for_other_blobs_is_not_taken() -> None:
    notes = VersionNotes({}, events={"c1": ("b1", ("b0",), ["event"])})
    assert notes.events_for("c1", "b1", ["b0"]) == ["event"]
    assert notes.events_for("c1", "b2", ["b0"]) is None  # another version of the file
    assert notes.events_for("c1", "b1", ["bX"]) is None  # compared against another parent version
    assert notes.events_for("c1", "b1", ["b0", "b9"]) is None  # a merge read as a single-parent commit
    assert notes.events_for("c2", "b1", ["b0"]) is None
