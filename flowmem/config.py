"""All settings: read from defaults, then FLOWMEM_* variables, then flags, into one Config.

Every setting `name` can be set by the environment variable `FLOWMEM_<NAME>` and by the
command-line flag `--<name with dashes>` (`--api-key` warns that a command line shows in
`ps`); a flag wins over the environment, which wins over the default.

Each setting is declared once (storage.declare.setting(): its type, default, group and
help), in the class of the layer that reads it: how search ranks and what it returns in
retrieval.ranking.Ranking, the database's and the server's here in ServiceSettings.
Config inherits both and declares nothing of its own, so a setting added to either is a
Config field, a variable, a flag and a row of the `flowmem settings` table (and of its
copy in docs/operations.md) with no other edit; tests/test_config.py fails when one name
is declared twice. Why each default is what it is, with the commands that measured it:
docs/results/settings.md.

Config hands each layer its settings: `index_settings()` for storage (the index settings
asked for explicitly; None leaves one to the database, and a new database's defaults live
in storage.settings.ViewSettings only) and `ranking()` for retrieval (a Ranking of the
same names and values).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional

from .config_values import kind_of, parse_value, to_bool
from .errors import ConfigError
from .retrieval.ranking import Ranking
from .storage import declare, views
from .storage.declare import setting
from .storage.settings import ViewSettings

ENV_PREFIX = "FLOWMEM_"
GROUPS = declare.GROUPS  # the groups settings are shown in, in order: name -> title (the CLI reads them here)


@dataclasses.dataclass(frozen=True)
class ServiceSettings:
    """The settings of the database, the server and the index asked for; how search ranks is Ranking's."""

    db: str = setting("flowmem.db", "database", "the SQLite database file (WAL mode)")
    host: str = setting("127.0.0.1", "server", "the address to listen on")
    port: int = setting(8000, "server", "the TCP port to listen on")
    api_key: Optional[str] = setting(
        None, "server", "the key every route then requires but /health, /openapi.json, /docs and the inspector (/, "
        "/ui), as Authorization: Bearer KEY, Authorization: Token KEY or X-Api-Key: KEY")
    api_key_file: Optional[str] = setting(
        None, "server", "a file whose first line is the API key, when FLOWMEM_API_KEY is not set")
    max_body_bytes: int = setting(8 * 1024 * 1024, "server", "the largest request body, in bytes; larger gets 413")
    max_inflight: int = setting(
        512, "server", "requests received whole and not yet answered, at most; more get 429")
    request_timeout_s: float = setting(
        10.0, "server", "seconds for a request to arrive whole (from its first byte, or from connecting) and for a "
        "response to be read; else the connection is closed (408 if part of a request came)")
    keepalive_timeout_s: float = setting(30.0, "server", "seconds an idle keep-alive connection stays open")
    shutdown_timeout_s: float = setting(
        10.0, "server", "seconds after SIGTERM for received requests to finish and half-sent ones to complete")
    max_connections: int = setting(
        1024, "server", "open connections, at most; one more makes the one that has waited longest for (the rest "
        "of) a request give way")
    workers: int = setting(8, "server", "threads that answer requests, a quarter of them (at least one) the Adds; "
                                        "imports get as many again of their own")
    # Browsers (http/guard.py): on a public address, no allowed host means any.
    allowed_hosts: str = setting(
        "", "server", "Host names answered besides localhost and IP literals, comma-separated; on a public address, "
        "none means any")
    allowed_origins: str = setting("", "server", "web page origins allowed to call flowmem (CORS), comma-separated")
    top_k_cap: int = setting(100, "results", "the largest top_k a Search gets; a larger one is clamped to it")
    # docs/results.md's Speed section measures what the session cache costs in RSS and saves in search
    # time; docs/caches.md what a user's postings and vectors hold, and these bounds (docs/results/settings.md).
    cache_messages: int = setting(
        200_000, "database", "messages search keeps in memory between searches, one per 2,000 characters of a long "
        "one (about 1.2 KB of RSS per short message)")
    cache_vector_bytes: int = setting(
        40_000_000, "database", "bytes of users' meaning vectors search keeps in memory (about 1.0 KB a message "
        "of a user's latest meaning_scan, 107 bytes one before them)")
    cache_postings_bytes: int = setting(
        40_000_000, "database", "bytes of users' message postings search keeps in memory (about 8 bytes a word, "
        "more for a small user); a user with more is read from the index at every search")
    # Index settings: fixed per database. None means "as the database was built"; a new database
    # gets the defaults of storage.settings.ViewSettings (the only place they are written). A value given
    # that differs from the database's is refused, naming the `flowmem reindex` that applies it.
    window_size: Optional[int] = setting(None, "index", "messages in a window view")
    segment_max_messages: Optional[int] = setting(None, "index", "messages in a segment view, at most")
    segment_max_gap_s: Optional[int] = setting(
        None, "index", "seconds: a longer pause between two messages ends a segment")
    stem: Optional[bool] = setting(None, "index", "index (and read questions as) Porter stems, not surface words")
    split_speakers: Optional[bool] = setting(
        None, "index", 'index a leading "Name: " label as the speaker, not as text')
    resolve_times: Optional[bool] = setting(
        None, "index", "index the dates messages mean, relative times resolved against their day")
    synchronous: str = setting(
        "FULL", "database", "SQLite durability: OFF, NORMAL, FULL or EXTRA; FULL means an acknowledged Add "
        "survives power loss")
    log_level: str = setting("INFO", "server", "the lowest level logged: DEBUG, INFO, WARNING or ERROR")
    # Beside Litestream flowmem's truncating checkpoints wait out its read lock (docs/cluster.md).
    checkpoints: str = setting(
        "flowmem", "database", "who checkpoints the WAL: flowmem (a background thread, and after delete-user), or "
        "external: never flowmem (Litestream, replicating the file, does it)")
    pause_gc: bool = setting(True, "database", "pause Python's cyclic garbage collector during each search")
    # docs/page_bytes.md: what six listings at once hold in RSS at each bound, and why this one.
    page_max_bytes: int = setting(
        2 * 1024 * 1024, "database", "text a page of a listing or an export holds, at most, in bytes (a page "
        "ends early, with its next_cursor; one row larger than this is a page alone)")
    metrics_public: bool = setting(
        False, "server", "serve GET /metrics without the API key (to a scraper that cannot send one)")
    # docs/write_stalls.md: an Add is one transaction, and how long every other write waits behind one at this bound.
    max_add_messages: int = setting(
        1000, "database", "messages one Add may hold, at most; more are refused (422 naming messages), nothing stored")
    # docs/embedder.md: what an embedder is asked, what happens when it fails, and what it measured.
    embedder_url: Optional[str] = setting(
        None, "embedder", "an OpenAI-compatible embeddings endpoint's base (POST {url}/embeddings), e.g. "
        "http://127.0.0.1:8080/v1; none: no embedder")
    embedder_model: str = setting("", "embedder", "the model named in each request, and recorded in the database")
    embedder_key_file: Optional[str] = setting(
        None, "embedder", "a file whose first line is the embedder's API key, sent as Authorization: Bearer KEY")
    embedder_batch: int = setting(64, "embedder", "texts one embeddings request holds, at most")
    embedder_timeout_s: float = setting(
        10.0, "embedder", "seconds one embeddings request may take; a search's question waits at most this long")


@dataclasses.dataclass(frozen=True)
class Config(Ranking, ServiceSettings):
    """flowmem's settings: ServiceSettings's and Ranking's fields, declared there and nowhere else.

    Config declares no field of its own: its fields are ServiceSettings's, then Ranking's
    (dataclasses collect a base's fields in reverse order of inheritance).
    """

    def key(self) -> Optional[str]:
        """The API key: `api_key` if set, else the first line of `api_key_file`, else None."""
        if self.api_key:
            return self.api_key
        if self.api_key_file:
            try:
                with open(self.api_key_file, encoding="utf-8") as f:
                    key = f.readline().strip()
            except OSError as e:
                raise ConfigError("cannot read api key file %s: %s" % (self.api_key_file, e.strerror)) from e
            if not key:
                raise ConfigError("api key file %s is empty" % self.api_key_file)
            return key
        return None

    def embedder_key(self) -> Optional[str]:
        """The embedder's API key: the first line of `embedder_key_file`, else None."""
        if not self.embedder_key_file:
            return None
        try:
            with open(self.embedder_key_file, encoding="utf-8") as f:
                return f.readline().strip() or None
        except OSError as e:
            raise ConfigError("cannot read embedder key file %s: %s" % (self.embedder_key_file, e.strerror)) from e

    def index_settings(self) -> Dict[str, Any]:
        """The index settings given explicitly, by name, for storage; those left None are the database's.

        A new database takes storage.settings.ViewSettings's defaults for the rest; an
        existing one refuses a value that differs from its own (storage.settings.index_problem).
        """
        return {name: getattr(self, name) for name in ViewSettings._fields if getattr(self, name) is not None}

    def ranking(self) -> Ranking:
        """The Ranking of these settings, for retrieval: the ranking and results settings alone, by name."""
        return Ranking(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Ranking)})

    def validate(self) -> "Config":
        """Raise ConfigError for values no part of flowmem could work with."""
        positive = ("port", "max_body_bytes", "max_inflight", "top_k_cap", "window_size", "segment_max_messages",
                    "max_connections", "workers", "page_max_bytes", "max_add_messages", "embedder_batch")
        for name in positive:
            if getattr(self, name) is not None and getattr(self, name) < (0 if name == "port" else 1):
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.port > 65535:
            raise ConfigError("port must be at most 65535, got %r" % self.port)
        if self.rrf_k < 0 or any(w < 0 for _, w in self.weights() + self.tail_weights()):
            raise ConfigError("rrf_k and every weight_* and tail_weight_* must not be negative")
        for name in ("request_timeout_s", "keepalive_timeout_s", "shutdown_timeout_s", "embedder_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.segment_max_gap_s is not None and self.segment_max_gap_s < 0:
            raise ConfigError("segment_max_gap_s must not be negative")
        if self.view_kind not in views.KINDS:
            raise ConfigError("view_kind must be one of %s, got %r" % (", ".join(views.KINDS), self.view_kind))
        if not 0.0 <= self.message_share <= 1.0:
            raise ConfigError("message_share must be between 0 and 1")
        if self.synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError("synchronous must be OFF, NORMAL, FULL or EXTRA, got %r" % self.synchronous)
        if self.checkpoints not in ("flowmem", "external"):
            raise ConfigError("checkpoints must be flowmem or external, got %r" % self.checkpoints)
        return self


def field_type(name: str) -> Any:
    """What parses the text of setting `name`: int, float, to_bool or str (for CLI flags)."""
    kind = next(kind_of(f) for f in dataclasses.fields(Config) if f.name == name)
    return {"int": int, "float": float, "bool": to_bool}.get(kind, str)


def _parse(field: dataclasses.Field, raw: str) -> Any:
    return parse_value(field, raw, ENV_PREFIX + field.name.upper())


# Settings of earlier versions that no longer exist: one given is refused, naming what replaced it
# (silently ignored, a bound an operator set would be gone without a word).
RETIRED = {
    "cache_words": "cache_postings_bytes, a bound in bytes (about 7.5 bytes a word held: docs/caches.md)",
    "cache_vectors": "cache_vector_bytes, a bound in bytes (about 1.0 KB a vector held: docs/caches.md)",
}


def load(flags: Optional[Mapping[str, Any]] = None, environ: Optional[Mapping[str, str]] = None) -> Config:
    """Build a Config from `environ` (default: os.environ) and `flags` (None values are unset)."""
    environ = os.environ if environ is None else environ
    flags = flags or {}
    for name, successor in sorted(RETIRED.items()):
        if flags.get(name) is not None or environ.get(ENV_PREFIX + name.upper(), "") != "":
            raise ConfigError("%s%s is no longer a setting: use %s" % (ENV_PREFIX, name.upper(), successor))
    values = {}
    for field in dataclasses.fields(Config):
        env_name = ENV_PREFIX + field.name.upper()
        if flags.get(field.name) is not None:
            # Text for a typed setting (tools pass NAME=VALUE pairs) is read as the environment's is.
            flag = flags[field.name]
            values[field.name] = _parse(field, flag) if isinstance(flag, str) else flag
        elif environ.get(env_name, "") != "":
            values[field.name] = _parse(field, environ[env_name])
    return Config(**values).validate()


def field_names() -> List[str]:
    """Names of all settings, for building CLI flags."""
    return [f.name for f in dataclasses.fields(Config)]


class Setting(NamedTuple):
    """One setting as declared: what `--help` and the settings table show."""

    name: str
    group: str  # a key of GROUPS
    help: str
    default: Any
    variable: str  # the environment variable, FLOWMEM_<NAME>


def settings() -> List[Setting]:
    """Every setting, in the order Config declares them."""
    return [Setting(f.name, f.metadata["group"], f.metadata["help"], f.default, ENV_PREFIX + f.name.upper())
            for f in dataclasses.fields(Config)]
