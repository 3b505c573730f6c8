"""What the server shows people and tools about itself: /openapi.json, /docs and the inspector page.

None of these hold memory content, so they are open (no key); the browser checks still
apply (api.py). The OpenAPI document is made once, at the first page asked for, by the
function the App gives (openapi.document over its routes); /docs is that document
rendered here as one HTML page, on the server, with no script,
no outside asset and every text HTML-escaped, so a description cannot become markup.
The inspector (inspector.html, beside this module) is a self-contained page that
fetches everything through the API with the key its user types.

Every HTML page is sent with a Content-Security-Policy that allows nothing from
elsewhere, no inline script or style but the inspector's own (by their hashes, computed
from the page served, never kept by hand), and no framing (a page of another site cannot
overlay it), `nosniff`, no referrer, and no caching.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import pkgutil
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .responses import Response

INSPECTOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inspector.html")
# The inspector runs its own inline script and style, named by their hashes (inspector_csp), and talks
# to this server only: a script or style injected into the page would not run.
INSPECTOR_CSP = ("default-src 'self'; script-src %s; style-src %s; connect-src 'self'; img-src 'self' data:; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
DOCS_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
PLACEHOLDER = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>flowmem</title></head>"
               "<body><h1>flowmem</h1><p>The inspector page is not installed; see <a href=\"/docs\">/docs</a>."
               "</p></body></html>")


def html_headers(policy: str) -> List[Tuple[str, str]]:
    return [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", policy),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"), ("X-Frame-Options", "DENY")]


class Pages:
    """The documents of one App, each made once, when first asked for; `spec` makes its OpenAPI document."""

    def __init__(self, spec: Callable[[], Dict[str, Any]]):
        self._spec = spec
        self._made: Optional[Tuple[bytes, bytes]] = None  # /openapi.json and /docs, as served

    def _documents(self) -> Tuple[bytes, bytes]:
        if self._made is None:  # two workers racing here make the same bytes; either is kept
            spec = self._spec()
            self._made = (json.dumps(spec, ensure_ascii=False, indent=1).encode("utf-8"), render(spec).encode("utf-8"))
        return self._made

    def openapi(self) -> Response:
        """GET /openapi.json."""
        return Response(200, [("Content-Type", "application/json"), ("Cache-Control", "no-store"),
                              ("X-Content-Type-Options", "nosniff")], self._documents()[0])

    def docs(self) -> Response:
        """GET /docs: the document as one HTML page."""
        return Response(200, html_headers(DOCS_CSP), self._documents()[1])

    def inspector(self) -> Response:
        """GET / and GET /ui: the inspector page, under a policy that allows its own inline code only."""
        page = inspector()
        return Response(200, html_headers(inspector_csp(page)), page)


def inline_sources(page: bytes, tag: str) -> str:
    """CSP sources that allow exactly the page's own inline `tag` elements (`script`, `style`): each
    one's sha256, computed from the page as served, so no hash is kept by hand; 'none' if it has none."""
    hashes = []
    page = re.sub(rb"<!--.*?-->", b"", page, flags=re.S)  # a comment may name a <script> tag in its text
    for body in re.findall(rb"<%s(?:\s[^>]*)?>(.*?)</%s>" % (tag.encode(), tag.encode()), page, re.S | re.I):
        # The browser hashes the element's text as parsed, where every CRLF or CR is a LF.
        text = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        hashes.append("'sha256-%s'" % base64.b64encode(hashlib.sha256(text).digest()).decode("ascii"))
    return " ".join(hashes) or "'none'"


def inspector_csp(page: bytes) -> str:
    """The inspector's Content-Security-Policy: its own inline script and style, nothing injected."""
    return INSPECTOR_CSP % (inline_sources(page, "script"), inline_sources(page, "style"))


def inspector() -> bytes:
    """The inspector page, read at each request (it may be updated beside a running server); a placeholder
    if it is not installed."""
    try:  # pkgutil, not open(): the page is a member of the archive when flowmem runs from `make pyz`
        page = pkgutil.get_data(__name__.rpartition(".")[0], os.path.basename(INSPECTOR))
    except OSError:
        page = None
    return page if page is not None else PLACEHOLDER.encode("utf-8")


# -- /docs -------------------------------------------------------------------------

STYLE = ("body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}"
         "code,.path{font-family:ui-monospace,monospace}h2{margin-top:2rem;border-bottom:1px solid #ccc}"
         ".method{display:inline-block;min-width:4.5rem;font-weight:bold}table{border-collapse:collapse;margin:.3rem 0}"
         "td,th{border:1px solid #ddd;padding:.15rem .5rem;text-align:left;vertical-align:top}"
         "section{margin:1rem 0 1.5rem}")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def schema_text(schema: Dict[str, Any]) -> str:
    """A schema in a few words: `Message`, `array of Item`, `integer or null`."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "oneOf" in schema:
        return " or ".join(schema_text(s) for s in schema["oneOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type", "any")
    text = " or ".join(kind) if isinstance(kind, list) else kind
    if kind == "array":
        text = "array of " + schema_text(schema.get("items", {}))
    return text


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> List[str]:
    """An HTML table; cells are escaped here (none holds markup)."""
    out = ["<table><tr>" + "".join("<th>%s</th>" % _e(h) for h in head) + "</tr>"]
    out += ["<tr>" + "".join("<td>%s</td>" % _e(c) for c in row) + "</tr>" for row in rows]
    return out + ["</table>"]


def _operation(path: str, method: str, op: Dict[str, Any]) -> List[str]:
    lock = " (needs the key)" if op.get("security") else ""
    out = ['<section id="%s">' % _e(op["operationId"]),
           '<h3><span class="method">%s</span> <span class="path">%s</span></h3>' % (_e(method.upper()), _e(path)),
           "<p><b>%s</b>%s. %s</p>" % (_e(op["summary"]), _e(lock), _e(op["description"]))]
    if op["parameters"]:
        out += _table(("parameter", "in", "type", "what"),
                      [(p["name"], p["in"], schema_text(p["schema"]), p["description"]) for p in op["parameters"]])
    if "requestBody" in op:
        body = op["requestBody"]["content"]["application/json"]["schema"]
        out.append("<p>Body: <code>%s</code> (application/json)</p>" % _e(schema_text(body)))
    rows = []
    for status, response in op["responses"].items():
        kinds = ["%s %s" % (media, schema_text(c["schema"])) for media, c in response["content"].items()]
        rows.append((status, response["description"], "; ".join(kinds)))
    out += _table(("status", "when", "body"), rows)
    return out + ["</section>"]


def _schema(name: str, schema: Dict[str, Any]) -> List[str]:
    required = set(schema.get("required", ()))
    rows = [(prop, schema_text(s), "yes" if prop in required else "", s.get("description", ""))
            for prop, s in schema.get("properties", {}).items()]
    return ['<section id="schema-%s"><h3>%s</h3>' % (_e(name), _e(name))] + \
        _table(("field", "type", "required", "what"), rows) + ["</section>"]


def render(spec: Dict[str, Any]) -> str:
    """The OpenAPI document as one self-contained, script-free HTML page."""
    info = spec["info"]
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s %s API</title><style>%s</style></head><body>" % (_e(info["title"]), _e(info["version"]), STYLE),
           "<h1>%s %s API</h1>" % (_e(info["title"]), _e(info["version"])),
           "<p>%s</p>" % _e(info["description"]),
           '<p>The same as a machine-readable document: <a href="/openapi.json">/openapi.json</a>.</p>',
           "<h2>Routes</h2>"]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            out += _operation(path, method, op)
    out.append("<h2>Schemas</h2>")
    for name, schema in spec["components"]["schemas"].items():
        out += _schema(name, schema)
    schemes = spec["components"]["securitySchemes"]
    out.append("<h2>Security</h2>")
    out += _table(("scheme", "how"), [(name, "%s %s" % (s["type"], s.get("scheme") or s.get("name")))
                                      for name, s in schemes.items()])
    return "\n".join(out + ["</body></html>"]) + "\n"
