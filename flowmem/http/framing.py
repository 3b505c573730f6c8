"""Where one HTTP/1.1 request ends in a stream of bytes, found incrementally and within limits.

The connection loop (server.py) reads whatever a client sends into a buffer and
asks `RequestFramer.feed` whether a whole request has arrived. Only then does a worker
thread see it, so a slow or stalled client holds a buffer, never a thread or an
in-flight slot.

The framer knows just enough HTTP to find the end of a request: the blank line after
the headers, then a body of `Content-Length` bytes or a chunked body. It refuses what
no server should guess about, before reading the body whenever it can: two different
lengths, a length that is not a plain number, a transfer coding other than chunked
(`identity` without a length would leave the body to be read as the next request),
malformed or overflowing chunk sizes, folded or malformed header lines (the stuff of
request smuggling), and heads or bodies over their limits. Everything else (request
line, methods, routes, credentials) is for the http.server handler and App.
"""
from __future__ import annotations

import re
from typing import List, NamedTuple, Optional, Tuple, Union

from ..errors import BadRequest, HeadersTooLarge, PayloadTooLarge

MAX_HEAD_BYTES = 64 * 1024  # request line and headers together; http.server allows 64 KiB per line
MAX_HEADERS = 100  # as http.client's parse_headers
MAX_CHUNK_LINE = 1024  # a chunk-size line with its extensions
MAX_TRAILER_BYTES = 8 * 1024

# Headers the policy reads one value of: a second one could be read differently by
# someone else (a proxy, the browser checks), so two are refused.
SINGLE_HEADERS = frozenset({b"host", b"origin", b"content-type", b"authorization", b"x-api-key", b"sec-fetch-site"})

_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")  # 16 hex digits: 2**64 - 1; more is an overflow
_DIGITS = re.compile(rb"[0-9]{1,19}")
_HEADER_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token: no spaces before the colon


Buffer = Union[bytes, bytearray]  # what the loop has read of a connection so far


class Request(NamedTuple):
    head: bytes  # the request line and headers, through the blank line that ends them
    body: bytes  # the body, de-chunked


class RequestFramer:
    """Finds one request in a growing buffer. Call `feed` after each read; make a new one per request."""

    def __init__(self, max_body_bytes: int):
        """`max_body_bytes`: a longer body is refused with PayloadTooLarge (413), chunked or not."""
        self.max_body_bytes = max_body_bytes
        self.request_line = b""  # known once the head is complete: for log lines
        self.expects_continue = False  # the client waits for "100 Continue" before sending its body
        self.continued = False  # the loop (server.py) has sent it that "100 Continue"
        self._head_end = 0  # offset just past the blank line; 0 until the head is complete
        self._length: Optional[int] = None  # Content-Length, or None for a chunked body
        self._skip = 0  # empty lines before the request line (a client's stray CRLF after a body)
        self._scanned = 0
        self._chunks: List[bytes] = []
        self._body_bytes = 0
        self._pos = 0  # where chunk parsing resumes
        self._in_trailers = False
        self._trailers_start = 0

    @property
    def head_complete(self) -> bool:
        return self._head_end > 0

    def feed(self, buffer: Buffer) -> Optional[Tuple[Request, int]]:
        """(the request, bytes of `buffer` it used) once `buffer` holds a whole request, else None.

        `buffer` is everything received since this request began, and only grows
        between calls. Raises BadRequest, HeadersTooLarge or PayloadTooLarge for a
        request that must not be read further (the connection is then closed).
        """
        if not self._head_end:
            self._find_head(buffer)
            if not self._head_end:
                return None
        if self._length is not None:
            end = self._head_end + self._length
            if len(buffer) < end:
                return None
            return Request(bytes(buffer[self._skip:self._head_end]), bytes(buffer[self._head_end:end])), end
        chunked_end = self._read_chunks(buffer)
        if chunked_end is None:
            return None
        return Request(bytes(buffer[self._skip:self._head_end]), b"".join(self._chunks)), chunked_end

    # -- the head --------------------------------------------------------------------

    def _find_head(self, buffer: Buffer) -> None:
        while buffer[self._skip:self._skip + 2] == b"\r\n" or buffer[self._skip:self._skip + 1] == b"\n":
            self._skip += 2 if buffer[self._skip:self._skip + 1] == b"\r" else 1
            if self._skip > MAX_HEAD_BYTES:
                raise BadRequest("only empty lines where a request line should be")
        start = max(self._skip, self._scanned - 3)
        ends = [i for i in (buffer.find(b"\n\r\n", start), buffer.find(b"\n\n", start)) if i >= 0]
        if not ends:
            if len(buffer) - self._skip > MAX_HEAD_BYTES:
                raise HeadersTooLarge("request line and headers are over %d bytes" % MAX_HEAD_BYTES)
            self._scanned = len(buffer)
            return
        end = min(ends)
        head_end = end + (3 if buffer[end:end + 3] == b"\n\r\n" else 2)
        if head_end - self._skip > MAX_HEAD_BYTES:
            raise HeadersTooLarge("request line and headers are over %d bytes" % MAX_HEAD_BYTES)
        lines = [line[:-1] if line.endswith(b"\r") else line for line in bytes(buffer[self._skip:end]).split(b"\n")]
        if any(b"\r" in line or b"\0" in line for line in lines):
            # http.client's header parser ends a line at a bare CR too: headers after one would be
            # seen by App but not here (or not at all: a later Origin or Host hidden from the guard).
            raise BadRequest("a bare CR or a NUL in the request line or headers")
        self.request_line = lines[0]
        self._read_headers(lines[1:])
        self._head_end = head_end
        self._pos = head_end

    def _read_headers(self, lines: List[bytes]) -> None:
        if len(lines) > MAX_HEADERS:
            raise HeadersTooLarge("more than %d headers" % MAX_HEADERS)
        lengths, codings, seen = set(), [], set()
        for line in lines:
            if line[:1] in (b" ", b"\t"):
                raise BadRequest("a header line is folded onto the next (obsolete line folding)")
            name, colon, value = line.partition(b":")
            if not colon or not _HEADER_NAME.fullmatch(name):
                raise BadRequest("malformed header line")
            name, value = name.lower(), value.strip()
            if name in SINGLE_HEADERS:
                if name in seen:
                    raise BadRequest("the %s header is given twice" % name.decode("latin-1"))
                seen.add(name)
            if name == b"content-length":
                lengths.add(value)
            elif name == b"transfer-encoding":
                codings += [c.strip().lower() for c in value.split(b",") if c.strip()]
            elif name == b"expect" and value.lower() == b"100-continue":
                self.expects_continue = True
        if codings:
            if lengths:
                raise BadRequest("both Transfer-Encoding and Content-Length; send one")
            if codings != [b"chunked"]:
                raise BadRequest("unsupported Transfer-Encoding %r; send Content-Length or chunked"
                                 % b", ".join(codings).decode("latin-1"))
            return
        if len(lengths) > 1:
            raise BadRequest("Content-Length is given twice with different values")
        raw = lengths.pop() if lengths else b"0"
        if not _DIGITS.fullmatch(raw):
            raise BadRequest("Content-Length is not a non-negative integer")
        self._length = int(raw)
        if self._length > self.max_body_bytes:
            raise PayloadTooLarge("request body is %d bytes; the limit is %d" % (self._length, self.max_body_bytes))
        self.expects_continue = self.expects_continue and self._length > 0

    # -- a chunked body ----------------------------------------------------------------

    def _read_chunks(self, buffer: Buffer) -> Optional[int]:
        """Parse chunks from where the last call stopped; the offset past the body once it is whole."""
        while True:
            line_end = buffer.find(b"\n", self._pos, self._pos + MAX_CHUNK_LINE + 1)
            if line_end < 0:
                limit = MAX_TRAILER_BYTES if self._in_trailers else MAX_CHUNK_LINE
                if len(buffer) - self._pos > limit:
                    raise BadRequest("chunk size line or trailer is too long")
                return None
            line = bytes(buffer[self._pos:line_end]).rstrip(b"\r")
            if self._in_trailers:
                self._pos = line_end + 1
                if not line:
                    return self._pos
                if self._pos - self._trailers_start > MAX_TRAILER_BYTES:
                    raise HeadersTooLarge("chunked trailers are over %d bytes" % MAX_TRAILER_BYTES)
                continue
            size = self._chunk_size(line)
            if size == 0:
                self._in_trailers = True
                self._pos = self._trailers_start = line_end + 1
                continue
            data_end = line_end + 1 + size
            if len(buffer) < data_end + 2:
                return None
            after = buffer[data_end:data_end + 2]
            if after != b"\r\n" and after[:1] != b"\n":
                raise BadRequest("malformed chunked body: a chunk is longer than its size says")
            self._chunks.append(bytes(buffer[line_end + 1:data_end]))
            self._body_bytes += size
            self._pos = data_end + (2 if after == b"\r\n" else 1)

    def _chunk_size(self, line: bytes) -> int:
        digits = line.split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(digits):
            raise BadRequest("malformed chunk size %r; a chunk size is 1 to 16 hex digits"
                             % digits[:40].decode("latin-1"))
        size = int(digits, 16)
        if self._body_bytes + size > self.max_body_bytes:
            raise PayloadTooLarge("request body is over the limit of %d bytes" % self.max_body_bytes)
        return size
