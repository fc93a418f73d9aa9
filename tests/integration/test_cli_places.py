"""A message names a place in the user's files from the directory the command was started
in, as mypy, ruff and gcc do: `__main__.py:9: …` from the project's folder, and the same
with `--cwd PROJECT` from anywhere (it means "started in PROJECT"), though the program runs
from its own folder; a file outside that directory keeps its absolute path (never `../`).
A script using the automation API gets absolute paths. `--json` says what the display says."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli
from test_cli_lifecycle import PRELUDE_LINES, Project, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

from stackwright.automation import Workspace
from stackwright.errors import UsageError, shown_path

pytestmark = pytest.mark.integration

LiveCluster = Any

FAILING = """
k8s.core.v1.ConfigMap("settings", metadata={"namespace": NS}, data={"a": "b"})
raise TypeError("boom")
"""
FAILING_LINE = PRELUDE_LINES + 3  # the program begins with a blank line

REFUSED = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.apps.v1.Deployment("web", metadata={"name": "Not_A_Name", "namespace": NS},
                       spec=app_spec("web"))
"""
REFUSED_LINE = PRELUDE_LINES + 3

YAML_PROGRAM = """\
name: {name}
runtime: yaml
resources:
  settings:
    type: kubernetes:core/v1:ConfigMap
    properties:
      data: ${{nope}}
"""
YAML_LINE = 7


def from_(start: Path, *args: str, rc: int) -> tuple[str, list[dict[str, Any]]]:
    """`stackwright ARGS --json` started in `start`: its one line on stderr and its events."""
    done = run_cli(
        [*args, "--json"],
        cwd=start,
        env={**os.environ, "NO_COLOR": "1", "STACKWRIGHT_STACK": "dev"},
    )
    assert done.returncode == rc, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line]
    return lines[0], events


def said(line: str, events: list[dict[str, Any]]) -> str:
    """The message of an error line, which the `error` event carries word for word."""
    assert events[-1]["event"] == "error", events
    assert line == f"error: {events[-1]['message']}", (line, events[-1])
    return events[-1]["message"]


def test_a_program_failure_is_named_from_where_the_command_started(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    p: Project = new_project()
    p.program(FAILING)
    failed = "the program failed: TypeError: boom"
    # (a) in the project's folder
    assert one_line(p.sw("preview", rc=2)) == f"error: __main__.py:{FAILING_LINE}: {failed}"
    assert said(*from_(p.root, "preview", rc=2)) == f"__main__.py:{FAILING_LINE}: {failed}"
    main = p.root / "__main__.py"
    # Nothing stays recorded after a command: this process names files absolutely again.
    assert shown_path(str(main)) == str(main)
    # (b) elsewhere, with --cwd naming the project (relative or absolute): started there
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    relative = os.path.relpath(p.root, elsewhere)
    for cwd in (relative, str(p.root)):
        message = said(*from_(elsewhere, "--cwd", cwd, "preview", rc=2))
        assert message == f"__main__.py:{FAILING_LINE}: {failed}", message
    # (c) started below the project's folder: its program is outside, named absolutely
    below = p.root / "charts"
    below.mkdir()
    message = said(*from_(below, "preview", rc=2))
    assert message == f"{main}:{FAILING_LINE}: {failed}", message
    assert "../" not in message


def test_a_refused_resource_is_named_from_where_the_command_started(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """The cluster refuses the Deployment after the program ran (from its own folder): its
    declaring line, in the step's event, the summary and the last line alike."""
    p: Project = new_project()
    p.program(REFUSED.split("k8s.apps")[0])  # the namespace first: a dry run needs it
    p.up()
    p.program(REFUSED)
    for start, args in ((p.root, ()), (tmp_path, ("--cwd", p.root.name))):
        done = run_cli(
            [*args, "preview", "--json"],
            cwd=start,
            env={**os.environ, "NO_COLOR": "1", "STACKWRIGHT_STACK": "dev"},
        )
        assert done.returncode == 2, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines() if line]
        (step,) = [e for e in events if e["event"] == "step-done" and not e["ok"]]
        assert step["error"].startswith(f"__main__.py:{REFUSED_LINE}: "), step["error"]
        assert "Not_A_Name" in step["error"]
        (summary,) = [e for e in events if e["event"] == "summary"]
        assert summary["failures"] == [step["error"]]


def test_a_yaml_program_s_mistake_is_named_from_where_the_command_started(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    p: Project = new_project()
    (p.root / "Stackwright.yaml").write_text(YAML_PROGRAM.format(name=p.name))
    nope = "${nope}: nothing is named 'nope' (declared: settings)"
    assert one_line(p.sw("preview", rc=2)) == f"error: Stackwright.yaml:{YAML_LINE}: {nope}"
    message = said(*from_(tmp_path, "--cwd", p.root.name, "preview", rc=2))
    assert message == f"Stackwright.yaml:{YAML_LINE}: {nope}", message
    below = p.root / "sub"
    below.mkdir()
    message = said(*from_(below, "preview", rc=2))
    assert message == f"{p.root / 'Stackwright.yaml'}:{YAML_LINE}: {nope}", message


def test_a_script_gets_absolute_paths(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The automation API from a script (no CLI: nothing recorded), even run from the
    project's own folder."""
    p: Project = new_project()
    p.program(FAILING)
    monkeypatch.chdir(p.root)
    with Workspace.create_or_select(p.root, "dev") as ws, pytest.raises(UsageError) as refused:
        ws.preview()
    main = p.root / "__main__.py"
    assert str(refused.value) == f"{main}:{FAILING_LINE}: the program failed: TypeError: boom"


def test_a_manifest_file_s_field_is_named_from_where_the_command_started(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A ConfigGroup's file, named relative to the program's folder in the program, at the
    line of the field refused: from where the command started too."""
    p: Project = new_project()
    (p.root / "manifests").mkdir()
    (p.root / "manifests" / "settings.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {p.ns}}}\n"
        "data: {mode: 1}\n"
    )
    p.program('k8s.yaml.ConfigGroup("group", files=["manifests/*.yaml"])\n')
    line = one_line(p.sw("preview", rc=2))
    assert line.startswith("error: manifests/settings.yaml:4: "), line
    assert "data.mode is the number 1" in line, line
    below = p.root / "sub"
    below.mkdir()
    message = said(*from_(below, "preview", rc=2))
    assert message.startswith(f"{p.root / 'manifests' / 'settings.yaml'}:4: "), message
