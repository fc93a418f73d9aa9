"""Benchmark: a YAML program of 1,000 resources against the same program in Python.

Writes a YAML program (`runtime: yaml`) declaring N ConfigMaps across 10 namespaces, each
with a variable reference, an interpolated string and a reference to its namespace's
resource, and the Python program that declares the same objects; then times declaring
each in process (`run_program`: parse, evaluate, register), best of 5.

    python benchmarks/yaml_program.py [--count N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from stackwright.engine.program import run_program


def yaml_program(count: int) -> str:
    lines = ["name: bench", "runtime: yaml", "variables:", "  labels: {app: web}", "resources:"]
    for n in range(10):
        lines += [f"  ns{n}:", "    type: kubernetes:core/v1:Namespace"]
        lines += ["    properties:", f"      metadata: {{name: bench-{n}}}"]
    for i in range(count):
        lines += [
            f"  cm{i}:",
            "    type: kubernetes:core/v1:ConfigMap",
            "    properties:",
            "      metadata:",
            f"        name: cm{i}",
            f"        namespace: ${{ns{i % 10}.metadata.name}}",
            "        labels: ${labels}",
            f"      data: {{index: '{i}', stack: 'in-${{stackwright.stack}}'}}",
        ]
    return "\n".join(lines) + "\n"


def python_program(count: int) -> str:
    return f"""
import stackwright as sw
import stackwright.kubernetes as k8s

labels = {{"app": "web"}}
spaces = [k8s.core.v1.Namespace(f"ns{{n}}", metadata={{"name": f"bench-{{n}}"}}) for n in range(10)]
for i in range({count}):
    k8s.core.v1.ConfigMap(
        f"cm{{i}}",
        metadata={{"name": f"cm{{i}}", "namespace": spaces[i % 10].metadata["name"], "labels": labels}},
        data={{"index": str(i), "stack": "in-" + sw.get_stack()}},
    )
"""


def best(path: Path, runs: int = 5) -> tuple[float, int]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        program = run_program(path, project="bench", stack="dev")
        times.append(time.perf_counter() - start)
    return min(times), len(program.resources)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        as_yaml = Path(folder) / "yaml" / "Stackwright.yaml"
        as_python = Path(folder) / "python" / "__main__.py"
        as_yaml.parent.mkdir()
        as_python.parent.mkdir()
        as_yaml.write_text(yaml_program(args.count))
        as_python.write_text(python_program(args.count))
        best(as_python, 1)  # imports, once, out of both timings
        best(as_yaml, 1)
        yaml_seconds, yaml_count = best(as_yaml)
        python_seconds, python_count = best(as_python)
    assert yaml_count == python_count == args.count + 10
    print(f"resources declared: {yaml_count}")
    print(f"YAML program:   {yaml_seconds * 1000:.0f} ms (best of 5)")
    print(f"Python program: {python_seconds * 1000:.0f} ms (best of 5)")
    print(f"YAML / Python:  {yaml_seconds / python_seconds:.1f}x")


if __name__ == "__main__":
    main()
