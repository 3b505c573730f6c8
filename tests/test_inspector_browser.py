"""The inspector page (flowmem/http/inspector.html) in a real headless Chromium, against a real server.

The browser is Debian's `chromium`, driven by `chromedriver` (tests/browser.py). The page
is loaded from flowmem's own `GET /` under its Content-Security-Policy, with an API key
set, so the page's own requests pass the same key, Host and Origin checks any client's
do; one server without a key shows what the page does when none is needed. Without the
two programs the test is skipped (failed under CI: tests/components.py).
"""
from __future__ import annotations

import os
import re
import tempfile
import unittest
import urllib.parse
import urllib.request
from typing import List, Optional, Tuple

from flowmem.client import Client
from flowmem.retrieval.fallback import FALLBACK
from flowmem.retrieval.pipeline import STATE_UPDATE
from flowmem.retrieval.signals import SIGNAL_NAMES
from tests.browser import WebDriver, texts
from tests.components import program
from tests.helpers import add_body
from tests.server import ServerProcess

KEY = "inspector-test-key"
HOSTILE = ['<script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=2">']
ODD_USER = "team/ana lee%"  # a user id that must be percent-encoded in a path
DOTS = "dots"  # a user whose sessions are named ".", "..", "..." and "plain"


class BrowserTestCase(unittest.TestCase):
    def browse(self, phone: Optional[Tuple[int, int]] = None) -> WebDriver:
        """A fresh browser (no storage) for this test, closed after it; `phone`: a phone's screen size."""
        browser = WebDriver(program(self, "chromedriver"), program(self, "chromium"), phone)
        self.addCleanup(browser.quit)
        return browser


class InspectorInBrowserTest(BrowserTestCase):
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
        tagged = add_body("tagged", "s", ["Tia: the kiln fires on Friday", "Ben: noted"])
        tagged["metadata"] = {"source": "chat"}
        tagged["messages"][0]["metadata"] = {"topic": "pottery", "turn": 3}
        cls.api.add(tagged)
        cls.api.add(add_body("undated", "s", ["Uma: sent without a time"], timestamp=None))
        cls.api.add(add_body("forgetful", "s", ["Fay: my old phone number is 555-0100", "Fay: I like tea"]))
        # Long words and ids, which a phone's screen must wrap rather than scroll sideways to.
        cls.api.add(add_body("wide", "a-session-id-long-enough-to-be-wider-than-a-phone-screen-on-its-own",
                             ["Wes: https://example.org/" + "a-long-path-segment/" * 12, "Ana: " + "x" * 200]))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.tmp.cleanup()

    def open_user(self, user: str, phone: Optional[Tuple[int, int]] = None) -> WebDriver:
        """A browser on the page from flowmem's `/`, with the key typed, the users listed and `user` picked."""
        b = self.browse(phone)
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
        for field in ("score ", "message", "2023-05-08T", "user", "session s1", "signals ", "bm25 #1", "sources: m-"):
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

    def test_a_search_shows_its_evidence_grade_beside_its_items_and_a_fallback_shows_none(self):
        b = self.open_user("alice")
        self.assertEqual(b.text("#evidence"), "")  # no search yet: no label
        self.search(b, "pottery workshop")
        grade = self.api.search({"query": "pottery workshop", "user_id": "alice", "top_k": 10})["evidence"]
        self.assertEqual(b.text("#evidence"), "evidence: " + grade)
        self.assertEqual(b.script("return document.getElementById('evidence').dataset.evidence"), grade)
        self.assertNotIn("no words for", b.script("return document.getElementById('evidence').title"))
        self.search(b, "zebra xylophone")  # no word of it is in alice's memory: a fallback
        self.assertEqual(b.text("#evidence"), "evidence: none")
        b.type("#user-id", DOTS)
        b.click("#user-open")  # another user: the last search's grade goes with its items
        b.wait("the label gone", lambda: b.text("#evidence") == "")

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

    def test_a_wrong_key_shows_the_servers_reason_and_says_to_type_the_key_above(self):
        b = self.browse()
        b.get(self.server.endpoint + "/ui")
        # Before any key is typed the page has asked for the users already, and says what to do.
        b.wait("the page's hint", lambda: "type the key above" in b.text("#status"))
        self.assertEqual(b.error_text(), "")
        b.type("#key", "not-the-key")
        b.click("#users-load")
        error = b.wait("an error", lambda: b.text("#error"))
        self.assertIn("401", error)
        self.assertIn("missing or wrong API key", error)
        self.assertIn("type the key above", error)
        self.assertNotIn("Authorization", error)  # the server's words for HTTP clients, not for this page

    def test_a_failure_empties_the_status_line_and_the_next_success_clears_the_error(self):
        b = self.open_user("alice")
        b.type("#q", "pottery")
        b.type("#f-since", "yesterday")
        b.click("#search-run")
        b.wait("the server's reason", lambda: b.text("#error"))
        self.assertIn("422: filters.since", b.text("#error"))
        self.assertEqual(b.script("return document.getElementById('status').textContent"), "")  # not "searching"
        b.type("#f-since", "2023-05-01")
        b.click("#search-run")
        b.wait("the items", lambda: re.fullmatch(r"\d+ items", b.text("#status")))
        self.assertEqual(b.error_text(), "")

    def test_the_picked_session_is_highlighted_until_all_sessions_are_browsed(self):
        b = self.open_user("alice")
        self.assertEqual(texts(b, "#sessions li.picked"), [])
        index = texts(b, "#sessions button.link[data-session-id]").index("hostile")
        b.click("#sessions li:nth-child(%d) button.link" % (index + 1))
        b.wait("session hostile alone", lambda: len(texts(b, "#messages li")) == 2)
        picked = b.script("return Array.from(document.querySelectorAll('#sessions li.picked[aria-current]'),"
                          " li => li.querySelector('button.link').textContent)")
        self.assertEqual(picked, ["hostile"])
        b.click("#messages-all")
        b.wait("every session's messages", lambda: len(texts(b, "#messages li")) == 5)
        self.assertEqual(texts(b, "#sessions li.picked"), [])
        self.assertEqual(len(texts(b, "#users li.picked")), 1)  # the user stays picked

    def open_source(self, b: WebDriver) -> None:
        b.click("#results a.source")
        b.wait("the message box", lambda: b.script("return !document.getElementById('message-detail').hidden"))

    def assert_no_message_box(self, b: WebDriver) -> None:
        self.assertEqual(b.script("const d = document.getElementById('message-detail'); return [d.hidden, "
                                  "d.textContent, document.querySelectorAll('#messages li.flash').length]"),
                         [True, "", 0])

    def test_the_message_box_is_emptied_when_another_search_session_or_user_is_chosen(self):
        b = self.open_user("alice")
        self.search(b, "blue bowl")
        self.open_source(b)
        self.search(b, "pottery workshop")
        self.assert_no_message_box(b)
        self.open_source(b)
        index = texts(b, "#sessions button.link[data-session-id]").index("s1")
        b.click("#sessions li:nth-child(%d) button.link" % (index + 1))
        self.assert_no_message_box(b)
        self.open_source(b)
        b.type("#user-id", DOTS)
        b.click("#user-open")
        self.assert_no_message_box(b)

    def test_scores_show_three_significant_digits_and_the_exact_score_in_their_title(self):
        b = self.open_user("alice")
        self.search(b, "pottery workshop")
        shown = b.script("return Array.from(document.querySelectorAll('#results li.result .score'),"
                         " e => [e.textContent, e.title])")
        exact = [i["score"] for i in self.api.request("POST", "/search", {
            "query": "pottery workshop", "user_id": "alice", "top_k": 10})["data"]]
        self.assertEqual(len(shown), len(exact))
        for (text, title), score in zip(shown, exact):
            number = text[len("score "):]
            self.assertLessEqual(len(re.sub(r"^[0.]+|\.", "", number)), 3, text)
            self.assertAlmostEqual(float(number), score, delta=score * 0.005)
            self.assertEqual(float(title[len("score "):]), score)

    def test_every_signal_is_explained_in_words_in_the_legend_and_on_each_item(self):
        b = self.open_user("alice")
        legend = texts(b, "#signals-legend dt")
        for name in SIGNAL_NAMES + (STATE_UPDATE, FALLBACK, "view", "score"):
            self.assertIn(name, legend)
        self.assertTrue(all(texts(b, "#signals-legend dd")))
        self.search(b, "pottery workshop")
        signals = b.script("return Array.from(document.querySelectorAll('#results .signal'), e => [e.textContent, "
                           "e.title])")
        self.assertIn("bm25", [text.split()[0] for text, _ in signals])
        for text, title in signals:
            self.assertRegex(text, r"^\w+ #\d+$")
            self.assertIn("ranks %s under it (1 = best)" % text.split("#")[1], title)
            self.assertNotIn("no words for", title)
        self.search(b, "zebra xylophone")  # no word of it is in alice's memory: a fallback
        fallback = b.script("return Array.from(document.querySelectorAll('#results .signal[data-signal=fallback]'),"
                            " e => e.title)")
        self.assertTrue(fallback)
        self.assertIn("stand in", fallback[0])

    def test_at_phone_width_nothing_is_wider_than_the_screen(self):
        b = self.open_user("alice", phone=(390, 844))
        width = "return [window.innerWidth, document.documentElement.scrollWidth]"
        self.assertEqual(b.script(width), [390, 390])
        self.search(b, "pottery workshop")
        b.click("#signals-legend summary")
        self.open_source(b)
        b.type("#user-id", "wide")
        b.click("#user-open")
        b.wait("the wide user's messages", lambda: texts(b, "#messages li"))
        self.assertEqual(b.script(width), [390, 390])


    def test_a_messages_metadata_shows_in_the_list_and_in_its_search_item(self):
        b = self.open_user("tagged")
        self.assertEqual(texts(b, "#messages li .metadata"), ['metadata: source="chat"',
                                                               'metadata: source="chat", topic="pottery", turn=3'])
        self.search(b, "kiln Friday")
        self.assertIn('metadata: source="chat", topic="pottery", turn=3', texts(b, "#results li.result .metadata"))

    def test_a_message_dated_when_it_was_received_says_so(self):
        b = self.open_user("undated")
        self.assertIn(" (when received) | session s", texts(b, "#messages li .meta")[0])

    def test_forgetting_a_message_asks_first_and_then_only_that_message_is_gone(self):
        b = self.open_user("forgetful")
        self.search(b, "phone number")
        listed = b.script("return Array.from(document.querySelectorAll('#messages li'), li => li.dataset.messageId)")
        doomed = self.api.request("GET", "/users/forgetful/messages", query={"order": "asc"})["data"][0]["id"]
        forget = "#messages li:nth-child(%d) button.forget" % (listed.index(doomed) + 1)
        b.click(forget)
        self.assertEqual(b.command("GET", "/alert/text"), 'Forget message "%s" of user "forgetful"?' % doomed)
        b.command("POST", "/alert/dismiss", {})  # No: nothing happens
        self.assertEqual(len(self.api.request("GET", "/users/forgetful/messages")["data"]), 2)
        b.click(forget)
        b.command("POST", "/alert/accept", {})
        b.wait("the deletion", lambda: b.text("#status") == 'forgot message "%s"' % doomed)
        b.wait("the list without it", lambda: texts(b, "#messages li .content") == ["Fay: I like tea"])
        self.assertEqual([m["content"] for m in self.api.request("GET", "/users/forgetful/messages")["data"]],
                         ["Fay: I like tea"])
        # The search items it was a source of went with it.
        sources = texts(b, "#results a.source")
        self.assertNotIn(doomed, sources)


class OpenServerInspectorTest(BrowserTestCase):
    """A server without an API key: the page lists its users as it opens."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="flowmem-inspector-open-")
        cls.server = ServerProcess(os.path.join(cls.tmp.name, "flowmem.db"))
        api = Client(cls.server.endpoint, timeout=20)
        for user in ("ana", "ben"):
            api.add(add_body(user, "s", ["%s: a note" % user.title()]))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.tmp.cleanup()

    def test_the_users_are_listed_as_the_page_opens_with_no_click(self):
        b = self.browse()
        b.get(self.server.endpoint + "/")
        b.wait("the user list", lambda: texts(b, "#users button[data-user-id]") == ["ana", "ben"])
        self.assertEqual((b.text("#status"), b.error_text()), ("2 users", ""))


if __name__ == "__main__":
    unittest.main()
