"""The router: which route a (method, path) is, with which path values; and what a route is.

A `Route` is one record of everything about a route (the table of them is table.py's
`ROUTES`): its method, its path template (`/users/{user_id}/messages/{message_id}`),
its name, the endpoint that answers it (a function of a `Call`: endpoints.py), its
documentation words (an `Operation`, which openapi.py makes its part of the document
of), whether it needs the API key, whether it writes (and so waits for the database's
write lock in the writers' lane, server.py), the query parameters it takes and its
workers' lane. App (api.py) routes with the table, the metrics (metrics.py) label
requests with its templates, and the OpenAPI document is made from it: a route cannot
be served and undocumented, nor documented and not served.

A path is split on `/` first and each segment percent-decoded after, so an id holding
`/`, `%`, a space or any Unicode is named by percent-encoding it (`a%2Fb` is the one
segment `a/b`; `;`, `\\` and an encoded dot are ordinary characters of a segment, never
separators); a literal segment must match exactly. How a target becomes a route is
decided here, once, for the node (and mirrored by the cluster front, flowmem/cluster/flowmem_route.lua):

1. An absolute-form target (`GET http://host:port/users?x HTTP/1.1`, RFC 9112 3.2.2) is
   served as its path and query; its authority stands in for the Host header (api.py).
2. Any run of leading slashes counts as one (`//add` is `/add`: a platform configured
   with the endpoint `http://front:8400/` sends it on every request).
3. A trailing slash is ignored only after a segment that is a literal of the template
   (`/add/`, `/users/alice/sessions/`); after a path value it is not (`/users/alice/` is
   404): browsers and curl remove dot segments, so `DELETE /users/alice/sessions/..` goes
   out as `DELETE /users/alice/`, which must never be DELETE /users/{user_id}.
4. A `{name}` segment left empty takes its value from the query parameter `name` (the
   query form: `DELETE /users/alice/sessions/?session_id=..`, `GET /users//sessions?user_id=..`),
   which is how ids `.` and `..` are reached from a browser. Without that parameter an
   empty segment is no value (rule 3 for a trailing one, 404 for an inner one); a query
   parameter named after a path value given in its segment is 422 (given twice).
5. Every route refuses a query parameter it does not take, or one given twice (422
   naming it), so a typo never silently means a default and `DELETE /users/bob?session_id=s1`
   never deletes all of bob; a body on a route that takes none (all but the POSTs) is
   400 (App). A target that no client sends and an intermediary could read as another
   path is 400: a raw dot segment (`/users/a/sessions/..`: a proxy may remove it), a `#`, a byte
   that is not ASCII (raw UTF-8 would be read as Latin-1, another id),
   userinfo or an empty host in an absolute form, anything but a path or an http(s) URL.

Unknown paths are 404; a known path with another method is 405 naming the methods it
takes (GET ones also answer HEAD). `Router.canonical_path` says what path a target is served as.

App looks a request up once: `Router.find` splits its target and scans the table (each
template split once, when the Router is made), and that one `Found` answers everything
App asks of the request's route: its Allow header, its Match (or 404 or 405) and the
template that labels its metrics. (The connection loop makes one lookup of its own,
before a worker parses the request, to pick its lane: lanes.py.)
"""
from __future__ import annotations

import urllib.parse
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from ..errors import BadRequest, FlowmemError, InvalidField, MethodNotAllowed, NotFound
from ..memory import Memory
from .metrics import Metrics
from .pages import Pages
from .responses import Response

MAX_QUERY_PARAMETERS = 32


class Operation(NamedTuple):
    """A route's documentation words: openapi.py makes the route's operation of them."""
    summary: str
    description: str
    body: Optional[str] = None  # the request body's schema (openapi.SCHEMAS)
    answer: Optional[str] = None  # the 200 answer's schema (JSON); or a media type for other answers
    not_found: bool = False  # answers 404 for a value that names nothing
    # The route's own words for a parameter, where openapi.PARAMETERS' general ones would mislead.
    parameters: Tuple[Tuple[str, str], ...] = ()


class Route(NamedTuple):
    method: str
    template: str
    action: str  # its name: the OpenAPI operationId, what tests and logs call it
    endpoint: "Endpoint"  # what answers it (endpoints.py)
    doc: Operation
    needs_key: bool = True
    writes: bool = False
    query: Tuple[str, ...] = ()  # the query parameters it takes
    # The workers' lane that answers it beside "read" and "write" (server.py): "import" for imports,
    # whose long writes must never hold the threads that answer Adds.
    lane: str = ""
    # A Config setting that, when set, serves it without the key (metrics_public for /metrics).
    open_if: str = ""

    def segments(self) -> List[str]:
        return self.template.strip("/").split("/") if self.template != "/" else []

    def path_parameters(self) -> List[str]:
        return [s[1:-1] for s in self.segments() if s.startswith("{")]

    def takes_body(self) -> bool:
        """Whether a request to it may carry a body: only the POSTs' (rule 5)."""
        return self.method == "POST"


class Match(NamedTuple):
    route: Route
    params: Dict[str, str]  # path values, percent-decoded (or from the query form, rule 4)
    query: Dict[str, str]  # query parameters, decoded; only those the route takes


class Call(NamedTuple):
    """What an endpoint is given: the request's route and values, its body (read whole, within its
    limit, and a POST's only), and what the App serves with."""
    match: Match
    body: bytes
    memory: Memory
    metrics: Metrics
    pages: Pages


Endpoint = Callable[[Call], Response]


class Target(NamedTuple):
    """A request target taken apart (split_target): rules 1, 2 and the refusals; the Router applies 3 and 4."""
    segments: List[str]  # the path's raw (still encoded) segments, after one trailing slash is removed
    trailing: bool  # whether the path ended in a slash after its last segment
    query: str
    authority: Optional[str] = None  # an absolute-form target's host[:port]
    problem: Optional[str] = None  # why the target is refused with 400; None if it is not


_DOT_SEGMENTS = (".", "..")


def split_target(target: str) -> Target:
    """A request target's raw path segments, trailing slash and query string (rules 1 and 2), or why not."""
    authority = None
    path = target
    if "#" in target:
        return Target([], False, "", None, "the request target holds '#'; percent-encode it in an id as %23")
    if not target.isascii():
        # A target is ASCII (RFC 9112 3.2); its raw bytes reach here read as Latin-1, so raw UTF-8
        # (`/users/\xc3\xbc`) would name another id than the client meant (`Ã¼`, not `ü`).
        return Target([], False, "", None, "the request target holds a byte that is not ASCII; "
                                           "percent-encode ids as UTF-8 (ü is %C3%BC)")
    if not target.startswith("/"):
        scheme, sep, rest = target.partition("://")
        if not (sep and scheme.lower() in ("http", "https")):
            return Target([], False, "", None, "the request target is neither a path starting with / nor an "
                                               "absolute http:// URL")
        end = len(rest)
        for mark in ("/", "?"):
            at = rest.find(mark, 0, end)
            end = at if at >= 0 else end
        authority, path = rest[:end], "/" + rest[end:].lstrip("/")
        if not authority or "@" in authority:
            return Target([], False, "", None, "an absolute-form target needs a host and no userinfo")
    path, _, query = path.partition("?")
    path = path.lstrip("/")  # rule 2: `//add` is `/add`
    segments = path.split("/") if path else []
    trailing = bool(segments) and not segments[-1]
    if trailing:
        segments.pop()
    if "." in path and ("." in segments or ".." in segments):
        # Clients and proxies remove dot segments (RFC 3986 5.2.4): the same target may reach a
        # server as another path, so it is no path at all here.
        return Target(segments, trailing, query, authority, "the path holds a dot segment ('.' or '..'); name "
                      "an id '.' or '..' in the query form (/users/u/sessions/?session_id=..) or as %2E")
    return Target(segments, trailing, query, authority)


_NO_NAMES: frozenset = frozenset()


def _query_names(query: str) -> frozenset:
    """The names of a query string's parameters, decoded as parse_qsl decodes them, never raising:
    which empty `{name}` segments take their value from the query (rule 4); parse_query checks the rest."""
    return frozenset(urllib.parse.unquote_plus(pair.partition("=")[0], errors="replace")
                     for pair in query.split("&") if pair)


def _fits(pattern: Tuple[str, ...], raw: List[str], named: frozenset) -> bool:
    """Whether raw segments fit a template's (of the same length): literals exactly, `{name}` any
    non-empty segment, or an empty one where the query gives `name` (rule 4)."""
    for p, s in zip(pattern, raw):
        if p != s and not (p.startswith("{") and (s or p[1:-1] in named)):
            return False
    return True


def allowed_methods(routes: List[Route]) -> str:
    """The Allow header for a path its routes serve: their methods, HEAD beside GET."""
    methods = []
    for route in routes:
        methods += [route.method] + (["HEAD"] if route.method == "GET" else [])
    return ", ".join(sorted(set(methods), key=methods.index))


class Found(NamedTuple):
    """One lookup of a request target (Router.find): the routes its path fits, whatever their
    method, each with its template's segments; the target's raw path segments (one per template
    segment: an empty one is a value of the query form) and query string; an absolute form's
    authority; and why the target is refused, if it is."""
    fits: List[Tuple[Route, Tuple[str, ...]]]
    raw: List[str]
    query: str
    authority: Optional[str] = None
    problem: Optional[str] = None

    @property
    def routes(self) -> List[Route]:
        return [route for route, _ in self.fits]

    @property
    def template(self) -> Optional[str]:
        """The template the path fits (for labels and logs), or None: never the raw path."""
        return self.fits[0][0].template if self.fits else None

    @property
    def allow(self) -> str:
        """The methods the path takes ('' if none)."""
        return allowed_methods(self.routes)

    def match(self, method: str) -> Match:
        """The route `method` runs here, with its path and query values; BadRequest, NotFound,
        MethodNotAllowed, or InvalidField for a query parameter the route does not take."""
        if self.problem:
            raise BadRequest(self.problem)
        if not self.fits:
            raise NotFound("no such path; GET /openapi.json or /docs lists the routes flowmem serves")
        wanted = "GET" if method == "HEAD" else method
        fit = next(((r, p) for r, p in self.fits if r.method == wanted), None)
        if fit is None:
            allow = self.allow
            raise MethodNotAllowed("%s takes %s, not %s" % (self.template, allow, method[:20]), allow=allow)
        route, pattern = fit
        params, in_query = {}, []
        for name, segment in zip(pattern, self.raw):
            if name.startswith("{"):
                if segment:
                    params[name[1:-1]] = _decode(segment, name[1:-1])
                else:
                    in_query.append(name[1:-1])
        query = parse_query(self.query, route.query + tuple(in_query), "%s %s" % (route.method, route.template),
                            in_path=tuple(params))
        for name in in_query:
            params[name] = query.pop(name)
        return Match(route, params, query)


class Router:
    """Finds where a request target leads: `find` once per request, and its Found answers the rest."""

    def __init__(self, routes: Tuple[Route, ...]):
        self.routes = routes
        # Each template split once here, not on every request, and kept with those of its length
        # (in table order): a path is only compared with templates it could fit.
        self._by_length: Dict[int, List[Tuple[Route, Tuple[str, ...]]]] = {}
        for route in routes:
            pattern = tuple(route.segments())
            self._by_length.setdefault(len(pattern), []).append((route, pattern))

    def find(self, target: str) -> Found:
        split = split_target(target)
        raw, query = split.segments, split.query
        if split.problem:
            return Found([], raw, query, split.authority, split.problem)
        # Only a path with an empty segment needs the query's names (rule 4): most never parse them here.
        named = _query_names(query) if query and (split.trailing or "" in raw) else _NO_NAMES
        if split.trailing and named:
            # The trailing slash ends an empty `{name}` segment whose value the query gives (rule 4)...
            padded = raw + [""]
            fits = [(route, pattern) for route, pattern in self._by_length.get(len(padded), ())
                    if _fits(pattern, padded, named)]
            if fits:
                return Found(fits, padded, query, split.authority)
        # ...or it is ignored, after a literal only (rule 3).
        fits = [(route, pattern) for route, pattern in self._by_length.get(len(raw), ())
                if _fits(pattern, raw, named) and not (split.trailing and pattern[-1].startswith("{"))]
        return Found(fits, raw, query, split.authority)


    def canonical_path(self, target: str) -> Optional[str]:
        """The path `target` is served as, by the rules of this module's docstring: its template with
        every path value in its segment (the query form's too), percent-encoded (`.` and `..` as %2E),
        without its query; None where it is refused or names no route (400, 404, or 422 for its query)."""
        found = self.find(target)
        if not found.fits:
            return None
        route, pattern = found.fits[0]
        try:
            params = found.match(route.method).params
        except FlowmemError:
            return None
        return "/" + "/".join(_encoded(params[p[1:-1]]) if p.startswith("{") else p for p in pattern)


def _decode(segment: str, name: str) -> str:
    try:
        return urllib.parse.unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise InvalidField(name, "is not UTF-8 once percent-decoded") from None


def parse_query(query: str, accepted: Tuple[str, ...], route: str = "this route",
                in_path: Tuple[str, ...] = ()) -> Dict[str, str]:
    """The query string's parameters by name; 422 for one not in `accepted` (every route refuses
    what it does not take, rule 5; one named after a path value `in_path` is that value given
    twice), given twice, or not UTF-8. `route` names the route in the reasons."""
    if not query:
        return {}
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, errors="strict",
                                       max_num_fields=MAX_QUERY_PARAMETERS)
    except UnicodeDecodeError:
        raise InvalidField("query string", "is not UTF-8 once percent-decoded") from None
    except ValueError:
        raise InvalidField("query string", "has more than %d parameters" % MAX_QUERY_PARAMETERS) from None
    out: Dict[str, str] = {}
    for name, value in pairs:
        if name in in_path:
            raise InvalidField(name, "is given twice: in the path and in the query string")
        if name not in accepted:
            raise InvalidField(name[:100] or "(a parameter without a name)", "is not a query parameter of %s "
                               "(it takes %s)" % (route, ", ".join(accepted) or "none"))
        if name in out:
            raise InvalidField(name, "is given more than once")
        out[name] = value
    return out


def _encoded(value: str) -> str:
    """A path value as its canonical segment: percent-encoded, and a dot segment as %2E."""
    return value.replace(".", "%2E") if value in _DOT_SEGMENTS else urllib.parse.quote(value, safe="")
