"""Benchmark: `stackwright policy check` of 5,000 objects.

Writes realistic manifests into a temporary directory — 50 files of 100 objects: per app
a Deployment (security context, probes, resources, env), a Service, a ConfigMap, a
PodDisruptionBudget and, every tenth app, a NetworkPolicy, a StatefulSet and a CronJob —
spread over 20 namespaces, some with violations. Then measures, best of 3:

- read: loading the files into policy subjects (YAML parsing, line numbers);
- evaluate: both built-in packs over the subjects, in process;
- CLI: the whole `stackwright policy check DIR --pack … --json` process (interpreter
  start, imports, reading, evaluation, output).

Target (issue 6): under 2 s on a 2-core machine.

    python benchmarks/policy_check.py [--count N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

PACKS = ["kubernetes-best-practices", "pod-security-restricted"]


def app(i: int) -> list[dict[str, Any]]:
    ns = f"team-{i % 20}"
    name = f"app-{i}"
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name}
    container = {
        "name": "main",
        "image": f"ghcr.io/acme/{name}:{'latest' if i % 7 == 0 else '1.4.2'}",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "DB_HOST", "value": f"db.{ns}.svc"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": name, "key": "pw"}}},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": i % 5 != 0,
            "capabilities": {"drop": ["ALL"]},
        },
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "1", "memory": "256Mi"},
        },
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
    }
    pod = {
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        "volumes": [{"name": "config", "configMap": {"name": name}}],
    }
    template = {"metadata": {"labels": {"app": name, **labels}}, "spec": pod}
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": name}},
                "template": template,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": "http"}]},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns},
            "data": {"app.yaml": f"name: {name}\nreplicas: 3\n" + "x: y\n" * 10},
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
        },
    ]
    if i % 10 == 0:
        objects += [
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": f"{name}-deny", "namespace": ns},
                "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
            },
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": f"{name}-db", "namespace": ns, "labels": labels},
                "spec": {
                    "replicas": 1,
                    "serviceName": f"{name}-db",
                    "selector": {"matchLabels": {"app": name}},
                    "template": template,
                },
            },
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": f"{name}-report", "namespace": ns, "labels": labels},
                "spec": {
                    "schedule": "0 * * * *",
                    "jobTemplate": {"spec": {"template": template}},
                },
            },
        ]
    return objects


def generate(folder: Path, count: int, per_file: int = 100) -> int:
    objects: list[dict[str, Any]] = []
    i = 0
    while len(objects) < count:
        objects.extend(app(i))
        i += 1
    objects = objects[:count]
    for start in range(0, count, per_file):
        chunk = objects[start : start + per_file]
        (folder / f"apps-{start // per_file:03d}.yaml").write_text(
            yaml.safe_dump_all(chunk, explicit_start=True, sort_keys=False)
        )
    return len(objects)


def best(runs: int, fn: Any) -> tuple[float, Any]:
    fastest, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    args = parser.parse_args()

    from stackwright.automation.policy import Options, load
    from stackwright.policy import evaluate, select_packs

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        count = generate(folder, args.count)
        packs = select_packs(PACKS)
        read_s, subjects = best(3, lambda: load(folder, Options()))
        assert len(subjects) == count, (len(subjects), count)
        eval_s, report = best(3, lambda: evaluate(subjects, packs))
        command = [sys.executable, "-m", "stackwright.cli.main", "policy", "check", str(folder)]
        command += [arg for pack in PACKS for arg in ("--pack", pack)] + ["--json"]

        def cli() -> int:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
            return len(done.stdout)

        cli_s, _ = best(3, cli)
    print(f"objects: {count} in {count // 100} files; findings: {len(report.findings)}")
    print(f"read (parse + line numbers): {read_s:.3f} s")
    print(f"evaluate (both built-in packs, in process): {eval_s:.3f} s")
    print(f"in process, read + evaluate: {read_s + eval_s:.3f} s")
    print(f"CLI end to end (`stackwright policy check DIR --json`): {cli_s:.3f} s  (target < 2 s)")


if __name__ == "__main__":
    main()
