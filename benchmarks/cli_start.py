"""Benchmark: how fast the `stackwright` command starts for light commands.

    python benchmarks/cli_start.py [--runs 15]

Times whole processes — interpreter start, imports, building the command line, the
command's own work — as a user's shell runs them, in a temporary STACKWRIGHT_HOME with a
YAML project whose stack `dev` holds one config value:

- `stackwright --version`, `stackwright --help`;
- `stackwright stack ls` and `stackwright config get replicas` in the project;
- the other commands that open the stack without running an operation: `config set`,
  `config` (the list), `stack output`, `stack history`, `stack select`, `stack tag ls`;
- `stackwright cluster list` (no cluster);
- a program's first line: `import stackwright.kubernetes` and two kinds (Deployment, Service);
- `python -c pass`: the interpreter alone, the floor.

Each row is the median of `--runs` runs (commands interleaved within a round): the wall
time, and the process's own CPU (user + system, from wait4). Stackwright's modules are
compiled to bytecode first, as `pip install` does (see up.py's `bench_home`).
Target (DESIGN.md's "fast start"): a light command within ~0.1 s of CPU.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

from up import Child, bench_home, run_child

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "stackwright --version": ["stackwright", "--version"],
    "stackwright --help": ["stackwright", "--help"],
    "stackwright stack ls": ["stackwright", "stack", "ls"],
    "stackwright config get replicas": ["stackwright", "config", "get", "replicas"],
    "stackwright config set replicas 2": ["stackwright", "config", "set", "replicas", "2"],
    "stackwright config": ["stackwright", "config"],
    "stackwright stack output": ["stackwright", "stack", "output"],
    "stackwright stack history": ["stackwright", "stack", "history"],
    "stackwright stack select dev": ["stackwright", "stack", "select", "dev"],
    "stackwright stack tag ls": ["stackwright", "stack", "tag", "ls"],
    "stackwright cluster list": ["stackwright", "cluster", "list"],
    "import stackwright.kubernetes": [
        sys.executable,
        "-c",
        "import stackwright.kubernetes as k8s; k8s.apps.v1.Deployment; k8s.core.v1.Service",
    ],
}


def stackwright() -> str:
    """The `stackwright` script beside this interpreter (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "stackwright"
    found = str(beside) if beside.exists() else shutil.which("stackwright")
    if found is None:
        raise SystemExit("no `stackwright` command: pip install -e . in this interpreter's venv")
    return found


def make_project(work: Path, command: str) -> Path:
    """A YAML project with a stack `dev` whose config sets `replicas`."""
    for args in (
        ["new", "kubernetes-yaml", "proj"],
        ["--cwd", "proj", "config", "set", "replicas", "2"],
    ):
        child = run_child([command, *args], work)
        if child.code != 0:
            raise SystemExit(f"stackwright {' '.join(args)} failed:\n{child.stderr}")
    return work / "proj"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    command = stackwright()
    runs: dict[str, list[Child]] = {name: [] for name in COMMANDS}
    with bench_home("sw-bench-start-") as work:
        os.environ.setdefault("STACKWRIGHT_CONFIG_PASSPHRASE", "benchmark")
        project = make_project(work, command)
        for _ in range(args.runs + 1):  # the first round warms the file cache, untimed
            for name, argv in COMMANDS.items():
                argv = [command if part == "stackwright" else part for part in argv]
                child = run_child(argv, project)
                if child.code != 0:
                    raise SystemExit(f"{name} failed ({child.code}):\n{child.stderr}")
                runs[name].append(child)
    print(f"{'command':<34} {'wall ms':>8} {'CPU ms':>8}   (median of {args.runs})")
    for name, children in runs.items():
        timed = children[1:]
        wall = statistics.median(c.wall for c in timed) * 1000
        cpu = statistics.median(c.cpu for c in timed) * 1000
        print(f"{name:<34} {wall:>8.0f} {cpu:>8.0f}")


if __name__ == "__main__":
    main()
