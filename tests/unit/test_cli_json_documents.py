"""`--json` of a command that reports data prints one JSON document indented as Pulumi's
(`pulumi stack ls --json`) and kubectl's are; a command that changes something writes one
compact event line instead (tests/integration/test_cli_json_done.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from stackwright.cli.main import app, main

REPORTS = [
    ["stack", "ls"],
    ["stack", "history"],
    ["stack", "tag", "ls"],
    ["stack"],
    ["stack", "output"],
    ["stack", "output", "shape"],
    ["config"],
    ["config", "ls"],
    ["config", "get", "shop:limits"],
]


def json_help(*words: str) -> str:
    """What `stackwright WORDS --help` says of `--json`."""
    command: Any = typer.main.get_command(app)
    for word in words:
        commands = getattr(
            command, "commands", {}
        )  # a group's; a command's words are its arguments
        command = commands.get(word, command)
    (option,) = [p for p in command.params if "--json" in p.opts]
    return str(option.help)


@pytest.mark.parametrize("command", REPORTS, ids=" ".join)
def test_a_reports_help_says_json_prints_one_document(command: list[str]) -> None:
    # It said "One JSON event per line", which is what an operation's `--json` prints.
    assert json_help(*command) == "Print a JSON document instead of text."


def test_cancel_s_help_says_json_prints_what_was_done() -> None:
    assert json_help("cancel") == "What was done, as one JSON line."


@pytest.mark.parametrize("command", REPORTS, ids=" ".join)
def test_a_report_is_one_indented_document(
    project: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    main(["config", "set", "--type", "json", "limits", '{"cpu": "1", "memory": "1Gi"}'])
    main(["stack", "tag", "set", "owner", "team-a"])
    exported = project / "state.json"
    main(["stack", "export", "--file", str(exported)])
    document = json.loads(exported.read_text())
    document["outputs"] = {"shape": {"sides": 4, "name": "square"}}
    exported.write_text(json.dumps(document))
    main(["stack", "import", "--file", str(exported)])  # a history entry, and outputs
    capsys.readouterr()

    main([*command, "--json"])
    out = capsys.readouterr().out
    value = json.loads(out)
    assert value not in ({}, []), out  # something to indent
    assert out == json.dumps(value, indent=2, ensure_ascii=False) + "\n", out


def test_a_report_keeps_its_text_as_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text as the events write it, not escaped (`"café"`, not `"caf\\u00e9"`)."""
    main(["config", "set", "greeting", "café"])
    capsys.readouterr()
    main(["config", "--json"])
    assert '"value": "café"' in capsys.readouterr().out


def test_stack_ls_last_update_is_not_a_rename(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pulumi's LAST UPDATE is the last update: a stack only renamed has none ("n/a"),
    though `stack history` lists the rename."""
    main(["stack", "rename", "qa"])
    capsys.readouterr()
    main(["stack", "ls", "--json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["name"], row["lastUpdate"]) == ("qa", None)
    main(["stack", "ls"])
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ["qa*", "0", "n/a"]
    main(["stack", "history", "--json"])
    assert [entry["kind"] for entry in json.loads(capsys.readouterr().out)] == ["stack rename"]


def test_stack_ls_speaks_pulumis_keys(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script written against `pulumi stack ls --json` reads the same keys here."""
    main(["stack", "tag", "set", "owner", "team-a"])
    capsys.readouterr()
    main(["stack", "ls", "--json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert row == {
        "name": "dev",
        "current": True,
        "lastUpdate": None,
        "updateInProgress": False,
        "resourceCount": 0,
        "tags": {"owner": "team-a"},
    }
