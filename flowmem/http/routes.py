"""The route table and the router: which (method, path) runs which action, with which path values.

Every route flowmem serves is one `Route` in `ROUTES`: its method, its path template
(`/users/{user_id}/messages/{message_id}`), the App action that answers it, whether it
needs the API key, whether it writes (and so waits for the database's write lock in
the writers' lane, server.py) and the query parameters it takes. App (api.py) routes
with it, the metrics (metrics.py) label requests with its templates, and the OpenAPI
document (openapi.py) is made from it: a route cannot be served and undocumented.

A path is split on `/` first and each segment percent-decoded after, so an id holding
`/`, `%`, a space or any Unicode is named by percent-encoding it (`a%2Fb` is the one
segment `a/b`); a literal segment must match exactly, a `{name}` segment matches any
non-empty one. One trailing slash is ignored (`/health/`). Unknown paths are 404; a
known path with another method is 405 naming the methods it takes (GET ones also
answer HEAD). Query strings are parsed with urllib.parse: on a route that takes
parameters, one it does not take, or one given twice, is 422 naming it, so a typo never
silently means a default (the contract's routes take none and ignore a query string).

App looks a request up once: `Router.find` splits its target and scans the table (each
template split once, when the Router is made), and that one `Found` answers everything
App asks of the request's route: its Allow header, its Match (or 404 or 405) and the
template that labels its metrics. (The connection loop makes one lookup of its own,
before a worker parses the request, to pick its lane: whether it writes, api.writes.)
"""
from __future__ import annotations

import urllib.parse
from typing import Dict, List, NamedTuple, Optional, Tuple

from ..errors import InvalidField, MethodNotAllowed, NotFound

MAX_QUERY_PARAMETERS = 32


class Route(NamedTuple):
    method: str
    template: str
    action: str  # the App method that answers it: App.<action>(match, headers, body)
    needs_key: bool
    writes: bool = False
    query: Tuple[str, ...] = ()  # the query parameters it takes

    def segments(self) -> List[str]:
        return self.template.strip("/").split("/") if self.template != "/" else []

    def path_parameters(self) -> List[str]:
        return [s[1:-1] for s in self.segments() if s.startswith("{")]


PAGE = ("limit", "cursor")
ROUTES: Tuple[Route, ...] = (
    Route("POST", "/add", "add", True, writes=True),
    Route("POST", "/search", "search", True),
    Route("GET", "/health", "health", False),
    Route("GET", "/users", "list_users", True, query=PAGE),
    Route("DELETE", "/users/{user_id}", "delete_user", True, writes=True),
    Route("GET", "/users/{user_id}/sessions", "list_sessions", True, query=PAGE),
    Route("DELETE", "/users/{user_id}/sessions/{session_id}", "delete_session", True, writes=True),
    Route("GET", "/users/{user_id}/messages", "list_messages", True,
          query=("session_id", "since", "until", "order") + PAGE),
    Route("GET", "/users/{user_id}/messages/{message_id}", "get_message", True),
    Route("GET", "/users/{user_id}/export", "export", True, query=PAGE),
    Route("POST", "/users/{user_id}/import", "import_records", True, writes=True),
    # metrics: the key unless metrics_public (App decides; the table says the default).
    Route("GET", "/metrics", "metrics", True),
    Route("GET", "/openapi.json", "openapi", False),
    Route("GET", "/docs", "docs", False),
    Route("GET", "/", "inspector", False),
    Route("GET", "/ui", "inspector", False),
)


class Match(NamedTuple):
    route: Route
    params: Dict[str, str]  # path parameters, percent-decoded
    query: Dict[str, str]  # query parameters, decoded; only those the route takes


def split_target(target: str) -> Tuple[List[str], str]:
    """A request target's raw (still encoded) path segments and its query string."""
    path, _, query = target.partition("?")
    path = path.split("#", 1)[0]
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return (path.strip("/").split("/") if path.strip("/") else []), query


def _fits(pattern: Tuple[str, ...], raw: List[str]) -> bool:
    """Whether raw segments fit a template's (of the same length): literals exactly, `{name}` any non-empty."""
    for p, s in zip(pattern, raw):
        if p != s and not (p.startswith("{") and s):
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
    method, each with its template's segments; and the target's raw path segments and query string."""
    fits: List[Tuple[Route, Tuple[str, ...]]]
    raw: List[str]
    query: str

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
        """The route `method` runs here, with its path and query values; NotFound or MethodNotAllowed."""
        if not self.fits:
            raise NotFound("no such path; GET /openapi.json or /docs lists the routes flowmem serves")
        wanted = "GET" if method == "HEAD" else method
        fit = next(((r, p) for r, p in self.fits if r.method == wanted), None)
        if fit is None:
            allow = self.allow
            raise MethodNotAllowed("%s takes %s, not %s" % (self.template, allow, method[:20]), allow=allow)
        route, pattern = fit
        params = {}
        for name, segment in zip(pattern, self.raw):
            if name.startswith("{"):
                params[name[1:-1]] = _decode(segment, name[1:-1])
        return Match(route, params, parse_query(self.query, route.query))


class Router:
    """Finds where a request target leads: `find` once per request, and its Found answers the rest."""

    def __init__(self, routes: Tuple[Route, ...] = ROUTES):
        self.routes = routes
        # Each template split once here, not on every request, and kept with those of its length
        # (in table order): a path is only compared with templates it could fit.
        self._by_length: Dict[int, List[Tuple[Route, Tuple[str, ...]]]] = {}
        for route in routes:
            pattern = tuple(route.segments())
            self._by_length.setdefault(len(pattern), []).append((route, pattern))

    def find(self, target: str) -> Found:
        raw, query = split_target(target)
        fits = [(route, pattern) for route, pattern in self._by_length.get(len(raw), ()) if _fits(pattern, raw)]
        return Found(fits, raw, query)


def _decode(segment: str, name: str) -> str:
    try:
        return urllib.parse.unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise InvalidField(name, "is not UTF-8 once percent-decoded") from None


def parse_query(query: str, accepted: Tuple[str, ...]) -> Dict[str, str]:
    """The query string's parameters by name; 422 for one not in `accepted`, given twice, or not UTF-8.

    A route that takes no parameters ignores its query string, as the contract's routes always have.
    """
    if not query or not accepted:
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
        if name not in accepted:
            raise InvalidField(name[:100], "is not a parameter of this route (it takes %s)" % ", ".join(accepted))
        if name in out:
            raise InvalidField(name, "is given more than once")
        out[name] = value
    return out
