"""Finding where a request ends, byte by byte, and refusing what must not be read further."""
import unittest

from flowmem.errors import BadRequest, HeadersTooLarge, PayloadTooLarge
from flowmem.http.framing import MAX_HEAD_BYTES, RequestFramer

HEAD = b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def frame(data, max_body=1000, step=None):
    """Feed `data` in pieces of `step` bytes (all at once if None); the framer's result."""
    framer = RequestFramer(max_body)
    buffer = bytearray()
    step = step or len(data) or 1
    found = None
    for i in range(0, max(len(data), 1), step):
        buffer += data[i:i + step]
        found = framer.feed(buffer)
        if found is not None:
            return found
    return found


class FramingTest(unittest.TestCase):
    def test_a_request_is_whole_only_when_its_last_body_byte_arrives(self):
        data = HEAD + b"Content-Length: 5\r\n\r\nhello" + b"GET /health HTTP/1.1\r\n\r\n"
        for step in (1, 3, len(data)):
            with self.subTest(step=step):
                request, used = frame(data, step=step)
                self.assertEqual(request.body, b"hello")
                self.assertEqual(data[used:], b"GET /health HTTP/1.1\r\n\r\n")
        self.assertIsNone(frame(HEAD + b"Content-Length: 5\r\n\r\nhell"))

    def test_chunked_bodies_are_joined_and_their_end_found(self):
        data = HEAD + b"Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nTrailer: x\r\n\r\nNEXT"
        for step in (1, 7, len(data)):
            with self.subTest(step=step):
                request, used = frame(data, step=step)
                self.assertEqual(request.body, b"hello!")
                self.assertEqual(data[used:], b"NEXT")

    def test_a_request_without_length_has_an_empty_body(self):
        request, used = frame(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertEqual(request.body, b"")

    def test_bare_newlines_and_stray_empty_lines_before_a_request_are_tolerated(self):
        request, _ = frame(b"\r\n\nPOST /add HTTP/1.1\nContent-Length: 2\n\n{}")
        self.assertEqual(request.body, b"{}")
        self.assertTrue(request.head.startswith(b"POST /add"))

    def test_chunk_sizes_that_are_negative_non_hex_or_overflowing_are_400(self):
        for size in (b"-1", b"zz", b"0x10", b"", b" ", b"1" * 17, b"ffffffffffffffffffff"):
            with self.subTest(size=size):
                with self.assertRaises(BadRequest):
                    frame(HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + size + b"\r\nabc\r\n0\r\n\r\n",
                          max_body=10**30)

    def test_a_chunk_read_in_pieces_counts_once_against_the_limit(self):
        data = HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"200\r\n" + b"x" * 512 + b"\r\n0\r\n\r\n"
        request, _ = frame(data, max_body=600, step=5)
        self.assertEqual(len(request.body), 512)

    def test_a_chunk_longer_than_its_size_is_400(self):
        with self.assertRaises(BadRequest):
            frame(HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n")

    def test_a_chunked_body_over_the_limit_is_refused_as_soon_as_a_size_says_so(self):
        with self.assertRaises(PayloadTooLarge):
            frame(HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"1000\r\n" + b"x" * 10, max_body=1000)
        many = b"".join(b"10\r\n" + b"x" * 16 + b"\r\n" for _ in range(100))
        with self.assertRaises(PayloadTooLarge):
            frame(HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + many, max_body=1000)

    def test_a_declared_length_over_the_limit_is_413_before_the_body_is_read(self):
        with self.assertRaises(PayloadTooLarge):
            frame(HEAD + b"Content-Length: 1001\r\n\r\n", max_body=1000)

    def test_transfer_codings_other_than_chunked_are_400(self):
        for coding in (b"identity", b"gzip", b"gzip, chunked", b"chunked, chunked", b"chunked;q=1"):
            with self.subTest(coding=coding):
                with self.assertRaises(BadRequest):
                    frame(HEAD + b"Transfer-Encoding: " + coding + b"\r\n\r\n{}")

    def test_ambiguous_lengths_are_400(self):
        for headers in (b"Content-Length: 5\r\nContent-Length: 6\r\n", b"Content-Length: -1\r\n",
                        b"Content-Length: 5, 5\r\n", b"Content-Length: +5\r\n", b"Content-Length: 0x5\r\n",
                        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"Content-Length : 5\r\n",
                        b"X-Folded: a\r\n b\r\n", b"no colon here\r\n"):
            with self.subTest(headers=headers):
                with self.assertRaises(BadRequest):
                    frame(HEAD + headers + b"\r\nhello")

    def test_a_bare_cr_or_nul_in_the_head_is_400_so_no_header_can_hide_behind_it(self):
        for head in (HEAD + b"X-A: a\rb\r\nOrigin: https://evil.example\r\n", HEAD + b"X-A: a\x00\r\n",
                     b"POST /add\rx HTTP/1.1\r\nHost: 127.0.0.1\r\n"):
            with self.subTest(head=head):
                with self.assertRaises(BadRequest):
                    frame(head + b"Content-Length: 2\r\n\r\n{}")

    def test_a_header_the_policy_reads_once_given_twice_is_400(self):
        for header in (b"Host: evil.example", b"Origin: https://evil.example", b"Content-Type: text/plain",
                       b"X-Api-Key: other"):
            with self.subTest(header=header):
                with self.assertRaises(BadRequest):
                    frame(HEAD + b"Origin: https://a.example\r\nContent-Type: application/json\r\nX-Api-Key: k\r\n"
                          + header + b"\r\nContent-Length: 2\r\n\r\n{}")

    def test_heads_over_the_limit_are_431_even_before_they_end(self):
        with self.assertRaises(HeadersTooLarge):
            frame(HEAD + b"X-Big: " + b"a" * MAX_HEAD_BYTES)
        with self.assertRaises(HeadersTooLarge):
            frame(HEAD + b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n")

    def test_expect_100_continue_is_noticed_when_a_body_is_due(self):
        framer = RequestFramer(1000)
        self.assertIsNone(framer.feed(HEAD + b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n"))
        self.assertTrue(framer.expects_continue)
        framer = RequestFramer(1000)
        framer.feed(HEAD + b"Expect: 100-continue\r\nContent-Length: 0\r\n\r\n")
        self.assertFalse(framer.expects_continue)


if __name__ == "__main__":
    unittest.main()
