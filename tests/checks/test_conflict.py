"""G601: conflict markers in the staged continuity file or store are a gate error; read commands refuse."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.merge.fixtures import BASE, STORE

CONFLICTED = BASE.replace("Write the episode before the pattern.\n",
                          "<<<<<<< ours\nWrite it first.\n=======\nRecord it first.\n>>>>>>> theirs\n")


def committed(repo):
    (repo / "CONTINUITY.md").write_text(BASE)
    (repo / ".flow").mkdir()
    (repo / ".flow" / "episodes.jsonl").write_bytes(STORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")


def test_markers_in_the_continuity_file_are_g601(run, repo):
    committed(repo)
    (repo / "CONTINUITY.md").write_text(CONFLICTED)
    git(repo, "add", "-A")
    res = run(repo, "check", "--json")
    data = json.loads(res.out)
    assert res.code == 1
    g601 = [f for f in data["findings"] if f["code"] == "G601"]
    assert g601 and g601[0]["line"] == CONFLICTED.splitlines().index("<<<<<<< ours") + 1


def test_markers_in_the_store_are_g601(run, repo):
    committed(repo)
    with (repo / ".flow" / "episodes.jsonl").open("ab") as fh:
        fh.write(b"<<<<<<< HEAD\n>>>>>>> theirs\n")
    git(repo, "add", "-A")
    res = run(repo, "check")
    assert res.code == 1 and ".flow/episodes.jsonl" in res.err and "G601" in res.err


def test_the_rule_cannot_be_dodged_by_a_marker_line_with_crlf_or_a_label(run, repo):
    committed(repo)
    (repo / "CONTINUITY.md").write_bytes(CONFLICTED.replace("\n", "\r\n").encode())
    git(repo, "add", "-A")
    assert "G601" in run(repo, "check").err


def test_read_commands_say_the_file_is_mid_merge(run, repo):
    committed(repo)
    (repo / "CONTINUITY.md").write_text(CONFLICTED)
    for command in (["patterns"], ["lint"], ["candidates"], ["wrap", "--session", "s", "--dry-run"]):
        res = run(repo, *command)
        assert res.code == 2 and "is mid-merge" in res.err and "CONTINUITY.md:" in res.err, res.err
        assert "Traceback" not in res.err


def test_a_clean_file_with_a_setext_underline_passes(run, repo):
    committed(repo)
    (repo / "CONTINUITY.md").write_text(BASE.replace("## Foundation\n", "## Foundation\nRules\n=======\n"))
    git(repo, "add", "-A")
    assert "G601" not in run(repo, "check").err


def _store_lines() -> list[bytes]:
    return [ln + b"\n" for ln in STORE.split(b"\n") if ln.strip()]


def _committed_markers(repo) -> list[bytes]:
    """Markers committed by a merge made without the driver (`--no-verify`): the store's last two episodes
    as the two sides of a conflict, and Foundation's one line conflicting with another wording."""
    committed(repo)
    lines = _store_lines()
    if len(lines) < 2:
        raise AssertionError("the fixture store needs two episodes")
    held = lines[:-2]
    conflicted = [*held, b"<<<<<<< HEAD\n", lines[-2], b"=======\n", lines[-1], b">>>>>>> origin/main\n"]
    (repo / ".flow" / "episodes.jsonl").write_bytes(b"".join(conflicted))
    (repo / "CONTINUITY.md").write_text(CONFLICTED)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "merge committed with its markers", "--no-verify")
    return lines


def test_taking_out_the_marker_lines_a_merge_committed_is_a_repair_the_gate_accepts(run, repo):
    """G601 asked for every marker line removed, and G701 (the store) and G402 (Foundation) refused exactly that:
    with markers committed, no commit but an override could move on."""
    lines = _committed_markers(repo)
    (repo / ".flow" / "episodes.jsonl").write_bytes(b"".join(lines))
    (repo / "CONTINUITY.md").write_text(CONFLICTED.replace("<<<<<<< ours\n", "").replace("=======\n", "")
                                        .replace(">>>>>>> theirs\n", ""))
    git(repo, "add", "-A")
    res = run(repo, "check", "--json")
    assert res.code == 0, res.out
    assert not [f for f in json.loads(res.out)["findings"] if f["severity"] == "error"]


def test_a_repair_that_also_drops_a_sides_episode_or_line_is_still_refused(run, repo):
    lines = _committed_markers(repo)
    (repo / ".flow" / "episodes.jsonl").write_bytes(b"".join(lines[:-1]))  # theirs' episode gone too
    (repo / "CONTINUITY.md").write_text(CONFLICTED.replace("<<<<<<< ours\n", "").replace("=======\n", "")
                                        .replace(">>>>>>> theirs\n", "").replace("Record it first.\n", ""))
    git(repo, "add", "-A")
    codes = {f["code"] for f in json.loads(run(repo, "check", "--json").out)["findings"] if f["severity"] == "error"}
    assert {"G701", "G402"} <= codes, codes
