"""What the sync and async clients share: configuration, how each route's
request is built, when a call is retried, and how answers become results."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Generic, Iterable, Mapping, TypeVar, Union
from urllib.parse import quote

import httpx

from . import _types as t
from ._errors import EngramError, error_from

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:7077"
"""Where ``engram serve`` listens by default."""

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Answers an idempotent call is retried on."""

EXPORT_TRAILER = "engram-export-count"

__version__ = "0.1.0"
USER_AGENT = f"engram-memory-python/{__version__}"


@dataclass
class Config:
    url: str
    api_key: str | None
    timeout: float | None
    max_retries: int
    backoff: float
    max_backoff: float
    headers: dict[str, str]

    @classmethod
    def make(
        cls,
        url: str | None,
        api_key: str | None,
        timeout: float | None,
        max_retries: int,
        backoff: float,
        max_backoff: float,
        headers: Mapping[str, str] | None,
    ) -> "Config":
        url = url or os.environ.get("ENGRAM_URL") or DEFAULT_URL
        if not (url.startswith("http://") or url.startswith("https://")):
            raise ValueError(f"url {url!r}: want http://HOST:PORT or https://HOST:PORT")
        if api_key is None:
            api_key = os.environ.get("ENGRAM_API_KEY") or None
        if max_retries < 0:
            raise ValueError(f"max_retries {max_retries}: must not be negative")
        h = {"User-Agent": USER_AGENT}
        if api_key:
            h["Authorization"] = f"Bearer {api_key}"
        h.update(headers or {})
        return cls(url.rstrip("/"), api_key, timeout, max_retries, backoff, max_backoff, h)

    def delay(self, attempt: int, resp: httpx.Response | None) -> float:
        """Seconds to wait before retry ``attempt`` (from 0): exponential with
        jitter, at least a Retry-After the server sent, at most max_backoff."""
        d = min(self.max_backoff, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)
        if resp is not None:
            ra = resp.headers.get("Retry-After", "")
            if ra.isdigit():
                d = max(d, float(ra))
        return float(min(d, self.max_backoff))


_NOBODY: Any = object()


@dataclass
class Call(Generic[T]):
    """One request of a route and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: list[tuple[str, str]] = field(default_factory=list)
    json: Any = _NOBODY
    content: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = False

    def kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"params": self.params or None, "headers": self.headers or None}
        if self.json is not _NOBODY:
            kw["content"] = json.dumps(self.json, default=_json_default).encode()
            kw["headers"] = {**self.headers, "Content-Type": "application/json"}
        elif self.content is not None:
            kw["content"] = self.content
        return kw


def memory_json(m: t.Memory) -> dict[str, Any]:
    """A Memory as it goes back to the server: its JSON, without what a
    Version derives (superseded_by, superseded_at, current)."""
    if isinstance(m, t.Version):
        return {k: v for k, v in m.raw.items() if k not in _DERIVED}
    return m.raw


_DERIVED = frozenset({"superseded_by", "superseded_at", "current"})


def _json_default(v: Any) -> Any:
    if isinstance(v, datetime):
        return time_str(v)
    if isinstance(v, t.Memory):
        return memory_json(v)
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    raise TypeError(f"{type(v).__name__} is not JSON")


def time_str(v: t.Time) -> str:
    if isinstance(v, datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        return v.isoformat()
    return v


def scope_str(scope: Union[str, t.Scope], param: str = "scope") -> str:
    """A scope as the query parameter's k=v,k=v; a wrong type raises naming param."""
    if isinstance(scope, str):
        return scope
    if not isinstance(scope, Mapping):
        raise TypeError(f"{param}: want 'key=value,...' or a dict such as {{'user': 'u1'}}, not {describe(scope)}")
    for k, v in scope.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"{param}: want str keys and values, not {k!r}: {describe(v)}")
    return ",".join(f"{k}={v}" for k, v in sorted(scope.items()))


MemoryRef = Union[str, t.Memory, t.Result, t.AddResult, t.Neighbour, Mapping[str, Any]]
"""A memory as the by-id calls take it: its id, or what carries one (a Memory,
a Version, a Result, the AddResult of one memory, a dict with "id")."""


def describe(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return f"a {type(v).__name__} of {len(v)}"
    if isinstance(v, Mapping):
        return f"a {type(v).__name__} with the keys {sorted(map(str, v))}"
    return f"{type(v).__name__} {v!r}" if isinstance(v, (int, float, bool)) or v is None else type(v).__name__


def id_of(ref: Any, param: str = "id") -> str:
    """The memory id a by-id call's argument names; errors name the parameter."""
    if isinstance(ref, str):
        if not ref:
            raise ValueError(f"{param}: must not be empty")
        return ref
    ids = ref.ids if isinstance(ref, t.AddResult) else ref.get("ids") if isinstance(ref, Mapping) else None
    rid = ref.get("id") if isinstance(ref, Mapping) else getattr(ref, "id", None) if not isinstance(ref, t.AddResult) else None
    if isinstance(rid, str) and rid:
        return rid
    if isinstance(ids, list):
        if len(ids) == 1 and isinstance(ids[0], str) and ids[0]:
            return ids[0]
        raise ValueError(f"{param}: an AddResult of {len(ids)} memories names no single one; pass one of its ids")
    raise TypeError(f"{param}: want a memory id (str), a Memory, a Result or what add() returned, not {describe(ref)}")


def _refs(body: dict[str, Any], param: str) -> dict[str, Any]:
    """body with a supersedes given as a memory (or what names one) as its id."""
    v = body.get("supersedes")
    if v is not None and not isinstance(v, str):
        body["supersedes"] = id_of(v, param)
    return body


def _id_path(ref: Any, suffix: str = "") -> str:
    return "/v1/memories/" + quote(id_of(ref), safe="") + suffix


def _within(within: Union[str, t.Scope, None]) -> list[tuple[str, str]]:
    return [("scope", scope_str(within, "within"))] if within else []


def _body(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


def _parser(cls: type[T]) -> Callable[[Any], T]:
    return lambda data: t.from_json(cls, data)


def _identity(data: Any) -> Any:
    return data


# ---- one builder per operation of the OpenAPI document ----


def add(text: str, fields: Mapping[str, Any]) -> Call[t.AddResult]:
    if not isinstance(text, str):
        if isinstance(text, (list, tuple)):
            raise TypeError(f"text: {describe(text)}; store chat messages with add_messages(messages), "
                            "several memories with add_many(memories)")
        raise TypeError(f"text: want str, not {describe(text)}")
    body = _refs(_body(fields), "supersedes")
    return Call("POST", "/v1/memories", _parser(t.AddResult), json={**body, "text": text})


def add_many(memories: Iterable[Mapping[str, Any] | t.Memory]) -> Call[t.AddResult]:
    if isinstance(memories, (str, bytes, Mapping)) or not isinstance(memories, Iterable):
        raise TypeError(f"memories: want a list of memories (dicts or Memory), not {describe(memories)}")
    ms: list[dict[str, Any]] = []
    for i, m in enumerate(memories):
        if isinstance(m, t.Memory):
            ms.append(memory_json(m))
        elif isinstance(m, Mapping):
            ms.append(_refs(dict(m), f"memories[{i}].supersedes"))
        else:
            raise TypeError(f"memories[{i}]: want a dict or a Memory, not {describe(m)}")
    if not ms:
        raise ValueError("memories: none given")
    return Call("POST", "/v1/memories", _parser(t.AddResult), json={"memories": ms})


def list_params(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = []
    for k, v in options.items():
        if v is None:
            continue
        if k == "scope":
            params.append(("scope", scope_str(v)))
        elif k == "tag" and not isinstance(v, str):
            params.extend(("tag", str(x)) for x in v)
        elif k in ("since", "until", "as_of"):
            params.append((k, time_str(v)))
        elif isinstance(v, bool):
            params.append((k, "true" if v else "false"))
        else:
            params.append((k, str(v)))
    return params


def list_memories(options: Mapping[str, Any]) -> Call[t.ListPage]:
    return Call("GET", "/v1/memories", _parser(t.ListPage), params=list_params(options), idempotent=True)


def delete_scope(scope: Union[str, t.Scope]) -> Call[t.Deleted]:
    # No scope is sent as none: the server refuses it (BadRequest).
    s = scope_str(scope)
    return Call("DELETE", "/v1/memories", _parser(t.Deleted), params=[("scope", s)] if s else [], idempotent=True)


def reset(scope: Union[str, t.Scope, None]) -> Call[t.Deleted]:
    if scope is None:
        # Every memory of the API key's scope; a server without keys refuses it.
        return Call("DELETE", "/v1/memories", _parser(t.Deleted), params=[("all", "true")], idempotent=True)
    if not isinstance(scope, (str, Mapping)):
        raise TypeError(f"scope: want 'key=value,...' or a dict such as {{'user': 'u1'}}, not {describe(scope)}")
    if not scope_str(scope):
        raise ValueError("scope: empty; reset() without a scope forgets every memory of the API key's scope")
    return delete_scope(scope)


def get(id: MemoryRef, within: Union[str, t.Scope, None]) -> Call[t.Memory]:
    return Call("GET", _id_path(id), _parser(t.Memory), params=_within(within), idempotent=True)


def update(id: MemoryRef, patch: Mapping[str, Any], within: Union[str, t.Scope, None]) -> Call[t.Memory]:
    # A patch sets the fields it names: sending it twice leaves the same memory.
    return Call("PATCH", _id_path(id), _parser(t.Memory), params=_within(within), json=_refs(_body(patch), "supersedes"),
                idempotent=True)


def delete(id: MemoryRef, within: Union[str, t.Scope, None]) -> Call[t.Deleted]:
    return Call("DELETE", _id_path(id), _parser(t.Deleted), params=_within(within), idempotent=True)


def favorite(id: MemoryRef, on: bool, within: Union[str, t.Scope, None]) -> Call[t.Memory]:
    return Call("POST", _id_path(id, "/favorite"), _parser(t.Memory), params=_within(within),
                json={"favorite": on}, idempotent=True)


def history(id: MemoryRef, within: Union[str, t.Scope, None]) -> Call[t.History]:
    return Call("GET", _id_path(id, "/history"), _parser(t.History), params=_within(within), idempotent=True)


def add_episode(episode: str, messages: Iterable[Mapping[str, Any]], options: Mapping[str, Any]) -> Call[t.AddResult]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages: want a list of {{'speaker', 'text'}} dicts, not {describe(messages)}")
    body = _body(options)
    body["episode"] = episode
    body["messages"] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TypeError(f"messages[{i}]: want a dict such as {{'speaker': 'user', 'text': 'hi'}}, not {describe(m)}")
        body["messages"].append(dict(m))
    # Storing an episode again at the same positions changes nothing more:
    # a turn its memory already holds is left alone, so a retry is safe.
    return Call("POST", "/v1/episodes", _parser(t.AddResult), json=body, idempotent=True)


_MESSAGE_KEYS = ("occurred_at", "seq", "metadata")


def chat_message(m: Any, i: int) -> dict[str, Any]:
    """A chat message ({role, content}, or {speaker, text}) as POST /v1/episodes takes it."""
    at = f"messages[{i}]"
    if not isinstance(m, Mapping):
        raise TypeError(f"{at}: want a dict {{'role', 'content'}} or {{'speaker', 'text'}}, not {describe(m)}")
    if "role" in m and "speaker" in m:
        raise TypeError(f"{at}: give role or speaker, not both")
    if "content" in m and "text" in m:
        raise TypeError(f"{at}: give content or text, not both")
    who_key = "role" if "role" in m else "speaker"
    said_key = "content" if "content" in m else "text"
    out: dict[str, Any] = {}
    if who_key in m:
        if not isinstance(m[who_key], str):
            raise TypeError(f"{at}.{who_key}: want str, not {describe(m[who_key])}")
        out["speaker"] = m[who_key]
    if said_key not in m:
        raise TypeError(f"{at}: no content (or text)")
    if not isinstance(m[said_key], str):
        raise TypeError(f"{at}.{said_key}: want str, not {describe(m[said_key])} (join a message's text parts first)")
    out["text"] = m[said_key]
    for k, v in m.items():
        if k in ("role", "speaker", "content", "text"):
            continue
        if k not in _MESSAGE_KEYS:
            raise TypeError(f"{at}.{k}: unknown key; a message has role (or speaker), content (or text), "
                            "occurred_at, seq, metadata")
        out[k] = time_str(v) if k == "occurred_at" else v
    return out


def new_episode() -> str:
    return "chat-" + os.urandom(6).hex()


def add_messages(messages: Iterable[Mapping[str, Any]], episode: str | None,
                 options: Mapping[str, Any]) -> tuple[str, Call[t.AddResult]]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages: want a list of {{'role', 'content'}} dicts, not {describe(messages)}")
    msgs = [chat_message(m, i) for i, m in enumerate(messages)]
    if not msgs:
        raise ValueError("messages: none given")
    if episode is None:
        episode = new_episode()
    elif not isinstance(episode, str) or not episode:
        raise TypeError(f"episode: want a non-empty str, not {describe(episode)}")
    return episode, add_episode(episode, msgs, options)


def with_episode(res: t.AddResult, episode: str) -> t.AddResult:
    res.episode = episode
    return res


def touch(id: MemoryRef, within: Union[str, t.Scope, None]) -> Call[t.Touched]:
    # Each touch counts a use: never repeated behind the caller's back.
    return Call("POST", _id_path(id, "/touch"), _parser(t.Touched), params=_within(within))


def search(query: str, options: Mapping[str, Any]) -> Call[t.SearchResponse]:
    if not isinstance(query, str):
        raise TypeError(f"query: want str, not {describe(query)}")
    body = _body(options)
    body["query"] = query
    # A search that records uses is retried only when it records none.
    return Call("POST", "/v1/search", _parser(t.SearchResponse), json=body, idempotent=bool(body.get("no_record")))


def inject(prompt: str, options: Mapping[str, Any]) -> Call[t.Injection]:
    if not isinstance(prompt, str):
        raise TypeError(f"prompt: want str, not {describe(prompt)}")
    body = _body(options)
    body["prompt"] = prompt
    return Call("POST", "/v1/inject", _parser(t.Injection), json=body, idempotent=bool(body.get("no_record")))


def brief(options: Mapping[str, Any]) -> Call[t.Brief]:
    # A briefing records no use.
    return Call("POST", "/v1/brief", _parser(t.Brief), json=_body(options), idempotent=True)


def import_jsonl(content: Any, skip_invalid: bool) -> Call[t.ImportResult]:
    params = [("skip_invalid", "true")] if skip_invalid else []
    return Call("POST", "/v1/import", _parser(t.ImportResult), params=params, content=content,
                headers={"Content-Type": "application/x-ndjson"})


def stats() -> Call[t.Stats]:
    return Call("GET", "/v1/stats", _parser(t.Stats), idempotent=True)


def healthz() -> Call[t.Status]:
    return Call("GET", "/healthz", _parser(t.Status), idempotent=True)


def readyz() -> Call[t.Status]:
    return Call("GET", "/readyz", _parser(t.Status), idempotent=True)


def openapi() -> Call[dict[str, Any]]:
    return Call("GET", "/openapi.json", _identity, idempotent=True)


def mcp(message: Mapping[str, Any]) -> Call[dict[str, Any]]:
    return Call("POST", "/mcp", _identity, json=dict(message),
                headers={"Accept": "application/json, text/event-stream"})


def request(method: str, path: str, params: Any, json_body: Any, content: Any,
            headers: Mapping[str, str] | None) -> Call[Any]:
    if not path.startswith("/"):
        raise ValueError(f"path {path!r}: want an absolute path such as /v1/stats")
    c: Call[Any] = Call(method.upper(), path, _identity, params=list(params.items()) if isinstance(params, Mapping)
                        else list(params or []), content=content, headers=dict(headers or {}),
                        idempotent=method.upper() in ("GET", "HEAD", "DELETE"))
    if json_body is not None:
        c.json = json_body
    return c


# ---- answers ----


def answer(call: Call[T], resp: httpx.Response) -> T:
    """The call's result from a complete answer, or the API error it carries."""
    if resp.status_code >= 400:
        raise failure(resp.status_code, resp.content, resp.reason_phrase)
    if not resp.content:
        return call.parse({})
    try:
        data = resp.json()
    except ValueError as e:
        raise EngramError(f"{call.method} {call.path}: answer is not JSON: {e}", code="bad_answer",
                          status=resp.status_code) from None
    return call.parse(data)


def failure(status: int, body: bytes, reason: str) -> EngramError:
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    return error_from(status, data, f"HTTP {status} {reason}".strip())


def jsonl_chunks(source: Any) -> Iterable[bytes]:
    """An import body, streamed: bytes or str as they are, a binary or text
    file in pieces, or an iterable of memories (dicts or Memory) or of lines."""
    if isinstance(source, (bytes, bytearray)):
        yield bytes(source)
        return
    if isinstance(source, str):
        yield source.encode()
        return
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            piece = read(64 << 10)
            if not piece:
                return
            yield piece.encode() if isinstance(piece, str) else piece
    for item in source:
        if isinstance(item, (bytes, bytearray)):
            line = bytes(item)
        elif isinstance(item, str):
            line = item.encode()
        elif isinstance(item, t.Memory):
            line = json.dumps(memory_json(item), separators=(",", ":")).encode()
        elif isinstance(item, Mapping):
            line = json.dumps(dict(item), default=_json_default, separators=(",", ":")).encode()
        else:
            raise TypeError(f"import: a line must be a dict, a Memory, str or bytes, not {type(item).__name__}")
        yield line if line.endswith(b"\n") else line + b"\n"
