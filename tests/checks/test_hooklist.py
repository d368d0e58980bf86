"""G810's question: does a hook list run flowgit's hooks less than the one before it?"""

from __future__ import annotations

import pytest

from flowgit.checks.hooklist import flowgit_hooks, hook_weakenings

BASE = """repos:
  - repo: https://git.example.org/tools/flowgit
    rev: v0.1.0
    hooks:
      - id: flowgit-check
      - id: flowgit-commit-msg
      - id: flowgit-audit
  - repo: local
    hooks:
      - id: lint
        name: lint
        entry: ruff check
        language: system
"""


def weakened(new: str | None, old: str = BASE) -> list[str]:
    return hook_weakenings(old.encode(), new.encode() if new is not None else None)


@pytest.mark.parametrize("edit,says", [
    (lambda t: t.replace("      - id: flowgit-check\n", ""), "takes the `flowgit-check` hook out"),
    (lambda t: t.replace("- id: flowgit-check\n", "- id: flowgit-chk\n"), "takes the `flowgit-check` hook out"),
    (lambda t: t.replace("- id: flowgit-check\n", "- id: flowgit-check\n        entry: 'true'\n"),
     "changes how the `flowgit-check` hook runs in .pre-commit-config.yaml (entry)"),
    (lambda t: t.replace("- id: flowgit-check\n", "- id: flowgit-check\n        stages: [manual]\n"), "(stages)"),
    (lambda t: t.replace("- id: flowgit-audit\n", "- id: flowgit-audit\n        args: [--range, HEAD..HEAD]\n"),
     "(args)"),
    (lambda t: t.replace("git.example.org/tools/flowgit", "git.example.org/me/flowgit-lenient"), "(repo)"),
    (lambda t: "repos: [\n", "unreadable as a hook list"),
    (lambda t: "just: text\n", "unreadable as a hook list"),
    (lambda t: None, "deletes .pre-commit-config.yaml"),
], ids=["removed", "renamed", "entry", "stages", "args", "repo", "broken-yaml", "no-repos", "deleted"])
def test_a_list_that_runs_a_flowgit_hook_less_is_a_weakening(edit, says):
    found = weakened(edit(BASE))
    assert len(found) >= 1 and says in found[0], found


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("rev: v0.1.0", "rev: v0.2.0"),  # another release
    lambda t: t.replace("- id: flowgit-check\n", "- id: flowgit-check\n        name: the gate\n"),  # a label
    lambda t: t + "      - id: format\n        name: format\n        entry: ruff format\n        language: system\n",
    lambda t: t.replace("entry: ruff check", "entry: 'true'"),  # another project's hook is not flowgit's to judge
    lambda t: t,
    lambda t: t.replace("  - repo: local", "  - repo: local\n    hooks: []\n  - repo: local", 1),  # reordered
], ids=["rev", "name", "added-hook", "other-hook", "same", "another-entry"])
def test_a_list_that_runs_flowgit_hooks_as_before_is_no_weakening(edit):
    assert weakened(edit(BASE)) == []


def test_a_first_list_or_one_without_flowgit_hooks_takes_nothing_away():
    assert hook_weakenings(None, BASE.encode()) == []
    no_flowgit = BASE.split("  - repo: local")[0].replace("flowgit", "other")
    assert weakened("repos: []\n", old="repos:\n  - repo: local\n    hooks: []\n") == []
    assert weakened("repos: []\n", old=no_flowgit) == []


def test_a_local_hook_is_flowgits_by_the_command_it_runs_whatever_its_id():
    local = ("repos:\n  - repo: local\n    hooks:\n      - id: memory-gate\n        name: gate\n"
             "        entry: .venv/bin/flowgit check\n        language: system\n        always_run: true\n")
    assert list(flowgit_hooks(local.encode())) == ["memory-gate"]
    assert weakened(local.replace(".venv/bin/flowgit check", "'true'"), old=local) == [
        "takes the `memory-gate` hook out of .pre-commit-config.yaml"]  # running `true`, it is no gate at all


def test_an_id_listed_twice_keeps_each_run_it_had():
    twice = BASE.replace("      - id: flowgit-audit\n", "      - id: flowgit-audit\n      - id: flowgit-audit\n"
                         "        args: [--since-ref, origin/main]\n")
    assert weakened(twice, old=twice) == []
    assert "`flowgit-audit`" in weakened(BASE, old=twice)[0]  # the second run dropped
    assert weakened(twice) == []  # one run added


def test_yaml_aliases_that_would_expand_past_any_list_are_unreadable_not_walked():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
    found = weakened(bomb + BASE.replace("- id: flowgit-audit\n", "- id: flowgit-audit\n        args: *i\n"))
    assert found and "unreadable" in found[0]


def test_an_alias_bomb_as_a_mapping_key_is_unreadable_before_anything_expands_it():
    """A key built of nested aliases: the check for a key given twice compared keys by their repr, which walked
    9^10 leaves (all memory, in the gate and in every audit). The graph's expanded size is counted first."""
    bomb = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]\n" for n in range(1, 10))
    assert flowgit_hooks((BASE + bomb + "bomb:\n  ? *a9\n  : x\n").encode()) is None


def test_a_list_with_a_few_anchors_is_still_read():
    shared = BASE.replace("repos:\n", "x-args: &shared [--quiet]\nrepos:\n", 1).replace(
        "- id: flowgit-audit\n", "- id: flowgit-audit\n        args: *shared\n")
    found = flowgit_hooks(shared.encode())
    assert found and "flowgit-audit" in found and ("args", ("[]", ("--quiet",))) in found["flowgit-audit"][0]


@pytest.mark.parametrize("trick", [
    BASE.replace("      - id: flowgit-check\n", "      - {id: flowgit-check,\n\ufeffentry: 'true'}\n"),
    BASE.replace("      - id: flowgit-check\n", "      - id: flowgit-check\n        entry: flowgit check\n"
                 "        entry: 'true'\n"),
], ids=["bom-inside-a-line-libyaml-skips", "a-key-given-twice"])
def test_a_list_the_framework_reads_otherwise_than_flowgit_is_unreadable(trick):
    """libyaml (the framework's reader) skips a byte-order mark at any line's start, the pure reader keeps it;
    both keep the last of a key given twice. Either way the list is not judged by one reading of it."""
    assert flowgit_hooks(trick.encode()) is None
    assert "unreadable" in weakened(trick)[0]


def test_old_stage_names_are_the_new_ones_as_the_framework_reads_them():
    old_names = BASE.replace("- id: flowgit-check\n", "- id: flowgit-check\n        stages: [commit, merge-commit]\n")
    migrated = old_names.replace("[commit, merge-commit]", "[pre-commit, pre-merge-commit]")
    assert weakened(migrated, old=old_names) == []  # what `pre-commit migrate-config` writes
    assert weakened(migrated.replace(", pre-merge-commit", ""), old=old_names)  # a stage lost


def test_in_a_merge_only_parents_whose_list_runs_flowgit_have_a_say():
    """A branch forked before the list existed vouches for no list: merged, it cannot cancel what the
    merge takes from the parent that runs the gate."""
    from flowgit.checks.hooklist import merged_weakenings

    gone = b"repos: []\n"
    assert merged_weakenings(gone, [BASE.encode(), None])  # G810 despite the listless parent
    assert merged_weakenings(gone, [BASE.encode(), b"repos:\n  - repo: local\n    hooks: []\n"])
    assert merged_weakenings(gone, [None, None]) == []
    assert merged_weakenings(BASE.encode(), [BASE.encode(), None]) == []
    kept = BASE.replace("rev: v0.1.0", "rev: v0.2.0").encode()
    assert merged_weakenings(gone, [BASE.encode(), kept])  # weaker than both voters


def test_a_link_is_read_as_the_path_it_names_inside_the_tree():
    from flowgit.checks.hooklist import link_target

    assert link_target(b"ci/pre-commit.yaml") == "ci/pre-commit.yaml"
    assert link_target(b"./ci/../ci/hooks.yaml") == "ci/hooks.yaml"
    assert link_target(b"../outside.yaml") is None and link_target(b"/etc/hooks.yaml") is None
    assert link_target(BASE.encode()) is None and link_target(b"{repos: []}") is None
