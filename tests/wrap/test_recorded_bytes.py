"""A wrap in a checkout whose files git converts: it judges what `git add` records, as the hook does.

CRLF lines on disk (core.autocrlf, `eol=crlf`) and LF in git: the wrap compares
with HEAD and judges the LF bytes (before, every wrap in such a checkout was
refused as an edit of every stored line, G701, while `git commit` of the same
change passed), and the file keeps the line endings the checkout gave it. A
clean filter that breaks the file is refused by the wrap as by the hook.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git


def _origin_with_one_wrap(run, tmp_path: Path) -> Path:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    run(origin, "init", "--commit", "--no-hooks")
    run(origin, "episode", "add", "--session", "s1", "--agent", "alice", "--type", "finding",
        "uncapped retries multiplied provider load during the outage")
    plan = tmp_path / "plan1.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: the retry budget.",
                                "recent": "Uncapped retries multiplied provider load in the outage.",
                                "patterns": [{"op": "add", "name": "retry_budget", "text": "cap retries per request"}]}))
    assert run(origin, "wrap", "--plan", str(plan)).code == 0
    return origin


@pytest.mark.parametrize("how", ["autocrlf", "attributes"])
def test_a_wrap_in_a_crlf_checkout_commits_what_git_records_and_keeps_the_checkouts_line_endings(run, tmp_path,
                                                                                                how):
    origin = _origin_with_one_wrap(run, tmp_path)
    if how == "attributes":  # (a project that asks for CRLF in every checkout, as .NET ones often do)
        (origin / ".gitattributes").write_text((origin / ".gitattributes").read_text() + "* text=auto eol=crlf\n")
        git(origin, "commit", "-qam", "line endings", "--no-verify")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", *(["-c", "core.autocrlf=true"] if how == "autocrlf" else []), str(origin),
        str(clone))
    assert b"\r\n" in (clone / "CONTINUITY.md").read_bytes()  # (the checkout converts)
    run(clone, "episode", "add", "--session", "s2", "--agent", "bob", "--type", "finding",
        "the breaker should open after five provider failures")
    plan = tmp_path / "plan2.json"
    plan.write_text(json.dumps({"session": "s2", "state": "Focus: breaker thresholds.",
                                "recent": "The retry budget is in place; the breaker comes next."}))
    res = run(clone, "wrap", "--plan", str(plan), "--json")
    assert res.code == 0, res.out + res.err
    data = json.loads(res.out)
    assert data["committed"] and "G701" not in res.out
    subject = git(clone, "log", "-1", "--format=%s").strip()
    assert subject.endswith("Current State replaced, Recent Context rewritten"), subject  # not every section
    assert "no new episodes" not in res.out + res.err
    recorded = git(clone, "show", "HEAD:CONTINUITY.md")
    assert "\r" not in recorded and "Focus: breaker thresholds.\n" in recorded
    assert git(clone, "show", "HEAD:.flow/episodes.jsonl").count("\n") == 2 and "\r" not in git(
        clone, "show", "HEAD:.flow/episodes.jsonl")
    on_disk = (clone / "CONTINUITY.md").read_bytes()
    assert b"Focus: breaker thresholds.\r\n" in on_disk and on_disk.count(b"\n") == on_disk.count(b"\r\n")
    store = (clone / ".flow" / "episodes.jsonl").read_bytes()  # appended in the checkout's endings, not mixed
    assert store.count(b"\n") == store.count(b"\r\n") == 2
    assert git(clone, "status", "--porcelain") == ""
    assert run(clone, "audit").code == 0


MIXED_ENDINGS_FIXER = """#!/bin/sh
# as a line-ending fixer does: make every line of the store end as most do, and fail when it changed one
exec python3 - <<'END'
import sys
path = ".flow/episodes.jsonl"
data = open(path, "rb").read()
crlf = data.count(b"\\r\\n")
lf = data.count(b"\\n") - crlf
if crlf and lf:
    end = b"\\r\\n" if crlf >= lf else b"\\n"
    open(path, "wb").write(data.replace(b"\\r\\n", b"\\n").replace(b"\\n", end))
    print("fixed mixed line endings in", path)
    sys.exit(1)
END
"""


def test_a_line_ending_fixer_among_the_hooks_finds_nothing_to_fix_in_a_crlf_checkouts_store(run, tmp_path):
    """The wrap and `episode add` append in the store's own line ending: a store checked out with CRLF does not
    become one of mixed endings, which a fixer hook would rewrite whole and refuse the commit over."""
    origin = _origin_with_one_wrap(run, tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(origin), str(clone))
    assert run(clone, "install-hook").code == 0
    hook = clone / ".git" / "hooks" / "pre-commit.flowgit-chained"
    hook.write_text(MIXED_ENDINGS_FIXER)
    hook.chmod(0o755)
    run(clone, "episode", "add", "--session", "s2", "--agent", "bob", "--type", "finding",
        "the breaker should open after five provider failures")
    plan = tmp_path / "plan2.json"
    plan.write_text(json.dumps({"session": "s2", "state": "Focus: breaker thresholds.", "episodes": [
        {"type": "finding", "content": "five failures in a minute is the threshold the team agreed"}]}))
    res = run(clone, "wrap", "--plan", str(plan))
    assert res.code == 0, res.out + res.err
    store = (clone / ".flow" / "episodes.jsonl").read_bytes()
    assert store.count(b"\n") == store.count(b"\r\n") == 3
    assert git(clone, "status", "--porcelain") == "" and not list((clone / ".git").glob("flowgit-wrap*"))


def test_a_clean_filter_that_breaks_the_file_is_refused_by_the_wrap_as_by_the_hook(run, tmp_path):
    origin = _origin_with_one_wrap(run, tmp_path)
    git(origin, "config", "filter.shout.clean", "tr a-z A-Z")
    git(origin, "config", "filter.shout.smudge", "cat")
    (origin / ".gitattributes").write_text((origin / ".gitattributes").read_text() + "CONTINUITY.md filter=shout\n")
    git(origin, "commit", "-qm", "filter", "--no-verify", "--", ".gitattributes")
    head = git(origin, "rev-parse", "HEAD")
    plan = tmp_path / "plan2.json"
    plan.write_text(json.dumps({"session": "s2", "state": "Focus: breaker thresholds."}))
    res = run(origin, "wrap", "--plan", str(plan))
    said = res.out + res.err
    assert res.code == 1 and "G110" in said and "RETRY_BUDGET" in said, said
    assert git(origin, "rev-parse", "HEAD") == head
    (origin / "CONTINUITY.md").write_text((origin / "CONTINUITY.md").read_text().replace(
        "Focus: the retry budget.", "Focus: breaker thresholds."))
    git(origin, "add", "CONTINUITY.md")
    hook = run(origin, "check")
    assert hook.code == 1 and "G110" in hook.out + hook.err
