"""Arms flowgit's fault points; importable only under the test suite (see flowgit/faults.py).

``FLOWGIT_FAULT=<point>`` raises InjectedFault at that point; ``FLOWGIT_PAUSE=<point>``
writes the pid to ``$FLOWGIT_PAUSE_FILE`` and sleeps so the test can kill the process.
"""

from __future__ import annotations

import os
import time


def at_point(name: str) -> None:
    from flowgit.faults import InjectedFault

    if os.environ.get("FLOWGIT_FAULT") == name:
        raise InjectedFault(f"injected failure at {name}")
    if os.environ.get("FLOWGIT_PAUSE") == name:
        marker = os.environ.get("FLOWGIT_PAUSE_FILE")
        if marker:
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write(str(os.getpid()))
        time.sleep(float(os.environ.get("FLOWGIT_PAUSE_SECONDS", "120")))
