"""Finding a short byte string in a large buffer at memory speed.

``bytes.find`` walks a 25 MB store in about 6 ms; libc's ``memmem`` skips
through it in about 1.3 ms. The gate looks up each cited episode id with one
such search (stopping at the first hit), so for a large buffer it asks libc,
where libc has ``memmem`` (Linux, macOS, the BSDs), and ``bytes.find``
elsewhere. Both give the same answer: the lowest index at or after ``start``
where ``needle`` begins, or -1.

ctypes is imported only for the first large search: the hook's start-up pays
for it only when a store is big enough to gain.
"""

from __future__ import annotations

from typing import Any, Callable

LARGE = 1 << 20  # below a megabyte bytes.find is quick enough, and ctypes is not worth importing

_memmem: tuple[Callable[..., Any], Any] | None | bool = None  # (function, ctypes) once resolved; False: none


def _resolve() -> tuple[Callable[..., Any], Any] | None:
    global _memmem
    if _memmem is None:
        try:
            import ctypes

            fn = ctypes.CDLL(None).memmem
            fn.restype = ctypes.c_void_p
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
            _memmem = (fn, ctypes)
        except (ImportError, OSError, AttributeError, TypeError):
            _memmem = False
    return _memmem or None


def fast() -> bool:
    """Whether large searches go through libc's memmem here."""
    return _resolve() is not None


def find(data: Any, needle: bytes, start: int = 0) -> int:
    """``data.find(needle, start)``, through memmem when ``data`` is large ``bytes``."""
    if type(data) is not bytes or not needle or start < 0 or len(data) - start < LARGE:
        return data.find(needle, start)
    found = _resolve()
    if found is None:
        return data.find(needle, start)
    fn, ctypes = found
    base = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value  # the bytes object's own buffer (no copy)
    hit = fn(base + start, len(data) - start, needle, len(needle))
    return -1 if hit is None else hit - base
