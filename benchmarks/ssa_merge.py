"""Timing of server-side apply on small ConfigMaps (run by hand; not a test).

    /work/venv/bin/python tests/unit/bench_apply.py

The local cluster must serve 1,000 applies of small ConfigMaps in under 2 CPU-seconds
including HTTP, so one apply of a 10-key ConfigMap should stay well under 0.3 ms.
"""

from __future__ import annotations

import time

from stackwright.localcluster import apply as ssa
from stackwright.localcluster.schema import builtin_schemas


def main() -> None:
    schemas = builtin_schemas()
    root = schemas.root("", "v1", "ConfigMap")

    def config(n: int) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"cm-{n}", "namespace": "default", "labels": {"app": "bench"}},
            "data": {f"key{i}": f"value-{n}-{i}" for i in range(10)},
        }

    def run(live: object, applied: dict[str, object], now: str) -> dict[str, object]:
        return ssa.server_side_apply(
            live,  # type: ignore[arg-type]
            applied,
            manager="kubectl",
            force=False,
            root=root,
            resolve=schemas.resolve,
            api_version="v1",
            now=now,
        )

    configs = [config(n) for n in range(1000)]
    run(None, configs[0], "2025-01-01T00:00:00Z")  # warm the schema memo
    cases = {}
    start = time.process_time()
    created = [run(None, c, "2025-01-01T00:00:00Z") for c in configs]
    cases["create"] = time.process_time() - start
    start = time.process_time()
    for live, c in zip(created, configs, strict=True):
        run(live, c, "2025-01-01T00:00:01Z")
    cases["re-apply (no change)"] = time.process_time() - start
    changed = [{**c, "data": {**c["data"], "key3": "other"}} for c in configs]  # type: ignore[dict-item]
    start = time.process_time()
    for live, c in zip(created, changed, strict=True):
        run(live, c, "2025-01-01T00:00:02Z")
    cases["apply one changed key"] = time.process_time() - start
    dropped = [{**c, "data": {f"key{i}": "v" for i in range(9)}} for c in configs]
    start = time.process_time()
    for live, c in zip(created, dropped, strict=True):
        run(live, c, "2025-01-01T00:00:03Z")
    cases["apply dropping a key (prune)"] = time.process_time() - start
    for name, seconds in cases.items():
        print(f"{name:32s} {seconds * 1000 / len(configs):.3f} ms per apply")


if __name__ == "__main__":
    main()
