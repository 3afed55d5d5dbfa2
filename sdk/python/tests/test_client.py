"""The clients beyond the vectors: tenant isolation, configuration from the
environment, streams and their trailer, retries, timeouts. Against a real
engram serve, except where a server must misbehave on purpose (5xx, 429, a
stall, a cut export): a small scripted HTTP server on 127.0.0.1 plays it."""

from __future__ import annotations

import asyncio
import http.server
import io
import json
import threading
import time
from typing import Any, Callable, Iterator

import pytest

import engram_memory as em

from conftest import Server


# ---- tenant isolation through the SDK ----


def test_tenants_never_see_each_other(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("a1")) as u1, em.EngramClient(server.url, key("b")) as b, \
            em.EngramClient(server.url, key("a")) as team:
        baseline = b.search("rotation schedule for the pager", mode="bm25", no_record=True)
        b.add("The pager rotation schedule is on the wiki", id="shared-id")
        before = b.search("rotation schedule for the pager", mode="bm25", no_record=True)
        assert [r.id for r in before.results] == ["shared-id"] and not baseline.results
        # The other tenant writes many memories with the same words and the same id.
        u1.add("The pager rotation schedule lives in the ops channel", id="shared-id")
        u1.add_many([{"text": f"pager rotation schedule note {i}"} for i in range(20)])
        after = b.search("rotation schedule for the pager", mode="bm25", no_record=True)
        assert [(r.id, r.score, r.explain.bm25.score) for r in after.results] == \
            [(r.id, r.score, r.explain.bm25.score) for r in before.results]  # scores not sensed
        assert b.get("shared-id").text == "The pager rotation schedule is on the wiki"
        assert u1.get("shared-id").text == "The pager rotation schedule lives in the ops channel"
        assert b.stats().memories == 1
        assert [m.id for m in b.export()] == ["shared-id"]
        assert all(m.scope == {"team": "a", "user": "u1"} for m in u1.iter_memories(limit=5))
        assert len(list(u1.iter_memories(limit=5))) == 21  # pages followed
        with pytest.raises(em.Forbidden):
            u1.search("pager", scope={"team": "b"})
        with pytest.raises(em.Forbidden):
            u1.delete_scope("team=b")
        with pytest.raises(em.NotFound):
            b.delete(u1.list_memories(order="id", limit=1).memories[0].id)
        # The parent reaches the child's memory by id; b's is not in its scope.
        assert team.get("shared-id").scope == {"team": "a", "user": "u1"}
        assert team.delete_scope({"user": "u1"}).deleted == 21
        assert b.get("shared-id").text == "The pager rotation schedule is on the wiki"


def test_async_tenants(server: Server, key: Callable[[str], str]) -> None:
    async def run() -> None:
        async with em.AsyncEngramClient(server.url, key("a1")) as u1, em.AsyncEngramClient(server.url, key("b")) as b:
            await u1.add("Only u1 knows the launch code", id="x")
            with pytest.raises(em.NotFound):
                await b.get("x")
            assert (await b.search("launch code", mode="bm25")).results == []
            assert [m.id async for m in u1.export()] == ["x"]
            assert [m.id async for m in b.export()] == []
    asyncio.run(run())


def test_async_import_from_an_async_iterable(server: Server, key: Callable[[str], str]) -> None:
    async def lines() -> Any:
        for i in range(3):
            yield {"id": f"ai{i}", "text": f"streamed memory {i}"}
            await asyncio.sleep(0)
        yield b'{"id": "ai3", "text": "a line as bytes"}'

    async def run() -> None:
        async with em.AsyncEngramClient(server.url, key("b")) as c:
            res = await c.import_jsonl(lines())
            assert res.ids == ["ai0", "ai1", "ai2", "ai3"]
            assert (await c.get("ai3")).text == "a line as bytes"
    asyncio.run(run())


# ---- configuration ----


def test_url_and_key_from_the_environment(server: Server, key: Callable[[str], str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_URL", server.url)
    monkeypatch.setenv("ENGRAM_API_KEY", key("b"))
    with em.EngramClient() as c:
        assert c.url == server.url
        c.add("from the environment", id="env")
    with em.EngramClient(api_key=key("a1")) as c:  # the argument wins
        with pytest.raises(em.NotFound):
            c.get("env")
    monkeypatch.delenv("ENGRAM_API_KEY")
    with em.EngramClient() as c, pytest.raises(em.Unauthorized) as ei:
        c.stats()
    assert ei.value.status == 401 and ei.value.code == "unauthorized"
    with pytest.raises(ValueError):
        em.EngramClient("127.0.0.1:7077")


# ---- streams ----


def test_export_import_round_trip(server: Server, engram_bin: str, vectors: dict[str, Any],
                                  key: Callable[[str], str]) -> None:
    from conftest import vector_keys
    with em.EngramClient(server.url, key("a1")) as c:
        c.add_many([{"id": f"r{i}", "text": f"memory number {i} " + "word " * i, "tags": ["t"]} for i in range(50)])
        c.favorite("r7")
        c.touch("r8")
        buf = io.BytesIO()
        n = c.export_jsonl(buf)
        assert n == 50 and buf.getvalue().count(b"\n") == 50
        first = list(c.export())
    other = Server(engram_bin, vector_keys(vectors), vectors["embedder"])
    try:
        with em.EngramClient(other.url, key("a1")) as d:
            res = d.import_jsonl(first)  # Memory objects, streamed as lines
            assert len(res.ids or []) == 50
            again = list(d.export())
            assert [m.raw for m in again] == [m.raw for m in first]
            assert d.get("r7").favorite and d.get("r8").uses == 1
            # A file and raw bytes work as bodies too.
            d.delete_scope("user=u1")
            assert len(d.import_jsonl(io.BytesIO(buf.getvalue())).ids or []) == 50
            d.delete_scope("user=u1")
            assert len(d.import_jsonl(buf.getvalue()).ids or []) == 50
    finally:
        other.stop()


# ---- a scripted server for what a real one does not do on demand ----


class Scripted:
    """Answers requests from a list of (status, headers, body) or callables."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[tuple[str, str]] = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def handle_one(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                elif self.headers.get("Transfer-Encoding") == "chunked":
                    while True:
                        size = int(self.rfile.readline().strip(), 16)
                        self.rfile.read(size + 2)
                        if size == 0:
                            break
                outer.requests.append((self.command, self.path))
                step = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                if callable(step):
                    step(self)
                    return
                status, headers, body = step
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[[list[Any]], Scripted]]:
    made: list[Scripted] = []

    def make(script: list[Any]) -> Scripted:
        s = Scripted(script)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


STATS = {"memories": 3, "favorites": 0, "types": {"note": 3}, "embedded": {}, "embedder": "static"}
UNAVAILABLE = (503, {}, {"error": {"code": "unavailable", "message": "not ready"}})


def test_idempotent_calls_are_retried(scripted: Callable[[list[Any]], Scripted]) -> None:
    s = scripted([UNAVAILABLE, (429, {"Retry-After": "0"}, b""), (200, {}, STATS)])
    with em.EngramClient(s.url, "k" * 20, backoff=0.01) as c:
        assert c.stats().memories == 3
    assert len(s.requests) == 3


def test_retries_give_up(scripted: Callable[[list[Any]], Scripted]) -> None:
    s = scripted([UNAVAILABLE])
    with em.EngramClient(s.url, "k" * 20, backoff=0.01, max_retries=2) as c, pytest.raises(em.Unavailable) as ei:
        c.get("x")
    assert len(s.requests) == 3 and ei.value.status == 503


@pytest.mark.parametrize("call", [
    lambda c: c.add("x"),
    lambda c: c.touch("x"),
    lambda c: c.search("x"),  # records uses
    lambda c: c.import_jsonl([{"text": "x"}]),
])
def test_writes_are_not_retried(scripted: Callable[[list[Any]], Scripted], call: Callable[[Any], Any]) -> None:
    s = scripted([UNAVAILABLE])
    with em.EngramClient(s.url, "k" * 20, backoff=0.01) as c, pytest.raises(em.Unavailable):
        call(c)
    assert len(s.requests) == 1


def test_search_without_record_is_retried(scripted: Callable[[list[Any]], Scripted]) -> None:
    ok = {"query": "x", "strategy": "bm25", "results": [], "timings_ms": {}}
    s = scripted([(502, {}, b"bad gateway"), (200, {}, ok)])
    with em.EngramClient(s.url, "k" * 20, backoff=0.01) as c:
        assert c.search("x", no_record=True).strategy == "bm25"
    assert len(s.requests) == 2


@pytest.mark.parametrize("call,method,path", [
    (lambda c: c.history("a b/c", within="user=u1"), "GET", "/v1/memories/a%20b%2Fc/history?scope=user%3Du1"),
    # Storing an episode again at its positions changes nothing more: safe to repeat.
    (lambda c: c.add_episode("e", [{"text": "x"}]), "POST", "/v1/episodes"),
])
def test_episode_calls_are_retried(scripted: Callable[[list[Any]], Scripted], call: Callable[[Any], Any],
                                   method: str, path: str) -> None:
    ok = {"ids": ["e:1"], "embedded": 1, "versions": []}
    s = scripted([UNAVAILABLE, (200, {}, ok)])
    with em.EngramClient(s.url, "k" * 20, backoff=0.01) as c:
        call(c)
    assert s.requests == [(method, path)] * 2


def test_async_retries(scripted: Callable[[list[Any]], Scripted]) -> None:
    s = scripted([UNAVAILABLE, (200, {}, STATS)])

    async def run() -> None:
        async with em.AsyncEngramClient(s.url, "k" * 20, backoff=0.01) as c:
            assert (await c.stats()).memories == 3
            s.script[:] = [UNAVAILABLE]
            with pytest.raises(em.Unavailable):
                await c.add("x")
    asyncio.run(run())
    assert len(s.requests) == 3


def test_error_without_api_body(scripted: Callable[[list[Any]], Scripted]) -> None:
    s = scripted([(404, {}, b"<html>nope</html>")])
    with em.EngramClient(s.url, max_retries=0) as c, pytest.raises(em.NotFound) as ei:
        c.stats()
    assert ei.value.status == 404


def test_timeout(scripted: Callable[[list[Any]], Scripted]) -> None:
    def stall(h: Any) -> None:
        time.sleep(1.5)
    s = scripted([stall])
    with em.EngramClient(s.url, timeout=0.2, max_retries=0) as c, pytest.raises(em.Timeout):
        c.stats()


def test_unreachable() -> None:
    import socket
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    with em.EngramClient(f"http://127.0.0.1:{port}", backoff=0.01) as c, pytest.raises(em.Unreachable):
        c.stats()


def chunked(lines: list[bytes], trailer: str | None, cut: bool = False) -> Callable[[Any], None]:
    def answer(h: Any) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("Trailer", "Engram-Export-Count")
        h.end_headers()
        for line in lines:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        if cut:
            h.wfile.flush()
            h.connection.shutdown(2)
            return
        h.wfile.write(b"0\r\n")
        if trailer is not None:
            h.wfile.write(b"Engram-Export-Count: " + trailer.encode() + b"\r\n")
        h.wfile.write(b"\r\n")
        h.close_connection = True
    return answer


LINES = [json.dumps({"id": f"e{i}", "text": "t", "type": "note", "created_at": "2026-01-01T00:00:00Z",
                     "updated_at": "2026-01-01T00:00:00Z"}).encode() + b"\n" for i in range(3)]


@pytest.mark.parametrize("name,answer,ok", [
    ("complete", chunked(LINES, "3"), True),
    ("no trailer", chunked(LINES, None), False),
    ("wrong count", chunked(LINES, "4"), False),
    ("cut", chunked(LINES[:2], None, cut=True), False),
    ("cut inside a line", chunked([LINES[0], LINES[1][:5]], "2"), False),
])
def test_export_trailer(scripted: Callable[[list[Any]], Scripted], name: str, answer: Any, ok: bool) -> None:
    s = scripted([answer])
    with em.EngramClient(s.url, max_retries=0) as c:
        if ok:
            assert [m.id for m in c.export()] == ["e0", "e1", "e2"]
        else:
            with pytest.raises(em.ExportIncomplete):
                list(c.export())

    async def run() -> None:
        async with em.AsyncEngramClient(s.url, max_retries=0) as c:
            if ok:
                assert [m.id async for m in c.export()] == ["e0", "e1", "e2"]
            else:
                with pytest.raises(em.ExportIncomplete):
                    _ = [m async for m in c.export()]
    asyncio.run(run())


def test_export_retries_before_the_stream(scripted: Callable[[list[Any]], Scripted]) -> None:
    s = scripted([UNAVAILABLE, chunked(LINES, "3")])
    with em.EngramClient(s.url, backoff=0.01) as c:
        assert len(list(c.export())) == 3
    assert len(s.requests) == 2


def test_export_parser_any_split() -> None:
    """The export parser reads the same lines and trailer however the bytes arrive."""
    import random

    from engram_memory._core import Config
    from engram_memory._export import _Protocol

    lines = [json.dumps({"id": f"u{i}", "text": "Zoë ☎ " * i}, ensure_ascii=False).encode() + b"\n" for i in range(40)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(line), line) for line in lines)
    wire = (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
            b"Trailer: Engram-Export-Count\r\n\r\n" + body + b"0\r\nEngram-Export-Count: 40\r\n\r\n")
    cfg = Config.make("http://127.0.0.1:1", "", 1.0, 0, 0.1, 1.0, None)
    rng = random.Random(15)
    for _ in range(200):
        p = _Protocol(cfg, "/v1/export")
        p.request()
        got: list[bytes] = []
        i = 0
        while i < len(wire):
            n = rng.randint(1, 97)
            p.feed(wire[i:i + n])
            got.extend(p.take())
            i += n
        assert p.done and got == lines and p.check() == 40
        # The same bytes cut anywhere before the end never pass as complete.
        cut = rng.randint(1, len(wire) - 1)
        q = _Protocol(cfg, "/v1/export")
        q.request()
        q.feed(wire[:cut])
        started = q.status is not None
        with pytest.raises(em.ExportIncomplete if started else em.Unreachable):
            q.feed(b"")  # the connection closes
            q.check()


def test_concurrent_tenants(server: Server, key: Callable[[str], str]) -> None:
    """Three tenants writing and searching at once each see only their own."""
    names = ["a1", "a2", "b"]

    async def tenant(name: str) -> None:
        async with em.AsyncEngramClient(server.url, key(name)) as c:
            await asyncio.gather(*(c.add(f"{name} says the shared word zebra number {i}", id=f"z{i}")
                                   for i in range(30)))
            results = await asyncio.gather(*(c.search("shared word zebra", mode="bm25", limit=50, no_record=True)
                                             for _ in range(10)))
            for r in results:
                assert len(r.results) == 30 and all(x.text.startswith(name + " ") for x in r.results)
            mems = [m async for m in c.export()]
            assert len(mems) == 30 and all(m.text.startswith(name + " ") for m in mems)

    async def run() -> None:
        await asyncio.gather(*(tenant(n) for n in names))
    asyncio.run(run())
