"""A headless Chromium driven through chromedriver, for the inspector's browser tests.

The browser is Debian's `chromium`, driven by `chromedriver` through the W3C WebDriver
HTTP protocol, spoken here with urllib (standard library only): a child chromedriver
process, one browser session, and the few commands the tests use (load, find, click,
type, read text, run a script, wait for a condition). `phone=(width, height)` emulates a
phone's screen (mobileEmulation): the page is laid out at that width in CSS pixels, and
content wider than it widens the layout, which document.scrollWidth then shows.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple

from tests.server import free_port

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference


class WebDriverError(AssertionError):
    pass


class WebDriver:
    """A chromedriver child process and one headless Chromium session, over plain HTTP."""

    def __init__(self, chromedriver: str, chromium: str, phone: Optional[Tuple[int, int]] = None):
        self.profile = tempfile.mkdtemp(prefix="flowmem-chromium-")
        port = free_port()
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w+")
        self.proc = subprocess.Popen([chromedriver, "--port=%d" % port], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = "http://127.0.0.1:%d" % port
        self.session = ""
        try:
            self._wait_ready()
            options: Dict[str, Any] = {"binary": chromium, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage",  # containers often have a small /dev/shm
                "--user-data-dir=" + os.path.join(self.profile, "profile")]}
            if phone:  # a phone's screen: its width in CSS pixels, the page's viewport meta tag obeyed
                options["mobileEmulation"] = {"deviceMetrics": {"width": phone[0], "height": phone[1],
                                                                "pixelRatio": 1.0, "touch": True}}
            # "ignore": a confirm() stays open until the test accepts or dismisses it.
            caps = {"browserName": "chrome", "goog:chromeOptions": options, "unhandledPromptBehavior": "ignore"}
            self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        except BaseException:
            self.quit()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self._call("GET", "/status")["ready"]:
                    return
            except (OSError, WebDriverError):
                pass
            time.sleep(0.1)
        raise WebDriverError("chromedriver never became ready")

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as e:
            value = json.loads(e.read() or b"{}").get("value", {})
            raise WebDriverError("%s %s: %s: %s" % (method, path, value.get("error"),
                                                    (value.get("message") or "").splitlines()[:1])) from None

    def command(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """A command of this session: `path` is what follows /session/{id}."""
        return self._call(method, "/session/%s%s" % (self.session, path), body)

    def get(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    def find(self, css: str) -> str:
        return self.command("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, css: str) -> None:
        self.command("POST", "/element/%s/click" % self.find(css), {})

    def type(self, css: str, text: str) -> None:
        element = self.find(css)
        self.command("POST", "/element/%s/clear" % element, {})
        self.command("POST", "/element/%s/value" % element, {"text": text})

    def text(self, css: str) -> str:
        return self.command("GET", "/element/%s/text" % self.find(css))

    def script(self, source: str, *args: Any) -> Any:
        return self.command("POST", "/execute/sync", {"script": source, "args": list(args)})

    def wait(self, what: str, check: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Poll `check` until it returns something true; fail naming `what` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result:
                return result
            if time.monotonic() > deadline:
                raise WebDriverError("timed out waiting for %s (page error: %r)" % (what, self.error_text()))
            time.sleep(0.05)

    def error_text(self) -> str:
        try:
            return self.script("return document.getElementById('error').textContent")
        except WebDriverError as e:
            return str(e)

    def quit(self) -> None:
        try:
            if self.session:
                self._call("DELETE", "/session/" + self.session)
        finally:
            self.proc.kill()
            self.proc.wait(10)
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)


def texts(browser: WebDriver, css: str) -> List[str]:
    return browser.script("return Array.from(document.querySelectorAll(arguments[0]), e => e.textContent)", css)
