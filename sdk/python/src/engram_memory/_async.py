"""The asyncio client: the same calls as EngramClient, awaited."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, AsyncIterable, AsyncIterator, BinaryIO, Iterable, Mapping, TypeVar, Union

import httpx

from . import _core as c
from . import _types as t
from ._errors import Timeout, Unreachable
from ._export import export_lines_async

if sys.version_info >= (3, 11):
    from typing import Unpack
else:
    from typing_extensions import Unpack

T = TypeVar("T")
Within = Union[str, t.Scope, None]


async def _achunks(source: Any) -> AsyncIterator[bytes]:
    if isinstance(source, AsyncIterable):
        async for item in source:
            for chunk in c.jsonl_chunks([item]):
                yield chunk
        return
    for chunk in c.jsonl_chunks(source):
        yield chunk


class AsyncEngramClient:
    """The asyncio twin of :class:`~engram_memory.EngramClient` (same arguments, same calls)."""

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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._cfg = c.Config.make(url, api_key, timeout, max_retries, backoff, max_backoff, headers)
        self._http = httpx.AsyncClient(base_url=self._cfg.url, headers=self._cfg.headers, timeout=timeout,
                                       transport=transport)

    @property
    def url(self) -> str:
        return self._cfg.url

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncEngramClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _do(self, call: c.Call[T]) -> T:
        attempt = 0
        while True:
            retryable = call.idempotent and attempt < self._cfg.max_retries
            try:
                resp = await self._http.request(call.method, call.path, **call.kwargs())
            except httpx.TimeoutException:
                raise Timeout(f"{call.method} {call.path}: no answer within {self._cfg.timeout}s") from None
            except httpx.TransportError as e:
                if retryable and isinstance(e, (httpx.ConnectError, httpx.RemoteProtocolError)):
                    await asyncio.sleep(self._cfg.delay(attempt, None))
                    attempt += 1
                    continue
                raise Unreachable(f"{call.method} {call.path}: {e}") from None
            if retryable and resp.status_code in c.RETRY_STATUSES:
                await asyncio.sleep(self._cfg.delay(attempt, resp))
                attempt += 1
                continue
            return c.answer(call, resp)

    async def add(self, text: str, **fields: Unpack[t.MemoryFields]) -> t.AddResult:
        return await self._do(c.add(text, fields))

    async def add_many(self, memories: Iterable[t.MemoryInput | t.Memory]) -> t.AddResult:
        return await self._do(c.add_many(memories))

    async def list_memories(self, **options: Unpack[t.ListOptions]) -> t.ListPage:
        return await self._do(c.list_memories(options))

    async def iter_memories(self, **options: Unpack[t.ListOptions]) -> AsyncIterator[t.Memory]:
        opts: dict[str, Any] = dict(options)
        while True:
            page = await self.list_memories(**opts)
            for m in page.memories:
                yield m
            if not page.next_cursor:
                return
            opts["cursor"] = page.next_cursor

    async def delete_scope(self, scope: Union[str, t.Scope]) -> t.Deleted:
        return await self._do(c.delete_scope(scope))

    async def reset(self, scope: Union[str, t.Scope, None] = None) -> t.Deleted:
        return await self._do(c.reset(scope))

    async def get(self, id: c.MemoryRef, *, within: Within = None) -> t.Memory:
        return await self._do(c.get(id, within))

    async def update(self, id: c.MemoryRef, *, within: Within = None, **patch: Unpack[t.Patch]) -> t.Memory:
        return await self._do(c.update(id, patch, within))

    async def delete(self, id: c.MemoryRef, *, within: Within = None) -> t.Deleted:
        return await self._do(c.delete(id, within))

    async def favorite(self, id: c.MemoryRef, favorite: bool = True, *, within: Within = None) -> t.Memory:
        return await self._do(c.favorite(id, favorite, within))

    async def touch(self, id: c.MemoryRef, *, within: Within = None) -> t.Touched:
        return await self._do(c.touch(id, within))

    async def history(self, id: c.MemoryRef, *, within: Within = None) -> t.History:
        return await self._do(c.history(id, within))

    async def add_messages(self, messages: Iterable[Union[t.ChatMessage, t.Message, Mapping[str, Any]]], *, episode: str | None = None,
                     **options: Unpack[t.EpisodeOptions]) -> t.AddResult:
        name, call = c.add_messages(messages, episode, options)
        return c.with_episode(await self._do(call), name)

    async def add_episode(self, episode: str, messages: Iterable[t.Message],
                          **options: Unpack[t.EpisodeOptions]) -> t.AddResult:
        return await self._do(c.add_episode(episode, messages, options))

    async def search(self, query: str, **options: Unpack[t.SearchOptions]) -> t.SearchResponse:
        return await self._do(c.search(query, options))

    async def inject(self, prompt: str, **options: Unpack[t.InjectOptions]) -> t.Injection:
        return await self._do(c.inject(prompt, options))

    async def brief(self, **options: Unpack[t.BriefOptions]) -> t.Brief:
        return await self._do(c.brief(options))

    async def import_jsonl(self, source: Any, *, skip_invalid: bool = False) -> t.ImportResult:
        """POST /v1/import, streamed; also takes an async iterable of memories or lines."""
        return await self._do(c.import_jsonl(_achunks(source), skip_invalid))

    async def export(self) -> AsyncIterator[t.Memory]:
        async for line in export_lines_async(self._cfg):
            yield t.from_json(t.Memory, json.loads(line))

    async def export_jsonl(self, out: BinaryIO) -> int:
        n = 0
        async for line in export_lines_async(self._cfg):
            out.write(line)
            n += 1
        return n

    async def stats(self) -> t.Stats:
        return await self._do(c.stats())

    async def healthz(self) -> t.Status:
        return await self._do(c.healthz())

    async def readyz(self) -> t.Status:
        return await self._do(c.readyz())

    async def openapi(self) -> dict[str, Any]:
        return await self._do(c.openapi())

    async def mcp(self, message: Mapping[str, Any]) -> dict[str, Any]:
        return await self._do(c.mcp(message))

    async def request(self, method: str, path: str, *, params: Any = None, json: Any = None,
                      content: bytes | str | None = None, headers: Mapping[str, str] | None = None) -> Any:
        return await self._do(c.request(method, path, params, json, content, headers))
