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
