"""GET /v1/export as a stream of JSONL lines, with its trailer checked.

A complete export ends with the HTTP trailer Engram-Export-Count (the number
of lines); one that fails after it started is cut off. httpx does not pass
trailers on, so the export speaks HTTP/1.1 itself with h11 (httpx's own
HTTP/1.1 parser) over one connection: proxies are not used for it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from typing import AsyncIterator, Iterator

import h11
import httpx

from ._core import EXPORT_TRAILER, RETRY_STATUSES, Config, failure
from ._errors import EngramError, ExportIncomplete, Timeout, Unreachable


class _Protocol:
    """The request and the parsing of its answer, without I/O."""

    def __init__(self, cfg: Config, path: str) -> None:
        u = httpx.URL(cfg.url + path)
        self.tls = u.scheme == "https"
        self.host = u.host
        self.port = u.port or (443 if self.tls else 80)
        hostport = self.host if u.port is None else f"{self.host}:{u.port}"
        if ":" in self.host:
            hostport = f"[{self.host}]" if u.port is None else f"[{self.host}]:{u.port}"
        self.target = u.raw_path.decode()
        self.headers = [("Host", hostport), ("Accept", "application/x-ndjson"), ("TE", "trailers"),
                        ("Connection", "close")] + [(k, v) for k, v in cfg.headers.items()]
        self.reset()

    def reset(self) -> None:
        self.conn = h11.Connection(h11.CLIENT)
        self.status: int | None = None
        self.reason = ""
        self.body = bytearray()
        self.partial = b""
        self.lines: list[bytes] = []
        self.count = 0
        self.trailer: str | None = None
        self.done = False

    def request(self) -> bytes:
        return self.conn.send(h11.Request(method="GET", target=self.target, headers=self.headers)) + \
            (self.conn.send(h11.EndOfMessage()) or b"")

    def feed(self, data: bytes) -> None:
        try:
            self.conn.receive_data(data)
            while True:
                ev = self.conn.next_event()
                if ev is h11.NEED_DATA or ev is h11.PAUSED:
                    return
                if isinstance(ev, h11.Response):
                    self.status, self.reason = ev.status_code, ev.reason.decode(errors="replace")
                elif isinstance(ev, h11.Data):
                    self._data(bytes(ev.data))
                elif isinstance(ev, h11.EndOfMessage):
                    for k, v in ev.headers:
                        if k.lower() == EXPORT_TRAILER.encode():
                            self.trailer = v.decode(errors="replace")
                    self.done = True
                    return
                elif isinstance(ev, h11.ConnectionClosed):
                    raise h11.RemoteProtocolError("connection closed")
        except h11.RemoteProtocolError as e:
            if self.status is None:
                raise Unreachable(f"GET /v1/export: the server answered no HTTP: {e}") from None
            raise ExportIncomplete(f"export cut after {self.count} lines: {e}") from None

    def _data(self, data: bytes) -> None:
        if self.status is not None and self.status >= 300:
            self.body += data
            return
        data = self.partial + data
        *full, self.partial = data.split(b"\n")
        for line in full:
            self.count += 1
            self.lines.append(line + b"\n")

    def take(self) -> list[bytes]:
        out, self.lines = self.lines, []
        return out

    def check(self) -> int:
        """The line count, once the trailer says the export is complete."""
        if self.partial:
            raise ExportIncomplete(f"export ends inside line {self.count + 1} (no newline)")
        if self.trailer is None:
            raise ExportIncomplete(f"export of {self.count} lines ended without the Engram-Export-Count trailer")
        if self.trailer.strip() != str(self.count):
            raise ExportIncomplete(f"export read {self.count} lines, the trailer says {self.trailer!r}")
        return self.count

    def error(self) -> EngramError:
        return failure(self.status or 0, bytes(self.body), self.reason)


def _ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def export_lines(cfg: Config) -> Iterator[bytes]:
    """The export's lines as they arrive; raises ExportIncomplete at the end
    when the stream was cut or its trailer is missing or wrong."""
    p = _Protocol(cfg, "/v1/export")
    attempt = 0
    while True:
        p.reset()
        sock = _connect(p, cfg)
        try:
            sock.sendall(p.request())
            while p.status is None:
                _pump(sock, p)
            if p.status in RETRY_STATUSES and attempt < cfg.max_retries:
                time.sleep(cfg.delay(attempt, None))
                attempt += 1
                continue
            if p.status >= 300:
                while not p.done:
                    _pump(sock, p)
                raise p.error()
            while True:
                yield from p.take()
                if p.done:
                    p.check()
                    return
                _pump(sock, p)
        finally:
            sock.close()


def _connect(p: _Protocol, cfg: Config) -> socket.socket:
    try:
        sock = socket.create_connection((p.host, p.port), timeout=cfg.timeout)
        if p.tls:
            sock = _ssl_context().wrap_socket(sock, server_hostname=p.host)
        return sock
    except socket.timeout:
        raise Timeout(f"connecting to {cfg.url}: no answer within {cfg.timeout}s") from None
    except OSError as e:
        raise Unreachable(f"connecting to {cfg.url}: {e}") from None


def _pump(sock: socket.socket, p: _Protocol) -> None:
    try:
        data = sock.recv(64 << 10)
    except socket.timeout:
        raise Timeout(f"export: nothing arrived within {sock.gettimeout()}s") from None
    except OSError as e:
        if p.status is None:
            raise Unreachable(f"export: {e}") from None
        raise ExportIncomplete(f"export cut after {p.count} lines: {e}") from None
    p.feed(data)


async def export_lines_async(cfg: Config) -> AsyncIterator[bytes]:
    """export_lines on asyncio streams."""
    p = _Protocol(cfg, "/v1/export")
    attempt = 0
    while True:
        p.reset()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(p.host, p.port, ssl=_ssl_context() if p.tls else None,
                                        server_hostname=p.host if p.tls else None), cfg.timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"connecting to {cfg.url}: no answer within {cfg.timeout}s") from None
        except OSError as e:
            raise Unreachable(f"connecting to {cfg.url}: {e}") from None
        try:
            writer.write(p.request())
            await writer.drain()
            while p.status is None:
                await _apump(reader, p, cfg.timeout)
            if p.status in RETRY_STATUSES and attempt < cfg.max_retries:
                await asyncio.sleep(cfg.delay(attempt, None))
                attempt += 1
                continue
            if p.status >= 300:
                while not p.done:
                    await _apump(reader, p, cfg.timeout)
                raise p.error()
            while True:
                for line in p.take():
                    yield line
                if p.done:
                    p.check()
                    return
                await _apump(reader, p, cfg.timeout)
        finally:
            writer.close()


async def _apump(reader: asyncio.StreamReader, p: _Protocol, timeout: float | None) -> None:
    try:
        data = await asyncio.wait_for(reader.read(64 << 10), timeout)
    except asyncio.TimeoutError:
        raise Timeout(f"export: nothing arrived within {timeout}s") from None
    except OSError as e:
        if p.status is None:
            raise Unreachable(f"export: {e}") from None
        raise ExportIncomplete(f"export cut after {p.count} lines: {e}") from None
    p.feed(data)
