"""Benchmark: day-2 operations on the 1,010-object stack of benchmarks/up.py, in one run.

    python benchmarks/day2.py [--rounds 3] [--only stackwright|kubectl ...]

The stack is up.py's (10 Namespaces, then in each 25 ConfigMaps, Secrets,
ServiceAccounts and Roles), its program the same but for one config value: with
`revision` set (`stackwright config set revision r2`) every object carries the label
`revision: r2`, so the next `up` updates all 1,010 in place. Each contender gets a fresh
local cluster per round (as up.py's, warmed the same way) and a fresh state store; the
first `up` is not timed. Timed, each as a whole process (wall time from wait4, and its
peak RSS), after that first `up`:

(a) `up --yes` updating every object, against `kubectl apply --server-side -f` of the
    same updated manifests (applied first, unchanged, by the bare client of
    benchmarks/rawclient.py under kubectl's field manager, so kubectl updates what it
    owns, as `up` does);
(b) `preview --diff` of that change, and the size of its output; against
    `kubectl diff --server-side -f` of the updated manifests (and its output's size);
(c) `refresh --yes` with no drift, and again after 100 ConfigMaps were changed behind
    Stackwright's back (a merge patch of one data value each, by the bare client, under
    another field manager); against `kubectl get -f` of the manifests, which reads the
    same 1,010 objects;
(d) `destroy --yes` of the whole stack, against `kubectl delete -f` of the manifests
    (namespaced objects first, Namespaces last): both return only once every object is
    gone (`destroy` waits for each deletion; `kubectl delete` waits by default,
    `--wait=true`).

Rows are medians of `--rounds` rounds; the two contenders alternate which runs first.
Stackwright's modules are compiled to bytecode first, as up.py does.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).parent))

import up
from rawclient import path_of, run_requests
from up import (
    CONCURRENCY,
    STACKWRIGHT,
    Child,
    bench_home,
    credentials,
    fresh_cluster,
    make_project,
    median,
    run_child,
    small_objects,
)

from stackwright.localcluster.lifecycle import ClusterInfo

REVISION = "r2"
DRIFTED = 100

# up.py's program, each object passed through `revised` first: with config `revision`
# set, every object carries the label `revision: <value>` (as `revised` below does).
_OBJECTS = 'json.loads((Path(__file__).parent / "objects.json").read_text())'
assert _OBJECTS in up.PROGRAM, "up.py's program changed: update day2.py's"
PROGRAM = (
    "import stackwright as sw\n\n"
    'REVISION = sw.Config().get("revision")\n\n\n'
    "def revised(objects):\n"
    "    for obj in objects:\n"
    "        if REVISION:\n"
    '            obj["metadata"] = {**obj["metadata"], "labels": {\n'
    '                **obj["metadata"].get("labels", {}), "revision": REVISION}}\n'
    "        yield obj\n\n\n"
) + up.PROGRAM.replace(_OBJECTS, f"revised({_OBJECTS})")


def revised(objects: list[dict[str, Any]], revision: str) -> list[dict[str, Any]]:
    """The objects as the program declares them with config `revision` set."""
    out = copy.deepcopy(objects)
    for obj in out:
        obj["metadata"].setdefault("labels", {})["revision"] = revision
    return out


# --- the raw client's side work (untimed) --------------------------------------------------


async def raw_requests(
    info: ClusterInfo, requests: list[tuple[str, str, bytes, str]], concurrency: int
) -> None:
    token, ca = credentials(info)
    codes = await run_requests("127.0.0.1", info.port, ca, token, requests, concurrency)
    bad = [c for c in codes if c not in (200, 201)]
    assert not bad, f"raw: {len(bad)} requests failed, e.g. HTTP {bad[0]}"


def apply_as(manager: str, objects: list[dict[str, Any]]) -> list[tuple[str, str, bytes, str]]:
    return [
        ("PATCH", f"{path_of(o)}?fieldManager={manager}", orjson.dumps(o),
         "application/apply-patch+yaml")
        for o in objects
    ]  # fmt: skip


def drift(info: ClusterInfo, objects: list[dict[str, Any]], value: str = "drifted") -> None:
    """Change one data value of DRIFTED ConfigMaps behind Stackwright's back."""
    configmaps = [o for o in objects if o["kind"] == "ConfigMap"][:DRIFTED]
    assert len(configmaps) == DRIFTED
    patch = orjson.dumps({"data": {"key": value}})
    requests = [
        ("PATCH", f"{path_of(o)}?fieldManager=someone-else", patch, "application/merge-patch+json")
        for o in configmaps
    ]
    asyncio.run(raw_requests(info, requests, CONCURRENCY))


# --- the rounds ----------------------------------------------------------------------------


#: Each timed process by what it did: "update", "preview_diff", "refresh", "refresh_drift",
#: "destroy", and kubectl's "kubectl_apply", "kubectl_diff", "kubectl_get", "kubectl_delete".
Results = defaultdict[str, list[Child]]


def summary_of(child: Child, ok: bool = True) -> dict[str, Any]:
    summary = child.summary()
    assert summary["ok"] is ok, summary
    return summary


def run_stackwright(work: Path, info: ClusterInfo, results: Results) -> None:
    namespaces, objects = small_objects()
    count = len(namespaces) + len(objects)
    project = make_project(work / f"project-{info.name}", info, [*namespaces, *objects])
    project.joinpath("__main__.py").write_text(PROGRAM)
    first = summary_of(run_child([*STACKWRIGHT, "up", "--yes", "--json"], project))
    assert first["counts"].get("create") == count, first
    run_child([*STACKWRIGHT, "config", "set", "revision", REVISION], project)

    preview = run_child([*STACKWRIGHT, "preview", "--diff"], project)
    assert f"{count:,} to update" in preview.stdout or f"{count} to update" in preview.stdout, (
        preview.stdout[-2000:]
    )
    results["preview_diff"].append(preview)

    update = run_child([*STACKWRIGHT, "up", "--yes", "--json"], project)
    assert summary_of(update)["counts"].get("update") == count, update.summary()
    results["update"].append(update)

    refresh = run_child([*STACKWRIGHT, "refresh", "--yes", "--json"], project)
    assert set(summary_of(refresh)["counts"]) == {"in-sync"}, refresh.summary()
    results["refresh"].append(refresh)

    drift(info, objects)
    drifted = run_child([*STACKWRIGHT, "refresh", "--yes", "--json"], project)
    counts = summary_of(drifted)["counts"]
    assert counts.get("in-sync") == count - DRIFTED, counts
    results["refresh_drift"].append(drifted)

    destroy = run_child([*STACKWRIGHT, "destroy", "--yes", "--json"], project)
    assert summary_of(destroy)["counts"].get("delete") == count, destroy.summary()
    results["destroy"].append(destroy)


def run_kubectl(work: Path, info: ClusterInfo, results: Results) -> None:
    namespaces, objects = small_objects()
    # The first apply, untimed: as kubectl's own would leave them (field manager kubectl).
    asyncio.run(raw_requests(info, apply_as("kubectl", namespaces), 1))
    asyncio.run(raw_requests(info, apply_as("kubectl", objects), CONCURRENCY))
    manifest = work / f"updated-{info.name}.yaml"
    manifest.write_text(yaml.safe_dump_all(revised([*namespaces, *objects], REVISION)))
    for_delete = work / f"delete-{info.name}.yaml"
    for_delete.write_text(yaml.safe_dump_all(revised([*objects, *namespaces], REVISION)))
    kubectl = ["kubectl", "--kubeconfig", str(info.kubeconfig),
               "--cache-dir", str(work / f"kube-cache-{info.name}")]  # fmt: skip

    diff = run_child([*kubectl, "diff", "--server-side", "-f", str(manifest)], work, check=False)
    assert diff.code == 1 and diff.stdout.count("+    revision: r2") == len(objects) + len(
        namespaces
    ), (diff.code, diff.stderr[-2000:])
    results["kubectl_diff"].append(diff)

    results["kubectl_apply"].append(
        run_child([*kubectl, "apply", "--server-side", "-f", str(manifest)], work)
    )
    get = run_child([*kubectl, "get", "-f", str(manifest), "-o", "name"], work)
    assert len(get.stdout.splitlines()) == len(objects) + len(namespaces), get.stdout[-500:]
    results["kubectl_get"].append(get)
    results["kubectl_delete"].append(
        run_child([*kubectl, "delete", "--wait=true", "-f", str(for_delete)], work)
    )


# --- the report ----------------------------------------------------------------------------


def report(results: Results, rounds: int) -> None:
    def wall(children: list[Child]) -> float:
        return median([c.wall for c in children])

    def rss(children: list[Child]) -> str:
        return f"{max(c.max_rss_mb for c in children):.0f} MB" if children else "-"

    def row(what: str, ours: list[Child], theirs: list[Child], extra: str = "") -> tuple[str, ...]:
        ratio = f"{wall(ours) / wall(theirs):.2f}x" if ours and theirs else "-"
        return (
            what,
            f"{wall(ours):.2f} s" if ours else "-",
            rss(ours),
            f"{wall(theirs):.2f} s" if theirs else "-",
            rss(theirs),
            ratio,
            extra,
        )

    def out_size(children: list[Child]) -> str:
        return f"{median([len(c.stdout) for c in children]) / 1e3:.0f} KB" if children else ""

    rows = [
        ("operation (1,010 objects)", "stackwright", "peak RSS", "kubectl", "peak RSS", "ratio", "note"),
        row("update every object in place (up / apply --server-side)", results["update"], results["kubectl_apply"]),
        row("preview --diff of it (/ kubectl diff --server-side)", results["preview_diff"], results["kubectl_diff"],
            f"output {out_size(results['preview_diff'])} / {out_size(results['kubectl_diff'])}"),
        row("refresh, no drift (/ kubectl get -f)", results["refresh"], results["kubectl_get"]),
        row(f"refresh, {DRIFTED} drifted (/ kubectl get -f)", results["refresh_drift"], results["kubectl_get"]),
        row("destroy --yes (/ kubectl delete -f, waits)", results["destroy"], results["kubectl_delete"]),
    ]  # fmt: skip
    print(
        f"\nmedians of {rounds} round(s); {os.cpu_count()} CPUs; whole processes; "
        "a fresh local cluster per contender and round"
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(f"{cell:<{w}}" for cell, w in zip(r, widths, strict=True)).rstrip())


PARTS = ("stackwright", "kubectl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="run only these contenders (repeatable); default: both")  # fmt: skip
    args = parser.parse_args()
    parts = list(args.only or PARTS)
    if "kubectl" in parts and shutil.which("kubectl") is None:
        raise SystemExit("kubectl is not on PATH: install it, or leave it out with --only")
    results: Results = defaultdict(list)
    runners = {"stackwright": run_stackwright, "kubectl": run_kubectl}
    with bench_home("sw-bench-day2-") as work:
        for round_ in range(args.rounds):
            for part in parts if round_ % 2 == 0 else parts[::-1]:
                with fresh_cluster() as info:
                    runners[part](work, info, results)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    report(results, args.rounds)


if __name__ == "__main__":
    main()
