"""What this clone lacks that sharing the memory relies on.

git copies neither configuration nor hooks between clones: a teammate who
clones the memory and never runs ``flowgit init`` has no merge driver (the
next ``git pull`` that meets another wrap writes conflict markers into the
continuity file and the append-only store) and no gate (nothing judges a
commit or a push before it is shared). ``flowgit status`` says so before that
happens, not after.
"""

from __future__ import annotations

from pathlib import Path

GATE_HOOKS = ("pre-commit", "pre-push")  # the two that judge what leaves this clone: a commit and a push
CLONE_SETUP_FIX = ("run `flowgit init` in this clone (it registers the merge driver and installs the hooks; safe to "
                   "repeat)")


def clone_setup_problems(root: Path) -> list[str]:
    """What ``flowgit init`` would set up here that is missing, each as one sentence (empty: nothing)."""
    from flowgit.merge.setup import driver_problem, is_registered

    problems = []
    if not is_registered(root) and driver_problem(root) is None:
        problems.append("flowgit's merge driver is not registered in this clone: a `git pull` that meets another "
                        "wrap would write conflict markers into the continuity file and the store")
    missing = missing_gate_hooks(root)
    if missing:
        problems.append(f"flowgit's {' and '.join(missing)} hook{'s are' if len(missing) > 1 else ' is'} not "
                        "installed in this clone: nothing judges a commit or a push here before it is shared")
    return problems


def missing_gate_hooks(root: Path) -> list[str]:
    """The gate hooks (:data:`GATE_HOOKS`) that will not run flowgit here: neither flowgit's own hook nor the
    pre-commit framework's, where the framework's list runs flowgit's hooks."""
    from flowgit.checks.hooklist import framework_hook_ids
    from flowgit.commands.install_hook import hook_dir, is_flowgit_hook_text
    from flowgit.errors import FlowgitError

    try:
        hooks = hook_dir(root)
    except FlowgitError:  # (no hooks directory git can name: nothing runs)
        return list(GATE_HOOKS)
    through_framework = bool(framework_hook_ids(root))
    missing = []
    for name in GATE_HOOKS:
        try:
            text = (hooks / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            missing.append(name)
            continue
        if not (is_flowgit_hook_text(text, name) or (through_framework and _is_framework_shim(text))):
            missing.append(name)
    return missing


def _is_framework_shim(text: str) -> bool:
    """Whether a hook file is the one the pre-commit framework installs (it hands the hook to the framework)."""
    return "pre-commit" in text and "hook-impl" in text
