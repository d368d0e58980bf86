"""``audit --pushed`` under the pre-commit framework's real pre-push stage, against a real bare remote.

The framework tells its hooks of one pushed ref (the first with something to push), so the audit judges that
ref and every local branch, tag and HEAD the remote lacks: a clean branch pushed first cannot carry a
violating one past it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.checks.gate_fixtures import committed_base
from tests.commands.test_enforcement import bypass, legit
from tests.conftest import git

PROJECT = Path(__file__).resolve().parents[2]


def framework_list() -> str:
    """The manifest's flowgit-audit hook as a `repo: local` entry running this interpreter (its options as the
    manifest gives them; the framework reads a remote repo's entries the same way, with no network here)."""
    hooks = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "flowgit-audit")
    entry = hook["entry"].replace("flowgit", f"{sys.executable} -m flowgit", 1)
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [
        {**{k: v for k, v in hook.items() if k not in ("description", "language")}, "entry": entry,
         "language": "system"}]}]})


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    return subprocess.run([exe, *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PRE_COMMIT_HOME": str(home)})


def push(repo: Path, home: Path, *refs: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "push", "origin", *refs], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PRE_COMMIT_HOME": str(home)})


@pytest.fixture
def framework(tmp_path: Path, repo: Path, pre_commit_home: Path) -> tuple[Path, Path]:
    """A memory pushed to a bare remote, with the framework's pre-push stage running flowgit-audit."""
    git(repo, "checkout", "-q", "-b", "main")
    committed_base(repo)
    (repo / ".pre-commit-config.yaml").write_text(framework_list())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the audit, through the pre-commit framework", "--no-verify")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    installed = pre_commit(repo, pre_commit_home, "install", "--hook-type", "pre-push")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return repo, remote


def branch(repo: Path, name: str, make) -> str:
    git(repo, "checkout", "-q", "-b", name, "main")
    made = make(repo)
    git(repo, "checkout", "-q", "main")
    return made


def test_a_violating_branch_pushed_after_a_clean_one_is_refused(framework, pre_commit_home):
    """`git push origin clean evil`: the framework names only `clean` to its hooks; evil is judged anyway."""
    repo, remote = framework
    branch(repo, "aaa-clean", legit)
    branch(repo, "zzz-evil", bypass)
    refused = push(repo, pre_commit_home, "aaa-clean", "zzz-evil")
    assert refused.returncode != 0 and "G101" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert git(remote, "for-each-ref", "refs/heads/zzz-evil", "refs/heads/aaa-clean").strip() == ""


def test_clean_branches_pushed_together_pass(framework, pre_commit_home):
    repo, remote = framework
    first, second = branch(repo, "aaa-clean", legit), branch(repo, "bbb-clean", legit)
    passed = push(repo, pre_commit_home, "aaa-clean", "bbb-clean")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert git(remote, "rev-parse", "aaa-clean", "bbb-clean").split() == [first, second]


def test_a_force_push_the_framework_names_is_judged_as_the_branchs_update(framework, pre_commit_home):
    """The ref the framework names keeps its update's judgement (--replaces): a rewind dropping an episode
    the remote's tip held is refused (A501)."""
    repo, _ = framework
    base = git(repo, "rev-parse", "HEAD").strip()
    legit(repo)
    with (repo / ".flow" / "episodes.jsonl").open("a") as store:
        store.write('{"id": "ep-000000000001", "ts": "2026-11-30T10:00:00Z", "type": "finding", '
                    '"content": "one more fact", "session": "s9", "agent": "a9", "tags": []}\n')
    git(repo, "commit", "-qam", "record", "--no-verify")
    assert push(repo, pre_commit_home, "main").returncode == 0
    git(repo, "reset", "-q", "--hard", base)
    refused = push(repo, pre_commit_home, "-f", "main")
    assert refused.returncode != 0 and "A501" in refused.stdout + refused.stderr, refused.stdout + refused.stderr


def test_the_spec_without_a_remote_is_the_named_range_alone(framework):
    """`pre-commit try-repo … --from-ref A --to-ref B` names no remote: the range it names, nothing more."""
    from flowgit.history.remote import pushed_spec

    repo, _ = framework
    base = git(repo, "rev-parse", "HEAD").strip()
    branch(repo, "zzz-evil", bypass)
    spec = pushed_spec(repo, env={"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": base})
    assert spec.include == (base,) and spec.base == base
    spec = pushed_spec(repo, env={"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": base,
                                  "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main"})
    assert spec.include[0] == base and git(repo, "rev-parse", "zzz-evil").strip() in spec.include and spec.replaces


def test_a_history_begun_afresh_where_the_remotes_head_names_no_branch_is_refused(framework, pre_commit_home):
    """The framework's pre-push stage, as the plain hook: the remote's HEAD names no branch and it holds two,
    so the memory a new history would be judged against cannot be told; refused with the way to name it."""
    from tests.commands.test_enforcement import _decoy_branch, _orphan_rewrite

    repo, remote = framework
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    _decoy_branch(repo)
    assert push(repo, pre_commit_home, "pages").returncode == 0
    _orphan_rewrite(repo, "fresh")
    refused = push(repo, pre_commit_home, "fresh:refs/heads/master")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "names no branch" in said and "--root-base" in said, said
    assert git(remote, "for-each-ref", "refs/heads/master").strip() == ""
