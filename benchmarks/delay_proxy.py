"""A TCP forwarder that holds back every byte a client sends for a fixed time.

    python benchmarks/delay_proxy.py LISTEN_PORT TARGET_PORT LATENCY_MS

Listens on 127.0.0.1:LISTEN_PORT and forwards each connection to 127.0.0.1:TARGET_PORT,
bytes untouched (TLS stays end to end, so a client checks the server's certificate as
it would directly). What the client sends reaches the server LATENCY_MS later, in order;
answers come back at once. With one request in flight per keep-alive connection, each
request takes LATENCY_MS longer, as it does against an API server that needs that long
to answer — without the server's CPU, which the machine's two cores would otherwise
share with the client. Prints "ready" once it listens; stops on SIGTERM.

Written on asyncio's protocols (no streams, one timer per connection at a time), so the
forwarding itself costs little of the CPU the client and server share.
"""

from __future__ import annotations

import asyncio
import collections
import signal
import sys


class Upstream(asyncio.Protocol):
    """The connection to the server: what it answers goes straight back to the client."""

    def __init__(self, client: asyncio.Transport) -> None:
        self.client = client

    def data_received(self, data: bytes) -> None:
        self.client.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.client.close()


class Client(asyncio.Protocol):
    """A client's connection: what it sends is written to the server `delay` seconds later."""

    def __init__(self, target: int, delay: float) -> None:
        self.target = target
        self.delay = delay
        self.held: collections.deque[tuple[float, bytes]] = collections.deque()
        self.timer: asyncio.TimerHandle | None = None
        self.upstream: asyncio.Transport | None = None
        self.closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.pause_reading()  # until the server's side is open
        # Kept: a task the loop alone holds (weakly) may be collected before it runs.
        self.opening = asyncio.ensure_future(self._open())

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            upstream, _ = await loop.create_connection(
                lambda: Upstream(self.transport), "127.0.0.1", self.target
            )
        except OSError:
            self.transport.close()
            return
        self.upstream = upstream
        self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.held.append((loop.time() + self.delay, data))
        if self.timer is None:
            self.timer = loop.call_at(self.held[0][0], self._release)

    def _release(self) -> None:
        self.timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        assert self.upstream is not None
        while self.held and self.held[0][0] <= now:
            self.upstream.write(self.held.popleft()[1])
        if self.held:
            self.timer = loop.call_at(self.held[0][0], self._release)
        elif self.closing:
            self.upstream.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        if not self.held and self.upstream is not None:
            self.upstream.close()


async def serve(listen: int, target: int, delay: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Client(target, delay), "127.0.0.1", listen)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    listen_port, target_port, latency_ms = sys.argv[1:4]
    asyncio.run(serve(int(listen_port), int(target_port), float(latency_ms) / 1000))
