"""The lean HTTP/1.1 transport against a scripted socket server: framing, keep-alive, streams."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from stackwright.providers.kubernetes.http import Http1Transport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[bool]]


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    body = await reader.readexactly(length) if length else b""
    return head + body


class Server:
    """Serves each request with `handler`; counts connections; `handler` returns False to hang up."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                while True:
                    request = await read_request(reader)
                    if request is None:
                        return
                    self.requests.append(request)
                    if not await self.handler(reader, writer, request):
                        return
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


def reply(body: bytes, *, status: str = "200 OK", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode()
        + body
    )


async def ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bool:
    writer.write(reply(b'{"ok":true}'))
    await writer.drain()
    return True


def test_requests_reuse_one_keep_alive_connection_and_send_the_body() -> None:
    async def go() -> None:
        server = Server(ok)
        async with server as url:
            transport = Http1Transport(url, None, user_agent="test-agent")
            for _ in range(3):
                response = await transport.request(
                    "PATCH", "/api/v1/x?a=1", {"Content-Type": "application/json"}, b'{"k":1}', 5
                )
                assert (response.status, response.body) == (200, b'{"ok":true}')
                assert response.headers["content-type"] == "application/json"
            await transport.close()
        assert server.connections == 1
        first = server.requests[0]
        assert first.startswith(b"PATCH /api/v1/x?a=1 HTTP/1.1\r\n")
        assert b"\r\nUser-Agent: test-agent\r\n" in first
        assert b"\r\nContent-Length: 7\r\n" in first
        assert first.endswith(b'\r\n\r\n{"k":1}')

    asyncio.run(go())


def test_chunked_bodies_and_repeated_headers() -> None:
    async def chunked(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(
            b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nWarning: 299 - "one"\r\nWarning: 299 - "two"\r\n\r\n'
            b'4\r\n{"a"\r\n5\r\n:123}\r\n0\r\n\r\n'
        )
        await writer.drain()
        return True

    async def go() -> None:
        server = Server(chunked)
        async with server as url:
            transport = Http1Transport(url, None)
            response = await transport.request("GET", "/x", {}, None, 5)
            again = await transport.request("GET", "/x", {}, None, 5)
            await transport.close()
        assert response.body == b'{"a":123}' == again.body
        assert response.headers["warning"] == '299 - "one", 299 - "two"'
        assert server.connections == 1

    asyncio.run(go())


def test_a_connection_the_server_closed_while_idle_is_replaced_transparently() -> None:
    async def once(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(reply(b"{}"))
        await writer.drain()
        return False  # hang up after each answer, without saying Connection: close

    async def go() -> None:
        server = Server(once)
        async with server as url:
            transport = Http1Transport(url, None)
            for _ in range(3):
                await asyncio.sleep(0.05)  # let the close arrive
                assert (await transport.request("GET", "/x", {}, None, 5)).status == 200
            await transport.close()
        assert server.connections == 3
        assert len(server.requests) == 3

    asyncio.run(go())


def test_connection_close_and_bodies_ending_with_the_connection() -> None:
    async def until_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\nboom")
        await writer.drain()
        return False

    async def go() -> None:
        server = Server(until_close)
        async with server as url:
            transport = Http1Transport(url, None)
            first = await transport.request("GET", "/x", {}, None, 5)
            second = await transport.request("GET", "/x", {}, None, 5)
            await transport.close()
        assert (first.status, first.body, second.body) == (500, b"boom", b"boom")
        assert server.connections == 2

    asyncio.run(go())


def test_timeouts_close_the_connection_and_raise_timeout_error() -> None:
    async def silent(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        await asyncio.sleep(5)
        return False

    async def go() -> None:
        async with Server(silent) as url:
            transport = Http1Transport(url, None)
            with pytest.raises(TimeoutError):
                await transport.request("GET", "/x", {}, None, 0.1)
            await transport.close()

    asyncio.run(go())


def test_refused_connections_raise_connection_error() -> None:
    async def go() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        transport = Http1Transport(f"http://127.0.0.1:{port}", None)
        with pytest.raises(ConnectionError):
            await transport.request("GET", "/x", {}, None, 1)

    asyncio.run(go())


def test_streams_yield_lines_split_across_chunks_and_stop_at_the_end() -> None:
    async def watch(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in (b'{"type":"ADDED"}\n{"ty', b'pe":"MODIFIED"}\n', b'{"type":"DELETED"}\n'):
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def go() -> list[bytes]:
        async with Server(watch) as url:
            transport = Http1Transport(url, None)
            async with transport.stream("GET", "/w?watch=1", {}, 5) as stream:
                assert stream.status == 200
                lines = [line async for line in stream.lines]
            await transport.close()
            return lines

    assert asyncio.run(go()) == [b'{"type":"ADDED"}', b'{"type":"MODIFIED"}', b'{"type":"DELETED"}']


def test_stream_error_answers_carry_their_body() -> None:
    async def gone(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(reply(b'{"kind":"Status","code":410}', status="410 Gone"))
        await writer.drain()
        return True

    async def go() -> None:
        async with Server(gone) as url:
            transport = Http1Transport(url, None)
            async with transport.stream("GET", "/w", {}, 5) as stream:
                assert (stream.status, stream.body) == (410, b'{"kind":"Status","code":410}')
                assert [line async for line in stream.lines] == []
            await transport.close()

    asyncio.run(go())


def test_a_server_url_path_prefix_is_kept() -> None:
    async def go() -> None:
        server = Server(ok)
        async with server as url:
            transport = Http1Transport(url + "/k8s/clusters/c-1/", None)
            await transport.request("GET", "/api/v1", {}, None, 5)
            await transport.close()
        assert server.requests[0].startswith(b"GET /k8s/clusters/c-1/api/v1 HTTP/1.1\r\n")

    asyncio.run(go())


def test_invalid_server_urls_are_rejected() -> None:
    with pytest.raises(ValueError, match="must be http"):
        Http1Transport("ftp://x", None)


def test_a_body_cut_short_by_the_server_raises_connection_error() -> None:
    """The API server going away mid-answer (stopped, restarted, a proxy cutting it) is
    network trouble: ConnectionError, which callers retry and watches report, not EOFError."""

    async def cut_watch(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b'{"type":"ADDED"}\n'
        writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        await writer.drain()
        return False  # hang up without the last chunk

    async def cut_answer(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
        await writer.drain()
        return False  # hang up 99 bytes early

    async def go() -> list[bytes]:
        lines: list[bytes] = []
        async with Server(cut_watch) as url:
            transport = Http1Transport(url, None)
            with pytest.raises(ConnectionError):
                async with transport.stream("GET", "/w?watch=1", {}, 5) as stream:
                    async for line in stream.lines:
                        lines.append(line)
            await transport.close()
        async with Server(cut_answer) as url:
            transport = Http1Transport(url, None)
            with pytest.raises(ConnectionError):
                await transport.request("GET", "/x", {}, None, 5)
            await transport.close()
        return lines

    assert asyncio.run(go()) == [b'{"type":"ADDED"}']
