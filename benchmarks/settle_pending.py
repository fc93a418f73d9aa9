"""Benchmark: settling the creates a crash left pending, against the local cluster (run by hand).

    python benchmarks/settle_pending.py [--count 200] [--rounds 5] [--parallel 16] [--rtt 0]

Starts a local cluster in a temporary STACKWRIGHT_HOME, makes `--count` ConfigMaps (half
of them: the other half's creates never landed), then times `Run.settle_pending` over
`--count` pending creates as a preview settles them (into a `DryRunJournal`, so every
round starts from the same state): one read of each object from the cluster, then the
journal's resolution. Reports the median of `--rounds`, with `--parallel` (the run's
bound) and with 1 (one read at a time). `--rtt MS` adds that many milliseconds to each
read, as a network round trip to a remote API server would (the local one is on loopback).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stackwright.engine.execute import Options, Run
from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.engine.wiring import kubernetes_providers
from stackwright.localcluster import lifecycle
from stackwright.model import Op, PendingOperation, ResourceState, make_urn
from stackwright.state import DryRunJournal, Snapshot

PROJECT, STACK, CLUSTER = "bench", "dev", "bench-settle"


def desired(i: int) -> ResourceState:
    name = f"settle-{i:04d}"
    urn = make_urn(STACK, PROJECT, "kubernetes:core/v1:ConfigMap", name)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app.kubernetes.io/managed-by": "stackwright"},
            "annotations": {"stackwright.io/stack": STACK, "stackwright.io/urn": urn},
        },
        "data": {"i": str(i)},
    }
    return ResourceState(
        urn=urn, type="kubernetes:core/v1:ConfigMap", id=f"default/{name}", inputs=body
    )


def print_none(event: object) -> None:
    """The run's listener: its diagnostics (one per settled step) are not the benchmark's."""


def remote(factory: ProviderFactory, rtt: float) -> ProviderFactory:
    """`factory`'s providers, each read taking `rtt` seconds longer."""

    def make(settings: Mapping[str, Any] | None) -> Provider:
        provider = factory(settings)
        read = provider.read

        async def slower(*args: Any) -> Any:
            await asyncio.sleep(rtt)
            return await read(*args)

        provider.read = slower  # type: ignore[method-assign]
        return provider

    return make


async def settle(snapshot: Snapshot, settings: dict[str, str], parallel: int, rtt: float) -> float:
    options = Options("up", dry_run=True, parallel=parallel)
    journal = DryRunJournal(snapshot)
    providers = remote(kubernetes_providers(settings), rtt)
    run = Run.over(snapshot, options, None, journal, providers, print_none)
    try:
        await run.provider_for("").identity()  # connect first: not part of settling
        start = time.perf_counter()
        await run.settle_pending(snapshot.pending)
        return time.perf_counter() - start
    finally:
        await run.close()


async def made(states: list[ResourceState], settings: dict[str, str]) -> None:
    provider = kubernetes_providers(settings)(None)
    try:
        await asyncio.gather(*(provider.apply(state.inputs) for state in states))
    finally:
        await provider.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--rtt", type=float, default=0.0, help="milliseconds added to each read")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STACKWRIGHT_HOME"] = str(Path(tmp) / "home")
        info, _ = lifecycle.start(CLUSTER)
        try:
            settings = {"kubeconfig": str(info.kubeconfig), "context": info.context}
            states = [desired(i) for i in range(args.count)]
            asyncio.run(made(states[::2], settings))
            pending = [PendingOperation(Op.CREATE, state) for state in states]
            snapshot = Snapshot(PROJECT, STACK, [], pending, {}, 0)
            for parallel in (1, args.parallel):
                times = [
                    asyncio.run(settle(snapshot, settings, parallel, args.rtt / 1000))
                    for _ in range(args.rounds)
                ]
                print(
                    f"settle {args.count} pending creates, rtt {args.rtt:g} ms, --parallel {parallel}: "
                    f"{statistics.median(times) * 1000:.0f} ms (median of {args.rounds})"
                )
        finally:
            lifecycle.stop(CLUSTER)
            lifecycle.delete(CLUSTER)


if __name__ == "__main__":
    main()
