"""Trees a checkout reads otherwise than their entries say: found by the audit (A405), never judged as clean."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flowgit.history.treeform import tree_problems
from tests.conftest import git

OID = bytes(20)


def raw_tree(*entries: tuple[bytes, bytes, bytes]) -> bytes:
    return b"".join(mode + b" " + name + b"\x00" + oid for mode, name, oid in entries)


def test_what_git_writes_has_no_problem_and_each_hand_made_form_is_named():
    assert tree_problems(raw_tree((b"100644", b"CONTINUITY.md", OID), (b"40000", b".flow", OID),
                                  (b"120000", b"link", OID), (b"160000", b"sub", OID)), 20) == []
    assert tree_problems(raw_tree((b"040000", b"old", OID), (b"100664", b"older", OID)), 20) == []
    (twice,) = tree_problems(raw_tree((b"100644", b"CONTINUITY.md", OID), (b"100644", b"CONTINUITY.md", OID)), 20)
    assert "listed twice" in twice
    (slash,) = tree_problems(raw_tree((b"100644", b".flow/episodes.jsonl", OID)), 20)
    assert "named `.flow/episodes.jsonl`" in slash
    (mode,) = tree_problems(raw_tree((b"120755", b"CONTINUITY.md", OID)), 20)
    assert "mode 120755" in mode
    assert tree_problems(b"100644 cut", 20) == ["an entry that does not parse"]


def _object(repo: Path, kind: str, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-t", kind, "--literally", "-w", "--stdin"], cwd=repo,
                          input=data, capture_output=True, check=True).stdout.decode().strip()


def _entries(repo: Path, treeish: str) -> list[tuple[bytes, bytes, bytes]]:
    out = []
    for line in git(repo, "ls-tree", treeish).splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split()
        out.append((mode.encode(), name.encode(), bytes.fromhex(oid)))
    return out


def _commit(repo: Path, tree: str, message: str) -> str:
    sha = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", message).strip()
    git(repo, "update-ref", "HEAD", sha)
    return sha


@pytest.fixture
def memory(run, repo) -> Path:
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    assert run(repo, "episode", "add", "--session", "s1", "--agent", "a1", "--type", "finding",
               "retries multiplied provider load, the retry budget capped it").code == 0
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: the retry budget.", "patterns": [
        {"op": "add", "name": "retry_budget", "text": "cap retries per request budget"}]}))
    assert run(repo, "wrap", "--plan", str(plan)).code == 0
    return repo


def _raised_blob(repo: Path) -> bytes:
    text = (repo / "CONTINUITY.md").read_text().replace("! retry_budget: cap retries per request budget | 1x",
                                                        "!! retry_budget: cap retries per request budget | 3x")
    assert "| 3x" in text
    return bytes.fromhex(_object(repo, "blob", text.encode()))


def _twice(repo: Path) -> list:
    return [*_entries(repo, "HEAD"), (b"100644", b"CONTINUITY.md", _raised_blob(repo))]


def _slash(repo: Path) -> list:
    return [*_entries(repo, "HEAD"), (b"100644", b".flow/episodes.jsonl", bytes.fromhex(_object(repo, "blob", b"")))]


def _link_mode(repo: Path) -> list:
    return [(b"120755" if name == b"CONTINUITY.md" else mode, name, oid) for mode, name, oid in _entries(repo, "HEAD")]


@pytest.mark.parametrize("make, said", [(_twice, "listed twice"), (_slash, "named `.flow/episodes.jsonl`"),
                                        (_link_mode, "mode 120755")], ids=["twice", "slash", "link-mode"])
def test_a_hand_made_tree_that_clones_check_out_otherwise_is_reported(run, memory, make, said):
    """Each form passed the audit as "clean" (libgit2 read the old files) while a clone checked out an
    ungrounded 3x, an empty store or a link: now A405 at the commit that made it, exit 1, and a range
    audit (what pre-push, CI and pre-receive ask) says so too."""
    base = git(memory, "rev-parse", "HEAD").strip()
    entries = sorted(make(memory), key=lambda e: e[1])
    bad = _commit(memory, _object(memory, "tree", raw_tree(*entries)), "tidy up")
    for args in (("audit", "--json"), ("audit", "--json", "--range", f"{base}..{bad}")):
        res = run(memory, *args)
        data = json.loads(res.out)
        assert res.code == 1, res.out + res.err
        (found,) = [f for f in data["findings"] if f["code"] == "A405"]
        assert found["commit"] == bad and said in found["message"]


def test_a_tree_made_by_hand_twice_in_a_row_is_reported_where_it_appears(run, memory):
    """A later commit that keeps the same hand-made tree form is not a new finding: the commit that made it
    is named once, and a legitimate history reports no A405 at all."""
    res = run(memory, "audit", "--json")
    assert res.code == 0 and not [f for f in json.loads(res.out)["findings"] if f["code"] == "A405"]
    bad = _commit(memory, _object(memory, "tree", raw_tree(*sorted(_link_mode(memory), key=lambda e: e[1]))),
                  "tidy up")
    again = _commit(memory, git(memory, "rev-parse", f"{bad}^{{tree}}").strip(), "nothing more")
    found = [f for f in json.loads(run(memory, "audit", "--json").out)["findings"] if f["code"] == "A405"]
    assert [f["commit"] for f in found] == [bad] and again != bad
