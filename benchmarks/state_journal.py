"""Throughput of the state journal and bytes written per `up` (run by hand; not a test).

    /work/venv/bin/python benchmarks/state_journal.py [--resources 1000]

Journals an `up` of N ConfigMaps (begin before each "API call", end after, as
the engine does) into a fresh SQLite store, once with the default
`synchronous=NORMAL` and once with `synchronous=full`, and reports:

- begin+end throughput (steps a second) and the time per begin and per end;
- bytes written during the `up` against the final state's size (issue 4's target:
  under 3x), both as the store counts row payloads and as the export document;
- loading the N-resource stack (with SQLite's quick_check and the row checks), which
  a no-op preview pays, and the bytes one update step writes into that stack.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import orjson

from stackwright.model import Op, ResourceState, make_urn
from stackwright.state import SQLiteBackend

PROJECT, STACK = "bench", "dev"
KINDS = (
    ("kubernetes:core/v1:ConfigMap", "v1", "ConfigMap"),
    ("kubernetes:core/v1:Secret", "v1", "Secret"),
    ("kubernetes:core/v1:ServiceAccount", "v1", "ServiceAccount"),
    ("kubernetes:rbac.authorization.k8s.io/v1:Role", "rbac.authorization.k8s.io/v1", "Role"),
)


def desired(i: int) -> ResourceState:
    """One of the benchmark's objects as the engine would journal it before applying."""
    type_, api_version, kind = KINDS[i % len(KINDS)]
    namespace, name = f"ns-{i % 10}", f"obj-{i:04d}"
    urn = make_urn(STACK, PROJECT, type_, name)
    body: dict[str, object] = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "stackwright"},
            "annotations": {"stackwright.io/stack": STACK, "stackwright.io/urn": urn},
        },
    }
    if kind in ("ConfigMap", "Secret"):
        body["data"] = {f"key{k}": f"value-{i}-{k}" for k in range(5)}
    if kind == "Role":
        body["rules"] = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
    return ResourceState(urn=urn, type=type_, id=f"{namespace}/{name}", inputs=body)


def applied(state: ResourceState, i: int) -> ResourceState:
    """The live object a server-side apply returns: inputs plus server-set metadata."""
    meta = dict(state.inputs["metadata"])
    meta.update(
        uid=f"{i:08x}-7c9f-4b1e-9a4d-0123456789ab",
        resourceVersion=str(1000 + i),
        creationTimestamp="2026-05-01T12:00:00Z",
        managedFields=[
            {
                "manager": "stackwright",
                "operation": "Apply",
                "apiVersion": state.inputs["apiVersion"],
                "time": "2026-05-01T12:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {}, "f:annotations": {}}},
            }
        ],
    )
    return replace(state, outputs={**state.inputs, "metadata": meta})


def run(folder: Path, n: int, synchronous: str) -> None:
    backend = SQLiteBackend(folder / f"{synchronous}.db", synchronous=synchronous)
    backend.create_stack(PROJECT, STACK)
    states = [desired(i) for i in range(n)]
    results = [applied(s, i) for i, s in enumerate(states)]
    begin_time = end_time = 0.0
    with backend.begin_operation(PROJECT, STACK, kind="up") as op:
        for i in range(n):
            t0 = time.perf_counter()
            op.begin(i, Op.CREATE, states[i])
            t1 = time.perf_counter()
            op.end(i, results[i])
            t2 = time.perf_counter()
            begin_time += t1 - t0
            end_time += t2 - t1
        op.set_outputs({"namespaces": [f"ns-{k}" for k in range(10)]})
        written = op.bytes_written
    total = begin_time + end_time

    t0 = time.perf_counter()
    snapshot = backend.load(PROJECT, STACK)
    load_ms = (time.perf_counter() - t0) * 1000
    document = orjson.dumps(backend.export(PROJECT, STACK))

    with backend.begin_operation(PROJECT, STACK, kind="up") as op:
        changed = replace(states[7], inputs={**states[7].inputs, "data": {"key0": "changed"}})
        op.begin(0, Op.UPDATE, changed)
        op.end(0, applied(changed, 7))
        one_update = op.bytes_written

    print(f"synchronous={synchronous}, {n} resources")
    print(f"  begin+end: {n / total:,.0f} steps/s ({total * 1000:.0f} ms for {n})")
    print(f"    begin {begin_time / n * 1e6:.0f} us, end {end_time / n * 1e6:.0f} us per step")
    print(
        f"  bytes written during the up: {written:,} = "
        f"{written / snapshot.stored_bytes:.2f}x the final state's rows ({snapshot.stored_bytes:,} B), "
        f"{written / len(document):.2f}x its export document ({len(document):,} B)"
    )
    print(f"  load of the {n}-resource stack (checks included): {load_ms:.1f} ms")
    print(f"  one update step in that stack writes {one_update:,} B")
    backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for synchronous in ("normal", "full"):
            run(Path(folder), args.resources, synchronous)


if __name__ == "__main__":
    main()
