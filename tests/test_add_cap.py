"""An Add holds at most max_add_messages messages: one more is refused whole, 422 naming `messages`
and the cap, before anything is written (an Add is one transaction, and every other write waits
for it: docs/write_stalls.md)."""
import json

from flowmem.config import load
from flowmem.errors import InvalidField
from flowmem.http.api import App
from flowmem.mcp import tools
from tests.helpers import MemoryTestCase, add_body


def lines(n: int):
    return ["Ana: line %d of the long paste" % i for i in range(n)]


class AddCapTest(MemoryTestCase):
    def test_an_add_of_more_messages_than_the_cap_is_refused_naming_messages_and_the_cap_with_nothing_stored(self):
        memory = self.open_memory("capped.db", max_add_messages=5)
        with self.assertRaises(InvalidField) as raised:
            memory.add_body(add_body("u", "s", lines(6)))
        self.assertEqual(raised.exception.field, "messages")
        self.assertIn("holds 6 messages, more than the 5 an Add may hold (max_add_messages)", raised.exception.reason)
        self.assertEqual(memory.stats("u"), {"user_id": "u", "exists": False})
        self.assertTrue(memory.add_body(add_body("u", "s", lines(5)))["stored"])  # the cap itself is taken
        self.assertEqual(memory.stats()["messages"], 5)

    def test_one_message_past_the_default_cap_is_a_422_over_http_and_through_mcp_and_stores_nothing(self):
        cap = load({}, environ={}).max_add_messages
        body = add_body("u", "s", lines(cap + 1))
        app = App(self.memory, load({"db": self.db_path()}, environ={}))
        response = app.handle("POST", "/add", {}, json.dumps(body).encode())
        self.assertEqual(response.status, 422)
        reason = json.loads(response.body)["detail"]["reason"]
        self.assertIn("messages holds %d messages, more than the %d" % (cap + 1, cap), reason)
        result = tools.call(self.memory, "add_memory", {k: body[k] for k in ("user_id", "session_id", "messages")})
        self.assertTrue(result["isError"])
        self.assertEqual(self.memory.stats()["messages"], 0)
        at_cap = json.dumps(add_body("u", "s", lines(cap))).encode()
        self.assertEqual(app.handle("POST", "/add", {}, at_cap).status, 200)

    def test_an_import_record_past_the_cap_is_refused_naming_it_and_nothing_is_stored(self):
        memory = self.open_memory("capped.db", max_add_messages=5)
        records = [add_body("u", "s", lines(2), "small"), add_body("u", "s", lines(6), "large")]
        with self.assertRaises(InvalidField) as raised:
            memory.import_records(records)
        self.assertEqual(raised.exception.field, "records[1].messages")
        self.assertEqual(memory.stats()["messages"], 0)
