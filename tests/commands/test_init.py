"""flowgit init: idempotent, adopts an existing continuity file, registers the merge driver, hooks, --commit."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import git, tree_digest


def config(repo, key: str) -> str:
    return git(repo, "config", "--get", key).strip()


def test_init_twice_changes_nothing_and_says_what_exists(run, repo):
    first = run(repo, "init", "--json")
    assert first.code == 0, first.err
    data = json.loads(first.out)
    assert "CONTINUITY.md" in data["created"] and ".gitattributes (merge=flowgit)" in data["created"]
    assert set(data["staged"]) == {".gitattributes", "CONTINUITY.md", ".flow/episodes.jsonl"}
    assert (repo / ".git" / "hooks" / "pre-commit").exists() and (repo / ".git" / "hooks" / "commit-msg").exists()
    assert "-m flowgit.commands.merge_driver %O %A %B %P" in config(repo, "merge.flowgit.driver")
    before = (tree_digest(repo), git(repo, "config", "--list", "--local"), git(repo, "status", "--porcelain"))
    again = run(repo, "init")
    assert again.code == 0
    assert "kept    CONTINUITY.md (already there)" in again.out and "kept    git config merge.flowgit" in again.out
    assert (tree_digest(repo), git(repo, "config", "--list", "--local"), git(repo, "status", "--porcelain")) == before


def test_gitattributes_routes_both_files_through_the_driver_and_replaces_union(run, repo):
    (repo / ".gitattributes").write_text("*.png binary\n.flow/episodes.jsonl merge=union\n")
    assert run(repo, "init", "--no-hooks").code == 0
    assert (repo / ".gitattributes").read_text() == ("*.png binary\n.flow/episodes.jsonl merge=flowgit\n"
                                                     "/CONTINUITY.md merge=flowgit\n")
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    attrs = git(repo, "check-attr", "merge", "--", "CONTINUITY.md", ".flow/episodes.jsonl")
    assert attrs.count("merge: flowgit") == 2


def test_an_existing_flow_continuity_md_is_adopted_not_doubled(run, repo):
    (repo / "continuity.md").write_text("## State\nworking\n\n## Developing\n! a_b: c d | 1x\n")
    res = run(repo, "init", "--no-hooks")
    assert res.code == 0 and "adopted continuity.md" in res.out
    assert not (repo / "CONTINUITY.md").exists() or (repo / "CONTINUITY.md").samefile(repo / "continuity.md")
    assert (repo / ".flowgit.toml").read_text() == 'continuity = "continuity.md"\n'
    assert "continuity.md merge=flowgit" in (repo / ".gitattributes").read_text()
    listed = run(repo, "patterns", "--json")
    assert json.loads(listed.out)[0]["name"] == "a_b"
    assert run(repo, "init", "--no-hooks").code == 0 and (repo / ".flowgit.toml").read_text().count("continuity =") == 1


def test_adoption_goes_into_an_existing_tool_flowgit_table(run, repo):
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.flowgit]\nstore = "mem/eps.jsonl"\n')
    (repo / "continuity.md").write_text("## State\nworking\n")
    assert run(repo, "init", "--no-hooks").code == 0
    assert '[tool.flowgit]\ncontinuity = "continuity.md"\nstore = "mem/eps.jsonl"\n' in \
        (repo / "pyproject.toml").read_text()
    assert (repo / "mem" / "eps.jsonl").exists() and not (repo / ".flowgit.toml").exists()


def test_a_configured_or_explicit_file_is_never_replaced_by_adoption(run, repo):
    (repo / "continuity.md").write_text("## State\nflow\n")
    res = run(repo, "--file", "notes/memory.md", "init", "--no-hooks")
    assert res.code == 0 and "adopted" not in res.out
    assert (repo / "notes" / "memory.md").exists() and not (repo / ".flowgit.toml").exists()


def test_commit_commits_the_set_up_only(run, repo):
    (repo / "unrelated.txt").write_text("mine")
    git(repo, "add", "unrelated.txt")
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == [".flow/episodes.jsonl", ".gitattributes", "CONTINUITY.md"]
    assert git(repo, "status", "--porcelain").strip() == "A  unrelated.txt"
    again = run(repo, "init", "--commit", "--json")
    assert again.code == 0 and json.loads(again.out)["committed"] is None


def test_commit_with_a_non_ascii_configured_path(run, repo):
    """git quotes such paths in its plain output; init reads them unquoted and commits exactly them."""
    (repo / ".flowgit.toml").write_text('store = "eps/ü.jsonl"\n', encoding="utf-8")
    git(repo, "add", ".flowgit.toml")
    git(repo, "commit", "-qm", "configure the store")
    res = run(repo, "init", "--commit", "--json")
    assert res.code == 0, res.err
    assert "eps/ü.jsonl" in json.loads(res.out)["staged"]
    assert git(repo, "status", "--porcelain").strip() == ""
    assert "eps/ü.jsonl" in git(repo, "-c", "core.quotepath=false", "show", "--name-only", "--format=", "HEAD")


def _adoptable(repo, *, proven_sources: list[tuple[str, str]]) -> None:
    """A memory kept before flowgit: a Proven pattern and the episodes it cites, none of it committed yet."""
    from tests.checks.gate_fixtures import GRADUATED, base_text, ep, write_store

    eps = [ep(f"the retry budget per request held provider load flat in outage {n}", session, agent=agent,
              tags=("retries",)) for n, (session, agent) in enumerate(proven_sources)]
    write_store(repo, eps)
    line = (f"!! retry_budget: cap retries per request so an outage cannot multiply load | 3x (RELIABILITY — "
            f"{GRADUATED}) [evidence: {', '.join(e.id for e in eps)}]")
    text = base_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("!! retry_budget:"))
    (repo / "CONTINUITY.md").write_text(text.replace(old, line))


def test_commit_adopts_a_memory_recorded_before_git_saw_it(run, repo):
    """Episodes of three sessions and two agents committed together for the first time are not one batch:
    the store did not exist before, so they count by session and agent."""
    _adoptable(repo, proven_sources=[("s1", "agent-a"), ("s2", "agent-a"), ("s3", "agent-b")])
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err + res.out
    assert git(repo, "status", "--porcelain").strip() == ""


def test_a_refused_set_up_commit_says_what_the_gate_said(run, repo):
    """One session's episodes do not make a Proven pattern: the commit is refused, the finding is named,
    and nothing is committed."""
    _adoptable(repo, proven_sources=[("s1", "agent-a"), ("s1", "agent-a"), ("s1", "agent-a")])
    res = run(repo, "init", "--commit")
    assert res.code == 1 and "G103" in res.err and "staged but not committed" in res.err
    assert "Traceback" not in res.err
    staged = git(repo, "diff", "--cached", "--name-only").split()  # each file the set-up staged is named
    assert staged and f"(staged: {', '.join(sorted(staged))})" in " ".join(res.err.split())
    import subprocess

    head = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert head.returncode != 0 and head.stdout.strip() == ""  # no commit was made


def test_commit_adopts_a_lower_case_continuity_file_in_a_project_with_history(run, repo):
    """Pointing the configuration away from a CONTINUITY.md the repository never had takes nothing from the
    gate: the adoption commits, and the adopted file is judged from then on."""
    (repo / "README").write_text("a project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "existing project")
    (repo / "continuity.md").write_text("# Memory\n\n## Current State\nWorking on retries.\n\n"
                                        "## Developing Knowledge\n! breaker: open after five failures | 1x\n")
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err + res.out
    assert git(repo, "status", "--porcelain").strip() == ""
    (repo / "continuity.md").write_text((repo / "continuity.md").read_text().replace(
        "! breaker: open after five failures | 1x", "!! breaker: open after five failures | 2x (X)"))
    git(repo, "add", "continuity.md")
    refused = run(repo, "check")
    assert refused.code == 1 and "G101" in refused.out + refused.err  # judged at its new path


def test_commit_refuses_paths_only_the_working_tree_configures(run, repo):
    """A configuration nobody committed would leave the committed memory unjudged: refused before anything
    is written, with the fix."""
    (repo / "README").write_text("a project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "existing project")
    (repo / "pyproject.toml").write_text('[tool.flowgit]\ncontinuity = "MEMORY.md"\n')
    before = tree_digest(repo)
    res = run(repo, "init", "--commit")
    assert res.code == 2 and "MEMORY.md" in res.err and "commit the configuration first" in res.err
    assert tree_digest(repo) == before and not (repo / "MEMORY.md").exists()


UNGROUNDED = ("# My memory\n\n## Current State\nWorking on the payment client.\n\n## Developing Knowledge\n"
              "!! cache_first: serve from cache | 2x (PERF) [evidence: ep-aaaaaaaaaaaa, ep-bbbbbbbbbbbb]\n")


def _committed_before_flowgit(repo, text: str) -> None:
    """A hand-written memory committed before flowgit came: git holds it, no configuration names it."""
    (repo / "continuity.md").write_text(text)
    git(repo, "add", "continuity.md")
    git(repo, "commit", "-qm", "existing memory")


def test_adopting_a_committed_file_is_its_first_commit_for_the_gate_as_for_the_audit(run, repo):
    """The hook judged the set-up by the base's configuration (CONTINUITY.md, absent on both sides: nothing
    to judge) and let it through; the audit read the commit's own configuration (continuity.md, new to the
    memory) and refused it, so the set-up could never be pushed. Both now read it as the memory's first
    commit, and init says how to ground it or adopt it on the record."""
    _committed_before_flowgit(repo, UNGROUNDED)
    head = git(repo, "rev-parse", "HEAD")
    res = run(repo, "init", "--commit")
    assert res.code == 1 and "Traceback" not in res.err  # the gate's findings, not bad input
    assert "G102" in res.err and "G103" in res.err and "staged but not committed" in res.err
    assert 'FLOWGIT_OVERRIDE="adopting an existing memory" flowgit init --commit' in res.err
    assert git(repo, "rev-parse", "HEAD") == head
    check = run(repo, "check", "--json")  # the staged set-up, judged by hand: the same verdict
    assert check.code == 1 and {f["code"] for f in json.loads(check.out)["findings"]} >= {"G102", "G103"}


def test_a_committed_file_adopted_on_the_record_passes_the_gate_and_the_audit(run, repo, monkeypatch):
    _committed_before_flowgit(repo, UNGROUNDED)
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "adopting an existing memory")
    res = run(repo, "init", "--commit")
    monkeypatch.delenv("FLOWGIT_OVERRIDE")
    assert res.code == 0, res.err + res.out
    assert "Flow-Override: adopting an existing memory" in git(repo, "log", "-1", "--format=%B")
    audit = run(repo, "audit", "--json")
    assert audit.code == 0, audit.out
    notices = json.loads(audit.out)["findings"]
    assert {f["code"] for f in notices} >= {"A301", "G103"} and all(f["severity"] == "notice" for f in notices)


@pytest.mark.parametrize("committed_before", [False, True], ids=["new-file", "committed-before-flowgit"])
@pytest.mark.parametrize("remedy", ["override", "grounded"])
def test_init_refused_by_the_gate_can_be_run_again_as_its_fix_says(run, repo, monkeypatch, committed_before, remedy):
    """The refused run left its set-up staged (its own .flowgit.toml naming the adopted file among it): the
    run its fix names commits all of it, the memory included, never only what the retry itself wrote."""
    if committed_before:
        _committed_before_flowgit(repo, UNGROUNDED)
    else:
        (repo / "continuity.md").write_text(UNGROUNDED)
    assert run(repo, "init", "--commit").code == 1
    if remedy == "override":
        monkeypatch.setenv("FLOWGIT_OVERRIDE", "adopting an existing memory")
    else:
        grounded = "\n".join(line for line in UNGROUNDED.splitlines() if "| 2x" not in line and "| 3x" not in line)
        (repo / "continuity.md").write_text(grounded + "\n")
        git(repo, "add", "continuity.md")
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err + res.out
    assert git(repo, "status", "--porcelain") == ""  # everything it set up is committed
    committed = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert {"continuity.md", ".flowgit.toml", ".gitattributes", ".flow/episodes.jsonl"} <= set(committed)


def test_adopting_a_committed_file_that_claims_nothing_unproven_commits(run, repo):
    _committed_before_flowgit(repo, UNGROUNDED.replace(
        "!! cache_first: serve from cache | 2x (PERF) [evidence: ep-aaaaaaaaaaaa, ep-bbbbbbbbbbbb]",
        "! cache_first: serve from cache | 1x"))
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err + res.out
    assert run(repo, "audit").code == 0


def test_init_refuses_an_ignored_store_before_writing_anything(run, repo):
    (repo / ".gitignore").write_text("# dot directories\n.flow/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore .flow")
    before = (tree_digest(repo), git(repo, "config", "--list", "--local"), git(repo, "status", "--porcelain"))
    res = run(repo, "init", "--commit", "--json")
    assert res.code == 2
    error = json.loads(res.out)["error"]
    assert error["file"].endswith(".gitignore") and error["line"] == 2
    assert ".flow/episodes.jsonl is ignored by git (rule `.flow/`)" in error["message"]
    assert "take `.flow/` out of .gitignore" in error["fix"]
    assert (tree_digest(repo), git(repo, "config", "--list", "--local"), git(repo, "status", "--porcelain")) == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_init_from_a_subdirectory_says_which_repository_it_set_up(run, repo):
    sub = repo / "deep"
    sub.mkdir()
    res = run(sub, "init", "--no-hooks")
    assert res.code == 0 and res.out.splitlines()[0] == f"flowgit init: {repo}"
    assert json.loads(run(sub, "init", "--no-hooks", "--json").out)["root"] == str(repo)


def test_a_twin_held_before_flowgit_passes_the_set_up_commit_in_the_hook_and_the_audit(run, repo):
    """`.FLOW/episodes.jsonl` committed before flowgit came: the memory's first commit keeps what its base held
    (G809 judges what a change brings), at commit and in the audit alike, so the set-up can be pushed."""
    (repo / ".FLOW").mkdir()
    (repo / ".FLOW" / "episodes.jsonl").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a directory from before")
    res = run(repo, "init", "--commit")
    assert res.code == 0, res.err
    audit = run(repo, "audit", "--json")
    assert audit.code == 0, audit.out


def test_hooks_are_not_written_into_a_hooks_directory_other_repositories_share(run, repo, tmp_path):
    """A global core.hooksPath (or a local one outside the repository) is shared: flowgit's hooks there would
    gate projects that never ran it. Refused before anything is written, unless asked with --shared-hooks."""
    import os

    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    git(repo, "config", "--global", "core.hooksPath", str(shared))
    before = tree_digest(repo)
    res = run(repo, "init")
    assert res.code == 2 and "global configuration" in res.err and "--no-hooks" in res.err, res.err
    assert list(shared.iterdir()) == [] and tree_digest(repo) == before
    assert run(repo, "install-hook").code == 2 and list(shared.iterdir()) == []
    git(repo, "config", "--global", "--unset", "core.hooksPath")
    git(repo, "config", "--local", "core.hooksPath", str(shared))  # local, but outside the repository
    res = run(repo, "init")
    assert res.code == 2 and "outside this repository" in res.err and list(shared.iterdir()) == []
    assert run(repo, "init", "--no-hooks").code == 0 and list(shared.iterdir()) == []
    assert run(repo, "init", "--shared-hooks").code == 0 and (shared / "pre-commit").exists()
    git(repo, "config", "--local", "core.hooksPath", ".githooks")  # the repository's own: installed as asked
    assert run(repo, "install-hook").code == 0 and (repo / ".githooks" / "pre-commit").exists()
    assert os.access(repo / ".githooks" / "pre-commit", os.X_OK)
    (repo / ".githooks" / "pre-commit").unlink()
    (repo / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexec ./scripts/lint\n")  # the team's, committed
    git(repo, "add", ".githooks/pre-commit")
    git(repo, "commit", "-qm", "team hooks", "--no-verify")
    res = run(repo, "install-hook")
    assert res.code == 2 and "committed" in res.err and "./scripts/lint" in (repo / ".githooks" / "pre-commit").read_text()


def test_a_deeper_gitattributes_that_overrides_the_driver_is_warned_about(run, repo):
    (repo / ".flow").mkdir()
    (repo / ".flow" / ".gitattributes").write_text("*.jsonl binary\n")
    res = run(repo, "init", "--json")
    assert res.code == 0
    (warning,) = json.loads(res.out)["warnings"]
    assert ".flow/episodes.jsonl" in warning and "unset" in warning and "merge=flowgit" in warning
    (repo / ".flow" / ".gitattributes").write_text("*.jsonl binary merge=flowgit\n")
    res = run(repo, "init", "--json")
    assert res.code == 0 and json.loads(res.out)["warnings"] == []


def test_a_gitattributes_it_cannot_read_is_refused_before_anything_is_written(run, repo):
    import os

    before = tree_digest(repo)
    (repo / ".gitattributes").write_bytes(b"*.md text\n*.caf\xe9 binary\n")
    res = run(repo, "init")
    assert res.code == 2 and ".gitattributes" in res.err and "UTF-8" in res.err and ":2" in res.err, res.err
    assert not (repo / "CONTINUITY.md").exists() and not (repo / ".flow").exists()
    assert "merge.flowgit" not in git(repo, "config", "--local", "--list")
    (repo / ".gitattributes").unlink()
    os.mkfifo(repo / ".gitattributes")
    res = run(repo, "init")  # a FIFO would block the read forever
    assert res.code == 2 and "not a regular file" in res.err and not (repo / "CONTINUITY.md").exists()
    (repo / ".gitattributes").unlink()
    assert tree_digest(repo) == before


def test_a_crlf_gitattributes_keeps_its_line_endings(run, repo):
    (repo / ".gitattributes").write_bytes(b"*.png binary\r\n*.sh text eol=lf\r\n")
    assert run(repo, "init").code == 0
    data = (repo / ".gitattributes").read_bytes()
    assert data.startswith(b"*.png binary\r\n*.sh text eol=lf\r\n")
    assert b"CONTINUITY.md merge=flowgit\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_a_file_where_the_store_directory_must_be_is_refused_before_anything_is_written(run, repo):
    (repo / ".flow").write_text("not a directory\n")
    before = tree_digest(repo)
    res = run(repo, "--json", "init")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and error["file"].endswith(".flow") and "directory" in error["message"], error
    assert tree_digest(repo) == before and not (repo / "CONTINUITY.md").exists()
    (repo / ".flow").unlink()
    (repo / ".flow" / "episodes.jsonl").mkdir(parents=True)
    res = run(repo, "init")
    assert res.code == 2 and "is a directory, not a file" in res.err, res.err
    assert not (repo / "CONTINUITY.md").exists()


def test_a_symlinked_gitattributes_is_refused_since_git_does_not_read_it(run, repo, tmp_path):
    """git does not follow a `.gitattributes` that is a symbolic link: the driver set up through it (in a file
    outside the repository) would never merge anything, while init reported it in place."""
    outside = tmp_path / "shared-attributes"
    outside.write_text("*.png binary\n")
    (repo / ".gitattributes").symlink_to(outside)
    before = tree_digest(repo)
    res = run(repo, "init")
    assert res.code == 2 and "symbolic link" in res.err, res.err
    assert outside.read_text() == "*.png binary\n" and tree_digest(repo) == before


def test_init_in_the_middle_of_a_merge_writes_nothing_and_aborting_keeps_the_users_file(run, repo):
    """Staged into a stopped merge, an adopted continuity file would be deleted by `git merge --abort`."""
    (repo / "a.txt").write_text("base\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "side")
    (repo / "a.txt").write_text("side\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "side")
    git(repo, "checkout", "-q", "-")
    (repo / "a.txt").write_text("main\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "main")
    subprocess.run(["git", "merge", "side"], cwd=repo, capture_output=True)  # stops on the conflict
    memory = "# Continuity\n\n## Current State\nMonths of notes.\n"
    (repo / "continuity.md").write_text(memory)
    for args in (("init",), ("init", "--commit")):
        res = run(repo, *args, "--json")
        assert res.code == 2 and "a merge is in progress" in json.loads(res.out)["error"]["message"]
        assert "git merge --abort" in json.loads(res.out)["error"]["fix"]
    assert git(repo, "status", "--porcelain").splitlines() == ["UU a.txt", "?? continuity.md"]
    git(repo, "merge", "--abort")
    assert (repo / "continuity.md").read_text() == memory


def test_init_with_gits_lock_held_writes_nothing(run, repo):
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    res = run(repo, "init", "--commit", "--json")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and "git's lock is held here (index.lock)" in error["message"]
    assert ".git/index.lock" in error["fix"] and "nothing was written" in error["message"]
    assert sorted(p.name for p in repo.iterdir()) == [".git"]
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir() if not p.name.endswith(".sample")) == []
    lock.unlink()
    assert run(repo, "init", "--commit").code == 0


def test_a_sha256_repository_is_set_up_without_a_pre_push_hook_that_would_refuse_every_push(run, tmp_path):
    """The pre-push hook runs the audit, whose history reader cannot open a SHA-256 repository: installed,
    it would refuse every push. It is left out, and init says why; the push then goes through."""
    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", "-b", "main", str(repo))
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    result = run(repo, "init", "--commit")
    assert result.code == 0, result.err
    assert "skipped pre-push (a SHA-256 repository" in result.out
    hooks = repo / ".git" / "hooks"
    assert (hooks / "pre-commit").exists() and not (hooks / "pre-push").exists()
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "--object-format=sha256", str(remote))
    pushed = subprocess.run(["git", "push", "-q", str(remote), "main"], cwd=repo, capture_output=True, text=True)
    assert pushed.returncode == 0, pushed.stderr


FRAMEWORK_LIST = ("repos:\n  - repo: local\n    hooks:\n      - id: flowgit-check\n        name: the gate\n"
                  "        entry: flowgit check\n        language: system\n        pass_filenames: false\n")


def test_a_pre_commit_framework_list_that_runs_flowgit_leaves_the_hooks_to_the_framework(run, repo):
    """With the framework running flowgit's hooks, flowgit's own would run the gate a second time on every
    commit: init installs none, names the framework's install command, and sets up everything else."""
    (repo / ".pre-commit-config.yaml").write_text(FRAMEWORK_LIST)
    res = run(repo, "init", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["hooks"] and data["hooks"][0].startswith("not installed: .pre-commit-config.yaml runs flowgit's "
                                                         "hooks (flowgit-check)")
    assert "pre-commit install --hook-type pre-commit" in data["hooks"][0]
    hooks = repo / ".git" / "hooks"
    assert not any((hooks / name).exists() for name in ("pre-commit", "commit-msg", "pre-push"))
    assert "CONTINUITY.md" in data["created"] and config(repo, "merge.flowgit.name")
    assert run(repo, "install-hook").code == 0 and (hooks / "pre-commit").exists()  # asked for outright


@pytest.mark.parametrize("listed", ["", "repos: []\n", "repos:\n  - repo: local\n    hooks:\n      - id: black\n"
                                    "        name: black\n        entry: black\n        language: system\n",
                                    "repos: [unclosed\n"])
def test_a_list_without_flowgits_hooks_gets_flowgits_own(run, repo, listed):
    """A framework list that runs other tools, an empty one or an unreadable one runs no gate: the hooks go in."""
    (repo / ".pre-commit-config.yaml").write_text(listed)
    res = run(repo, "init")
    assert res.code == 0, res.err
    assert (repo / ".git" / "hooks" / "pre-commit").exists() and "not installed" not in res.out


def test_the_advice_for_a_shared_hooks_directory_gates_every_worktree(run, repo, tmp_path):
    """The refusal's own fix names git's hooks directory by its absolute path: followed, the gate runs in a
    linked worktree too (a relative `.git/hooks`, the advice before, names a file's child there: no hook ran
    and a 1x -> 3x jump on a missing episode committed)."""
    import re
    import subprocess

    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    git(repo, "config", "--global", "core.hooksPath", str(shared))
    res = run(repo, "init")
    assert res.code == 2
    command = re.search(r"`(git config --local core\.hooksPath [^`]+)`", res.err).group(1)
    subprocess.run(command, shell=True, cwd=repo, check=True)
    assert run(repo, "init", "--commit").code == 0
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feat")
    memory = tmp_path / "wt" / "CONTINUITY.md"
    text = memory.read_text()
    assert "## Developing Knowledge\n" in text
    memory.write_text(text.replace("## Developing Knowledge\n", "## Developing Knowledge\n"
                                   "!! jump: a claim on nothing | 3x (X) [evidence: ep-0000000000ff]\n", 1))
    refused = subprocess.run(["git", "commit", "-qam", "jump"], cwd=tmp_path / "wt", capture_output=True, text=True)
    assert refused.returncode == 1 and "G1" in refused.stderr, refused.stdout + refused.stderr
    assert list(shared.iterdir()) == []


def test_a_relative_hooks_path_a_linked_worktree_cannot_reach_is_refused_there(run, repo, tmp_path):
    """`core.hooksPath=.git/hooks` is read from each worktree's top; in a linked worktree `.git` is a file, so
    git runs no hook there. init and install-hook say so, with the absolute path to set, exit 2 and write
    nothing (before, both stopped on a NotADirectoryError traceback)."""
    git(repo, "config", "--local", "core.hooksPath", ".git/hooks")
    assert run(repo, "init", "--commit").code == 0
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "feat")
    before = tree_digest(wt)
    for args in (("init",), ("install-hook",)):
        res = run(wt, *args)
        assert res.code == 2, res.out + res.err
        assert "which is a file: git runs no hook from there" in res.err
        assert f"core.hooksPath {repo.resolve() / '.git' / 'hooks'}" in res.err
        assert tree_digest(wt) == before
