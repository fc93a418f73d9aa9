"""A lean async HTTP/1.1 client for benchmarks: keep-alive TLS connections, no framework.

Measures what a server can do without a heavy client's CPU in the way (httpx needs
about 3 ms of CPU per request; this needs a fraction of that).

Also a program, so a benchmark can time a bare client as a whole process (interpreter
start and imports included, as a command's time is):

    python benchmarks/rawclient.py HOST PORT CA_FILE TOKEN_FILE MANIFESTS.json CONCURRENCY

server-side-applies the JSON file's `first` objects one at a time, then its `rest` at
CONCURRENCY; exits 1 if any apply was refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import sys
from collections.abc import Sequence
from typing import Any

import orjson

#: The kinds the benchmarks apply, by their resource (plural) name.
PLURALS = {
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "ServiceAccount": "serviceaccounts",
    "Role": "roles",
    "Namespace": "namespaces",
    "Deployment": "deployments",
}


def path_of(obj: dict[str, Any]) -> str:
    """The API path of a (benchmark) object: a Namespace, or a namespaced object of PLURALS."""
    api = obj["apiVersion"]
    base = f"/api/{api}" if "/" not in api else f"/apis/{api}"
    plural = PLURALS[obj["kind"]]
    meta = obj["metadata"]
    if obj["kind"] == "Namespace":
        return f"{base}/{plural}/{meta['name']}"
    return f"{base}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"


def apply_request(obj: dict[str, Any]) -> tuple[str, str, bytes, str]:
    """A server-side apply of `obj` by field manager `bench`, as `run_requests` takes it."""
    return (
        "PATCH",
        path_of(obj) + "?fieldManager=bench",
        orjson.dumps(obj),
        "application/apply-patch+yaml",
    )


class Connection:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, token: str
    ) -> None:
        self.reader, self.writer = reader, writer
        self.prefix = f"Host: {host}\r\nAuthorization: Bearer {token}\r\nUser-Agent: rawclient\r\n"

    @classmethod
    async def open(cls, host: str, port: int, ca: str, token: str) -> Connection:
        context = ssl.create_default_context(cafile=ca)
        reader, writer = await asyncio.open_connection(host, port, ssl=context)
        return cls(reader, writer, f"{host}:{port}", token)

    async def request(
        self, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        head = (
            f"{method} {path} HTTP/1.1\r\n{self.prefix}Content-Type: {content_type}\r\n"
            f"Accept: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        code = int(status_line.split(b" ", 2)[1])
        length = 0
        chunked = False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            lowered = name.strip().lower()
            if lowered == b"content-length":
                length = int(value.strip())
            elif lowered == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if chunked:
            parts = []
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readline()
            return code, b"".join(parts)
        return code, await self.reader.readexactly(length)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await self.writer.wait_closed()


async def run_requests(
    host: str,
    port: int,
    ca: str,
    token: str,
    requests: Sequence[tuple[str, str, bytes, str]],
    concurrency: int,
) -> list[int]:
    """Send `requests` (method, path, body, content type) over `concurrency` connections; returns status codes."""
    connections = [await Connection.open(host, port, ca, token) for _ in range(concurrency)]
    codes: list[int] = [0] * len(requests)
    cursor = iter(range(len(requests)))

    async def worker(conn: Connection) -> None:
        for index in cursor:
            method, path, body, content_type = requests[index]
            codes[index], _ = await conn.request(method, path, body, content_type)

    await asyncio.gather(*(worker(c) for c in connections))
    for conn in connections:
        await conn.close()
    return codes


async def apply_all(
    host: str,
    port: int,
    ca: str,
    token: str,
    first: Sequence[dict[str, Any]],
    rest: Sequence[dict[str, Any]],
    concurrency: int,
) -> list[int]:
    """Apply `first` one at a time (Namespaces), then `rest` at `concurrency`: status codes."""
    codes = await run_requests(host, port, ca, token, [apply_request(o) for o in first], 1)
    return codes + await run_requests(
        host, port, ca, token, [apply_request(o) for o in rest], concurrency
    )


def main(argv: list[str]) -> int:
    host, port, ca, token_file, manifests, concurrency = argv
    with open(token_file) as token, open(manifests) as objects:
        token_text, loaded = token.read().strip(), json.load(objects)
    codes = asyncio.run(
        apply_all(
            host, int(port), ca, token_text, loaded["first"], loaded["rest"], int(concurrency)
        )
    )
    return 0 if all(code in (200, 201) for code in codes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
