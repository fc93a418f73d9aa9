"""The automation layer driven from a script, as Pulumi's Automation API is: create or select
a stack, set its configuration, `up`, read its outputs, `destroy` — events to a listener,
errors as exceptions, nothing printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stackwright.automation import event_json
from stackwright.automation.stack import Workspace
from stackwright.engine.events import Event, StepDone, Summary
from stackwright.errors import StackwrightError, UsageError

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's, which a module cannot import by name

PROGRAM = """
import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
ns = k8s.core.v1.Namespace("ns", metadata={"name": "automation-ws"})
cm = k8s.core.v1.ConfigMap("cm", metadata={"namespace": ns.metadata["name"]},
                           data={"greeting": cfg.require("greeting")})
sw.export("namespace", ns.metadata["name"])
sw.export("token", cfg.require_secret("token"))
"""


def test_a_script_creates_a_stack_and_runs_it_without_printing(
    tmp_path: Path,
    cluster: LiveCluster,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "automation")
    (tmp_path / "Stackwright.yaml").write_text("name: automated\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent(PROGRAM))

    ws = Workspace.create_or_select(tmp_path, "ci")  # made: the CLI's `stack init` did it
    ws.config.set("kubernetes:kubeconfig", str(cluster.kubeconfig))
    ws.config.set("greeting", "hello")
    ws.config.set("token", "t0ken-value", secret=True)
    events: list[Event] = []
    up = ws.up(events.append)
    assert up.ok and up.counts == {"create": 2}
    assert isinstance(events[-1], Summary)
    assert ws.outputs() == {"namespace": "automation-ws", "token": "[secret]"}
    assert ws.outputs(show_secrets=True)["token"] == "t0ken-value"

    again = Workspace.create_or_select(tmp_path, "ci")  # selected, not made twice
    assert again.outputs()["namespace"] == "automation-ws"
    with pytest.raises(UsageError, match="stack ci already exists"):
        Workspace.create(tmp_path, "ci")
    assert again.destroy(events.append).ok
    assert cluster.kubectl("get", "namespace", "automation-ws", check=False).returncode != 0
    assert capsys.readouterr().out == "", "a script's stdout is its own"


SECRET_PROGRAM = """
import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
password = cfg.require_secret("password")
k8s.core.v1.Secret("db", metadata={"name": "db"}, string_data={"password": password})
k8s.core.v1.ConfigMap("url", metadata={"name": "url"},
                      data={"url": password.apply(lambda p: f"postgres://app:{p}@db")})
k8s.core.v1.ConfigMap("plain", metadata={"name": "plain"},
                      data={"copy": cfg.get("password")})  # read as plain: a warning
"""


def _secret_stack(
    folder: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch, name: str, password: str
) -> Workspace:
    """Stack `ci` of project `name` running SECRET_PROGRAM, its password set as a secret."""
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "automation")
    (folder / "Stackwright.yaml").write_text(f"name: {name}\nruntime: python\n")
    (folder / "__main__.py").write_text(textwrap.dedent(SECRET_PROGRAM))
    ws = Workspace.create_or_select(folder, "ci")
    ws.config.set("kubernetes:kubeconfig", str(cluster.kubeconfig))
    ws.config.set("password", password, secret=True)
    return ws


def test_a_script_that_logs_every_event_logs_no_secret(
    tmp_path: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Pulumi's `on_event`, a listener gets events it may print in a CI log: a secret
    configuration value, in a Secret, in something computed from it or read as plain, is
    [secret] in every step, change, drift and summary the listener sees."""
    ws = _secret_stack(tmp_path, cluster, monkeypatch, "logged", "Hunter2-in-ci")

    log: list[str] = []
    assert ws.preview(lambda e: log.append(repr(e))).ok
    assert ws.up(lambda e: log.append(repr(e))).ok
    cluster.kubectl("patch", "configmap", "url", "-p", '{"data": {"url": "changed"}}')
    assert ws.refresh(lambda e: log.append(repr(e))).ok
    assert ws.destroy(lambda e: log.append(repr(e))).ok

    text = "\n".join(log)
    assert "StepStarted" in text and "Drift" in text and "Summary" in text
    assert "[secret]" in text
    assert "Hunter2-in-ci" not in text


def test_a_script_gates_on_drift_and_reads_the_history(
    tmp_path: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Pulumi's `stack.preview(expect_no_changes=True)` / `refresh(...)` / `history()`:
    the CI drift gate without the CLI. A gate that trips raises with exit code 1 after
    its summary, and its refresh records nothing."""
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "automation")
    (tmp_path / "Stackwright.yaml").write_text("name: gated\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            import stackwright.kubernetes as k8s
            k8s.core.v1.ConfigMap("cm", metadata={"name": "gated"}, data={"mode": "a"})
            """
        )
    )
    ws = Workspace.create_or_select(tmp_path, "ci")
    ws.config.set("kubernetes:kubeconfig", str(cluster.kubeconfig))
    events: list[Event] = []
    with pytest.raises(StackwrightError, match="the preview shows changes; nothing was") as tripped:
        ws.up(events.append, expect_no_changes=True)
    assert tripped.value.exit_code == 1 and not isinstance(tripped.value, UsageError)
    # The listener's summary says the gate's exit code, as `--json`'s `exitCode` does.
    assert [e.exit_code for e in events if isinstance(e, Summary)] == [1]
    assert cluster.kubectl("get", "configmap", "gated", check=False).returncode != 0
    assert ws.up(events.append).ok
    assert ws.preview(events.append, refresh=True, expect_no_changes=True).ok
    assert ws.refresh(events.append, expect_no_changes=True).ok

    cluster.kubectl("patch", "configmap", "gated", "-p", '{"data": {"mode": "b"}}')
    with pytest.raises(StackwrightError, match=r"the preview shows changes \(1 to update\)"):
        ws.preview(events.append, refresh=True, expect_no_changes=True)
    with pytest.raises(StackwrightError, match=r"finds drift \(1 drifted\); nothing was recorded"):
        ws.refresh(events.append, expect_no_changes=True)
    assert [e.exit_code for e in events if isinstance(e, Summary)][-2:] == [1, 1]
    recorded = ws.export_state()["resources"]
    assert [r["outputs"]["data"] for r in recorded if r["type"].endswith("ConfigMap")] == [
        {"mode": "a"}
    ]
    assert [(e.kind, e.result) for e in ws.history()] == [
        ("refresh", "succeeded"),
        ("up", "succeeded"),
    ]
    assert len(ws.history(limit=1)) == 1
    assert ws.destroy(events.append).ok


def _canonical(event: dict[str, Any]) -> str:
    """An event line without its timings, its keys sorted."""
    timeless = {k: v for k, v in event.items() if k not in ("elapsed", "stateBytesWritten")}
    return json.dumps(timeless, sort_keys=True)


def test_a_script_forwards_the_events_the_cli_prints_with_json(
    tmp_path: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`event_json` gives a script the very objects `stackwright preview --json` prints, so
    a tool that reads the CLI's event lines reads a script's too (secrets masked in both)."""
    ws = _secret_stack(tmp_path, cluster, monkeypatch, "forwarded", "Hunter2-forwarded")

    events: list[Event] = []
    assert ws.preview(events.append).ok
    lines = [json.dumps(event_json(e)) for e in events]
    cli = subprocess.run(
        [sys.executable, "-m", "stackwright.cli.main", "preview", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
        check=True,
    )
    printed = [json.loads(line) for line in cli.stdout.splitlines()]
    assert {e["event"] for e in printed} == {"diagnostic", "step-started", "step-done", "summary"}
    # Steps run concurrently: the same events, not always in the same order.
    assert sorted(_canonical(json.loads(line)) for line in lines) == sorted(
        _canonical(e) for e in printed
    )
    assert "Hunter2-forwarded" not in "\n".join(lines) + cli.stdout


def test_a_listener_that_raises_is_told_after_the_operation_not_in_its_middle(
    tmp_path: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A logging bug in a script's listener does not abandon an `up` halfway (steps left
    pending, the history failed): the operation completes, then the listener's first
    exception is raised to the script, as its own bug."""
    ws = _secret_stack(tmp_path, cluster, monkeypatch, "listened", "Hunter2-listened")
    seen: list[Event] = []

    def broken(event: Event) -> None:
        seen.append(event)
        if isinstance(event, StepDone):
            raise ValueError("a bug in the script's listener")

    with pytest.raises(ValueError, match="a bug in the script's listener"):
        ws.up(broken)
    assert isinstance(seen[-1], Summary) and seen[-1].ok, "events kept flowing to the end"
    state = ws.backend.load(ws.project.name, ws.stack)
    assert state.pending == [] and len(state.resources) == 3
    assert [(e.kind, e.result) for e in ws.history()] == [("up", "succeeded")]
    for name in ("url", "plain"):
        assert cluster.kubectl("get", "configmap", name, check=False).returncode == 0
    assert ws.destroy(seen.append).ok


def test_a_script_passes_none_for_no_listener(
    tmp_path: Path, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ws.up(None)`, as a Pulumi script passes `on_event=None`: no listener, the summary
    returned — not a TypeError raised once the `up` has applied everything."""
    ws = _secret_stack(tmp_path, cluster, monkeypatch, "unheard", "Hunter2-unheard")
    assert ws.preview(None).counts == {"create": 3}
    up = ws.up(None)
    assert up.ok and up.counts == {"create": 3}
    cluster.kubectl("patch", "configmap", "url", "-p", '{"data": {"url": "changed"}}')
    assert ws.refresh(None, expect_no_changes=False).counts["drifted"] == 1
    assert ws.destroy(None).ok
    assert [(e.kind, e.result) for e in ws.history()] == [
        ("destroy", "succeeded"),
        ("refresh", "succeeded"),
        ("up", "succeeded"),
    ]
