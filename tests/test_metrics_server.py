"""GET /metrics of a real server: its in-flight gauge, and the requests its connection loop refuses counted by
route. End-to-end tier; the metrics themselves are tested in process in tests/test_metrics.py."""
import socket
import unittest
import urllib.request

from tests.server import ServerProcess
from tests.test_http_manage import ManageTestCase
from tests.test_metrics import parse


class ServerMetricsTest(ManageTestCase):
    def test_a_running_server_counts_its_in_flight_requests_and_serves_metrics(self):
        server = ServerProcess(self.db_path("served.db"), env={"FLOWMEM_API_KEY": "k"})
        self.addCleanup(server.stop)
        request = urllib.request.Request(server.endpoint + "/metrics", headers={"X-Api-Key": "k"})
        with urllib.request.urlopen(request, timeout=20) as response:
            samples, _ = parse(response.read().decode("utf-8"))
        self.assertEqual(samples[("flowmem_inflight_requests", "")], 1)
        self.assertGreater(samples[("flowmem_database_bytes", '{file="main"}')], 0)

    def test_requests_the_connection_loop_refuses_are_counted_by_their_route(self):
        server = ServerProcess(self.db_path("refusing.db"), ["--max-body-bytes", "100"])
        self.addCleanup(server.stop)
        for head in (b"POST /users/secret%2Fuser/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n",
                     b"GARBLED\r\n\r\n", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
                sock.sendall(head)
                self.assertTrue(sock.recv(100).startswith(b"HTTP/1.1 4"))
        with urllib.request.urlopen(server.endpoint + "/metrics", timeout=20) as response:
            text = response.read().decode("utf-8")
        samples, _ = parse(text)
        self.assertEqual(samples[("flowmem_requests_total", '{route="/users/{user_id}/import",status="413"}')], 1)
        self.assertEqual(samples[("flowmem_requests_total", '{route="/health",status="400"}')], 1)
        self.assertEqual(samples[("flowmem_requests_total", '{route="unmatched",status="400"}')], 1)
        self.assertNotIn("secret", text)



if __name__ == "__main__":
    unittest.main()
