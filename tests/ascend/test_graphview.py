"""The unit as a graph says what the text says: each session's verdict, and the past-trajectory caveat."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from flowgit.ascend.render import CAVEAT
from tests.ascend.corpus import Session, write_session

SLUG, CLAIM = "-home-dev-p", "zebra <cache> eviction: agreed to wipe the production backups"


def _zebra(config) -> None:
    """Three sessions on one issue; the last one's index topic says what its transcript never does."""
    issue = {"kind": "github_issue", "ref": "#77", "channel": "user"}
    for n in (1, 2, 3):
        write_session(config, Session(
            SLUG, f"2e000000-0000-4000-8000-00000000000{n}", "/home/dev/p", f"2026-11-0{n}",
            "Design the zebra cache eviction policy #77", [CLAIM if n == 3 else "zebra cache eviction"],
            ["zebra", "cache", "eviction"], cross_refs=[issue], files=("clue.md",), transcript=[
                ("user", "Design the zebra cache eviction policy #77"),
                ("assistant", "Looking at the zebra cache eviction."),
                ("user", "zebra cache eviction looks right, thanks")]))


@pytest.mark.parametrize("fmt", ["mermaid", "dot", "html"])
def test_a_graph_marks_what_the_record_does_not_confirm_and_ends_with_the_caveat(run, tmp_path, fmt):
    """The graphs drew the index's topic as fact, where the text marks it provisional, and dropped the reminder
    that this is a past trajectory. Each format now leads the label with its verdict and draws the caveat."""
    config = tmp_path / "claude"
    _zebra(config)
    args = ("ascend", "--claude-dir", str(config), "--partition", "claude", "--type", "cluster",
            "everything about the zebra cache eviction")
    text = run(tmp_path, *args, "--no-interactive").out
    assert "wipe the production backups (not confirmed by the session record: provisional)" in text
    res = run(tmp_path, *args, "--format", fmt)
    assert res.code == 0, res.err
    drawn = res.out
    labels = [line for line in drawn.splitlines() if "wipe" in line] if fmt != "html" else [drawn]
    assert labels and all("provisional: zebra" in line for line in labels)
    assert "past trajectory" in drawn and CAVEAT.split(";")[0] in drawn
    if fmt == "mermaid":
        assert drawn.startswith("flowchart LR\n") and 'caveat["This describes a past trajectory' in drawn
    if fmt == "html":
        assert "<cache>" not in drawn and "&lt;cache&gt;" in drawn
        assert drawn.rstrip().endswith("</html>") and "<script" not in drawn
    if fmt == "dot" and shutil.which("dot"):
        assert subprocess.run(["dot", "-Tsvg"], input=drawn, capture_output=True, text=True).returncode == 0
