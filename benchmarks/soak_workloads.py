"""Soak of the local cluster's workload simulation (run by hand; not a test).

    /work/venv/bin/python benchmarks/soak_workloads.py [--namespaces 20] [--per-namespace 10]

Starts a cluster in a temporary STACKWRIGHT_HOME (six nodes: 660 pods of capacity),
then through the HTTPS API, as a client would:

1. creates the namespaces and Deployments of 3 replicas, and waits until every one
   is Available with all 3 pods updated and available;
2. rolls every Deployment to a new image and waits until the rollouts finish;
3. scales every Deployment to 2 and waits;
4. deletes every Deployment and waits until no pod is left.

It prints the wall-clock time of each phase, the server process's CPU seconds and
its peak resident memory (VmHWM). Issue 3's target: 600 pods converge within 30 s
on two cores, in under 400 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import ssl
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from stackwright.localcluster import lifecycle

NAME = "soak"
NODES = 6
APPS = "/apis/apps/v1"


def client(info: lifecycle.ClusterInfo) -> httpx.Client:
    token = (info.folder / "token").read_text().strip()
    return httpx.Client(
        base_url=info.server,
        verify=ssl.create_default_context(cafile=str(info.folder / "ca.crt")),
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def deployment(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
            },
        },
    }


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait(what: str, check: Callable[[], tuple[bool, str]], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    shown = ""
    while True:
        done, progress = check()
        if done:
            return
        if progress != shown:
            shown = progress
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not converged after {timeout}s ({shown})")
        time.sleep(0.1)


def rolled_out(
    api: httpx.Client, replicas: int, image: str, expected: int
) -> Callable[[], tuple[bool, str]]:
    def check() -> tuple[bool, str]:
        items = api.get(f"{APPS}/deployments").json()["items"]
        done = 0
        for d in items:
            s = d.get("status") or {}
            if (
                s.get("observedGeneration") == d["metadata"]["generation"]
                and s.get("replicas") == replicas
                and s.get("updatedReplicas") == replicas
                and s.get("availableReplicas") == replicas
                and d["spec"]["template"]["spec"]["containers"][0]["image"] == image
            ):
                done += 1
        return done == expected and len(items) == expected, f"{done}/{expected}"

    return check


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--per-namespace", type=int, default=10)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    total = args.namespaces * args.per_namespace

    home = tempfile.mkdtemp(prefix="sw-soak-")
    os.environ["STACKWRIGHT_HOME"] = home
    info, _ = lifecycle.start(NAME, nodes=NODES)
    assert info.pid is not None
    pid = info.pid
    pool = ThreadPoolExecutor(args.workers)
    results: list[tuple[str, float]] = []
    try:
        with client(info) as api:
            namespaces = [f"soak-{i}" for i in range(args.namespaces)]
            names = [(ns, f"web-{j}") for ns in namespaces for j in range(args.per_namespace)]

            def run(
                what: str,
                act: Callable[[tuple[str, str]], None],
                check: Callable[[], tuple[bool, str]],
            ) -> None:
                started = time.monotonic()
                list(pool.map(act, names))
                submitted = time.monotonic() - started
                wait(what, check)
                elapsed = time.monotonic() - started
                results.append((what, elapsed))
                print(
                    f"{what:<44} {elapsed:6.2f} s  (requests sent in {submitted:.2f} s)", flush=True
                )

            for ns in namespaces:
                r = api.post(
                    "/api/v1/namespaces",
                    json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                )
                r.raise_for_status()

            def create(item: tuple[str, str]) -> None:
                ns, name = item
                api.post(
                    f"{APPS}/namespaces/{ns}/deployments", json=deployment(name, 3)
                ).raise_for_status()

            def roll(item: tuple[str, str]) -> None:
                ns, name = item
                api.patch(
                    f"{APPS}/namespaces/{ns}/deployments/{name}",
                    content=b'{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.30"}]}}}}',
                    headers={"Content-Type": "application/strategic-merge-patch+json"},
                ).raise_for_status()

            def scale(item: tuple[str, str]) -> None:
                ns, name = item
                api.patch(
                    f"{APPS}/namespaces/{ns}/deployments/{name}",
                    content=b'{"spec":{"replicas":2}}',
                    headers={"Content-Type": "application/merge-patch+json"},
                ).raise_for_status()

            def delete(item: tuple[str, str]) -> None:
                ns, name = item
                api.delete(f"{APPS}/namespaces/{ns}/deployments/{name}").raise_for_status()

            def no_pods() -> tuple[bool, str]:
                pods = api.get("/api/v1/pods").json()["items"]
                return not pods, f"{len(pods)} pods left"

            run(
                f"create {total} Deployments x3, all Available",
                create,
                rolled_out(api, 3, "nginx:1.29", total),
            )
            run(
                f"roll {total} Deployments to a new image",
                roll,
                rolled_out(api, 3, "nginx:1.30", total),
            )
            run(f"scale {total} Deployments to 2", scale, rolled_out(api, 2, "nginx:1.30", total))
            run(f"delete {total} Deployments, no pod left", delete, no_pods)
        cpu = cpu_seconds(pid)
        rss = peak_rss_mb(pid)
        log = (info.folder / "server.log").read_text()
    finally:
        pool.shutdown()
        lifecycle.stop(NAME)
        shutil.rmtree(home, ignore_errors=True)
    print(f"{'server CPU':<44} {cpu:6.2f} s")
    print(f"{'server peak RSS (VmHWM)':<44} {rss:6.1f} MB")
    print(f"{'cores on this machine':<44} {os.cpu_count():6d}")
    print(f"{'tracebacks in server.log':<44} {log.count('Traceback'):6d}")


if __name__ == "__main__":
    main()
