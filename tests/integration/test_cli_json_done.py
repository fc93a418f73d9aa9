"""`--json` on the commands that change a project, a stack, its configuration, its tags, its
secrets provider or its state: one compact JSON line saying what was done, or the `error` line every `--json` command ends
with (exit code 2, the same message on stderr); a secret's value is in neither."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli, stop_clusters

from stackwright.model import ResourceState, make_urn

pytestmark = pytest.mark.integration

SECRET = "S3cr3t-value-never-shown"
CM = "kubernetes:core/v1:ConfigMap"
#: Stack dev's resources: ConfigMap a (protected) and b.
A, B = (make_urn("dev", "shop", CM, name) for name in ("a", "b"))

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
        | {"key": "shop:greeting", "removed": True},
        ["config", "rm", "greeting", "--stack", "nope"],  # a key not set is no error
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
    (
        "secrets-provider-change",
        ["stack", "change-secrets-provider", "local"],
        {"event": "secrets-provider", "action": "change", "project": "shop", "stack": "dev"}
        | {"provider": "local"},
        ["stack", "change-secrets-provider", "passphrase"],  # no new passphrase to ask for
    ),
    (
        "state-delete",
        ["state", "delete", B, "--yes"],
        {"event": "state", "action": "delete", "project": "shop", "stack": "dev"}  # b: no object
        | {"urn": B, "removed": [B], "unmarked": [], "leftMarked": [], "notes": []},
        ["state", "delete", B],  # would ask, and --json has no terminal to ask in
    ),
    (
        "state-unprotect",
        ["state", "unprotect", A, "--yes"],
        {"event": "state", "action": "unprotect", "project": "shop", "stack": "dev", "urn": A},
        ["state", "unprotect", A],
    ),
    (
        "state-rename",
        ["state", "rename", B, "renamed", "--yes"],
        {"event": "state", "action": "rename", "project": "shop", "stack": "dev"}
        | {"urn": make_urn("dev", "shop", CM, "renamed"), "formerUrn": B},
        ["state", "rename", B, "renamed"],
    ),
    (
        "state-move",
        ["state", "move", B, "--dest", "qa", "--yes"],
        {"event": "state", "action": "move", "project": "shop", "stack": "dev"}
        | {"dest": "qa", "urns": [make_urn("qa", "shop", CM, "b")]},
        ["state", "move", B, "--dest", "qa"],
    ),
    (
        "stack-import",
        ["stack", "import", "--file", "../dev-state.json"],  # as the fixture imported it
        {"event": "state", "action": "import", "project": "shop", "stack": "dev"}
        | {"source": "../dev-state.json"},
        ["stack", "import", "--file", "../no-such-state.json"],
    ),
]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("STACKWRIGHT_")}
    yield {
        **base,
        "STACKWRIGHT_HOME": str(tmp_path / "home"),
        "STACKWRIGHT_CONFIG_PASSPHRASE": "correct horse battery staple",
    }
    # `state delete` starts the stack's local cluster to take its marks off the object.
    stop_clusters(tmp_path / "home")


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    """Project shop with stacks dev (selected; config `greeting`, tag `owner`, resources A
    and B) and qa."""
    resources = [
        ResourceState(urn=A, type=CM, id="default/a", protect=True).to_dict(),
        ResourceState(urn=B, type=CM, id="default/b").to_dict(),
    ]
    document = {"version": 1, "project": "shop", "stack": "dev", "resources": resources}
    state = tmp_path / "dev-state.json"
    state.write_text(json.dumps({**document, "outputs": {}, "pending": []}))
    for args in (
        ["new", "kubernetes-python", "shop"],
        ["--cwd", "shop", "stack", "init", "qa"],
        ["--cwd", "shop", "stack", "select", "dev"],
        ["--cwd", "shop", "config", "set", "greeting", "hello"],
        ["--cwd", "shop", "stack", "tag", "set", "owner", "team-a"],
        ["--cwd", "shop", "stack", "import", "--file", str(state)],
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


def test_destroy_remove_json_ends_with_the_stack_s_removal(
    project: Path, env: dict[str, str]
) -> None:
    """`destroy --remove --json`: the destroy's events and summary, then the `stack` event
    `stack rm --json` writes; without --yes, refused before anything is destroyed."""
    refused = run_cli(["destroy", "--stack", "qa", "--remove", "--json"], cwd=project, env=env)
    assert refused.returncode == 2, refused.stderr
    assert json.loads(refused.stdout.splitlines()[-1])["event"] == "error"

    done = run_cli(
        ["destroy", "--stack", "qa", "--remove", "--yes", "--json"], cwd=project, env=env
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events[-2:]] == ["summary", "stack"]
    assert events[-1] == {"event": "stack", "action": "rm", "project": "shop", "stack": "qa"}
    assert not (project / "Stackwright.qa.yaml").exists()
    listed = run_cli(["stack", "ls", "--json"], cwd=project, env=env)
    assert [s["name"] for s in json.loads(listed.stdout)] == ["dev"]
