"""Benchmark: `stackwright up` against the raw reference when each request takes longer.

    python benchmarks/up_latency.py [--rounds 3] [--latency 0 --latency 5 --latency 30]

The local cluster answers a server-side apply in a fraction of a millisecond; a real
kube-apiserver with etcd takes tens of milliseconds (issue 4: the raw reference took
3.8 s for these objects there, 8 at a time: ~30 ms each). This runs benchmarks/up.py's
1,010 objects — `up` as a whole process, and the raw reference (the bare async client,
concurrency 8, in this process) — through benchmarks/delay_proxy.py, which holds back
each request for `--latency` milliseconds, so the two are compared at several server
speeds in one run. `up` runs at its default `--parallel` (16) and again at 8, the raw
reference's concurrency. The delay costs no CPU: a real server's own CPU, which would
share the machine's two cores with the client, is not modelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rawclient import apply_all
from up import (
    CONCURRENCY,
    STACKWRIGHT,
    bench_home,
    credentials,
    fresh_cluster,
    make_project,
    run_child,
    small_objects,
)

from stackwright.localcluster.lifecycle import ClusterInfo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def delayed(info: ClusterInfo, latency_ms: float) -> Iterator[int]:
    """A delay proxy in front of the cluster's API server; yields its port."""
    port = free_port()
    proxy = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("delay_proxy.py")),
         str(port), str(info.port), str(latency_ms)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == "ready"
        yield port
    finally:
        proxy.terminate()
        proxy.wait(10)


def project_through(work: Path, info: ClusterInfo, port: int, objects: list[dict]) -> Path:  # type: ignore[type-arg]
    """A project whose kubeconfig reaches the cluster through `port`."""
    kubeconfig = work / f"kubeconfig-{info.name}-{port}"
    kubeconfig.write_text(
        info.kubeconfig.read_text().replace(f"127.0.0.1:{info.port}", f"127.0.0.1:{port}")
    )
    project = make_project(work / f"project-{info.name}-{port}", info, objects)
    config = project / "Stackwright.dev.yaml"
    config.write_text(config.read_text().replace(str(info.kubeconfig), str(kubeconfig)))
    return project


CONTENDERS = ("raw", "up", "up-p8")


def one(work: Path, contender: str, latency: float) -> float:
    namespaces, objects = small_objects()
    with fresh_cluster() as info, delayed(info, latency) as port:
        if contender == "raw":
            token, ca = credentials(info)
            started = time.perf_counter()
            codes = asyncio.run(
                apply_all("127.0.0.1", port, ca, token, namespaces, objects, CONCURRENCY)
            )
            took = time.perf_counter() - started
            assert all(c in (200, 201) for c in codes), codes
            return took
        project = project_through(work, info, port, [*namespaces, *objects])
        extra = ["--parallel", str(CONCURRENCY)] if contender == "up-p8" else []
        up = run_child([*STACKWRIGHT, "up", "--yes", "--json", *extra], project)
        summary = up.summary()
        assert summary["ok"] and summary["counts"].get("create") == len(namespaces) + len(objects)
        return up.wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, action="append",
                        help="milliseconds added to each request (repeatable); default 0, 5, 30")  # fmt: skip
    args = parser.parse_args()
    latencies = args.latency or [0.0, 5.0, 30.0]
    times: dict[tuple[float, str], list[float]] = {}
    with bench_home("sw-bench-latency-") as work:
        for round_ in range(args.rounds):
            for latency in latencies:
                order = CONTENDERS if round_ % 2 == 0 else CONTENDERS[::-1]
                for contender in order:
                    times.setdefault((latency, contender), []).append(one(work, contender, latency))
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(
        f"\nmedians of {args.rounds} round(s); 1,010 objects; raw reference at concurrency {CONCURRENCY}"
    )
    print(
        "latency added per request | raw reference | up (--parallel 16) | up / raw | up --parallel 8 | its / raw"
    )
    for latency in latencies:
        raw, up, p8 = (statistics.median(times[(latency, c)]) for c in CONTENDERS)
        print(
            f"{latency:g} ms | {raw:.2f} s | {up:.2f} s | {up / raw:.2f}x | {p8:.2f} s | {p8 / raw:.2f}x"
        )


if __name__ == "__main__":
    main()
