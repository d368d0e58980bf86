"""Named points where the wrap can be made to fail or pause, so tests can prove its rollback.

The points are armed only under the test suite: ``checkpoint`` consults the
module ``flowgit_test_faults``, which lives in ``tests/support`` (never
packaged, put on the import path by the suite's conftest). In an installed
flowgit that module does not exist, so no environment variable — however it got
set — can make a production wrap fail or hang. Under the suite,
``FLOWGIT_FAULT=<point>`` raises at that point and ``FLOWGIT_PAUSE=<point>``
writes the process id to ``$FLOWGIT_PAUSE_FILE`` and sleeps, so a test can kill
the process there.
"""

from __future__ import annotations

from typing import Any, Callable

_hook: Callable[[str], None] | None = None
_looked = False


class InjectedFault(RuntimeError):
    """A failure requested through FLOWGIT_FAULT (test suite only)."""


def _armed() -> Callable[[str], None] | None:
    global _hook, _looked
    if not _looked:
        _looked = True
        try:
            import flowgit_test_faults  # type: ignore[import-not-found]
        except ImportError:
            _hook = None
        else:
            _hook = getattr(flowgit_test_faults, "at_point", None)
    return _hook


def checkpoint(name: str) -> None:
    """A named point in a writer: a no-op outside the test suite."""
    hook = _armed()
    if hook is not None:
        hook(name)


def reset_for_tests(module: Any = None) -> None:
    """Forget the cached lookup (tests that arm or disarm the points in-process)."""
    global _hook, _looked
    _hook, _looked = None, False
