"""Benchmark: which HTTP client should the Kubernetes provider use for server-side apply?

Starts a throwaway local cluster, then server-side-applies the same kind of set
with each client in turn — 10 namespaces first, then 1,000 small objects (ConfigMaps,
Secrets, ServiceAccounts and Roles, 25 of each per namespace) at concurrency 8, as
the engine's benchmark does — and prints objects per second, the client process's
CPU milliseconds per applied object, the server's, and the time relative to the raw
reference (a bare asyncio HTTP/1.1 client, benchmarks/rawclient.py). Each client
gets fresh namespaces, so every apply is a create; rows are the median of
`--rounds` interleaved rounds.

    python benchmarks/provider_apply.py [--rounds 3]

Clients:
  raw               rawclient.py: keep-alive TLS, hand-written HTTP/1.1, no parsing of answers
  lightkube         lightkube.AsyncClient.apply of typed models (httpx2 underneath)
  httpx2 thin       httpx2.AsyncClient built by lightkube's client_adapter from the kubeconfig, orjson
  httpx thin        httpx.AsyncClient (HTTP/1.1 keep-alive), credentials from the kubeconfig, orjson
  httpx http2       the same with http2=True (HTTP/2 is used only if the server's ALPN offers it)
  provider http1    KubernetesProvider(http="http1"): apply + await_ready, the lean transport
  provider httpx    KubernetesProvider(http="httpx"): apply + await_ready over httpx
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))

from rawclient import apply_all, path_of

from stackwright.localcluster import lifecycle
from stackwright.localcluster.lifecycle import ClusterInfo
from stackwright.providers.kubernetes import KubernetesProvider, load_config

CLK_TCK = os.sysconf("SC_CLK_TCK")
CONCURRENCY = 8
NAMESPACES = 10
PER_KIND = 25  # per namespace: 4 kinds x 25 x 10 namespaces = 1,000 objects


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def manifests(prefix: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"{prefix}-{n}"}}
        for n in range(NAMESPACES)
    ]
    objects: list[dict[str, Any]] = []
    for n in range(NAMESPACES):
        ns = f"{prefix}-{n}"
        for i in range(PER_KIND):
            meta = {
                "name": f"obj-{i}",
                "namespace": ns,
                "labels": {"app": "bench", "index": str(i)},
            }
            objects += [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": meta,
                    "data": {"key": f"value-{i}", "other": "x" * 64},
                },
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": meta,
                    "type": "Opaque",
                    "stringData": {"password": f"p-{i}"},
                },
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "Role",
                    "metadata": meta,
                    "rules": [
                        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
                    ],
                },
            ]
    return namespaces, objects


async def bounded(
    objects: list[dict[str, Any]], one: Callable[[dict[str, Any]], Awaitable[Any]]
) -> None:
    queue = iter(objects)

    async def worker() -> None:
        for obj in queue:
            await one(obj)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


# --- the clients ----------------------------------------------------------------------------


async def run_raw(
    info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> str:
    token = (info.folder / "token").read_text().strip()
    ca = str(info.folder / "ca.crt")

    codes = await apply_all("127.0.0.1", info.port, ca, token, namespaces, objects, CONCURRENCY)
    bad = [c for c in codes if c not in (200, 201)]
    assert not bad, f"raw: {len(bad)} applies failed, e.g. HTTP {bad[0]}"
    return "HTTP/1.1"


async def run_lightkube(
    info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> str:
    from lightkube import AsyncClient, KubeConfig, codecs

    client = AsyncClient(KubeConfig.from_file(info.kubeconfig), field_manager="bench")
    try:
        for ns in namespaces:
            await client.apply(codecs.from_dict(ns))
        await bounded(objects, lambda obj: client.apply(codecs.from_dict(obj)))
    finally:
        await client.close()
    return "HTTP/1.1"


async def run_httpx2_thin(
    info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> str:
    from lightkube import KubeConfig
    from lightkube.config.client_adapter import AsyncClient, ConnectionParams

    config = KubeConfig.from_file(info.kubeconfig).get()
    assert config is not None
    client = AsyncClient(config, ConnectionParams())
    headers = {"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"}

    async def apply(obj: dict[str, Any]) -> None:
        response = await client.patch(
            path_of(obj),
            params={"fieldManager": "bench"},
            content=orjson.dumps(obj),
            headers=headers,
        )
        assert response.status_code in (200, 201), response.text
        orjson.loads(response.content)

    try:
        for ns in namespaces:
            await apply(ns)
        await bounded(objects, apply)
    finally:
        await client.aclose()
    return "HTTP/1.1"


def httpx_runner(
    http2: bool,
) -> Callable[[ClusterInfo, list[dict[str, Any]], list[dict[str, Any]]], Awaitable[str]]:
    async def run(
        info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
    ) -> str:
        import httpx

        config = load_config(info.kubeconfig, environ={})
        auth = dict(await config.auth.headers())
        client = httpx.AsyncClient(
            base_url=config.server,
            verify=config.ssl_context or True,
            http2=http2,
            headers={
                **auth,
                "Content-Type": "application/apply-patch+yaml",
                "Accept": "application/json",
            },
            limits=httpx.Limits(max_connections=CONCURRENCY),
        )
        versions: set[str] = set()

        async def apply(obj: dict[str, Any]) -> None:
            response = await client.patch(
                path_of(obj), params={"fieldManager": "bench"}, content=orjson.dumps(obj)
            )
            assert response.status_code in (200, 201), response.text
            versions.add(response.http_version)
            orjson.loads(response.content)

        try:
            for ns in namespaces:
                await apply(ns)
            await bounded(objects, apply)
        finally:
            await client.aclose()
        return ",".join(sorted(versions))

    return run


def provider_runner(
    http: str,
) -> Callable[[ClusterInfo, list[dict[str, Any]], list[dict[str, Any]]], Awaitable[str]]:
    async def run(
        info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
    ) -> str:
        async with KubernetesProvider(
            str(info.kubeconfig), http=http, field_manager="bench"
        ) as provider:  # type: ignore[arg-type]

            async def apply(obj: dict[str, Any]) -> None:
                await provider.await_ready(await provider.apply(obj))

            for ns in namespaces:
                await apply(ns)
            await bounded(objects, apply)
        return "HTTP/1.1"

    return run


CLIENTS: list[
    tuple[str, Callable[[ClusterInfo, list[dict[str, Any]], list[dict[str, Any]]], Awaitable[str]]]
] = [
    ("raw", run_raw),
    ("lightkube", run_lightkube),
    ("httpx2 thin", run_httpx2_thin),
    ("httpx thin", httpx_runner(http2=False)),
    ("httpx http2", httpx_runner(http2=True)),
    ("provider http1", provider_runner("http1")),
    ("provider httpx", provider_runner("httpx")),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in CLIENTS}
    protocols: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as home:
        os.environ["STACKWRIGHT_HOME"] = home
        info, _ = lifecycle.start("provider-bench")
        assert info.pid is not None
        try:
            # Warm the server (imports, caches) so the first client measured is not penalised.
            warm_ns, warm = manifests("warm")
            asyncio.run(run_raw(info, warm_ns, warm))
            for round_ in range(args.rounds):
                for index, (name, runner) in enumerate(CLIENTS):
                    namespaces, objects = manifests(f"r{round_}-c{index}")
                    cpu0, server0, t0 = (
                        time.process_time(),
                        server_cpu(info.pid),
                        time.perf_counter(),
                    )
                    protocols[name] = asyncio.run(runner(info, namespaces, objects))
                    elapsed = time.perf_counter() - t0
                    cpu, server = time.process_time() - cpu0, server_cpu(info.pid) - server0
                    results[name].append((elapsed, cpu, server))
        finally:
            lifecycle.stop("provider-bench")
    count = NAMESPACES + len(manifests("x")[1])
    raw_time = statistics.median(r[0] for r in results["raw"])
    print(
        f"{count} server-side applies per run (10 namespaces, then 1,000 objects at concurrency {CONCURRENCY}); median of {args.rounds}"
    )
    print(
        f"{'client':<16} {'protocol':<9} {'objects/s':>10} {'client CPU ms/apply':>20} {'server CPU ms/apply':>20} {'time vs raw':>12}"
    )
    for name, _ in CLIENTS:
        elapsed = statistics.median(r[0] for r in results[name])
        cpu = statistics.median(r[1] for r in results[name])
        server = statistics.median(r[2] for r in results[name])
        print(
            f"{name:<16} {protocols[name]:<9} {count / elapsed:>10.0f} {cpu / count * 1000:>20.3f} "
            f"{server / count * 1000:>20.3f} {elapsed / raw_time:>11.2f}x"
        )


if __name__ == "__main__":
    main()
