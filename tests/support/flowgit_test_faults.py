"""Arms flowgit's fault points; importable only under the test suite (see flowgit/faults.py).

``FLOWGIT_FAULT=<point>`` raises InjectedFault at that point; ``FLOWGIT_PAUSE=<point>``
writes the pid to ``$FLOWGIT_PAUSE_FILE`` and sleeps so the test can kill the process; with
``$FLOWGIT_PAUSE_RELEASE`` set it sleeps only until that file exists (bounded by the same seconds), so a test
can act at the point and then let the process go on without guessing how long its action takes.
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
        seconds = float(os.environ.get("FLOWGIT_PAUSE_SECONDS", "120"))
        release = os.environ.get("FLOWGIT_PAUSE_RELEASE")
        if not release:
            time.sleep(seconds)
            return
        deadline = time.monotonic() + seconds
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.02)
