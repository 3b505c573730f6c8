"""GET /metrics: Prometheus text format, counted by route template (never a raw path), thread-safe."""
import os
import re
import threading

from flowmem.http.metrics import Metrics, escape
from tests.helpers import add_body
from tests.test_http_manage import ManageTestCase

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')


def parse(text):
    """{(name, labels text): value} of an exposition, checking each line's syntax and that every
    sample's family has HELP and TYPE before it."""
    samples, typed = {}, {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            typed[name] = kind
            continue
        if line.startswith("# HELP "):
            continue
        match = SAMPLE.match(line)
        assert match, "not a sample line: %r" % line
        name = match.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in typed else name
        assert family in typed, "no TYPE before %s" % name
        samples[(name, match.group(2) or "")] = float(match.group(3))
    return samples, typed


class MetricsRouteTest(ManageTestCase):
    def scrape_text(self):
        status, body, headers = self.get("/metrics")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        return body.decode("utf-8")

    def scrape(self):
        return parse(self.scrape_text())

    def test_requests_are_counted_by_route_template_and_status_never_by_raw_path(self):
        self.stored("secret-user", "secret-session", ["Alice: hi"])
        self.get("/users/secret-user/messages")
        self.get("/users/secret-user/messages")
        self.call("GET", "/users/secret-user/sessions")  # no key: 401
        self.get("/users/secret-user/nothing-here")  # 404
        text = self.scrape_text()
        self.assertNotIn("secret", text)
        samples, typed = parse(text)
        self.assertEqual(samples[("flowmem_requests_total", '{route="/users/{user_id}/messages",status="200"}')], 2)
        self.assertEqual(samples[("flowmem_requests_total", '{route="/users/{user_id}/sessions",status="401"}')], 1)
        self.assertEqual(samples[("flowmem_requests_total", '{route="unmatched",status="404"}')], 1)
        self.assertEqual(typed["flowmem_requests_total"], "counter")
        self.assertEqual(typed["flowmem_request_duration_seconds"], "histogram")

    def test_the_latency_histogram_is_cumulative_and_ends_in_its_count(self):
        for _ in range(3):
            self.get("/health")
        samples, _ = self.scrape()
        buckets = [(labels, v) for (name, labels), v in samples.items()
                   if name == "flowmem_request_duration_seconds_bucket" and 'route="/health"' in labels]
        counts = [v for _, v in buckets]
        self.assertEqual(counts, sorted(counts))
        self.assertIn('le="+Inf"', buckets[-1][0])
        self.assertEqual(counts[-1], 3)
        self.assertEqual(samples[("flowmem_request_duration_seconds_count", '{route="/health"}')], 3)
        self.assertGreater(samples[("flowmem_request_duration_seconds_sum", '{route="/health"}')], 0)

    def test_adds_messages_and_the_database_size_are_shown(self):
        self.call("POST", "/add", add_body("u1", "s1", ["Alice: a", "Bob: b", "Alice: c"]), self.auth)
        self.call("POST", "/users/u1/import", {"records": [add_body("u1", "s2", ["Alice: d"], "imported")]},
                  self.auth)
        self.call("POST", "/add", {"user_id": "u1"}, self.auth)  # 422: not counted
        samples, typed = self.scrape()
        self.assertEqual(samples[("flowmem_adds_total", "")], 2)
        self.assertEqual(samples[("flowmem_messages_total", "")], 4)
        size = samples[("flowmem_database_bytes", '{file="main"}')]
        self.assertEqual(size, os.path.getsize(self.db_path()))
        self.assertEqual(typed["flowmem_database_bytes"], "gauge")
        self.assertEqual(samples[("flowmem_inflight_requests", "")], 1)  # the scrape itself

    def test_metrics_need_the_key(self):
        self.assertEqual(self.call("GET", "/metrics")[0], 401)


class MetricsTest(ManageTestCase):
    def test_counts_from_many_threads_add_up(self):
        metrics = Metrics(self.db_path())

        def work():
            for i in range(2000):
                metrics.started()
                metrics.finished("/search", 200 if i % 2 else 429, 0.003)
                metrics.stored(1, 2)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        samples, _ = parse(metrics.render())
        self.assertEqual(samples[("flowmem_requests_total", '{route="/search",status="200"}')], 8000)
        self.assertEqual(samples[("flowmem_requests_total", '{route="/search",status="429"}')], 8000)
        self.assertEqual(samples[("flowmem_request_duration_seconds_count", '{route="/search"}')], 16000)
        self.assertEqual(samples[("flowmem_request_duration_seconds_bucket", '{route="/search",le="0.0025"}')], 0)
        self.assertEqual(samples[("flowmem_request_duration_seconds_bucket", '{route="/search",le="0.005"}')], 16000)
        self.assertEqual(samples[("flowmem_adds_total", "")], 16000)
        self.assertEqual(samples[("flowmem_inflight_requests", "")], 0)

    def test_label_values_are_escaped(self):
        self.assertEqual(escape('a"b\\c\nd'), 'a\\"b\\\\c\\nd')


if __name__ == "__main__":
    import unittest
    unittest.main()
