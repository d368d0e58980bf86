"""A real headless Chromium driven through the DevTools protocol over a pipe (no port, no extra package).

Chromium's ``--remote-debugging-pipe`` reads protocol commands on fd 3 and
writes replies and events on fd 4, each message a JSON object ended by a NUL
byte. The browser runs with a fresh profile and its background networking
switched off; every request the page makes is recorded, and so is every
console error, uncaught exception and log entry of level error.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--remote-debugging-pipe", "--hide-scrollbars", "--mute-audio"]


def available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process, one page; use as a context manager."""

    def __init__(self, width: int = 1200, height: int = 1600, timeout: float = 60.0) -> None:
        self.width, self.height, self.timeout = width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="flowgit-chromium-")
        self.events: list[dict] = []
        self._replies: dict[int, queue.Queue] = {}
        self._next = 0
        self._lock = threading.Lock()
        self.session: str | None = None

    # ------------------------------------------------------------ process
    def __enter__(self) -> "Browser":
        to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, from_child_w = os.pipe()

        def wire() -> None:  # in the child: the protocol's fds are 3 (commands in) and 4 (replies out)
            high_r, high_w = os.dup(to_child_r), os.dup(from_child_w)  # out of the way of 3 and 4 first
            os.dup2(high_r, 3, inheritable=True)
            os.dup2(high_w, 4, inheritable=True)

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     preexec_fn=wire, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        target = self._page_target()
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.call("Browser.close", session=False, wait=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child_w)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _page_target(self) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            pages = [t for t in self.call("Target.getTargets", session=False)["targetInfos"] if t["type"] == "page"]
            if pages:
                return pages[0]["targetId"]
            time.sleep(0.1)
        raise BrowserError("Chromium opened no page")

    # ------------------------------------------------------------ protocol
    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._from_child_r, "rb", buffering=0) as fh:
            while True:
                chunk = fh.read(65536)
                if not chunk:
                    return
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    if "id" in msg and msg["id"] in self._replies:
                        self._replies[msg["id"]].put(msg)
                    else:
                        self.events.append(msg)

    def call(self, method: str, *, session: bool = True, wait: float | None = None, **params: Any) -> dict:
        with self._lock:
            self._next += 1
            ident = self._next
            self._replies[ident] = queue.Queue()
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child_w, json.dumps(msg).encode() + b"\0")
        try:
            reply = self._replies[ident].get(timeout=wait or self.timeout)
        except queue.Empty:
            raise BrowserError(f"no reply to {method}") from None
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    # ------------------------------------------------------------ page
    def open(self, path: Path) -> None:
        """Navigate to a file and wait until it has loaded and its script marked the body ready."""
        self.url = path.resolve().as_uri()
        self.call("Page.navigate", url=self.url)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == "Page.loadEventFired" for e in self.events):
                if self.evaluate("document.readyState") == "complete":
                    return
            time.sleep(0.05)
        raise BrowserError("the page did not load")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full:
            height = min(int(self.evaluate("document.documentElement.scrollHeight")), 12000)
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1})
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
