"""Benchmark: server-side apply throughput and cost of the local cluster's API server.

Starts a throwaway local cluster, then server-side-applies 1,000 small ConfigMaps
with 1, 8 and 32 concurrent clients (a lean raw HTTP/1.1 client, so the client's
CPU does not hide the server's), printing objects per second and the server
process's CPU seconds per 1,000 applies. Then stores 10,000 objects and prints the
server's resident memory.

    python benchmarks/apiserver_apply.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rawclient import run_requests

from stackwright.localcluster import lifecycle

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def configmap(namespace: str, index: int) -> bytes:
    return json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"cm-{index}", "namespace": namespace, "labels": {"app": "bench", "index": str(index)}},
        "data": {"key": f"value-{index}", "other": "x" * 64},
    }).encode()  # fmt: skip


def apply_requests(namespace: str, count: int, start: int = 0) -> list[tuple[str, str, bytes, str]]:
    return [
        (
            "PATCH",
            f"/api/v1/namespaces/{namespace}/configmaps/cm-{i}?fieldManager=bench",
            configmap(namespace, i),
            "application/apply-patch+yaml",
        )
        for i in range(start, start + count)
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["STACKWRIGHT_HOME"] = home
        info, _ = lifecycle.start("bench")
        assert info.pid is not None
        pid = info.pid
        token = (info.folder / "token").read_text().strip()
        ca = str(info.folder / "ca.crt")
        try:
            print(
                f"{'clients':>8} {'objects/s':>10} {'server CPU s / 1000 applies':>28} {'server RSS MB':>14}"
            )
            for concurrency in (1, 8, 32):
                namespace = f"bench-{concurrency}"
                ns_body = json.dumps(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
                ).encode()
                asyncio.run(
                    run_requests(
                        "127.0.0.1",
                        info.port,
                        ca,
                        token,
                        [("POST", "/api/v1/namespaces", ns_body, "application/json")],
                        1,
                    )
                )
                requests = apply_requests(namespace, 1000)
                cpu0, t0 = cpu_seconds(pid), time.perf_counter()
                codes = asyncio.run(
                    run_requests("127.0.0.1", info.port, ca, token, requests, concurrency)
                )
                elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
                bad = [c for c in codes if c not in (200, 201)]
                if bad:
                    raise SystemExit(f"{len(bad)} applies failed, e.g. HTTP {bad[0]}")
                print(f"{concurrency:>8} {1000 / elapsed:>10.0f} {cpu:>28.2f} {rss_mb(pid):>14.0f}")
            # Memory with 10,000 objects stored (3,000 are there already).
            for batch in range(7):
                asyncio.run(
                    run_requests(
                        "127.0.0.1",
                        info.port,
                        ca,
                        token,
                        apply_requests("bench-8", 1000, 1000 + batch * 1000),
                        8,
                    )
                )
            print(f"server RSS with 10,000 ConfigMaps stored: {rss_mb(pid):.0f} MB")
        finally:
            lifecycle.stop("bench")


if __name__ == "__main__":
    main()
