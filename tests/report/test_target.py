"""Where `flowgit report -o` writes: a new file or its own earlier page, standard output for `-`, nothing else."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from flowgit.report.html import GENERATOR_META
from flowgit.report.target import written_by_flowgit
from tests.conftest import git

ELSEWHERE = "(fix: write the report elsewhere, e.g. -o report.html)"


@pytest.fixture
def busy(repo: Path, run) -> Path:
    """A set-up repository with two episodes not yet committed and a hand edit not yet wrapped."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    for text in ("uncommitted finding one", "uncommitted finding two"):
        assert run(repo, "episode", "add", "--session", "s1", "--type", "finding", text).code == 0
    with open(repo / "CONTINUITY.md", "a", encoding="utf-8") as fh:
        fh.write("- hand edit not yet wrapped\n")
    return repo


def everything(root: Path) -> dict[str, str]:
    """Every file under ``root``, .git's own included (but the index, whose stat cache git may refresh)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "index"}


def refused(run, root: Path, output: str) -> tuple[str, dict]:
    """Run `report -o output` and `--json` of it; both must exit 2 and change no byte. Returns (stderr, JSON error)."""
    before = everything(root)
    res = run(root, "report", "-o", output)
    assert res.code == 2 and res.out == ""
    assert everything(root) == before
    as_json = run(root, "report", "-o", output, "--json")
    assert as_json.code == 2 and as_json.err == ""
    assert everything(root) == before
    return res.err, json.loads(as_json.out)["error"]


@pytest.mark.parametrize("output, says", [
    (".flow/episodes.jsonl", "is the episodic store: the report would replace it"),
    ("CONTINUITY.md", "is the continuity file: the report would replace it"),
    ("./CONTINUITY.md", "is the continuity file: the report would replace it"),
])
def test_the_memory_is_never_replaced(busy: Path, run, output: str, says: str) -> None:
    store, memory = (busy / ".flow" / "episodes.jsonl").read_bytes(), (busy / "CONTINUITY.md").read_bytes()
    err, data = refused(run, busy, output)
    shown = str(Path(output))
    assert err == f"flowgit: error: {shown}: {says} {ELSEWHERE}\n"
    assert data == {"message": says, "fix": "write the report elsewhere, e.g. -o report.html", "file": shown,
                    "line": None, "option": None}
    assert (busy / ".flow" / "episodes.jsonl").read_bytes() == store and store.count(b"uncommitted finding") == 2
    assert (busy / "CONTINUITY.md").read_bytes() == memory and memory.endswith(b"- hand edit not yet wrapped\n")


def test_a_link_to_the_memory_is_the_memory(busy: Path, run) -> None:
    (busy / "pretty.html").symlink_to("CONTINUITY.md")
    os.link(busy / ".flow" / "episodes.jsonl", busy / "hard.html")
    err, _ = refused(run, busy, "pretty.html")
    assert err == f"flowgit: error: pretty.html: is the continuity file: the report would replace it {ELSEWHERE}\n"
    err, _ = refused(run, busy, "hard.html")
    assert err == f"flowgit: error: hard.html: is the episodic store: the report would replace it {ELSEWHERE}\n"
    assert (busy / "pretty.html").is_symlink()


def test_nothing_is_written_into_the_stores_directory(busy: Path, run) -> None:
    err, _ = refused(run, busy, ".flow/report.html")
    assert err == (f"flowgit: error: .flow/report.html: is inside {busy / '.flow'}, where flowgit keeps the "
                   f"episodic store {ELSEWHERE}\n")
    assert sorted(p.name for p in (busy / ".flow").iterdir()) == ["episodes.jsonl"]


@pytest.mark.parametrize("output", [".git/HEAD", ".git/report.html", ".git/refs/heads/main"])
def test_gits_own_files_are_never_replaced(busy: Path, run, output: str) -> None:
    head = (busy / ".git" / "HEAD").read_bytes()
    err, data = refused(run, busy, output)
    assert err == (f"flowgit: error: {output}: is inside the git directory {busy / '.git'}: the report would "
                   f"replace git's own files {ELSEWHERE}\n")
    assert data["file"] == output
    assert (busy / ".git" / "HEAD").read_bytes() == head == b"ref: refs/heads/main\n"
    assert git(busy, "status", "--porcelain") == " M .flow/episodes.jsonl\n M CONTINUITY.md\n"


def test_a_dot_git_file_is_never_replaced(busy: Path, run) -> None:
    err, _ = refused(run, busy, ".git")
    assert err == f"flowgit: error: .git: is a repository's .git, which the report would replace {ELSEWHERE}\n"


def test_an_existing_file_flowgit_did_not_draw_is_kept(busy: Path, run) -> None:
    (busy / "notes.txt").write_bytes(b"my notes\r\nnot a report\n")
    err, data = refused(run, busy, "notes.txt")
    fix = "choose another name with -o (e.g. -o report.html), or remove the file first if it is yours to replace"
    assert err == f"flowgit: error: notes.txt: exists and is not a report flowgit wrote, so flowgit will not " \
                  f"replace it (fix: {fix})\n"
    assert data == {"message": "exists and is not a report flowgit wrote, so flowgit will not replace it",
                    "fix": fix, "file": "notes.txt", "line": None, "option": None}
    assert (busy / "notes.txt").read_bytes() == b"my notes\r\nnot a report\n"


def test_a_page_flowgit_drew_is_replaced_as_expected(busy: Path, run) -> None:
    res = run(busy, "report", "-o", "r.html")
    assert res.code == 0, res.err
    first = (busy / "r.html").read_bytes()
    assert first.startswith(b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                            + GENERATOR_META.encode())
    (busy / "r.html").write_bytes(first.replace(b"</body>", b"<p>edited</p></body>"))
    res = run(busy, "report", "-o", "r.html", "--json")
    assert res.code == 0 and json.loads(res.out)["path"] == str((busy / "r.html").resolve())
    assert (busy / "r.html").read_bytes() == first
    legacy = first.replace(GENERATOR_META.encode(), b"")  # a page drawn before the marker
    (busy / "r.html").write_bytes(legacy)
    assert run(busy, "report", "-o", "r.html").code == 0
    assert (busy / "r.html").read_bytes() == first


def test_dash_writes_the_page_to_standard_output(busy: Path, run) -> None:
    before = everything(busy)
    res = run(busy, "report", "-o", "-")
    assert res.code == 0 and res.err == ""
    assert res.out.startswith("<!DOCTYPE html>") and res.out.endswith("</script></body></html>\n")
    assert GENERATOR_META in res.out and res.out.count("<!DOCTYPE html>") == 1  # the page and nothing else
    assert everything(busy) == before and not (busy / "-").exists()
    res = run(busy, "report", "-o", "-", "--json")
    assert res.code == 2 and json.loads(res.out) == {"error": {
        "message": "the page and the --json summary would both go to standard output",
        "fix": "write the page to a file with --json (-o report.html), or drop --json", "file": None, "line": None,
        "option": "-o"}}
    assert everything(busy) == before


def test_a_page_is_recognised_by_its_marker_or_an_earlier_pages_title() -> None:
    start = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'  # every page flowgit ever drew
    assert written_by_flowgit(f"{start}{GENERATOR_META}".encode())
    assert written_by_flowgit(f'{start}<meta http-equiv="x"><title>flowgit report — repo</title>'.encode())
    assert not written_by_flowgit("<title>flowgit report — repo</title>".encode())
    assert not written_by_flowgit(b"## Current State\n")
    # the marker quoted elsewhere is no page of ours: notes about the report, flowgit's own source
    assert not written_by_flowgit(f"# notes\nour pages carry {GENERATOR_META}\n".encode())
    assert not written_by_flowgit(f"<!DOCTYPE html>\n<p>{GENERATOR_META}</p>".encode())
    assert not written_by_flowgit(f"GENERATOR_META = '{GENERATOR_META}'".encode())


def test_a_file_on_the_way_and_a_link_into_missing_directories_are_refused(busy: Path, run, tmp_path) -> None:
    """A file where a directory should be is named as the cause (not "File exists"), and a link is judged by
    where it leads: no directory is made for it that the same path given directly is refused for."""
    (busy / "notes.txt").write_text("mine\n")
    res = run(busy, "report", "-o", "notes.txt/r.html")
    assert res.code == 2 and "notes.txt: is a file, not a directory" in res.err
    far = tmp_path / "nowhere" / "a" / "r.html"
    (busy / "link.html").symlink_to(far)
    res = run(busy, "report", "-o", "link.html")
    assert res.code == 2 and "no such directory" in res.err and not (tmp_path / "nowhere").exists()
