"""Keep web pages out: the checks that stop a browser acting on a page's behalf.

flowmem listens on 127.0.0.1 without a key by default, and any web page the operator
visits can make the browser send requests there. Three doors are closed:

- **Writes by form-like requests.** A cross-site POST whose Content-Type is one a
  form can send (`text/plain`, `application/x-www-form-urlencoded`,
  `multipart/form-data`) needs no CORS preflight, so the browser sends it as is.
  flowmem takes JSON only: such bodies get 415. `application/json` (with any
  charset) and no Content-Type at all, as challenge clients send them, are accepted.
- **Requests from pages.** Browsers send `Origin` on every cross-site POST (and
  `Sec-Fetch-Site` on every request). One from an origin not allowed (none is, by
  default) gets 403. No CORS headers are sent unless origins are allowed. A page's
  own server is its origin: the inspector page flowmem serves (`/`, `/ui`) sends
  `Origin` equal to `http://` + the request's `Host`, which is accepted when that Host
  is one that cannot be rebound (below), never under "any name".
- **DNS rebinding.** A page on a hostname that the attacker re-points to 127.0.0.1
  becomes same-origin with flowmem in the browser's eyes, but its requests still
  carry that hostname in `Host`. A server bound to loopback answers only loopback
  names (`localhost`) and IP literals (an IP literal cannot be rebound), plus the
  names configured; others get 421. A server bound to a public address answers any
  name unless names are configured, so challenge clients reach it by whatever name
  they use.
"""
from __future__ import annotations

import ipaddress
from typing import FrozenSet, List, Optional, Protocol, Tuple

from ..errors import Forbidden, MisdirectedRequest, UnsupportedMediaType


class Headers(Protocol):
    """A request's headers as they are read here: http.server's (names in any case), or a dict in tests."""

    def get(self, name: str, /) -> Optional[str]: ...


FORM_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data")
LOOPBACK_NAMES = ("localhost",)


def _names(setting: str) -> FrozenSet[str]:
    return frozenset(n.strip().lower().rstrip("/") for n in setting.split(",") if n.strip())


def is_loopback(host: str) -> bool:
    """Whether a listening address is a loopback one (only this machine can connect)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a Host header, without port, brackets or trailing dot, lower-cased."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    name, colon, port = value.rpartition(":")
    if colon and port.isascii() and (port.isdigit() or not port):  # `localhost:` is localhost (RFC 3986 3.2.3)
        value = name
    return value.rstrip(".")


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class BrowserGuard:
    """The Host, Origin and Content-Type rules for one listening address and its settings."""

    def __init__(self, listen_host: str, *, allowed_hosts: str, allowed_origins: str):
        """`allowed_hosts`, `allowed_origins`: comma-separated settings (config.py)."""
        self.allowed_hosts = _names(allowed_hosts)
        self.allowed_origins = _names(allowed_origins)
        # On a public address without configured names, every name is answered.
        self.any_host = not self.allowed_hosts and not is_loopback(listen_host)

    def check_host(self, header: Optional[str]) -> None:
        if header is None or self.any_host:
            return  # HTTP/1.0 clients may omit Host; browsers never do
        name = host_name(header)
        if name in LOOPBACK_NAMES or name in self.allowed_hosts or _is_ip_literal(name):
            return
        raise MisdirectedRequest("this server does not answer for host %r; allow it with --allowed-hosts"
                                 % name[:100])

    def check_origin(self, headers: Headers, host: Optional[str]) -> None:
        """`host`: the request's Host, or an absolute-form target's authority in its place."""
        origin = headers.get("Origin")
        if origin is not None:
            if self.same_origin(origin, host):
                return  # a page this server served (the inspector) calling its own server
            if origin.strip().lower().rstrip("/") not in self.allowed_origins:
                raise Forbidden("requests from web pages are refused (Origin %r); allow an origin with "
                                "--allowed-origins" % origin[:100])
            return
        if (headers.get("Sec-Fetch-Site") or "").strip().lower() in ("cross-site", "same-site"):
            raise Forbidden("requests from web pages are refused (Sec-Fetch-Site: cross-site)")

    def same_origin(self, origin: str, host: Optional[str]) -> bool:
        """Whether `origin` is this server's own as the request names it (`http(s)://` + its Host), for a
        Host that cannot be rebound: a loopback name, an IP literal or a configured name. Under "any
        name" (a public address, no names configured) a rebound name would be its own origin: not then."""
        if not host:
            return False
        name = host_name(host)
        if not (name in LOOPBACK_NAMES or name in self.allowed_hosts or _is_ip_literal(name)):
            return False
        scheme, sep, rest = origin.strip().lower().partition("://")
        return bool(sep) and scheme in ("http", "https") and rest == host.strip().lower()

    @staticmethod
    def check_content_type(header: Optional[str]) -> None:
        media = (header or "").split(";", 1)[0].strip().lower()
        if media in ("", "application/json") or (media.startswith("application/") and media.endswith("+json")):
            return
        hint = " (a type web forms send)" if media in FORM_TYPES else ""
        raise UnsupportedMediaType("Content-Type %r is not accepted%s; send application/json" % (media[:100], hint))

    def cors_headers(self, headers: Headers, allow: str) -> List[Tuple[str, str]]:
        """CORS response headers for a request from an allowed origin; none otherwise."""
        origin = (headers.get("Origin") or "").strip()
        if not origin or origin.lower().rstrip("/") not in self.allowed_origins:
            return []
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                ("Access-Control-Allow-Methods", allow),
                ("Access-Control-Allow-Headers", "Authorization, X-Api-Key, Content-Type"),
                ("Access-Control-Max-Age", "600")]
