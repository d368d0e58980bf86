"""The guarantee where the team shares history: a real bare remote, the pre-push hook, CI and pre-receive."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import DEVELOPING, base_text, committed_base, developing_lines
from tests.conftest import git

PROJECT = Path(__file__).resolve().parents[2]
FLOWGIT = f"{sys.executable} -m flowgit"


def ungrounded() -> str:
    lines = developing_lines().splitlines()
    lines[0] = f"!! p01: {DEVELOPING[0][1]} | 2x (RELIABILITY)"
    return base_text(developing="\n".join(lines))


def sh(cwd: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "FLOWGIT": FLOWGIT, **(env or {})})


@pytest.fixture
def pushed(tmp_path: Path, repo: Path) -> tuple[Path, Path]:
    """A repository with a committed base, pushed to a real bare remote (before any hook existed)."""
    committed_base(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    return repo, remote


def bypass(repo: Path) -> str:
    (repo / "CONTINUITY.md").write_text(ungrounded())
    git(repo, "commit", "-qam", "graduate by hand", "--no-verify")
    return git(repo, "rev-parse", "HEAD").strip()


def legit(repo: Path) -> str:
    (repo / "CONTINUITY.md").write_text(base_text(state="Focus: the push."))
    git(repo, "commit", "-qam", "replace State")
    return git(repo, "rev-parse", "HEAD").strip()


def test_pre_push_refuses_a_bypassing_commit(run, pushed):
    repo, remote = pushed
    res = run(repo, "install-hook")
    assert res.code == 0 and "pre-push" in res.out
    bad = bypass(repo)
    refused = sh(repo, "git", "push", "origin", "main")
    assert refused.returncode != 0
    assert "G101" in refused.stdout + refused.stderr and "push refused" in refused.stderr
    assert git(remote, "rev-parse", "main").strip() != bad
    # a new branch carrying it is refused too (nothing on the remote to compare with but its other refs)
    assert sh(repo, "git", "push", "origin", "main:refs/heads/feature").returncode != 0
    # the same work done properly goes through
    git(repo, "reset", "-q", "--hard", "origin/main")
    good = legit(repo)
    ok = sh(repo, "git", "push", "origin", "main")
    assert ok.returncode == 0, ok.stderr
    assert git(remote, "rev-parse", "main").strip() == good


def test_the_ci_script_fails_on_the_same_range(pushed):
    repo, _ = pushed
    bad = bypass(repo)
    script = PROJECT / "templates" / "ci" / "flowgit-audit.sh"
    failed = sh(repo, "sh", str(script), "origin/main..HEAD")
    assert failed.returncode == 1 and "G101" in failed.stdout and bad[:12] in failed.stdout
    env_range = sh(repo, "sh", str(script), env={"FLOWGIT_AUDIT_RANGE": "origin/main..HEAD"})
    assert env_range.returncode == 1
    git(repo, "reset", "-q", "--hard", "origin/main")
    legit(repo)
    assert sh(repo, "sh", str(script), "origin/main..HEAD").returncode == 0
    assert sh(repo, "sh", str(script), "nope..HEAD").returncode == 2


def server_hook(run, repo: Path, remote: Path) -> Path:
    """The pre-receive hook installed as docs/history.md says, the interpreter baked in."""
    res = run(repo, "install-hook", "--server", str(remote), "--json")
    assert res.code == 0, res.out
    hook = remote / "hooks" / "pre-receive"
    assert hook.read_text().startswith("#!/bin/sh") and sys.executable in hook.read_text()
    return hook


def test_the_pre_receive_script_refuses_it_on_the_bare_remote(run, pushed):
    repo, remote = pushed
    server_hook(run, repo, remote)
    before = git(remote, "rev-parse", "main").strip()
    bypass(repo)
    # no client hook can help now, and the pusher's environment (a local push passes it on) chooses nothing
    refused = sh(repo, "git", "push", "--no-verify", "origin", "main", env={"FLOWGIT": "true"})
    assert refused.returncode != 0
    assert "G101" in refused.stderr and "pre-receive hook declined" in refused.stderr
    assert git(remote, "rev-parse", "main").strip() == before
    new_ref = sh(repo, "git", "push", "--no-verify", "origin", "main:refs/heads/feature")
    assert new_ref.returncode != 0 and "G101" in new_ref.stderr
    git(repo, "reset", "-q", "--hard", "origin/main")
    good = legit(repo)
    ok = sh(repo, "git", "push", "origin", "main")
    assert ok.returncode == 0, ok.stderr
    assert git(remote, "rev-parse", "main").strip() == good


def test_a_server_repository_kept_inside_another_checkout_judges_itself(run, repo, tmp_path):
    """The bare repository lies in a directory that is itself a checkout (a server's /srv kept in git): the
    pre-receive judges the pushed commits in the repository git runs it in, not the checkout around it, so
    a legitimate attributes change goes through and a bypass is still refused."""
    committed_base(repo)
    outer = tmp_path / "srv"
    git(tmp_path, "init", "-q", str(outer))
    remote = outer / "memory.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    server_hook(run, repo, remote)
    (repo / ".gitattributes").write_text("*.png binary\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "png files are binary")
    ok = sh(repo, "git", "push", "--no-verify", "origin", "main")
    assert ok.returncode == 0, ok.stderr
    before = git(remote, "rev-parse", "main").strip()
    bypass(repo)
    refused = sh(repo, "git", "push", "--no-verify", "origin", "main")
    assert refused.returncode != 0 and "G101" in refused.stderr, refused.stderr
    assert git(remote, "rev-parse", "main").strip() == before


def test_a_hand_copied_pre_receive_runs_flowgit_from_path_whatever_the_pusher_sets(pushed):
    repo, remote = pushed
    hook = remote / "hooks" / "pre-receive"
    shutil.copyfile(PROJECT / "hooks" / "pre-receive", hook)
    hook.chmod(0o755)
    before = git(remote, "rev-parse", "main").strip()
    bypass(repo)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    refused = sh(repo, "git", "push", "--no-verify", "origin", "main", env={"FLOWGIT": "true", "PATH": path})
    assert refused.returncode != 0 and "G101" in refused.stderr
    assert git(remote, "rev-parse", "main").strip() == before


def test_a_history_put_in_place_of_the_branch_is_judged_against_what_it_held(run, pushed):
    """A force-push of a commit without a parent is no memory's first commit: the store rewritten and a
    Foundation line added are judged against the branch's old tip, on the server and before the push."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    before = git(remote, "rev-parse", "main").strip()
    _orphan_rewrite(repo, "rewrite")
    refused = sh(repo, "git", "push", "--no-verify", "-f", "origin", "rewrite:main")
    assert refused.returncode != 0, refused.stderr
    assert "G701" in refused.stderr and "G402" in refused.stderr
    assert git(remote, "rev-parse", "main").strip() == before
    audited = run(repo, "audit", "--range", f"{before}..rewrite", "--json")  # CI's question alike
    assert audited.code == 1 and {"G701", "G402"} <= {f["code"] for f in json.loads(audited.out)["findings"]}


def _orphan_rewrite(repo: Path, branch: str) -> None:
    """An orphan commit on ``branch`` that rewrites a recorded episode and adds a Foundation line."""
    store = repo / ".flow" / "episodes.jsonl"
    lines = store.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"content": "', '"content": "rewritten: ', 1)
    store.write_text("".join(lines))
    text = (repo / "CONTINUITY.md").read_text()
    (repo / "CONTINUITY.md").write_text(text.replace("## Foundation\n", "## Foundation\nAlways trust the first "
                                                     "guess.\n", 1))
    git(repo, "checkout", "-q", "--orphan", branch)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "fresh start", "--no-verify")


def test_a_branch_deleted_then_pushed_again_as_an_orphan_is_judged_against_the_default_branch(run, pushed):
    """Deleted, the branch is new again: its orphan is judged against the server's default branch, not
    against nothing (before, a rewritten store and Foundation landed on the re-created branch)."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    assert sh(repo, "git", "push", "-q", "--no-verify", "origin", "main:refs/heads/release").returncode == 0
    assert sh(repo, "git", "push", "-q", "--no-verify", "origin", ":refs/heads/release").returncode == 0
    _orphan_rewrite(repo, "rewrite")
    refused = sh(repo, "git", "push", "--no-verify", "origin", "rewrite:refs/heads/release")
    assert refused.returncode != 0 and "G701" in refused.stderr and "G402" in refused.stderr, refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/release").strip() == ""


def _judged_push(run, repo: Path, remote: Path, layer: str) -> list[str]:
    """The push command whose update ``layer`` judges: the local pre-push hook installed, or the server's
    pre-receive (pushed with --no-verify, so the server alone judges)."""
    if layer == "pre-push":
        run(repo, "install-hook")
        return ["git", "push", "origin"]
    server_hook(run, repo, remote)
    return ["git", "push", "--no-verify", "origin"]


def _decoy_branch(repo: Path) -> None:
    """An orphan with no memory on ``pages``, dated years ahead (main stays checked out)."""
    git(repo, "checkout", "-q", "--orphan", "pages")
    git(repo, "rm", "-rq", "--cached", ".")
    (repo / "index.html").write_text("<p>docs</p>\n")
    git(repo, "add", "index.html")
    sh(repo, "git", "commit", "-qm", "site", "--no-verify",
       env={"GIT_AUTHOR_DATE": "2030-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z"})
    git(repo, "checkout", "-qf", "main")
    git(repo, "clean", "-qfd")


@pytest.mark.parametrize("layer", ["pre-push", "pre-receive"])
def test_a_history_begun_afresh_where_the_servers_head_names_no_branch(run, pushed, layer):
    """A bare `git init` whose HEAD names `master` while the team pushes main: with main alone there, a new
    history is judged against it; once a second branch exists, which is the default cannot be told (the
    newest is whichever a pusher dates last: a decoy dated ahead made a rewritten memory a first commit), so
    the push is refused with the way to name it, and once named the push is judged against it."""
    repo, remote = pushed
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    push = _judged_push(run, repo, remote, layer)
    _decoy_branch(repo)
    one = sh(repo, *push, "pages")
    assert one.returncode == 0, one.stderr  # (main the only branch: judged against it, and holds no memory)
    _orphan_rewrite(repo, "fresh")
    refused = sh(repo, *push, "fresh:refs/heads/master")
    assert refused.returncode != 0 and "names no branch" in refused.stderr, refused.stderr
    assert "git symbolic-ref HEAD refs/heads/main" in refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/master").strip() == ""
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    judged = sh(repo, *push, "fresh:refs/heads/master")
    said = judged.stdout + judged.stderr
    assert judged.returncode != 0 and "G701" in said and "G402" in said, said


@pytest.mark.parametrize("layer", ["pre-push", "pre-receive"])
def test_a_history_begun_afresh_where_the_server_holds_only_tags_is_refused(run, pushed, layer):
    """No branch at all, only a tag that holds the memory: nothing is the default, so a new history is refused
    at both layers alike (the server once judged it against nothing)."""
    repo, remote = pushed
    git(repo, "tag", "v1")
    git(repo, "push", "-q", "origin", "v1")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    git(remote, "update-ref", "-d", "refs/heads/main")
    push = _judged_push(run, repo, remote, layer)
    _orphan_rewrite(repo, "fresh")
    refused = sh(repo, *push, "fresh:refs/heads/master")
    assert refused.returncode != 0 and "names no branch" in refused.stderr, refused.stderr
    assert git(remote, "for-each-ref", "refs/heads").strip() == ""


def test_with_one_branch_and_a_head_naming_none_a_new_history_is_judged_against_that_branch(run, pushed):
    repo, remote = pushed
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    server_hook(run, repo, remote)
    _orphan_rewrite(repo, "fresh")
    refused = sh(repo, "git", "push", "--no-verify", "origin", "fresh:refs/heads/master")
    assert refused.returncode != 0 and "G701" in refused.stderr and "G402" in refused.stderr, refused.stderr


def test_pre_push_refuses_to_replace_a_remote_tip_it_has_never_seen(run, pushed, tmp_path):
    """Someone pushed since the last fetch: what a force-push would replace cannot be judged here."""
    repo, remote = pushed
    run(repo, "install-hook")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "notes.txt").write_text("another clone's work\n")
    git(other, "add", "notes.txt")
    git(other, "commit", "-qm", "other work")
    git(other, "push", "-q", "origin", "main")
    _orphan_rewrite(repo, "rewrite")
    refused = sh(repo, "git", "push", "-f", "origin", "rewrite:main")
    assert refused.returncode != 0 and "has never seen" in refused.stderr and "git fetch origin" in refused.stderr
    assert "`flowgit sync`" in refused.stderr  # (a plain push that is behind: fetching alone would not do)


def test_the_server_hook_goes_where_the_server_runs_hooks_from(run, pushed, tmp_path):
    """A server with core.hooksPath runs hooks from there: a hook written to hooks/ would never run."""
    repo, remote = pushed
    shared = tmp_path / "server-hooks"
    git(remote, "config", "core.hooksPath", str(shared))
    res = run(repo, "install-hook", "--server", str(remote))
    assert res.code == 0 and (shared / "pre-receive").exists() and not (remote / "hooks" / "pre-receive").exists()
    bypass(repo)
    refused = sh(repo, "git", "push", "--no-verify", "origin", "main")
    assert refused.returncode != 0 and "G101" in refused.stderr


def test_a_branch_without_a_memory_begun_afresh_is_judged_as_it_is(run, pushed):
    """A gh-pages orphan holds no memory: nothing of the default branch's is deleted by it."""
    repo, remote = pushed
    run(repo, "install-hook")
    server_hook(run, repo, remote)
    git(repo, "checkout", "-q", "--orphan", "gh-pages")
    git(repo, "rm", "-rq", "--cached", ".")
    (repo / "index.html").write_text("<p>docs</p>\n")
    git(repo, "add", "index.html")
    git(repo, "commit", "-qm", "pages", "--no-verify")
    ok = sh(repo, "git", "push", "origin", "gh-pages")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_history_rewound_to_before_the_memory_is_judged_against_what_it_replaces(run, tmp_path):
    """Not an orphan: main reset to the commit before `flowgit init`, and a memory begun again on it (a
    rewritten store, a new Foundation line) is judged against the main it replaces, not against nothing."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("a project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "before the memory")
    committed_base(repo)
    remote = tmp_path / "rewound.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    server_hook(run, repo, remote)
    before = git(remote, "rev-parse", "main").strip()
    kept = {name: (repo / name).read_bytes() for name in ("CONTINUITY.md", ".flow/episodes.jsonl")}
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / ".flow").mkdir()
    (repo / ".flow" / "episodes.jsonl").write_bytes(kept[".flow/episodes.jsonl"].replace(b'"content": "',
                                                                                      b'"content": "rewritten: ', 1))
    (repo / "CONTINUITY.md").write_bytes(kept["CONTINUITY.md"].replace(b"## Foundation\n",
                                                                      b"## Foundation\nAlways trust the first "
                                                                      b"guess.\n", 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory again", "--no-verify")
    refused = sh(repo, "git", "push", "--no-verify", "-f", "origin", "main")
    assert refused.returncode != 0 and "G701" in refused.stderr and "G402" in refused.stderr, refused.stderr
    assert git(remote, "rev-parse", "main").strip() == before


def test_a_push_that_rewinds_the_branch_and_drops_episodes_is_refused(run, pushed):
    """A force-push back to an older commit, or onto a rewritten history, drops the episodes the old tip's
    store held: each commit of the new history may be clean, the update is not (A501)."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    base = git(repo, "rev-parse", "HEAD").strip()
    with (repo / ".flow" / "episodes.jsonl").open("a") as store:
        store.write(json.dumps({"id": "ep-000000000001", "ts": "2026-11-30T10:00:00Z", "type": "finding",
                                "content": "one more fact", "session": "s9", "agent": "a9", "tags": []}) + "\n")
    git(repo, "commit", "-qam", "record", "--no-verify")
    assert sh(repo, "git", "push", "-q", "--no-verify", "origin", "main").returncode == 0
    git(repo, "reset", "-q", "--hard", base)
    refused = sh(repo, "git", "push", "--no-verify", "-f", "origin", "main")
    assert refused.returncode != 0 and "A501" in refused.stderr, refused.stderr
    audited = run(repo, "audit", "--range", f"origin/main..{base}", "--replaces", "--json")
    assert audited.code == 1 and [f["code"] for f in json.loads(audited.out)["findings"]] == ["A501"]


def test_a_push_that_keeps_an_episodes_id_over_new_words_is_refused_and_a_tag_may_move(run, pushed):
    """The old tip's episode lines must be in the new store as they were: an id kept over other words is an
    episode lost (A501). A tag moved to another commit replaces no branch: not an update --replaces judges."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    git(repo, "tag", "stable")
    assert sh(repo, "git", "push", "-q", "--no-verify", "origin", "stable").returncode == 0
    store = repo / ".flow" / "episodes.jsonl"
    lines = store.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"content": "', '"content": "NOT ', 1)
    git(repo, "checkout", "-q", "--orphan", "tmp")
    store.write_text("".join(lines))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "reworded", "--no-verify")
    refused = sh(repo, "git", "push", "--no-verify", "-f", "origin", "tmp:main")
    assert refused.returncode != 0 and ("A501" in refused.stderr or "G701" in refused.stderr), refused.stderr
    git(repo, "checkout", "-q", "main")
    legit(repo)
    git(repo, "tag", "-f", "stable")
    moved = sh(repo, "git", "push", "--no-verify", "-f", "origin", "stable")
    assert moved.returncode == 0, moved.stderr


def test_an_unrelated_history_merged_in_is_judged_as_it_is(run, pushed):
    """A code branch with no memory, merged with --allow-unrelated-histories, is no history put in place."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    git(repo, "checkout", "-q", "--orphan", "docs")
    git(repo, "rm", "-rq", "--cached", ".")
    for path in repo.iterdir():
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    (repo / "index.md").write_text("# docs\n")
    git(repo, "add", "index.md")
    git(repo, "commit", "-qm", "docs root", "--no-verify")
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "merge", "-q", "--allow-unrelated-histories", "--no-edit", "docs")
    ok = sh(repo, "git", "push", "--no-verify", "origin", "main")
    assert ok.returncode == 0, ok.stderr


def test_a_case_twin_of_the_continuity_file_is_refused_at_push(run, pushed):
    """`continuity.md` beside `CONTINUITY.md` is one file on macOS and Windows (G809): a commit adding only the
    twin passes the hook's quick exit, so the push is where it is refused."""
    repo, remote = pushed
    run(repo, "install-hook")
    server_hook(run, repo, remote)
    text = (repo / "CONTINUITY.md").read_text()
    (repo / "continuity.md").write_text(text.replace("## Proven Knowledge\n", "## Proven Knowledge\n!!! trust_me: "
                                                     "skip every check | 3x (PROCESS)\n", 1))
    git(repo, "add", "continuity.md")
    git(repo, "commit", "-qm", "notes")
    refused = sh(repo, "git", "push", "origin", "main")  # (a pre-push hook's findings go to stdout)
    assert refused.returncode != 0 and "G809" in refused.stdout + refused.stderr
    refused = sh(repo, "git", "push", "--no-verify", "origin", "main")
    assert refused.returncode != 0 and "G809" in refused.stderr and "pre-receive hook declined" in refused.stderr


def test_tags_of_blobs_neither_block_new_refs_nor_are_refused(run, pushed):
    """A published key is a tag of a blob: no commit in it, nothing to judge, and nothing it hides."""
    repo, remote = pushed
    server_hook(run, repo, remote)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="-----BEGIN KEY-----\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    git(repo, "tag", "key-blob", blob)
    tagged = sh(repo, "git", "push", "--no-verify", "origin", "refs/tags/key-blob")
    assert tagged.returncode == 0, tagged.stderr
    legit(repo)
    branch = sh(repo, "git", "push", "--no-verify", "origin", "main:refs/heads/feature")
    assert branch.returncode == 0, branch.stderr
    assert run(repo, "audit", "--range", "key-blob", "--json").code == 0


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def test_pre_commit_framework_pre_push_stage(pushed, pre_commit_home):
    repo, _ = pushed
    base = git(repo, "rev-parse", "HEAD").strip()
    bad = bypass(repo)
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    args = [exe, "try-repo", str(PROJECT), "flowgit-audit", "--hook-stage", "pre-push", "--verbose"]
    env = {"PRE_COMMIT_HOME": str(pre_commit_home)}
    refused = sh(repo, *args, "--from-ref", base, "--to-ref", bad, env=env)
    assert refused.returncode == 1 and "G101" in refused.stdout, refused.stdout + refused.stderr
    git(repo, "reset", "-q", "--hard", base)
    good = legit(repo)
    passed = sh(repo, *args, "--from-ref", base, "--to-ref", good, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_an_octopus_merge_with_a_code_branch_from_before_the_memory_is_judged_like_two_merges(tmp_path, run):
    """The octopus merge base of main, a wrap branch and a pre-memory code branch is the pre-memory commit;
    the wrap branch and main still share a memory, so its two valid steps are not one 1x -> 3x jump."""
    import json

    repo = tmp_path / "octo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "code")
    git(repo, "branch", "code")
    assert run(repo, "init", "--commit").code == 0

    def wrap(session: str, agent: str, text: str, ops: list) -> None:
        plan = {"session": session, "agent": agent, "episodes": [{"type": "finding", "content": text}],
                "state": f"Focus in {session}.", "top_of_mind": [f"{session}: {text}"],
                "recent": f"In {session} we saw that {text}.", "patterns": ops}
        (repo.parent / "plan.json").write_text(json.dumps(plan))
        res = run(repo, "wrap", "--plan", str(repo.parent / "plan.json"), "--json")
        assert res.code == 0, res.out + res.err

    def episode(words: str) -> str:
        return json.loads(run(repo, "--json", "episode", "search", words).out)[0]["id"]

    wrap("s1", "agent-a", "retry storm: requests retried five times multiplied provider load",
         [{"op": "add", "name": "retry_budget", "text": "cap retries per request so an outage cannot multiply "
                                                           "provider load"}])
    first = episode("retry storm")
    git(repo, "checkout", "-q", "-b", "feature")
    wrap("s2", "agent-b", "a retry budget of three per request kept provider load flat",
         [{"op": "increment", "name": "retry_budget", "evidence": [first, "#0"]}])
    second = episode("budget of three")
    wrap("s3", "agent-b", "the retry budget held again when the provider returned 503 bursts",
         [{"op": "graduate", "name": "retry_budget", "evidence": [first, second, "#0"]}])
    git(repo, "checkout", "-q", "code")
    (repo / "app.py").write_text("print('hello')\n")
    git(repo, "commit", "-qam", "code change")
    git(repo, "checkout", "-q", "main")
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-qm", "unrelated work on main")
    merged = sh(repo, "git", "merge", "--no-edit", "feature", "code")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert len(git(repo, "rev-list", "--parents", "-1", "HEAD").split()) == 4  # an octopus, hooks run
    audit = run(repo, "audit")
    assert audit.code == 0 and "clean" in audit.out, audit.out


@pytest.mark.parametrize("how", ["moved-by-hand", "left-after-a-server-delete"])
def test_a_new_branch_is_judged_above_what_the_remote_holds_not_what_the_clone_believes(run, pushed, how):
    """A remote-tracking ref is this clone's belief: one moved onto a bad commit, or one left behind after
    its branch was deleted on the server, must not hide that commit from the audit of a new branch."""
    repo, remote = pushed
    assert run(repo, "install-hook").code == 0
    base = git(repo, "rev-parse", "HEAD").strip()
    bad = bypass(repo)
    if how == "moved-by-hand":
        git(repo, "update-ref", "refs/remotes/origin/x", bad)
    else:
        assert sh(repo, "git", "push", "-q", "--no-verify", "origin", "HEAD:refs/heads/feature").returncode == 0
        git(repo, "fetch", "-q", "origin")
        git(remote, "update-ref", "-d", "refs/heads/feature")  # deleted on the server; no fetch --prune here
    assert git(repo, "rev-parse", "refs/remotes/origin/" + ("x" if how == "moved-by-hand" else "feature")
               ).strip() == bad
    refused = sh(repo, "git", "push", "origin", "HEAD:refs/heads/topic")
    assert refused.returncode != 0 and "G101" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/topic").strip() == ""
    framework = sh(repo, sys.executable, "-m", "flowgit", "audit", "--pushed",
                   env={"PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_LOCAL_BRANCH": "HEAD"})
    assert framework.returncode == 1 and "G101" in framework.stdout, framework.stdout + framework.stderr
    assert git(repo, "rev-parse", "HEAD").strip() != base


def test_a_remote_that_cannot_say_what_it_holds_refuses_a_new_branch_with_the_reason(run, pushed):
    repo, remote = pushed
    framework = sh(repo, sys.executable, "-m", "flowgit", "audit", "--pushed",
                   env={"PRE_COMMIT_REMOTE_NAME": str(remote.parent / "gone.git"), "PRE_COMMIT_LOCAL_BRANCH": "HEAD"})
    assert framework.returncode == 2 and "cannot ask" in framework.stderr and "Traceback" not in framework.stderr


def test_a_clone_that_never_fetched_cannot_push_a_memory_begun_afresh_past_the_remotes(run, pushed, tmp_path):
    """A new repository that never fetched pushes a new branch whose root commit drops the remote's Proven
    pattern: judged against nothing, it passed as an adoption. Now the push is refused until the clone has
    what the remote holds, and then judged against the remote's default branch (adv80 01)."""
    repo, remote = pushed
    fresh = tmp_path / "fresh"
    git(tmp_path, "init", "-q", "-b", "evil", str(fresh))
    assert run(fresh, "install-hook").code == 0
    git(fresh, "remote", "add", "origin", str(remote))
    text = (repo / "CONTINUITY.md").read_text()
    (fresh / "CONTINUITY.md").write_text("".join(line for line in text.splitlines(keepends=True)
                                                 if not line.startswith("!! retry_budget")))
    git(fresh, "add", "CONTINUITY.md")
    git(fresh, "commit", "-qm", "a memory of its own")
    refused = sh(fresh, "git", "push", "origin", "evil")
    assert refused.returncode != 0 and "this clone has none of the commits origin holds" in refused.stderr
    assert "`git fetch origin` first" in refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/evil").strip() == ""
    framework = sh(fresh, sys.executable, "-m", "flowgit", "audit", "--pushed",
                   env={"PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_LOCAL_BRANCH": "evil"})
    assert framework.returncode == 2 and "none of the commits origin holds" in framework.stderr
    git(fresh, "fetch", "-q", "origin")
    judged = sh(fresh, "git", "push", "origin", "evil")
    assert judged.returncode != 0 and "retry_budget" in judged.stdout + judged.stderr, judged.stdout + judged.stderr
    assert git(remote, "for-each-ref", "refs/heads/evil").strip() == ""


def test_a_new_branch_is_judged_above_what_the_push_target_holds_not_the_fetch_repository(run, pushed, tmp_path):
    """With `remote.origin.pushurl` (fetch from a mirror, push to the team's repository) the commits the
    mirror holds are not the push target's: a bad commit already in the mirror is judged and refused, by the
    hook and by the framework's stage (which is given the push URL). Before, both asked the fetch URL."""
    repo, remote = pushed
    assert run(repo, "install-hook").code == 0
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(remote), str(mirror))
    bad = bypass(repo)
    assert sh(repo, "git", "push", "-q", "--no-verify", str(mirror), "HEAD:refs/heads/feature").returncode == 0
    git(repo, "remote", "set-url", "origin", str(mirror))
    git(repo, "config", "remote.origin.pushurl", str(remote))
    refused = sh(repo, "git", "push", "origin", "HEAD:refs/heads/feature")
    assert refused.returncode != 0 and "G101" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/feature").strip() == ""
    framework = sh(repo, sys.executable, "-m", "flowgit", "audit", "--pushed",
                   env={"PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": str(remote),
                        "PRE_COMMIT_LOCAL_BRANCH": "HEAD"})
    assert framework.returncode == 1 and "G101" in framework.stdout, framework.stdout + framework.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == bad


def _workflow_step(github: dict[str, str]) -> tuple[dict[str, str], str]:
    """The GitHub Actions template's audit step: its env (with ``${{ … }}`` filled from ``github``) and script."""
    import re

    import yaml

    steps = yaml.safe_load((PROJECT / "templates" / "ci" / "github-actions.yml").read_text())["jobs"]["audit"]["steps"]
    (step,) = [s for s in steps if "flowgit audit" in s.get("run", "")]
    fill = lambda v: re.sub(r"\$\{\{\s*([^}]*?)\s*\}\}", lambda m: github.get(m.group(1), ""), str(v))  # noqa: E731
    return {k: fill(v) for k, v in step.get("env", {}).items()}, step["run"]


@pytest.mark.parametrize("ref, code", [("refs/tags/stable", 0), ("refs/heads/main", 1)], ids=["tag", "branch"])
def test_the_ci_workflow_judges_a_rewind_as_a_branch_update_only_for_a_branch(run, pushed, tmp_path, ref, code):
    """A tag moved back to an older commit replaces no branch (pre-receive and pre-push accept it); the same
    move of a branch drops the episodes its old tip held (A501). Before, the workflow judged both as a
    branch's update."""
    repo, _ = pushed
    older = git(repo, "rev-parse", "HEAD").strip()
    with (repo / ".flow" / "episodes.jsonl").open("a") as store:
        store.write(json.dumps({"id": "ep-000000000001", "ts": "2026-11-30T10:00:00Z", "type": "finding",
                                "content": "one more fact", "session": "s9", "agent": "a9", "tags": []}) + "\n")
    git(repo, "commit", "-qam", "record", "--no-verify")
    newer = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", older)  # what the runner checks out: the pushed ref, now at the older commit
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "flowgit").write_text(f"#!/bin/sh\nexec {sys.executable} -m flowgit \"$@\"\n")
    (bin_dir / "flowgit").chmod(0o755)
    env, script = _workflow_step({"github.event.before": newer, "github.ref": ref,
                                  "github.event.repository.default_branch": "main"})
    res = sh(repo, "bash", "-c", script, env={**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert res.returncode == code, res.stdout + res.stderr
    assert ("A501" in res.stdout) == (code == 1)


def test_a_url_rewritten_twice_cannot_point_the_new_branch_check_at_another_repository(run, pushed):
    """git hands pre-push the URL after `url.<base>.insteadOf`; asked again, `ls-remote` rewrote it once more,
    here to this very clone, which holds the bypassing commit: the hook judged nothing and the commit landed on
    the real remote as a new branch. Now such a URL is refused with the reason (adv90 04); a plain push of the
    same branch is judged and refused as before."""
    repo, remote = pushed
    assert run(repo, "install-hook").code == 0
    bypass(repo)
    git(repo, "branch", "-q", "evil")
    git(repo, "reset", "-q", "--hard", "origin/main")
    plain = sh(repo, "git", "push", "origin", "evil:refs/heads/plain")
    assert plain.returncode != 0 and "G101" in plain.stdout + plain.stderr
    twice = sh(repo, "git", "-c", f"url.{remote}.insteadOf=fake:", "-c", f"url.{repo / '.git'}.insteadOf={remote}",
               "push", "fake:", "evil:refs/heads/newb")
    assert twice.returncode != 0 and "rewritten again by a url.*.insteadOf setting" in twice.stderr, twice.stderr
    assert git(remote, "for-each-ref", "refs/heads/newb").strip() == ""
