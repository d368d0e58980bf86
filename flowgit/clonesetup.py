"""What this clone lacks that sharing the memory relies on.

git copies neither configuration nor hooks between clones: a teammate who
clones the memory and never runs ``flowgit init`` has no merge driver (the
next ``git pull`` that meets another wrap writes conflict markers into the
continuity file and the append-only store) and no gate (nothing judges a
commit or a push before it is shared). ``flowgit status`` says so before that
happens, not after, with the fix that fits how the project runs its hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# The hooks that judge what leaves this clone (a commit, a push), and the id of the pre-commit framework's
# hook that runs flowgit's gate in each
GATE_HOOKS = {"pre-commit": "flowgit-check", "pre-push": "flowgit-audit"}
INIT_FIX = "run `flowgit init` in this clone (it registers the merge driver and installs the hooks; safe to repeat)"


@dataclass
class CloneSetup:
    """What is missing here (one sentence each; empty: nothing) and the one fix for all of it."""

    problems: list[str] = field(default_factory=list)
    fix: str = ""


def clone_setup(root: Path) -> CloneSetup:
    """What ``flowgit init`` (or the pre-commit framework's install) would set up here that is missing."""
    from flowgit.checks.hooklist import FRAMEWORK_INSTALL, framework_hook_ids
    from flowgit.merge.setup import driver_problem, is_registered

    found = CloneSetup()
    unregistered = not is_registered(root) and driver_problem(root) is None
    if unregistered:
        found.problems.append("flowgit's merge driver is not registered in this clone: a `git pull` that meets "
                              "another wrap would write conflict markers into the continuity file and the store")
    framework = framework_hook_ids(root)
    missing = missing_gate_hooks(root, framework)
    if missing:
        found.problems.append(f"flowgit's {' and '.join(missing)} hook{'s are' if len(missing) > 1 else ' is'} "
                              "not installed in this clone: nothing judges a commit or a push here before it is "
                              "shared")
    if not framework or not missing:
        found.fix = INIT_FIX if found.problems else ""
    else:  # (`flowgit init` leaves the hooks to the framework whose list runs them)
        found.fix = ((INIT_FIX + ", then " if unregistered else "") +
                     f"install the framework's hooks: `{FRAMEWORK_INSTALL}` (a gate hook its list does not run, "
                     "`flowgit install-hook` installs)")
    return found


def missing_gate_hooks(root: Path, framework: list[str]) -> list[str]:
    """The gate hooks (:data:`GATE_HOOKS`) that will not run flowgit here: neither flowgit's own hook nor the
    pre-commit framework's where its list (``framework``: the ids of flowgit's hooks it runs) runs that one."""
    from flowgit.commands.install_hook import hook_dir, is_flowgit_hook_text
    from flowgit.errors import FlowgitError

    try:
        hooks = hook_dir(root)
    except FlowgitError:  # (no hooks directory git can name: nothing runs)
        return list(GATE_HOOKS)
    missing = []
    for name, framework_id in GATE_HOOKS.items():
        try:
            text = (hooks / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            missing.append(name)
            continue
        if not (is_flowgit_hook_text(text, name) or (framework_id in framework and _is_framework_shim(text))):
            missing.append(name)
    return missing


def _is_framework_shim(text: str) -> bool:
    """Whether a hook file is the one the pre-commit framework installs (it hands the hook to the framework)."""
    return "pre-commit" in text and "hook-impl" in text
