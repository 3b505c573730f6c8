"""The inspector page (flowmem/http/inspector.html) in a real headless Chromium, against a real server.

The browser is Debian's `chromium`, driven by `chromedriver` through the W3C WebDriver
HTTP protocol, spoken here with urllib (standard library only). The page is loaded from
flowmem's own `GET /` under its Content-Security-Policy, with an API key set, so the
page's own requests pass the same key, Host and Origin checks any client's do. Without
the two programs the test is skipped (failed under CI: tests/components.py).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, List, Optional

from flowmem.client import Client
from tests.components import program
from tests.helpers import add_body
from tests.server import ServerProcess, free_port

KEY = "inspector-test-key"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference
HOSTILE = ['<script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=2">']
ODD_USER = "team/ana lee%"  # a user id that must be percent-encoded in a path
DOTS = "dots"  # a user whose sessions are named ".", "..", "..." and "plain"


class WebDriverError(AssertionError):
    pass


class WebDriver:
    """A chromedriver child process and one headless Chromium session, over plain HTTP."""

    def __init__(self, chromedriver: str, chromium: str):
        self.profile = tempfile.mkdtemp(prefix="flowmem-chromium-")
        port = free_port()
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w+")
        self.proc = subprocess.Popen([chromedriver, "--port=%d" % port], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = "http://127.0.0.1:%d" % port
        self.session = ""
        try:
            self._wait_ready()
            options = {"binary": chromium, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage",  # containers often have a small /dev/shm
                "--user-data-dir=" + os.path.join(self.profile, "profile")]}
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


class InspectorInBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="flowmem-inspector-")
        key_file = os.path.join(cls.tmp.name, "key")
        with open(key_file, "w") as f:
            f.write(KEY + "\n")
        cls.server = ServerProcess(os.path.join(cls.tmp.name, "flowmem.db"), ["--api-key-file", key_file])
        cls.api = Client(cls.server.endpoint, KEY, timeout=20)  # the key, as any client sends it
        cls.api.add(add_body("alice", "s1", [
            "Dana: I went to a pottery workshop yesterday", "Priya: What did you make?",
            "Dana: A small blue bowl from the pottery class"]))
        cls.api.add(add_body("alice", "hostile", ["Mallory: " + HOSTILE[0], "Mallory: " + HOSTILE[1]]))
        cls.api.add(add_body(ODD_USER, "doomed/session #1", ["Ana: the doomed session's note"]))
        cls.api.add(add_body(ODD_USER, "kept", ["Ana: a note that stays"]))
        cls.api.add(add_body("many", "long", ["Line %d of a long session" % i for i in range(1, 61)]))
        # Ids that are dot segments, which a browser removes from a URL even as %2E (issue 22, item 2).
        for session in (".", "..", "plain", "..."):
            cls.api.add(add_body(DOTS, session, ["Dot: the note of session " + session]))
        cls.api.add(add_body("..", "s", ["Dot: the note of user dot dot"]))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.tmp.cleanup()

    def browse(self) -> WebDriver:
        """A fresh browser (no storage) for this test, closed after it."""
        browser = WebDriver(program(self, "chromedriver"), program(self, "chromium"))
        self.addCleanup(browser.quit)
        return browser

    def open_user(self, user: str) -> WebDriver:
        """A browser on the page from flowmem's `/`, with the key typed, the users listed and `user` picked."""
        b = self.browse()
        b.get(self.server.endpoint + "/")
        b.type("#key", KEY)
        b.click("#users-load")
        b.wait("the user list", lambda: user in texts(b, "#users button[data-user-id]"))
        index = texts(b, "#users button[data-user-id]").index(user)
        b.click("#users li:nth-child(%d) button[data-user-id]" % (index + 1))
        b.wait("the user's sessions", lambda: texts(b, "#sessions button[data-session-id]"))
        b.wait("the user's messages", lambda: texts(b, "#messages li"))
        return b

    @staticmethod
    def search(b: WebDriver, query: str) -> List[str]:
        b.type("#q", query)
        b.click("#search-run")
        return b.wait("search results", lambda: texts(b, "#results li.result .content"))

    def test_the_page_is_served_open_at_root_and_ui_under_a_strict_csp(self):
        for path in ("/", "/ui"):
            with urllib.request.urlopen(self.server.endpoint + path, timeout=20) as response:
                self.assertEqual(response.status, 200)
                self.assertIn("text/html", response.headers["Content-Type"])
                csp = response.headers["Content-Security-Policy"]
                self.assertIn("default-src 'self'", csp)
                self.assertIn("frame-ancestors 'none'", csp)
                self.assertIn(b'id="results"', response.read())

    def test_search_results_show_every_field_and_hostile_content_only_as_text(self):
        b = self.open_user("alice")
        contents = self.search(b, "pottery workshop")
        self.assertIn("Dana: I went to a pottery workshop yesterday", contents[0])
        item = texts(b, "#results li.result")[0]
        for field in ("score ", "message", "2023-05-08T", "user", "session s1", "signals {", "sources: m-"):
            self.assertIn(field, item)
        contents = self.search(b, "Mallory script pwned onerror")
        for hostile in HOSTILE:
            self.assertTrue(any(hostile in c for c in contents), (hostile, contents))
            self.assertTrue(any(hostile in c for c in texts(b, "#messages li .content")))
        self.assertIsNone(b.script("return window.__pwned"))
        self.assertEqual(b.script("return document.querySelectorAll('main script, main img').length"), 0)
        # The key stays in the tab: never in the URL, a cookie or localStorage.
        where = b.script("return [location.href, document.cookie, localStorage.length, "
                         "sessionStorage.getItem('flowmem.inspector.key')]")
        self.assertEqual(where, [self.server.endpoint + "/", "", 0, KEY])

    def test_search_filters_reach_the_server_and_a_bad_one_shows_its_reason(self):
        b = self.open_user("alice")
        b.type("#f-session", "hostile")
        b.type("#f-role", "user")
        self.search(b, "Mallory pottery workshop bowl")
        metas = texts(b, "#results li.result > .meta:first-child")
        self.assertTrue(metas)
        for meta in metas:
            self.assertIn("| user | session hostile", meta)
        b.type("#f-since", "yesterday")
        b.click("#search-run")
        error = b.wait("the server's reason", lambda: b.text("#error"))
        self.assertIn("422: filters.since must be an ISO-8601 date", error)

    def test_messages_are_browsed_newest_or_oldest_first_a_page_at_a_time(self):
        b = self.open_user("many")
        shown = texts(b, "#messages li .content")
        self.assertEqual((len(shown), shown[0]), (50, "Line 60 of a long session"))
        b.click("#messages-more")
        b.wait("the second page", lambda: len(texts(b, "#messages li .content")) == 60)
        self.assertEqual(texts(b, "#messages li .content")[-1], "Line 1 of a long session")
        self.assertTrue(b.script("return document.getElementById('messages-more').hidden"))
        b.click("#messages-order option[value=asc]")
        b.wait("oldest first", lambda: texts(b, "#messages li .content")[:1] == ["Line 1 of a long session"])

    def test_a_source_link_shows_that_message(self):
        b = self.open_user("alice")
        self.search(b, "blue bowl")
        source = b.script("return document.querySelector('#results a.source').dataset.messageId")
        b.click("#results a.source")
        detail = b.wait("the message", lambda: b.script(
            "const d = document.getElementById('message-detail'); return !d.hidden && d.textContent"))
        self.assertIn(source, detail)
        self.assertIn("Dana: A small blue bowl from the pottery class", detail)
        self.assertEqual(self.api.request("GET", "/users/alice/messages/" + source)["content"],
                         "Dana: A small blue bowl from the pottery class")

    def test_deleting_a_session_asks_first_and_then_it_is_gone(self):
        b = self.open_user(ODD_USER)
        doomed = "doomed/session #1"
        sessions_path = "/users/%s/sessions" % urllib.parse.quote(ODD_USER, safe="")
        index = texts(b, "#sessions button[data-session-id]").index(doomed)
        delete = "#sessions li:nth-child(%d) button.delete" % (index + 1)
        b.click(delete)
        self.assertIn(doomed, b.command("GET", "/alert/text"))
        b.command("POST", "/alert/dismiss", {})  # No: nothing happens
        self.assertIn(doomed, [s["session_id"] for s in self.api.request("GET", sessions_path)["data"]])
        b.click(delete)
        b.command("POST", "/alert/accept", {})
        b.wait("the deletion", lambda: "deleted session" in b.text("#status"))
        b.wait("the session list without it", lambda: doomed not in texts(b, "#sessions button[data-session-id]"))
        self.assertEqual([s["session_id"] for s in self.api.request("GET", sessions_path)["data"]], ["kept"])
        messages = self.api.request("GET", "/users/%s/messages" % urllib.parse.quote(ODD_USER, safe=""))["data"]
        self.assertEqual([m["content"] for m in messages], ["Ana: a note that stays"])

    def sessions_of(self, user: str) -> List[str]:
        # The query form (routes.py, rule 4) names any id, a dot segment too.
        return [s["session_id"] for s in self.api.request("GET", "/users//sessions", query={"user_id": user})["data"]]

    def test_deleting_session_dot_dot_deletes_that_session_and_nothing_else(self):
        b = self.open_user(DOTS)
        self.assertEqual(sorted(texts(b, "#sessions button.link[data-session-id]")), [".", "..", "...", "plain"])
        index = texts(b, "#sessions button.link[data-session-id]").index("..")
        b.click("#sessions li:nth-child(%d) button.delete" % (index + 1))
        confirmation = b.command("GET", "/alert/text")
        b.command("POST", "/alert/accept", {})
        b.wait("the deletion", lambda: "deleted session" in b.text("#status"))
        messages = self.api.request("GET", "/users/%s/messages" % DOTS)["data"]
        self.assertEqual(sorted(m["session_id"] for m in messages), [".", "...", "plain"])
        self.assertEqual(sorted(self.sessions_of(DOTS)), [".", "...", "plain"])
        b.wait("the session list without it", lambda: ".." not in texts(b, "#sessions button.link[data-session-id]"))
        # The words name the session and the user, quoted so that ".." reads as an id.
        self.assertEqual(confirmation, 'Delete session ".." of user "dots" and all its messages?')
        self.assertEqual(b.text("#status"), 'deleted session ".." (1 messages)')

    def test_a_user_named_dot_dot_is_listed_and_session_dot_is_browsed(self):
        b = self.open_user("..")
        self.assertEqual(texts(b, "#sessions button.link[data-session-id]"), ["s"])
        self.assertEqual(texts(b, "#messages li .content"), ["Dot: the note of user dot dot"])
        b = self.open_user(DOTS)
        index = texts(b, "#sessions button.link[data-session-id]").index(".")
        b.click("#sessions li:nth-child(%d) button.link" % (index + 1))
        b.wait("session . alone", lambda: texts(b, "#messages li .content") == ["Dot: the note of session ."])

    def test_the_csp_names_the_pages_own_script_so_an_injected_one_does_not_run(self):
        with urllib.request.urlopen(self.server.endpoint + "/", timeout=20) as response:
            csp = response.headers["Content-Security-Policy"]
        script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
        self.assertNotIn("unsafe-inline", script_src)
        self.assertIn("'sha256-", script_src)
        b = self.browse()
        b.get(self.server.endpoint + "/")
        # The page's own script ran (it filled the key box from this tab's storage and listens on the buttons).
        b.type("#key", KEY)
        b.click("#users-load")
        b.wait("the user list", lambda: texts(b, "#users button[data-user-id]"))
        injected = b.script("const s = document.createElement('script'); s.textContent = 'window.__injected = 1';"
                            "document.body.appendChild(s); return window.__injected === 1")
        self.assertFalse(injected)

    def test_a_wrong_key_shows_the_servers_reason(self):
        b = self.browse()
        b.get(self.server.endpoint + "/ui")
        b.type("#key", "not-the-key")
        b.click("#users-load")
        error = b.wait("an error", lambda: b.text("#error"))
        self.assertIn("401", error)
        self.assertIn("missing or wrong API key", error)


if __name__ == "__main__":
    unittest.main()
