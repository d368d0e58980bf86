"""The steady heap: glibc takes both thresholds once; elsewhere nothing changes and nothing fails."""

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
