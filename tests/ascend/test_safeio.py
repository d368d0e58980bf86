"""Hostile deposit trees: alias bombs, FIFOs, devices, sockets and links out of the tree never hang or leak."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flowgit.ascend import formats
from flowgit.ascend.safeio import Tree
from tests.ascend.corpus import A, B, story, write_session, write_story
from tests.conftest import tree_digest

SID = {n: f"{n:08x}-5e55-4a1d-9c0f-{n:012x}" for n in range(1, 11)}
BOUND = 30.0   # seconds: generous for a shared 2-core machine; a hang would run for minutes


def bomb(depth: int = 9) -> str:
    """About a kilobyte of YAML that expands to 9**9 strings when anything walks it."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, depth):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\nkey_utterances: *l{depth - 1}\n"


def ascend_process(cwd: Path, config: Path, recall: str) -> tuple[subprocess.CompletedProcess, float]:
    """flowgit ascend in its own process, killed if it runs past the bound."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "flowgit", "ascend", "--claude-dir", str(config), "--partition",
                           "claude", "--partition", "transcripts", recall, "--json"], cwd=cwd,
                          capture_output=True, text=True, timeout=BOUND * 2)
    return proc, time.monotonic() - start


def test_an_alias_bomb_in_front_matter_is_refused_in_bounded_time(tmp_path):
    config = tmp_path / "claude"
    write_story(config)
    clue = config / "projects" / A / "hypomnesis" / SID[2] / "clue.md"
    text = clue.read_text()
    clue.write_text(text.replace("key_utterances:", bomb() + "old_utterances:", 1))
    assert len(bomb()) < 1500
    proc, took = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    assert proc.returncode == 0, proc.stderr
    assert took < BOUND
    data = json.loads(proc.stdout)
    assert SID[2] in [d["session_id"] for d in data["unit"]["deposits"]]
    assert any("uses YAML aliases; not parsed as YAML" in r for r in data["scope"]["refused"])
    assert data["scope"]["unsafe_frontmatter"] == 1


def test_front_matter_reader_limits():
    start = time.monotonic()
    data, how = formats.load_frontmatter(bomb())
    assert how == "alias" and time.monotonic() - start < 1.0
    assert isinstance(data["key_utterances"], str)           # the alias is text, not an expansion
    huge = "topics: [a]\n" + "x: " + "y" * (70 * 1024) + "\n"
    data, how = formats.load_frontmatter(huge)
    assert how == "too_large" and data["topics"] == ["a"]
    assert formats.load_frontmatter("topics: [a, b]\ncwd: /x\n") == ({"topics": ["a", "b"], "cwd": "/x"}, "yaml")


def test_fifos_devices_and_sockets_are_refused_not_read(tmp_path, monkeypatch):
    config = tmp_path / "c"
    write_story(config)
    deposit = config / "projects" / B / "hypomnesis" / SID[3]
    (deposit / "narrative.md").unlink()
    os.mkfifo(deposit / "narrative.md")                       # a FIFO: opening it would wait for a writer
    (deposit / "vector.md").unlink()
    (deposit / "vector.md").symlink_to("/dev/zero")           # a device (and outside the tree)
    transcript = config / "projects" / A / f"{SID[2]}.jsonl"
    transcript.unlink()
    os.mkfifo(transcript)
    monkeypatch.chdir(config / "projects" / A)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("feedface-0000.jsonl")                          # a socket where a transcript would be
    try:
        proc, took = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    finally:
        sock.close()
    assert proc.returncode == 0, proc.stderr
    assert took < BOUND
    data = json.loads(proc.stdout)
    refused = "\n".join(data["scope"]["refused"])
    assert f"{SID[3]}/narrative.md: not a regular file" in refused
    assert f"{SID[3]}/vector.md: a link that leads outside the deposit tree" in refused
    assert "feedface-0000.jsonl: not a regular file" in refused
    assert [d["session_id"] for d in data["unit"]["deposits"]] == [SID[1], SID[2], SID[3], SID[4]]
    origin = next(c for c in data["confirmations"] if c["deposit"].endswith(SID[2]) and c["kind"] == "date")
    assert origin["verdict"] == "unattested"                  # its transcript is a FIFO: nothing to confirm with


def test_links_out_of_the_tree_are_not_followed(tmp_path):
    config = tmp_path / "claude"
    write_story(config)
    outside = tmp_path / "outside"
    secret = [s for s in story() if s.sid == SID[8]][0]
    secret.slug, secret.request = "-home-dev-secret", "TOP SECRET retry budget plans"
    write_session(outside, secret)
    projects = config / "projects"
    (projects / "-home-dev-secret").symlink_to(outside / "projects" / "-home-dev-secret")      # a whole partition
    hyp = projects / A / "hypomnesis"
    (hyp / "feedbeef-link").symlink_to(outside / "projects" / "-home-dev-secret" / "hypomnesis" / SID[8])
    clue = hyp / SID[1] / "clue.md"
    clue.unlink()
    clue.symlink_to(outside / "projects" / "-home-dev-secret" / "hypomnesis" / SID[8] / "clue.md")
    inside_link = hyp / SID[5] / "coinage.md"
    inside_link.unlink()
    inside_link.symlink_to(hyp / SID[2] / "coinage.md")       # a link that stays inside is fine
    proc, took = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    assert proc.returncode == 0, proc.stderr and took < BOUND
    assert "TOP SECRET" not in proc.stdout
    data = json.loads(proc.stdout)
    refused = "\n".join(data["scope"]["refused"])
    assert "-home-dev-secret: a link that leads outside the deposit tree" in refused
    assert "feedbeef-link: a link that leads outside the deposit tree" in refused
    assert f"{SID[1]}/clue.md: a link that leads outside the deposit tree" in refused
    assert "coinage.md" not in refused
    assert not any(p.startswith("claude:-home-dev-secret") for p in data["scope"]["partitions"])


def test_tree_reads_are_bounded(tmp_path):
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (2 << 20))
    tree = Tree(tmp_path)
    assert len(tree.read_text(big, limit=1024)) == 1024
    assert "only the first 1 KB were read" in tree.refused[0]
    assert tree.read_text(tmp_path / "missing.md") is None and len(tree.refused) == 1


def test_hostile_trees_are_left_exactly_as_they_were(tmp_path):
    config = tmp_path / "claude"
    write_story(config)
    clue = config / "projects" / A / "hypomnesis" / SID[2] / "clue.md"
    clue.write_text(clue.read_text().replace("key_utterances:", bomb() + "old_utterances:", 1))
    os.mkfifo(config / "projects" / B / "hypomnesis" / SID[3] / "entropy.fifo")
    before = {p: os.lstat(p).st_mtime_ns for p in config.rglob("*")}
    digest = tree_digest(config)
    proc, _ = ascend_process(tmp_path, config, "everything we figured out about the cache")
    assert proc.returncode == 0, proc.stderr
    assert tree_digest(config) == digest
    assert {p: os.lstat(p).st_mtime_ns for p in config.rglob("*")} == before


@pytest.mark.parametrize("name", ["clue.md", "narrative.md"])
def test_a_directory_where_a_file_should_be_is_skipped(tmp_path, name):
    config = tmp_path / "claude"
    write_story(config)
    target = config / "projects" / A / "hypomnesis" / SID[1] / name
    target.unlink()
    target.mkdir()
    proc, _ = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_transcripts_partition_refuses_links_out_and_fifos_in_bounded_time(tmp_path):
    from tests.ascend.test_transcripts import SLUG, sid, write_tree

    config = tmp_path / "claude"
    write_tree(config)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"type": "user", "sessionId": "x", "timestamp": "2026-10-02T00:00:00Z",
                                   "message": {"role": "user", "content": "TOP SECRET webhook signatures #88"}}) + "\n")
    folder = config / "projects" / SLUG
    (folder / "0badc0de-link.jsonl").symlink_to(outside)
    os.mkfifo(folder / "0badc0de-fifo.jsonl")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "flowgit", "ascend", "--claude-dir", str(config), "--partition",
                           "transcripts", "that whole line of work on the webhook signatures", "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=BOUND * 2)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < BOUND
    assert "TOP SECRET" not in proc.stdout
    data = json.loads(proc.stdout)
    refused = "\n".join(data["scope"]["refused"])
    assert "0badc0de-link.jsonl: a link that leads outside the deposit tree" in refused
    assert "0badc0de-fifo.jsonl: not a regular file" in refused
    assert [d["session_id"] for d in data["unit"]["deposits"]] == [sid(1), sid(2), sid(3), sid(4)]


def _kiwi_line(config: Path) -> list:
    from tests.ascend.corpus import Session

    issue = {"kind": "github_issue", "ref": "#77", "channel": "user"}
    sessions = [Session("-proj", f"f100000{n}-0000-4000-8000-00000000000{n}", "/home/dev/proj", f"2026-10-0{n}",
                        f"Kiwi migration step {n}", ["kiwi migration"], ["kiwi", "migration"], cross_refs=[issue])
                for n in range(1, 5)]
    for s in sessions:
        write_session(config, s)
    return sessions


def _resave(config: Path, s, encoding: str) -> Path:
    clue = config / "projects" / s.slug / "hypomnesis" / s.sid / "clue.md"
    clue.write_bytes(clue.read_text(encoding="utf-8").encode(encoding))
    return clue


def test_a_deposit_saved_with_a_byte_order_mark_keeps_every_field(run, tmp_path):
    config = tmp_path / "claude"
    sessions = _kiwi_line(config)
    _resave(config, sessions[1], "utf-8-sig")
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the kiwi migration", "--json")
    data = json.loads(res.out)
    assert [d["session_id"] for d in data["unit"]["deposits"]] == [s.sid for s in sessions]
    assert data["unit"]["deposits"][1]["cwd"] == "/home/dev/proj"
    assert data["scope"]["refused"] == []


def test_a_deposit_saved_as_utf16_or_latin1_is_named_in_a_scope_note(run, tmp_path):
    config = tmp_path / "claude"
    sessions = _kiwi_line(config)
    wide = _resave(config, sessions[2], "utf-16")
    latin = config / "projects" / "-proj" / "hypomnesis" / sessions[3].sid / "narrative.md"
    latin.write_bytes(latin.read_bytes().replace(b"Open.", b"Ouvert, caf\xe9."))
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the kiwi migration", "--json")
    data = json.loads(res.out)
    refused = data["scope"]["refused"]
    assert any(note.startswith(f"{wide}: saved as UTF-16") and "re-save it as UTF-8" in note for note in refused)
    assert any(note.startswith(f"{latin}: line ") and "not UTF-8 (byte 0xe9)" in note for note in refused)
    assert f"left out: {wide}: saved as UTF-16" in data["text"]


def test_tree_read_text_decodes_what_an_editor_may_save(tmp_path):
    tree = Tree(tmp_path)
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbf---\nsession_id: x\n---\n")
    assert formats.first_frontmatter(tree.read_text(tmp_path / "bom.md")) == "session_id: x"
    (tmp_path / "wide.md").write_text("---\nsession_id: x\n---\n", encoding="utf-16-le")   # no byte order mark
    assert tree.read_text(tmp_path / "wide.md") is None
    assert tree.refused == [f"{tmp_path / 'wide.md'}: saved as UTF-16 (or binary), not UTF-8; not read "
                            "(re-save it as UTF-8)"]


def test_an_over_long_line_is_passed_over_in_chunks_not_held_whole():
    """A 300 MB line (a paste, a tool's image) was read whole before any limit was checked."""
    import io

    from flowgit.ascend.safeio import SKIP_CHUNK, bounded_lines

    class Watched(io.BytesIO):
        largest = 0

        def readline(self, size=-1):
            line = super().readline(size)
            Watched.largest = max(Watched.largest, len(line))
            return line

    long = b"x" * (3 * SKIP_CHUNK + 17) + b"\n"
    fh = Watched(b'{"a": 1}\n' + long + b'{"b": 2}\n' + b"y" * 50)
    got = list(bounded_lines(fh, 1024))
    assert got == [(b'{"a": 1}\n', 9), (None, len(long)), (b'{"b": 2}\n', 9), (b"y" * 50, 50)]
    assert Watched.largest <= SKIP_CHUNK


@pytest.mark.parametrize("partition", ["claude", "transcripts"])
def test_a_project_directory_whose_name_holds_a_line_break_is_refused_not_printed(run, tmp_path, partition):
    """A deposit tree's directory name is shown on one line of the answer: one holding a line break would add a
    line of its own (a fake resume command under "Sources"). It is left out and named, escaped."""
    from tests.ascend.corpus import Session

    config = tmp_path / "claude"
    slug = "-home-dev-x\n     cd ~ && sh -c pwned"
    for n in range(1, 4):
        write_session(config, Session(slug, f"f200000{n}-0000-4000-8000-00000000000{n}", "/home/dev/x",
                                      f"2026-10-0{n}", f"Kiwi migration step {n}", ["kiwi migration"],
                                      ["kiwi", "migration"]))
    _kiwi_line(config)
    if partition == "transcripts":
        for hyp in (config / "projects").glob("*/hypomnesis"):
            import shutil

            shutil.rmtree(hyp)
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", partition,
              "the whole line of work on the kiwi migration", "--no-interactive")
    assert res.code == 0, res.err
    assert "sh -c pwned" not in res.out.replace("\\n     cd ~ && sh -c pwned", "")
    assert "\n     cd ~ && sh -c pwned" not in res.out
    assert "its name holds a control character or line break; refused" in res.out


def test_passing_over_an_over_long_line_stops_at_the_read_budget(tmp_path):
    """A transcript whose second line is 1 GB (sparse here) was read to its end, twice, though the transcripts
    partition reads 256 KB of turns and confirmation at most its record limit: the budget bounds the reads."""
    from flowgit.ascend.safeio import SKIP_CHUNK, bounded_lines

    path = tmp_path / "giant.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"type": "user"}\n{"pasted": "')
    os.truncate(path, 1 << 30)
    with path.open("rb") as fh:
        got = list(bounded_lines(fh, 1024, budget=256 * 1024))
        assert fh.tell() <= 256 * 1024 + SKIP_CHUNK + 1024
    assert got[0] == (b'{"type": "user"}\n', 17) and got[1][0] is None and sum(n for _, n in got) > 256 * 1024


def test_ascend_reads_a_bounded_amount_of_a_transcript_with_a_giant_line(run, tmp_path):
    """The whole command: what it reads of a 1 GB one-line paste is its bounds, not the paste."""
    from flowgit.ascend import confirm, transcripts

    sid = "11111111-2222-3333-4444-555555555555"
    project = tmp_path / "claude" / "projects" / "-home-dev-infra"
    project.mkdir(parents=True)
    turn = {"type": "user", "timestamp": "2026-11-02T09:01:00Z", "uuid": "u1", "parentUuid": None,
            "message": {"role": "user", "content": "Roll the retry budget out to the gateway #412"},
            "sessionId": sid, "cwd": "/home/dev/infra"}
    path = project / f"{sid}.jsonl"
    path.write_text(json.dumps(turn) + "\n" + '{"type":"assistant","pasted":"')
    os.truncate(path, 1 << 30)
    io_before = _read_bytes()
    res = run(tmp_path, "ascend", "retry budget", "--claude-dir", str(tmp_path / "claude"), "--partition",
              "transcripts", "--no-interactive")
    assert res.code == 0, res.err
    bound = transcripts.HEAD_LIMIT + transcripts.TAIL_BYTES + confirm.RECORD_LIMIT
    assert _read_bytes() - io_before < 2 * bound  # (the reads of everything else the run does are small)


def _read_bytes() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def test_the_text_says_how_many_scope_notes_it_does_not_list(run, tmp_path):
    """The text listed five "left out" notes and dropped the rest without a word; the sixth said a whole project
    directory, a link out of the tree, was skipped. It now says how many more --json lists."""
    config = tmp_path / "claude"
    _kiwi_line(config)
    for name in ("a b", "c d", "e f", "g h", "i j"):
        (config / "projects" / "-proj" / "hypomnesis" / name).mkdir()
    outside = tmp_path / "outside"
    _kiwi_line(outside)
    (config / "projects" / "-elsewhere").symlink_to(outside / "projects" / "-proj")
    recall = ("ascend", "--claude-dir", str(config), "--partition", "claude", "the whole line of work on the kiwi "
              "migration")
    refused = json.loads(run(tmp_path, *recall, "--json").out)["scope"]["refused"]
    assert len(refused) == 6 and any("-elsewhere" in r for r in refused)
    text = run(tmp_path, *recall, "--no-interactive").out
    assert [line for line in text.splitlines() if line.startswith("  left out:")][-1] == \
        "  left out: and 1 more (--json lists them under scope)"


def test_a_member_whose_transcript_is_refused_is_left_out_with_a_scope_note(tmp_path):
    """The index is read, the claims go unconfirmed, and the scope says why: a FIFO or a link out of the tree
    behind a unit member's own record is a refusal like any other, never a silent "no record"."""
    config = tmp_path / "claude"
    write_story(config)
    proc, _ = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    members = [d["session_id"] for d in json.loads(proc.stdout)["unit"]["deposits"]]
    fifo, linked = (config / "projects" / A / f"{sid}.jsonl" for sid in members[:2])
    outside = tmp_path / "outside.jsonl"
    linked.rename(outside)
    linked.symlink_to(outside)
    fifo.unlink()
    os.mkfifo(fifo)
    proc, took = ascend_process(tmp_path, config, "that whole line of work on the retry budget")
    assert proc.returncode == 0 and took < BOUND, proc.stderr
    refused = "\n".join(json.loads(proc.stdout)["scope"]["refused"])
    assert f"{linked}: a link that leads outside the deposit tree" in refused
    assert f"{fifo}: not a regular file" in refused
