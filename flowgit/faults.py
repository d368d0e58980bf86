"""Named points where the wrap can be made to fail or pause, so tests can prove its rollback.

``FLOWGIT_FAULT=<point>`` raises at that point; ``FLOWGIT_PAUSE=<point>`` writes
the process id to ``$FLOWGIT_PAUSE_FILE`` and sleeps, so a test can kill the
process there. Unset (always, outside tests), a checkpoint costs one dict lookup.
"""

from __future__ import annotations

import os
import time


class InjectedFault(RuntimeError):
    """A failure requested through FLOWGIT_FAULT."""


def checkpoint(name: str) -> None:
    if os.environ.get("FLOWGIT_FAULT") == name:
        raise InjectedFault(f"injected failure at {name}")
    if os.environ.get("FLOWGIT_PAUSE") == name:
        marker = os.environ.get("FLOWGIT_PAUSE_FILE")
        if marker:
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write(str(os.getpid()))
        time.sleep(120)
