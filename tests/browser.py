"""Open a local HTML file in headless Chromium over the DevTools pipe: requests, console errors, screenshot."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium binary on PATH (Debian: ``chromium``), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageVisit:
    """What the browser did while loading a page."""

    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class _Pipe:
    """The DevTools protocol over Chromium's fds 3 (commands in) and 4 (replies out), NUL-separated JSON."""

    def __init__(self, to_browser: int, from_browser: int) -> None:
        self.out, self.inp, self.buf, self.next_id = to_browser, from_browser, b"", 0
        self.events: list[dict[str, Any]] = []

    def _read_one(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            ready, _, _ = select.select([self.inp], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return dict(json.loads(msg))

    def call(self, method: str, session: str | None = None, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_one(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read_one(deadline))


def visit(page: Path, width: int = 1100, height: int = 1800) -> PageVisit:
    """Load ``page`` with the network, console and log domains on; return what happened and a full-page PNG."""
    binary = chromium()
    if binary is None:
        raise FileNotFoundError("chromium is not installed")
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    # chromium's helper processes may still write to the profile for a moment after it is killed
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        args = [*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"]
        proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{a_r} 4>&{b_w}', binary, *args],
            pass_fds=(a_r, b_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(a_r)
        os.close(b_w)
        try:
            return _drive(_Pipe(a_w, b_r), page)
        finally:
            proc.kill()
            proc.wait()
            os.close(a_w)
            os.close(b_r)


def _drive(pipe: _Pipe, page: Path) -> PageVisit:
    targets = pipe.call("Target.getTargets")["targetInfos"]
    target = next(t["targetId"] for t in targets if t["type"] == "page")
    session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Network", "Runtime", "Log", "Page"):
        pipe.call(f"{domain}.enable", session)
    pipe.events.clear()
    pipe.call("Page.navigate", session, url=page.resolve().as_uri())
    pipe.wait_for("Page.loadEventFired")
    shot = pipe.call("Page.captureScreenshot", session, format="png", captureBeyondViewport=True)["data"]
    out = PageVisit(screenshot=base64.b64decode(shot))
    for e in pipe.events:
        p = e.get("params", {})
        if e.get("method") == "Network.requestWillBeSent":
            out.requests.append(str(p["request"]["url"]))
        elif e.get("method") == "Runtime.exceptionThrown" or (
            e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert")
        ):
            out.console_errors.append(json.dumps(p)[:300])
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.console_errors.append(str(p["entry"].get("text")))
    return out
