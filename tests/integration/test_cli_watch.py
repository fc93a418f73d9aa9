"""`stackwright watch`: `up` now and on every change of the project's files, as `pulumi watch`
runs it; a broken program or a failed `up` is said and waited past; SIGTERM (or Ctrl-C)
while it waits ends it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any

import pytest
from test_cli_lifecycle import CLI, live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

WAITING = "Waiting for a change (Ctrl-C stops)."


class Watcher:
    """A `stackwright watch` process whose output lines are read as they come."""

    def __init__(self, folder: Any, *args: str) -> None:
        env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [*CLI, "watch", *args],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, wanted: str, timeout: float = 60) -> list[str]:
        """The lines up to the next one that starts with `wanted` (included)."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {wanted!r} within {timeout}s; output:\n" + "\n".join(self.seen)
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if line.startswith(wanted):
                return self.seen[start:]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


def test_watch_runs_up_on_each_change_and_waits_past_a_broken_program(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("page", metadata={"name": "page", "namespace": NS},
                              data={"text": "one"})
        """
    )
    watcher = Watcher(p.root)
    try:
        first = watcher.until(WAITING)
        assert first[0].startswith(f"Watching {p.root}: `up` runs now"), first
        assert live(cluster, "configmap", "page", p.ns)["data"] == {"text": "one"}

        main = p.root / "__main__.py"
        main.write_text(main.read_text().replace('"one"', '"two"'))
        second = watcher.until(WAITING)
        assert second[0] == "" and second[1] == "Changed: __main__.py — running `up`", second
        assert any(line.startswith("  updated  page") for line in second), second
        assert live(cluster, "configmap", "page", p.ns)["data"] == {"text": "two"}

        # A program that does not run: its one line, and the watch goes on.
        main.write_text(main.read_text() + "\nbroken = (\n")
        third = watcher.until(WAITING)
        assert any(line.startswith("error: ") and "__main__.py" in line for line in third), third
        assert watcher.process.poll() is None

        # A new file of the project counts as a change too; the program mended with it.
        (p.root / "extra.py").write_text(
            "import stackwright.kubernetes as k8s\n"
            f'k8s.core.v1.ConfigMap("more", metadata={{"name": "more", "namespace": {p.ns!r}}})\n'
        )
        main.write_text(main.read_text().replace("\nbroken = (\n", "\n") + "import extra\n")
        fourth = watcher.until(WAITING)
        assert any(line.startswith("  created  more") for line in fourth), fourth
        assert live(cluster, "configmap", "more", p.ns)
    finally:
        code = watcher.stop()
    assert code == 0 and watcher.until("Stopped watching.")


def test_watch_refuses_a_path_that_does_not_exist(new_project: Any) -> None:
    p = new_project()
    refused = p.sw("watch", "--path", "nowhere", rc=2)
    assert (
        refused.err.strip() == "error: --path nowhere: no such file or folder; pass one that exists"
    )
