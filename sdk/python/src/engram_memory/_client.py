"""The synchronous client."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, BinaryIO, Iterable, Iterator, Mapping, TypeVar, Union

import httpx

from . import _core as c
from . import _types as t
from ._errors import EngramError, Timeout, Unreachable
from ._export import export_lines

if sys.version_info >= (3, 11):
    from typing import Unpack
else:
    from typing_extensions import Unpack

T = TypeVar("T")
Within = Union[str, t.Scope, None]


class EngramClient:
    """A client of one ``engram serve``.

    ``url`` defaults to ``$ENGRAM_URL``, else http://127.0.0.1:7077; ``api_key``
    to ``$ENGRAM_API_KEY`` (a server without keys needs none). ``timeout`` is
    seconds per request (None: wait for ever). Calls that are safe to repeat
    (reads, deletes, a patch, a favorite, a brief, a search or an injection with
    ``no_record``) are retried up to ``max_retries`` times on 429 and 5xx
    answers and failed connections, waiting ``backoff`` × 2^n seconds with
    jitter (or the server's Retry-After), at most ``max_backoff``. Every API
    error raises the :class:`~engram_memory.EngramError` subclass named after
    its code.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | None = 30.0,
        max_retries: int = 2,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._cfg = c.Config.make(url, api_key, timeout, max_retries, backoff, max_backoff, headers)
        self._http = httpx.Client(base_url=self._cfg.url, headers=self._cfg.headers, timeout=timeout,
                                  transport=transport)

    @property
    def url(self) -> str:
        return self._cfg.url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "EngramClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _do(self, call: c.Call[T]) -> T:
        attempt = 0
        while True:
            retryable = call.idempotent and attempt < self._cfg.max_retries
            try:
                resp = self._http.request(call.method, call.path, **call.kwargs())
            except httpx.TimeoutException:
                raise Timeout(f"{call.method} {call.path}: no answer within {self._cfg.timeout}s") from None
            except httpx.TransportError as e:
                if retryable and isinstance(e, (httpx.ConnectError, httpx.RemoteProtocolError)):
                    time.sleep(self._cfg.delay(attempt, None))
                    attempt += 1
                    continue
                raise Unreachable(f"{call.method} {call.path}: {e}") from None
            if retryable and resp.status_code in c.RETRY_STATUSES:
                time.sleep(self._cfg.delay(attempt, resp))
                attempt += 1
                continue
            return c.answer(call, resp)

    # ---- memories ----

    def add(self, text: str, **fields: Unpack[t.MemoryFields]) -> t.AddResult:
        """POST /v1/memories: store one memory (an exact repeat without an id is merged)."""
        return self._do(c.add(text, fields))

    def add_many(self, memories: Iterable[t.MemoryInput | t.Memory]) -> t.AddResult:
        """POST /v1/memories {"memories": [...]}: a batch, all or none."""
        return self._do(c.add_many(memories))

    def list_memories(self, **options: Unpack[t.ListOptions]) -> t.ListPage:
        """GET /v1/memories: one page; pass its next_cursor as cursor for the next."""
        return self._do(c.list_memories(options))

    def iter_memories(self, **options: Unpack[t.ListOptions]) -> Iterator[t.Memory]:
        """Every memory GET /v1/memories lists, page after page."""
        opts: dict[str, Any] = dict(options)
        while True:
            page = self.list_memories(**opts)
            yield from page.memories
            if not page.next_cursor:
                return
            opts["cursor"] = page.next_cursor

    def delete_scope(self, scope: Union[str, t.Scope]) -> t.Deleted:
        """DELETE /v1/memories?scope=: forget every memory of a scope (inside the key's)."""
        return self._do(c.delete_scope(scope))

    def reset(self, scope: Union[str, t.Scope, None] = None) -> t.Deleted:
        """mem0's reset: without a scope, DELETE /v1/memories?all=true, every memory
        of the API key's scope (refused, BadRequest, by a server without keys: that
        would be the whole store); with one, DELETE /v1/memories?scope=, every
        memory of that scope (inside the key's). Episodes and versions go with them."""
        return self._do(c.reset(scope))

    def get(self, id: c.MemoryRef, *, within: Within = None) -> t.Memory:
        """GET /v1/memories/{id}; ``within`` names one of several memories with this id below the caller's scope."""
        return self._do(c.get(id, within))

    def update(self, id: c.MemoryRef, *, within: Within = None, **patch: Unpack[t.Patch]) -> t.Memory:
        """PATCH /v1/memories/{id}: change the fields given."""
        return self._do(c.update(id, patch, within))

    def delete(self, id: c.MemoryRef, *, within: Within = None) -> t.Deleted:
        """DELETE /v1/memories/{id}."""
        return self._do(c.delete(id, within))

    def favorite(self, id: c.MemoryRef, favorite: bool = True, *, within: Within = None) -> t.Memory:
        """POST /v1/memories/{id}/favorite: mark (or with False unmark) a favorite."""
        return self._do(c.favorite(id, favorite, within))

    def touch(self, id: c.MemoryRef, *, within: Within = None) -> t.Touched:
        """POST /v1/memories/{id}/touch: record a use."""
        return self._do(c.touch(id, within))

    def history(self, id: c.MemoryRef, *, within: Within = None) -> t.History:
        """GET /v1/memories/{id}/history: every version of what the memory says
        (what it supersedes and what supersedes it), oldest first."""
        return self._do(c.history(id, within))

    # ---- conversations ----

    def add_messages(self, messages: Iterable[Union[t.ChatMessage, t.Message, Mapping[str, Any]]], *, episode: str | None = None,
                     **options: Unpack[t.EpisodeOptions]) -> t.AddResult:
        """POST /v1/episodes from chat messages (``{"role", "content"}``, as chat
        APIs and mem0's ``add`` take them, or ``{"speaker", "text"}``): each
        becomes a memory of the episode at its position (id ``EPISODE:SEQ``,
        the role its speaker). Without ``episode`` a new one is named
        (``chat-`` and 12 hex digits, in the answer's ``episode``); pass it to
        add the next messages of the same conversation (with ``first_seq``, or
        the whole transcript again: what is stored already is left alone)."""
        name, call = c.add_messages(messages, episode, options)
        return c.with_episode(self._do(call), name)

    def add_episode(self, episode: str, messages: Iterable[t.Message],
                    **options: Unpack[t.EpisodeOptions]) -> t.AddResult:
        """POST /v1/episodes: store a conversation's messages as memories of the
        episode, each at its position (id ``EPISODE:SEQ``). Storing the same
        episode again updates its memories instead of adding them twice, and
        leaves alone the turns its memories already hold (so a retry is safe);
        ``ids`` lists every message's memory in order."""
        return self._do(c.add_episode(episode, messages, options))

    # ---- recall and delivery ----

    def search(self, query: str, **options: Unpack[t.SearchOptions]) -> t.SearchResponse:
        """POST /v1/search: every result with its explain."""
        return self._do(c.search(query, options))

    def inject(self, prompt: str, **options: Unpack[t.InjectOptions]) -> t.Injection:
        """POST /v1/inject: only what clears the relevance bar, within a budget."""
        return self._do(c.inject(prompt, options))

    def brief(self, **options: Unpack[t.BriefOptions]) -> t.Brief:
        """POST /v1/brief: favorites, most used, most recent, within a budget."""
        return self._do(c.brief(options))

    # ---- bulk ----

    def import_jsonl(self, source: Any, *, skip_invalid: bool = False) -> t.ImportResult:
        """POST /v1/import, streamed: bytes, str, a file, or an iterable of
        memories (dicts or Memory, as export() yields them) or of JSONL lines."""
        return self._do(c.import_jsonl(c.jsonl_chunks(source), skip_invalid))

    def export(self) -> Iterator[t.Memory]:
        """GET /v1/export: every memory of the caller's scope in id order, as it
        arrives. Raises ExportIncomplete at the end if the stream was cut or
        its Engram-Export-Count trailer is missing or wrong."""
        for line in export_lines(self._cfg):
            yield t.from_json(t.Memory, json.loads(line))

    def export_jsonl(self, out: BinaryIO) -> int:
        """GET /v1/export written to a binary file as it arrives; returns the
        line count, checked against the trailer (ExportIncomplete if not)."""
        n = 0
        for line in export_lines(self._cfg):
            out.write(line)
            n += 1
        return n

    def stats(self) -> t.Stats:
        """GET /v1/stats."""
        return self._do(c.stats())

    # ---- the server ----

    def healthz(self) -> t.Status:
        """GET /healthz (no key needed)."""
        return self._do(c.healthz())

    def readyz(self) -> t.Status:
        """GET /readyz (no key needed); Unavailable while not ready."""
        return self._do(c.readyz())

    def openapi(self) -> dict[str, Any]:
        """GET /openapi.json: the API's OpenAPI 3.1 document."""
        return self._do(c.openapi())

    def mcp(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """POST /mcp: one JSON-RPC 2.0 message to the MCP tools, its answer."""
        return self._do(c.mcp(message))

    def request(self, method: str, path: str, *, params: Any = None, json: Any = None,
                content: bytes | str | None = None, headers: Mapping[str, str] | None = None) -> Any:
        """Any request, its JSON answer; errors raise as every call's do."""
        return self._do(c.request(method, path, params, json, content, headers))


__all__ = ["EngramClient", "EngramError"]
