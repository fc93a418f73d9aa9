"""How bytes reach the API server: a lean HTTP/1.1 connection pool, or httpx.

`Http1Transport` is the default. It keeps TLS connections alive in a small pool
and speaks just the HTTP/1.1 the Kubernetes API needs (Content-Length and chunked
bodies, keep-alive, streaming watch responses). It exists because the client's
CPU per request decides how fast `up` is: measured against the local cluster
(benchmarks/provider_apply.py) it costs about a tenth of httpx's CPU per
server-side apply. `HttpxTransport` wraps an `httpx.AsyncClient` and is used
where that matters more than speed: HTTP proxies, and tests that inject an
`httpx.MockTransport`.

Both implement `Transport`. Neither knows about authentication, retries or
Kubernetes errors: `client.ApiClient` adds those above them. A transport raises
`ConnectionError` / `TimeoutError` / `ssl.SSLError` for network trouble.
Must never: reuse a connection whose response was not read to the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx  # imported when an HttpxTransport is made: the default path never pays for it

__all__ = ["Http1Transport", "HttpxTransport", "Response", "Stream", "Transport"]

_READ_LIMIT = 1 << 22  # the longest header block / chunk-size line we accept


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes


#: One warning of a `Warning` header (RFC 7234: code, agent, quoted text), as the API
#: server sends them ("299 - ..."); repeated headers arrive joined by ", ".
_WARNING = re.compile(r'\d{3} \S+ "((?:[^"\\]|\\.)*)"')


def api_warnings(headers: Mapping[str, str]) -> list[str]:
    """The texts of a response's `Warning` headers."""
    return [re.sub(r"\\(.)", r"\1", text) for text in _WARNING.findall(headers.get("warning", ""))]


@dataclass
class Stream:
    """A response whose body is read line by line (watch events are one JSON document per line)."""

    status: int
    headers: Mapping[str, str]
    lines: AsyncIterator[bytes]
    body: bytes = field(default=b"")  # filled in instead of `lines` for error answers


class Transport(Protocol):
    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float | None,
    ) -> Response: ...

    def stream(
        self, method: str, target: str, headers: Mapping[str, str], timeout: float | None
    ) -> contextlib.AbstractAsyncContextManager[Stream]: ...

    async def close(self) -> None: ...


class _Stale(Exception):
    """A pooled connection was closed by the server before it answered: safe to resend."""


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()

    async def aclose(self) -> None:
        """Close and wait (briefly) for the TLS goodbye, so no socket outlives its loop."""
        self.writer.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await self.writer.wait_closed()

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        if len(data) > 65536:
            await self.writer.drain()

    async def read_head(self, reused: bool) -> tuple[int, dict[str, str], bool]:
        """Status, headers and whether the connection may be kept alive."""
        try:
            block = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if reused and not exc.partial:
                raise _Stale from exc
            raise ConnectionResetError("the API server closed the connection") from exc
        except ConnectionResetError as exc:
            if reused:
                raise _Stale from exc
            raise
        lines = block.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        try:
            status = int(rest[:3])
        except ValueError as exc:
            raise ConnectionError(f"not an HTTP response: {lines[0][:80]!r}") from exc
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            key = name.strip().lower()
            value = value.strip()
            # Repeated headers (Warning) are joined the way HTTP allows.
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        return status, headers, keep

    async def _read_exactly(self, size: int) -> bytes:
        try:
            return await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as exc:
            raise _cut_short() from exc

    async def _read_line(self) -> bytes:
        try:
            return await self.reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            raise _cut_short() from exc

    async def read_body(self, status: int, headers: Mapping[str, str], method: str) -> bytes | None:
        """The whole body; None when its end is the connection's end (no reuse)."""
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return b""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            async for chunk in self.chunks():
                parts.append(chunk)
            return b"".join(parts)
        length = headers.get("content-length")
        if length is not None:
            return await self._read_exactly(int(length))
        return None

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            size_line = await self._read_line()
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                # Trailers (none expected) end with an empty line.
                while (await self._read_line()) != b"\r\n":
                    pass
                return
            data = await self._read_exactly(size + 2)
            yield data[:-2]


def _cut_short() -> ConnectionResetError:
    # asyncio says IncompleteReadError (an EOFError); callers retry on ConnectionError.
    return ConnectionResetError("the API server closed the connection in the middle of an answer")


class Http1Transport:
    """Keep-alive HTTP/1.1 over TLS (or plain TCP) to one API server.

    At most `max_connections` requests run at once (others queue); watches get
    their own connections outside that limit so they never starve requests.
    """

    def __init__(
        self,
        server: str,
        ssl_context: ssl.SSLContext | None,
        *,
        tls_server_name: str | None = None,
        max_connections: int = 16,
        connect_timeout: float = 10.0,
        user_agent: str = "stackwright",
    ) -> None:
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server URL {server!r} must be http(s)://host[:port][/path]")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        host_header = f"[{self._host}]" if ":" in self._host else self._host
        default_port = 443 if self._https else 80
        self._host_header = (
            host_header if self._port == default_port else f"{host_header}:{self._port}"
        )
        self._ssl = ssl_context if self._https else None
        if self._https and self._ssl is None:
            self._ssl = ssl.create_default_context()
        self._server_hostname = tls_server_name if self._https else None
        self._connect_timeout = connect_timeout
        self._user_agent = user_agent
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(max_connections)
        self._streams: set[_Connection] = set()

    async def _connect(self) -> _Connection:
        async with asyncio.timeout(self._connect_timeout):
            reader, writer = await asyncio.open_connection(
                self._host,
                self._port,
                ssl=self._ssl,
                server_hostname=self._server_hostname if self._ssl is not None else None,
                limit=_READ_LIMIT,
            )
        return _Connection(reader, writer)

    def _head(
        self, method: str, target: str, headers: Mapping[str, str], length: int | None
    ) -> bytes:
        lines = [
            f"{method} {self._prefix}{target} HTTP/1.1",
            f"Host: {self._host_header}",
            f"User-Agent: {self._user_agent}",
        ]
        lines.extend(f"{k}: {v}" for k, v in headers.items())
        if length is not None:
            lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float | None,
    ) -> Response:
        payload = body or b""
        sends_body = body is not None or method in ("POST", "PUT", "PATCH")
        head = self._head(method, target, headers, len(payload) if sends_body else None)
        async with self._slots:
            while True:
                conn: _Connection | None = None
                while self._idle:
                    candidate = self._idle.pop()
                    if candidate.usable():
                        conn = candidate
                        break
                    candidate.close()
                reused = conn is not None
                if conn is None:
                    conn = await self._connect()
                try:
                    async with asyncio.timeout(timeout):
                        await conn.send(head + payload)
                        status, response_headers, keep = await conn.read_head(reused)
                        data = await conn.read_body(status, response_headers, method)
                        if data is None:
                            data = await conn.reader.read()
                            keep = False
                except _Stale:
                    # The server closed an idle keep-alive connection; nothing was processed.
                    conn.close()
                    continue
                except BaseException:
                    conn.close()
                    raise
                if keep:
                    self._idle.append(conn)
                else:
                    conn.close()
                return Response(status, response_headers, data)

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, target: str, headers: Mapping[str, str], timeout: float | None
    ) -> AsyncIterator[Stream]:
        conn = await self._connect()
        self._streams.add(conn)
        try:
            async with asyncio.timeout(self._connect_timeout + 30):
                await conn.send(self._head(method, target, headers, None))
                status, response_headers, _ = await conn.read_head(False)
            if status >= 300:
                async with asyncio.timeout(30):
                    data = await conn.read_body(status, response_headers, method)
                    if data is None:
                        data = await conn.reader.read()
                yield Stream(status, response_headers, _no_lines(), data)
                return
            chunked = "chunked" in response_headers.get("transfer-encoding", "").lower()
            yield Stream(status, response_headers, _lines(conn, chunked, timeout))
        finally:
            self._streams.discard(conn)
            await conn.aclose()

    async def close(self) -> None:
        connections = [*self._idle, *self._streams]
        self._idle.clear()
        self._streams.clear()
        await asyncio.gather(*(c.aclose() for c in connections))


async def _no_lines() -> AsyncIterator[bytes]:
    return
    yield  # pragma: no cover - makes this an async generator


async def _lines(
    conn: _Connection, chunked: bool, idle_timeout: float | None
) -> AsyncIterator[bytes]:
    """The body's lines as they arrive; `idle_timeout` bounds the wait for each piece."""
    buffer = b""
    pieces: AsyncIterator[bytes] = conn.chunks() if chunked else _raw(conn)
    while True:
        try:
            async with asyncio.timeout(idle_timeout):
                piece = await anext(pieces)
        except StopAsyncIteration:
            break
        buffer += piece
        while True:
            line, sep, rest = buffer.partition(b"\n")
            if not sep:
                break
            buffer = rest
            if line.strip():
                yield line
    if buffer.strip():
        yield buffer


async def _raw(conn: _Connection) -> AsyncIterator[bytes]:
    while True:
        data = await conn.reader.read(65536)
        if not data:
            return
        yield data


class HttpxTransport:
    """The same interface over `httpx.AsyncClient`: proxies, HTTP/2, and injected test transports."""

    def __init__(
        self,
        server: str,
        ssl_context: ssl.SSLContext | None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        proxy: str | None = None,
        http2: bool = False,
        max_connections: int = 16,
        user_agent: str = "stackwright",
    ) -> None:
        import httpx

        self._client = httpx.AsyncClient(
            base_url=server.rstrip("/"),
            verify=ssl_context if ssl_context is not None else True,
            transport=transport,
            proxy=proxy,
            http2=http2,
            trust_env=False,  # the kubeconfig loader decided about proxies already
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            headers={"User-Agent": user_agent},
        )

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float | None,
    ) -> Response:
        import httpx

        try:
            reply = await self._client.request(
                method, target, headers=dict(headers), content=body, timeout=timeout
            )
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc) or "timed out") from exc
        except httpx.TransportError as exc:
            raise ConnectionError(str(exc) or type(exc).__name__) from exc
        return Response(
            reply.status_code, {k.lower(): v for k, v in reply.headers.items()}, reply.content
        )

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, target: str, headers: Mapping[str, str], timeout: float | None
    ) -> AsyncIterator[Stream]:
        import httpx

        request = self._client.build_request(
            method, target, headers=dict(headers), timeout=httpx.Timeout(30.0, read=timeout)
        )
        try:
            reply = await self._client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc) or "timed out") from exc
        except httpx.TransportError as exc:
            raise ConnectionError(str(exc) or type(exc).__name__) from exc
        try:
            response_headers = {k.lower(): v for k, v in reply.headers.items()}
            if reply.status_code >= 300:
                yield Stream(reply.status_code, response_headers, _no_lines(), await reply.aread())
            else:
                yield Stream(reply.status_code, response_headers, _httpx_lines(reply))
        finally:
            await reply.aclose()

    async def close(self) -> None:
        await self._client.aclose()


async def _httpx_lines(reply: httpx.Response) -> AsyncIterator[bytes]:
    import httpx

    try:
        async for line in reply.aiter_lines():
            if line.strip():
                yield line.encode()
    except httpx.TimeoutException as exc:
        raise TimeoutError(str(exc) or "timed out") from exc
    except httpx.TransportError as exc:
        raise ConnectionError(str(exc) or type(exc).__name__) from exc
