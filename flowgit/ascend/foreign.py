"""What a deposit tree would bring along when a printed resume command names it as the agent's configuration.

A session read from another tree (``--claude-dir``) is resumed only with that
tree named as the agent's whole configuration directory; the agent then loads
the tree's own settings, and their hooks run shell commands when a session
starts or resumes, without a prompt. Whoever wrote the tree chooses that code.
The command is still the only way back into the session, so it is printed,
with a warning beside it (and in ``--json``) naming what the tree carries, for
the reader to look at first. Only names are looked at: nothing is read or run.
"""

from __future__ import annotations

import os

# what the agent loads from its configuration directory that runs commands: settings (hooks, status line,
# helpers), hook scripts, plugins (which carry hooks of their own)
LOADED = ("settings.json", "settings.local.json", "hooks", "plugins")


def carried(config: str) -> tuple[str, ...]:
    """The entries of :data:`LOADED` the tree holds (a link counts: it is what would be loaded)."""
    return tuple(name for name in LOADED if os.path.lexists(os.path.join(config, name)))


def warning(config: str) -> str | None:
    """The warning for a resume command that names ``config``, or None when the tree carries none of them."""
    found = carried(config)
    if not found:
        return None
    return (f"this command loads the tree's own {', '.join(found)} as the agent's configuration, and their hooks "
            f"run when the session resumes: read them in {config} first")
