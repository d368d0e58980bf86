"""Run one function on a second thread and collect its result later.

The gate runs on every commit; two of its costs need no Python bytecode and can
overlap the rest: importing markdown-it while git answers (the subprocess wait
releases the GIL), and hashing the store's prefix (hashlib releases the GIL on
large buffers) while the evidence is looked up.
"""

from __future__ import annotations

import threading
from typing import Any, Callable


class Background:
    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            self._value = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread by result()
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
