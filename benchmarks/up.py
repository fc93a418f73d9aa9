"""Benchmark: `stackwright up` of 1,000 objects against kubectl and a raw client, in one run.

    python benchmarks/up.py [--rounds 3] [--deployments 100] [--only PART ...] [--skip-deployments]

Every contender gets a fresh local cluster (started in a temporary STACKWRIGHT_HOME,
warmed with the same 50 throwaway ConfigMaps so no contender pays the server's first
requests) and a fresh state store:

1. `up` of 1,010 objects — 10 Namespaces, then in each 25 ConfigMaps, Secrets,
   ServiceAccounts and Roles (kinds with nothing to wait for) — as the whole
   `stackwright up --yes` process (interpreter start, program, planning, state,
   readiness, rendering), against
   (a) `kubectl apply --server-side -f` of the same manifests (one multi-document
       file, Namespaces first), and
   (b) the raw reference: a bare asyncio HTTP/1.1 client (benchmarks/rawclient.py)
       server-side-applying the same objects, Namespaces first, then the rest at
       concurrency 8; connection setup included. Timed in this process (the issue's
       reference), and again as a process of its own (`python rawclient.py`: interpreter
       start and its imports included, as they are in `up`'s time).
2. A no-op `preview` and a no-op `up` of the same program (whole process wall time,
   and the engine's own time from the summary event); and, on the same cluster before
   the big `up`, an `up` of one object (a ConfigMap, a stack of its own): a run's fixed
   cost, so what each further object costs is the difference over the other 1,009.
3. Bytes written to the state store during the first `up`: the operation's payload
   bytes (`stateBytesWritten` of the summary event, counted as `Snapshot.stored_bytes`
   counts the final state), the growth of the SQLite files (db + WAL), and — in one
   extra, untimed run under strace — what SQLite really wrote to its files (pwrite64:
   whole pages, WAL and checkpoints).
4. Peak resident memory of the `up` process and 5. its CPU milliseconds per applied
   object (user + system, from wait4's rusage of that child alone).
6. 100 Deployments of 3 replicas (10 namespaces, a 6-node cluster): the time until
   `up` returns, every Deployment ready, against the local cluster's own time to make
   them ready when the raw client applies the same Deployments and polls until each
   has 3 available replicas.

Rows are medians of `--rounds` rounds; contenders are interleaved within a round.
`up` runs with `--json` (its summary event carries the engine's time, counts and state
bytes), so the JSON renderer's cost is included. Stackwright's modules are compiled to
bytecode first (into a cache folder, as `pip install` would), so no run pays for
compiling source when the shell sets PYTHONDONTWRITEBYTECODE.
Issue 4's targets: up within 1.25x of raw; no-op preview and up under 1 s; state bytes
written under 3x the final state; peak memory under 300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from rawclient import Connection, apply_all

from stackwright.localcluster import lifecycle
from stackwright.localcluster.lifecycle import ClusterInfo

CONCURRENCY = 8
NAMESPACES = 10
PER_KIND = 25  # per namespace: 4 kinds x 25 x 10 namespaces = 1,000 objects
REPLICAS = 3
STACKWRIGHT = [str(Path(sys.executable).with_name("stackwright"))]
if not Path(STACKWRIGHT[0]).exists():
    STACKWRIGHT = [sys.executable, "-m", "stackwright.cli.main"]

# The program: declares every manifest of objects.json with the SDK's classes, as a
# user's loop would. Reading the manifests from JSON keeps the three contenders'
# objects identical; the SDK work (one resource object per manifest) is the same.
PROGRAM = """\
import json
from pathlib import Path

import stackwright.kubernetes as k8s

KINDS = {
    "Namespace": k8s.core.v1.Namespace,
    "ConfigMap": k8s.core.v1.ConfigMap,
    "Secret": k8s.core.v1.Secret,
    "ServiceAccount": k8s.core.v1.ServiceAccount,
    "Role": k8s.rbac.v1.Role,
    "Deployment": k8s.apps.v1.Deployment,
}
SNAKE = {"stringData": "string_data"}

for obj in json.loads((Path(__file__).parent / "objects.json").read_text()):
    meta = obj["metadata"]
    name = f"{meta['namespace']}-{meta['name']}" if "namespace" in meta else meta["name"]
    args = {SNAKE.get(k, k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    KINDS[obj["kind"]](name, **args)
"""


# --- the objects -------------------------------------------------------------------------


def small_objects() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{n}"}}
        for n in range(NAMESPACES)
    ]
    objects: list[dict[str, Any]] = []
    for n in range(NAMESPACES):
        ns = f"bench-{n}"
        for i in range(PER_KIND):
            meta = {
                "name": f"obj-{i}",
                "namespace": ns,
                "labels": {"app": "bench", "index": str(i)},
            }
            objects += [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                 "data": {"key": f"value-{i}", "other": "x" * 64}},
                {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque",
                 "stringData": {"password": f"p-{i}"}},
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
                 "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]},
            ]  # fmt: skip
    return namespaces, objects


def one_object() -> dict[str, Any]:
    """The one object of the fixed-cost `up`: a ConfigMap in `default`, apart from the 1,010."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "alone", "namespace": "default"}, "data": {"key": "value"}}  # fmt: skip


def deployments(count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"apps-{n}"}}
        for n in range(NAMESPACES)
    ]
    objects = []
    for i in range(count):
        name = f"web-{i}"
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": f"apps-{i % NAMESPACES}"},
                "spec": {
                    "replicas": REPLICAS,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                    },
                },
            }
        )
    return namespaces, objects


# --- processes and clusters ----------------------------------------------------------------


@dataclass
class Child:
    wall: float
    cpu: float  # user + system seconds of this process and its children it waited for
    max_rss_mb: float
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]

    def summary(self) -> dict[str, Any]:
        found = [e for e in self.events() if e.get("event") == "summary"]
        if not found:
            raise SystemExit(f"no summary event in:\n{self.stdout[-2000:]}\n{self.stderr[-2000:]}")
        return found[-1]


def run_child(command: list[str], cwd: Path, *, check: bool = True) -> Child:
    """Run one process; its wall time, and its own CPU and peak RSS from wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        child = Child(
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024,
            process.returncode,
            out.read().decode(),
            err.read().decode(),
        )
    if check and child.code != 0:
        raise SystemExit(
            f"{' '.join(command)} exited {child.code}:\n{child.stdout[-3000:]}\n{child.stderr[-3000:]}"
        )
    return child


_counter = iter(range(1_000_000))


@contextlib.contextmanager
def fresh_cluster(nodes: int = 1) -> Iterator[ClusterInfo]:
    name = f"bench{next(_counter)}"
    info, _ = lifecycle.start(name, nodes=nodes)
    try:
        warm = warm_objects()
        asyncio.run(raw_apply(info, warm[:1], warm[1:]))
        yield info
    finally:
        lifecycle.stop(name)
        shutil.rmtree(info.folder, ignore_errors=True)


def warm_objects() -> list[dict[str, Any]]:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "warm"}}
    return [ns] + [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"warm-{i}", "namespace": "warm"}, "data": {"k": "v"}}
        for i in range(50)
    ]  # fmt: skip


def credentials(info: ClusterInfo) -> tuple[str, str]:
    return (info.folder / "token").read_text().strip(), str(info.folder / "ca.crt")


async def raw_apply(
    info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> None:
    token, ca = credentials(info)
    codes = await apply_all("127.0.0.1", info.port, ca, token, namespaces, objects, CONCURRENCY)
    bad = [c for c in codes if c not in (200, 201)]
    assert not bad, f"raw: {len(bad)} applies failed, e.g. HTTP {bad[0]}"


# --- a project ---------------------------------------------------------------------------


def make_project(folder: Path, info: ClusterInfo, objects: list[dict[str, Any]]) -> Path:
    (folder / "state").mkdir(parents=True)  # a backend's folder must exist
    (folder / "Stackwright.yaml").write_text(
        f"name: bench\nruntime: python\nmain: __main__.py\nbackend: file://{folder / 'state'}/\n"
    )
    (folder / "Stackwright.dev.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(info.kubeconfig)}})
    )
    (folder / "__main__.py").write_text(PROGRAM)
    (folder / "objects.json").write_text(json.dumps(objects))
    run_child([*STACKWRIGHT, "stack", "init", "dev"], folder)
    return folder


def state_files_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in (folder / "state").glob("state.db*"))


def final_state_bytes(folder: Path) -> int:
    from stackwright.state import open_backend

    return open_backend(f"file://{folder / 'state'}/").load("bench", "dev").stored_bytes


# --- the rounds ----------------------------------------------------------------------------


@dataclass
class Results:
    raw: list[float] = field(default_factory=list)
    raw_process: list[float] = field(default_factory=list)
    kubectl: list[float] = field(default_factory=list)
    up: list[Child] = field(default_factory=list)
    up_one: list[Child] = field(default_factory=list)
    up_engine: list[float] = field(default_factory=list)
    state_written: list[int] = field(default_factory=list)
    state_file_growth: list[int] = field(default_factory=list)
    state_final: list[int] = field(default_factory=list)
    noop_preview: list[Child] = field(default_factory=list)
    noop_preview_engine: list[float] = field(default_factory=list)
    noop_up: list[Child] = field(default_factory=list)
    noop_up_engine: list[float] = field(default_factory=list)
    deploy_raw: list[float] = field(default_factory=list)
    deploy_up: list[Child] = field(default_factory=list)
    deploy_up_engine: list[float] = field(default_factory=list)
    pwrite_bytes: list[int] = field(default_factory=list)


def round_small(work: Path, results: Results, order: list[str]) -> None:
    namespaces, objects = small_objects()
    for contender in order:
        with fresh_cluster() as info:
            if contender == "raw":
                started = time.perf_counter()
                asyncio.run(raw_apply(info, namespaces, objects))
                results.raw.append(time.perf_counter() - started)
            elif contender == "raw-process":
                manifests = work / f"manifests-{info.name}.json"
                manifests.write_text(json.dumps({"first": namespaces, "rest": objects}))
                token, ca = info.folder / "token", info.folder / "ca.crt"
                child = run_child(
                    [sys.executable, str(Path(__file__).with_name("rawclient.py")),
                     "127.0.0.1", str(info.port), str(ca), str(token), str(manifests),
                     str(CONCURRENCY)],
                    work,
                )  # fmt: skip
                results.raw_process.append(child.wall)
            elif contender == "kubectl":
                manifest = work / f"manifests-{info.name}.yaml"
                manifest.write_text(yaml.safe_dump_all([*namespaces, *objects]))
                child = run_child(
                    ["kubectl", "--kubeconfig", str(info.kubeconfig),
                     "--cache-dir", str(work / f"kube-cache-{info.name}"),
                     "apply", "--server-side", "-f", str(manifest)],
                    work,
                )  # fmt: skip
                results.kubectl.append(child.wall)
            else:
                one = make_project(work / f"one-{info.name}", info, [one_object()])
                alone = run_child([*STACKWRIGHT, "up", "--yes", "--json"], one)
                assert alone.summary()["counts"].get("create") == 1, alone.summary()
                results.up_one.append(alone)
                project = make_project(work / f"project-{info.name}", info, [*namespaces, *objects])
                before = state_files_bytes(project)
                up = run_child([*STACKWRIGHT, "up", "--yes", "--json"], project)
                summary = up.summary()
                created = summary["counts"].get("create", 0)
                assert summary["ok"] and created == len(namespaces) + len(objects), summary
                results.up.append(up)
                results.up_engine.append(summary["elapsed"])
                results.state_written.append(int(summary.get("stateBytesWritten", 0)))
                results.state_file_growth.append(state_files_bytes(project) - before)
                results.state_final.append(final_state_bytes(project))
                preview = run_child([*STACKWRIGHT, "preview", "--json"], project)
                summary = preview.summary()
                assert summary["ok"] and set(summary["counts"]) == {"same"}, summary
                results.noop_preview.append(preview)
                results.noop_preview_engine.append(summary["elapsed"])
                again = run_child([*STACKWRIGHT, "up", "--yes", "--json"], project)
                summary = again.summary()
                assert summary["ok"] and set(summary["counts"]) == {"same"}, summary
                results.noop_up.append(again)
                results.noop_up_engine.append(summary["elapsed"])


async def raw_deployments_ready(
    info: ClusterInfo, namespaces: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> None:
    await raw_apply(info, namespaces, objects)
    token, ca = credentials(info)
    conn = await Connection.open("127.0.0.1", info.port, ca, token)
    try:
        while True:
            code, body = await conn.request("GET", "/apis/apps/v1/deployments")
            assert code == 200, body[:200]
            items = orjson.loads(body)["items"]
            ready = sum(
                1
                for d in items
                if (d.get("status") or {}).get("observedGeneration") == d["metadata"]["generation"]
                and (d.get("status") or {}).get("availableReplicas") == REPLICAS
                and (d.get("status") or {}).get("updatedReplicas") == REPLICAS
            )
            if ready == len(objects):
                return
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


def round_deployments(work: Path, results: Results, count: int, order: list[str]) -> None:
    namespaces, objects = deployments(count)
    for contender in order:
        with fresh_cluster(nodes=6) as info:
            if contender == "raw":
                started = time.perf_counter()
                asyncio.run(raw_deployments_ready(info, namespaces, objects))
                results.deploy_raw.append(time.perf_counter() - started)
            else:
                project = make_project(work / f"project-{info.name}", info, [*namespaces, *objects])
                up = run_child([*STACKWRIGHT, "up", "--yes", "--json"], project)
                summary = up.summary()
                assert summary["ok"] and summary["counts"].get("create") == count + NAMESPACES, (
                    summary
                )
                results.deploy_up.append(up)
                results.deploy_up_engine.append(summary["elapsed"])


# --- the report ----------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def report(results: Results, args: argparse.Namespace) -> None:
    count = NAMESPACES + NAMESPACES * PER_KIND * 4
    raw, kubectl = median(results.raw), median(results.kubectl)
    raw_process = median(results.raw_process)
    rows: list[tuple[str, str, str]] = []
    if results.up:
        up = median([c.wall for c in results.up])
        engine = median(results.up_engine)
        cpu = median([c.cpu for c in results.up])
        rss = max(c.max_rss_mb for c in results.up)
        preview = median([c.wall for c in results.noop_preview])
        noop_up = median([c.wall for c in results.noop_up])
        written, final = median(results.state_written), median(results.state_final)
        growth = median(results.state_file_growth)
        one = median([c.wall for c in results.up_one])
        one_cpu = median([c.cpu for c in results.up_one])
        rows += [
            (f"up of {count:,} objects (whole process)", f"{up:.2f} s (in the engine {engine:.2f} s)", ""),
            ("raw reference (async SSA, concurrency 8)", f"{raw:.2f} s", ""),
            ("the same bare client as a whole process", f"{raw_process:.2f} s", ""),
            ("kubectl apply --server-side -f", f"{kubectl:.2f} s", ""),
            ("up / raw", f"{up / raw:.2f}x (in the engine {engine / raw:.2f}x)", "<= 1.25x"),
            ("up / the bare client's process", f"{up / raw_process:.2f}x", ""),
            ("up / kubectl", f"{up / kubectl:.2f}x", ""),
            ("up of 1 object (whole process: the fixed cost)", f"{one:.2f} s ({one_cpu:.2f} s of CPU)", ""),
            (f"each further object ((up - that) / {count - 1:,})", f"{(up - one) / (count - 1) * 1000:.2f} ms ({(cpu - one_cpu) / (count - 1) * 1000:.2f} ms of CPU)", ""),
            ("no-op preview (whole process)", f"{preview:.2f} s (in the engine {median(results.noop_preview_engine):.2f} s)", "< 1 s"),
            ("no-op up (whole process)", f"{noop_up:.2f} s (in the engine {median(results.noop_up_engine):.2f} s)", "< 1 s"),
            ("state bytes written by the up (payload)", f"{mb(written)} = {written / final:.2f}x the final state", "< 3x"),
            ("state file growth (SQLite db + WAL)", f"{mb(growth)} = {growth / final:.2f}x", ""),
        ]  # fmt: skip
        if results.pwrite_bytes:
            pw = median(results.pwrite_bytes)
            rows.append(
                ("SQLite file writes (pwrite, one traced run)", f"{mb(pw)} = {pw / final:.1f}x", "")
            )
        rows += [
            ("final state (payload)", mb(final), ""),
            ("peak RSS of the up process", f"{rss:.0f} MB", "< 300 MB"),
            ("CPU of the up process per applied object", f"{cpu / count * 1000:.2f} ms ({cpu:.2f} s in all)", ""),
        ]  # fmt: skip
    elif results.raw or results.kubectl:
        rows += [
            ("raw reference (async SSA, concurrency 8)", f"{raw:.2f} s", ""),
            ("the same bare client as a whole process", f"{raw_process:.2f} s", ""),
            ("kubectl apply --server-side -f", f"{kubectl:.2f} s", ""),
        ]
    if results.deploy_up or results.deploy_raw:
        deploy_up = median([c.wall for c in results.deploy_up])
        deploy_raw = median(results.deploy_raw)
        deploy_engine = median(results.deploy_up_engine)
        n = args.deployments
        rows += [
            (f"up of {n} Deployments x{REPLICAS}, until all are ready", f"{deploy_up:.2f} s (in the engine {deploy_engine:.2f} s)", ""),
            ("the local cluster's own time (raw SSA, poll until available)", f"{deploy_raw:.2f} s", ""),
            ("up / cluster's own", f"{deploy_up / deploy_raw:.2f}x", ""),
        ]  # fmt: skip
    print(
        f"\nmedians of {args.rounds} round(s); {os.cpu_count()} CPUs; a fresh local cluster per contender"
    )
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    print(f"{'what':<{width}}  {'result':<{value_width}}  target")
    print(f"{'-' * width}  {'-' * value_width}  ------")
    for what, value, target in rows:
        print(f"{what:<{width}}  {value:<{value_width}}  {target}")


def traced_writes(work: Path) -> int | None:
    """Bytes SQLite wrote to its files (pwrite64) during one `up`, traced with strace; not timed."""
    if shutil.which("strace") is None:
        return None
    namespaces, objects = small_objects()
    with fresh_cluster() as info:
        project = make_project(work / f"project-{info.name}", info, [*namespaces, *objects])
        trace = work / f"{info.name}.strace"
        run_child(
            ["strace", "-f", "-e", "trace=pwrite64", "-o", str(trace),
             *STACKWRIGHT, "up", "--yes", "--json"],
            project,
        )  # fmt: skip
        total = 0
        for line in trace.read_text().splitlines():
            _, _, result = line.rpartition("= ")
            if "pwrite64(" in line and result.strip().isdigit():
                total += int(result)
        return total


def compile_bytecode(home: str) -> None:
    """Compile Stackwright's modules once, as `pip install` does, into a cache folder.

    A shell with PYTHONDONTWRITEBYTECODE set would otherwise compile every module from
    source in every process (~0.1 s of each command); the cache folder keeps the work
    tree free of __pycache__ folders.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(Path(home) / "pycache")
    import stackwright

    package = Path(stackwright.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


@contextlib.contextmanager
def bench_home(prefix: str) -> Iterator[Path]:
    """A temporary STACKWRIGHT_HOME for one benchmark run, with Stackwright's bytecode and
    no backend or kubeconfig from the environment; yields a work folder inside it."""
    with tempfile.TemporaryDirectory(prefix=prefix) as home:
        os.environ["STACKWRIGHT_HOME"] = home
        os.environ.pop("STACKWRIGHT_BACKEND_URL", None)
        os.environ.pop("KUBECONFIG", None)
        compile_bytecode(home)
        work = Path(home) / "work"
        work.mkdir()
        yield work


PARTS = ("raw", "kubectl", "up", "deployments")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="run only these parts (repeatable); default: all")  # fmt: skip
    parser.add_argument("--skip-deployments", action="store_true")
    args = parser.parse_args()
    parts = [p for p in (args.only or PARTS) if not (p == "deployments" and args.skip_deployments)]
    if "kubectl" in parts and shutil.which("kubectl") is None:
        raise SystemExit("kubectl is not on PATH: install it, or leave it out with --only")
    results = Results()
    with bench_home("sw-bench-up-") as work:
        # "raw" times the bare client twice: in this process, and as a process of its own.
        small = [
            c
            for p in parts
            if p != "deployments"
            for c in ([p, "raw-process"] if p == "raw" else [p])
        ]
        for round_ in range(args.rounds):
            # Alternate the order, so no contender always runs first (or last) in a round.
            if small:
                round_small(work, results, small if round_ % 2 == 0 else small[::-1])
            if "deployments" in parts:
                order = ["raw", "up"] if round_ % 2 == 0 else ["up", "raw"]
                round_deployments(work, results, args.deployments, order)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        if "up" in parts:
            written = traced_writes(work)
            if written is not None:
                results.pwrite_bytes.append(written)
    report(results, args)


if __name__ == "__main__":
    main()
