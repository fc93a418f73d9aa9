"""Benchmark: a Helm chart of 300 objects, rendered and previewed.

Generates a chart whose one template ranges over `count` entries (ConfigMaps and
Services alternately, every name through an `include` of a helper), then measures

- render: `helm_python.Chart.load` + `render` alone (Helm's Go engine), best of 5;
- declare: `k8s.helm.Chart` inside a `Program` — render, parse, register the children —
  best of 5;
- preview: the whole `stackwright preview` process for a new stack on a throwaway local
  cluster (every object a create, checked with a server-side dry run), best of 3.

Target (issue 5): under 2 s for render + preview on a 2-core machine.

    python benchmarks/helm_chart.py [--count N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = """\
{{- range $i := until (int .Values.count) }}
---
{{- if eq (mod $i 2) 0 }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "bench.name" $ }}-cm-{{ $i }}
  labels:
    app: bench
data:
  key: value-{{ $i }}
  other: {{ $.Values.filler | quote }}
{{- else }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "bench.name" $ }}-svc-{{ $i }}
spec:
  selector:
    app: a{{ $i }}
  ports:
    - port: 80
{{- end }}
{{- end }}
"""


def write_chart(folder: Path, count: int) -> Path:
    chart = folder / "bench"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: bench\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(f"count: {count}\nfiller: {'x' * 64}\n")
    (chart / "templates" / "_helpers.tpl").write_text(
        '{{- define "bench.name" -}}{{ .Release.Name }}{{- end -}}\n'
    )
    (chart / "templates" / "objects.yaml").write_text(TEMPLATE)
    return chart


def time_render(chart: Path, runs: int = 5) -> float:
    import helm_python as helm

    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        with helm.Chart.load(chart) as loaded:
            loaded.render(name="bench", namespace="default", is_install=True)
        best = min(best, time.perf_counter() - start)
    return best


def time_declare(chart: Path, count: int, runs: int = 5) -> float:
    from stackwright.kubernetes.helm import Chart
    from stackwright.sdk.context import Program, running

    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        with running(Program(project="bench", stack="dev")):
            declared = Chart("bench", chart=str(chart), namespace="default")
        best = min(best, time.perf_counter() - start)
        assert len(declared.resources) == count, len(declared.resources)
    return best


def time_preview(folder: Path, chart: Path, count: int, runs: int = 3) -> float:
    from stackwright.localcluster import lifecycle

    info, _ = lifecycle.start("bench-helm")
    try:
        project = folder / "project"
        project.mkdir()
        (project / "Stackwright.yaml").write_text(
            "name: helmbench\nruntime: python\nmain: __main__.py\n"
        )
        (project / "Stackwright.dev.yaml").write_text(
            f"config:\n  kubernetes:kubeconfig: {json.dumps(str(info.kubeconfig))}\n"
        )
        (project / "__main__.py").write_text(
            "from stackwright.kubernetes.helm import Chart\n\n"
            f'Chart("bench", chart={str(chart)!r}, namespace="default")\n'
        )
        command = [sys.executable, "-m", "stackwright.cli.main", "--cwd", str(project)]
        env = {**os.environ, "STACKWRIGHT_STACK": "dev"}
        subprocess.run([*command, "stack", "init", "dev"], check=True, capture_output=True)
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            result = subprocess.run(
                [*command, "preview", "--json"], capture_output=True, text=True, env=env
            )
            best = min(best, time.perf_counter() - start)
            if result.returncode != 0:
                raise SystemExit(
                    f"preview failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
                )
            done = json.loads(result.stdout.strip().splitlines()[-1])
            assert done["counts"] == {"create": count + 1}, done["counts"]
        return best
    finally:
        lifecycle.stop("bench-helm")
        lifecycle.delete("bench-helm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STACKWRIGHT_HOME"] = str(Path(tmp) / "home")
        chart = write_chart(Path(tmp), args.count)
        render = time_render(chart)
        print(f"helm render of {args.count} objects: {render * 1000:.0f} ms")
        declare = time_declare(chart, args.count)
        print(f"k8s.helm.Chart of {args.count} objects (render + parse + register): "
              f"{declare * 1000:.0f} ms")  # fmt: skip
        preview = time_preview(Path(tmp), chart, args.count)
        print(
            f"stackwright preview, new stack, {args.count} creates: {preview:.2f} s (target < 2 s)"
        )


if __name__ == "__main__":
    main()
