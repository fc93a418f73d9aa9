"""`--json` on the commands that change a project, a stack, its configuration or its tags:
one compact JSON line saying what was done, or the `error` line every `--json` command ends
with (exit code 2, the same message on stderr); a secret's value is in neither."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli

pytestmark = pytest.mark.integration

SECRET = "S3cr3t-value-never-shown"

#: (id, command, the line it prints, a use of it that is refused with exit code 2)
CASES: list[tuple[str, list[str], dict[str, Any], list[str]]] = [
    (
        "new",
        ["new", "kubernetes-python", "fresh"],
        {"event": "project", "action": "new", "project": "fresh", "stack": "dev"}
        | {"template": "kubernetes-python", "directory": "fresh"},
        ["new", "no-such-template", "fresh"],
    ),
    (
        "stack-init",
        ["stack", "init", "prod"],
        {"event": "stack", "action": "init", "project": "shop", "stack": "prod"},
        ["stack", "init", "dev"],
    ),
    (
        "stack-select",
        ["stack", "select", "qa"],
        {"event": "stack", "action": "select", "project": "shop", "stack": "qa"}
        | {"created": False},
        ["stack", "select", "no-such-stack"],
    ),
    (
        "stack-select-create",
        ["stack", "select", "--create", "prod"],
        {"event": "stack", "action": "select", "project": "shop", "stack": "prod"}
        | {"created": True},
        ["stack", "select", "--create", "bad/name"],
    ),
    (
        "stack-rm",
        ["stack", "rm", "qa", "--yes"],
        {"event": "stack", "action": "rm", "project": "shop", "stack": "qa"},
        ["stack", "rm", "qa"],  # would ask, and --json has no terminal to ask in
    ),
    (
        "stack-rename",
        ["stack", "rename", "qa", "staging"],
        {"event": "stack", "action": "rename", "project": "shop", "stack": "staging"}
        | {"formerName": "qa"},
        ["stack", "rename", "qa", "bad/name"],
    ),
    (
        "config-set",
        ["config", "set", "replicas", "3", "--type", "int"],
        {"event": "config", "action": "set", "project": "shop", "stack": "dev"}
        | {"key": "shop:replicas", "secret": False, "value": 3},
        ["config", "set", "replicas", "3", "--type", "number"],
    ),
    (
        "config-set-secret",
        ["config", "set", "--secret", "password", SECRET],
        {"event": "config", "action": "set", "project": "shop", "stack": "dev"}
        | {"key": "shop:password", "secret": True},
        ["config", "set", "--secret", "--plaintext", "password", SECRET],
    ),
    (
        "config-rm",
        ["config", "rm", "greeting"],
        {"event": "config", "action": "rm", "project": "shop", "stack": "dev"}
        | {"key": "shop:greeting"},
        ["config", "rm", "no-such-key"],
    ),
    (
        "config-cp",
        ["config", "cp", "--dest", "qa"],
        {"event": "config", "action": "cp", "project": "shop", "stack": "dev"}
        | {"dest": "qa", "keys": ["kubernetes:cluster", "shop:greeting"]},
        ["config", "cp", "greeting"],  # no --dest
    ),
    (
        "tag-set",
        ["stack", "tag", "set", "env", "production"],
        {"event": "tag", "action": "set", "project": "shop", "stack": "dev"}
        | {"name": "env", "value": "production"},
        ["stack", "tag", "set", "bad name", "production"],
    ),
    (
        "tag-rm",
        ["stack", "tag", "rm", "owner"],
        {"event": "tag", "action": "rm", "project": "shop", "stack": "dev", "name": "owner"},
        ["stack", "tag", "rm", "no-such-tag"],
    ),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("STACKWRIGHT_")}
    return {
        **base,
        "STACKWRIGHT_HOME": str(tmp_path / "home"),
        "STACKWRIGHT_CONFIG_PASSPHRASE": "correct horse battery staple",
    }


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    """Project shop with stacks dev (selected; config `greeting`, tag `owner`) and qa."""
    for args in (
        ["new", "kubernetes-python", "shop"],
        ["--cwd", "shop", "stack", "init", "qa"],
        ["--cwd", "shop", "stack", "select", "dev"],
        ["--cwd", "shop", "config", "set", "greeting", "hello"],
        ["--cwd", "shop", "stack", "tag", "set", "owner", "team-a"],
    ):
        done = run_cli(args, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
    return tmp_path / "shop"


def one_line(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"not one line: {stdout!r}"
    assert json.dumps(json.loads(lines[0]), separators=(",", ":"), ensure_ascii=False) == lines[0]
    return dict(json.loads(lines[0]))


@pytest.mark.parametrize(
    ("command", "expected", "refused"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_json_says_what_was_done_or_why_not(
    project: Path,
    env: dict[str, str],
    command: list[str],
    expected: dict[str, Any],
    refused: list[str],
) -> None:
    cwd = project.parent if command[0] == "new" else project
    failed = run_cli([*refused, "--json"], cwd=cwd, env=env)
    assert failed.returncode == 2, failed.stderr
    error = one_line(failed.stdout)
    assert error.keys() == {"event", "message", "exitCode"}
    assert error["event"] == "error" and error["exitCode"] == 2
    assert failed.stderr == f"error: {error['message']}\n"

    done = run_cli([*command, "--json"], cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    assert one_line(done.stdout) == expected
    assert SECRET not in done.stdout + done.stderr + failed.stdout + failed.stderr
