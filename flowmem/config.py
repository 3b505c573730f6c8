"""All settings in one dataclass, read from defaults, then FLOWMEM_* variables, then flags.

Every field `name` can be set by the environment variable `FLOWMEM_<NAME>` and by the
command-line flag `--<name with dashes>`; a flag wins over the environment, which wins
over the default.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Optional

from .errors import ConfigError

ENV_PREFIX = "FLOWMEM_"


@dataclasses.dataclass(frozen=True)
class Config:
    """flowmem's settings. Retrieval defaults are the measured ones (see README)."""

    db: str = "flowmem.db"
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: Optional[str] = None
    api_key_file: Optional[str] = None
    max_body_bytes: int = 8 * 1024 * 1024
    max_inflight: int = 512
    # Connections (http/server.py). A request must arrive whole within request_timeout_s of its
    # first byte (a new connection: of connecting); an idle keep-alive connection is closed after
    # keepalive_timeout_s; at most max_connections are open (the oldest unfinished one gives way);
    # requests run on `workers` threads (a quarter of them, at least one, for writes); SIGTERM lets
    # received requests finish for up to shutdown_timeout_s. 8 workers: in 40 s soaks of 64 clients
    # (`python tools/soak.py --duration 40 --preload 300 --serve-arg=--workers=N`), throughput was
    # flat from 4 to 16 workers (77-97 requests/s over runs; runs of one setting differ by ~10%)
    # and lower at 32 and 64 (78, 77: more threads contend for the GIL); 8 leaves searches 6
    # workers while 2 writes wait for the database's write lock.
    request_timeout_s: float = 10.0
    keepalive_timeout_s: float = 30.0
    shutdown_timeout_s: float = 10.0
    max_connections: int = 1024
    workers: int = 8
    # Browsers (http/api.py): Host names answered besides the loopback ones (comma-separated; on a
    # public address, empty means any), and web page origins allowed to call flowmem (none by default).
    allowed_hosts: str = ""
    allowed_origins: str = ""
    top_k_cap: int = 100
    # Messages search keeps in memory between searches (session_cache.py); see the README's
    # measurement of what it costs in RSS and what it saves in search time.
    cache_messages: int = 200_000
    # Index settings: fixed per database. None means "as the database was built"; a new database
    # gets the defaults of storage.settings.ViewSettings (the only place they are written). A value given
    # that differs from the database's is refused, naming the `flowmem reindex` that applies it.
    window_size: Optional[int] = None
    segment_max_messages: Optional[int] = None
    segment_max_gap_s: Optional[int] = None
    stem: Optional[bool] = None
    split_speakers: Optional[bool] = None
    resolve_times: Optional[bool] = None
    date_prefix: bool = True
    time_annotations: bool = True
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    rrf_k: float = 60.0
    weight_bm25: float = 0.1
    weight_window: float = 1.0
    weight_segment: float = 0.5
    weight_coverage: float = 0.05
    weight_phrase: float = 0.1
    weight_names: float = 0.0
    weight_speaker: float = 0.1
    weight_numbers: float = 0.0
    weight_options: float = 0.3
    weight_time: float = 0.1
    weight_adjacency: float = 0.05
    weight_dated: float = 0.3
    adjacency_top: int = 3
    candidate_pool: int = 1000
    context_pool: int = 150
    head_size: int = 10
    feedback_docs: int = 5
    # 20, not the 40 tools/tune.py chose: on LoCoMo dev the two score the same (Hit@1/Hit@10/MRR
    # equal, Recall@100 0.943 vs 0.944), and 20 reads half the postings: p50 1.4 ms lower in paired
    # runs. Synthetic: one question fewer at Hit@1 (`python tools/eval.py ... --set feedback_terms=40`).
    feedback_terms: int = 20
    postings_budget: int = 5000
    tail_weight_feedback: float = 0.2
    tail_weight_speaker: float = 0.5
    view_kind: str = "window"
    message_share: float = 0.9
    state_update_window: int = 20
    synchronous: str = "FULL"
    log_level: str = "INFO"

    def key(self) -> Optional[str]:
        """The API key: `api_key` if set, else the first line of `api_key_file`, else None."""
        if self.api_key:
            return self.api_key
        if self.api_key_file:
            try:
                with open(self.api_key_file, encoding="utf-8") as f:
                    key = f.readline().strip()
            except OSError as e:
                raise ConfigError("cannot read api key file %s: %s" % (self.api_key_file, e.strerror))
            if not key:
                raise ConfigError("api key file %s is empty" % self.api_key_file)
            return key
        return None

    def weights(self):
        """(signal, weight) pairs of every `weight_<signal>` setting, in a stable order."""
        return tuple((f.name[len("weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("weight_"))

    def tail_weights(self):
        """(signal, weight) pairs of every `tail_weight_<signal>` setting: weights that differ in the tail."""
        return tuple((f.name[len("tail_weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("tail_weight_"))

    def validate(self) -> "Config":
        """Raise ConfigError for values no part of flowmem could work with."""
        positive = ("port", "max_body_bytes", "max_inflight", "top_k_cap", "window_size", "segment_max_messages",
                    "max_connections", "workers")
        for name in positive:
            if getattr(self, name) is not None and getattr(self, name) < (0 if name == "port" else 1):
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.port > 65535:
            raise ConfigError("port must be at most 65535, got %r" % self.port)
        if self.rrf_k < 0 or any(w < 0 for _, w in self.weights() + self.tail_weights()):
            raise ConfigError("rrf_k and every weight_* and tail_weight_* must not be negative")
        for name in ("request_timeout_s", "keepalive_timeout_s", "shutdown_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.segment_max_gap_s is not None and self.segment_max_gap_s < 0:
            raise ConfigError("segment_max_gap_s must not be negative")
        if self.view_kind not in ("message", "window", "segment"):
            raise ConfigError("view_kind must be message, window or segment, got %r" % self.view_kind)
        if not 0.0 <= self.message_share <= 1.0:
            raise ConfigError("message_share must be between 0 and 1")
        if self.synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError("synchronous must be OFF, NORMAL, FULL or EXTRA, got %r" % self.synchronous)
        return self


def to_bool(raw: Any) -> bool:
    """1/0, true/false, yes/no, on/off (any case) as a bool."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("not a yes/no value: %r" % raw)


def _kind(field: dataclasses.Field) -> str:
    """The name of a field's value type: "int" for both `int` and `Optional[int]`."""
    kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "str")
    return kind[len("Optional["):-1] if kind.startswith("Optional[") else kind


def field_type(name: str) -> Any:
    """What parses the text of setting `name`: int, float, to_bool or str (for CLI flags)."""
    kind = next(_kind(f) for f in dataclasses.fields(Config) if f.name == name)
    return {"int": int, "float": float, "bool": to_bool}.get(kind, str)


def _parse(field: dataclasses.Field, raw: str) -> Any:
    kind = _kind(field)
    try:
        if kind == "bool":
            return to_bool(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError:
        raise ConfigError("%s%s must be a %s, got %r" % (ENV_PREFIX, field.name.upper(),
                                                         "yes/no value" if kind == "bool" else "number", raw))
    return raw


def load(flags: Optional[Mapping[str, Any]] = None, environ: Optional[Mapping[str, str]] = None) -> Config:
    """Build a Config from `environ` (default: os.environ) and `flags` (None values are unset)."""
    environ = os.environ if environ is None else environ
    flags = flags or {}
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


def field_names():
    """Names of all settings, for building CLI flags."""
    return [f.name for f in dataclasses.fields(Config)]
