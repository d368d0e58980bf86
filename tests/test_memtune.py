"""Memory behaviour of long walks: glibc takes both heap thresholds once (elsewhere nothing changes and nothing
fails); the cycle collector is paused during a walk, collects every few versions and is restored after."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from flowgit import memtune


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt's thresholds are glibc's")
def test_glibc_takes_both_thresholds_and_a_second_call_is_free():
    code = ("import flowgit.memtune as m, ctypes;"
            "first = m.steady_heap(); second = m.steady_heap();"
            "big = [bytes(3 << 20) for _ in range(4)]; del big;"  # large blocks still allocate and free
            "print(first, second)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]


def test_another_platform_keeps_its_own_policy(monkeypatch):
    monkeypatch.setattr(memtune, "_done", False)
    assert memtune.steady_heap("darwin") is False
    assert memtune._done is False  # nothing was set, so a later call on Linux would still set it


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_the_collector_is_paused_and_runs_every_n_versions_then_is_restored():
    import gc
    import weakref

    assert gc.isenabled()
    with memtune.collector_paused(every=3) as tick:
        assert not gc.isenabled()
        ref = weakref.ref(_Node())
        tick()
        tick()
        assert ref() is not None  # garbage in a cycle waits for the next full collection
        tick()
        assert ref() is None
    assert gc.isenabled()


def test_a_collector_the_caller_had_switched_off_stays_off():
    import gc

    gc.disable()
    try:
        with memtune.collector_paused(every=1) as tick:
            tick()
        assert not gc.isenabled()
    finally:
        gc.enable()
