"""`stack export --version N`: the state as history entry N's operation left it, as Pulumi
users recover from a bad state edit (`pulumi stack history`, `stack export --version`,
`stack import`). Without a cluster: the states are made with `stack import` and edits."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest
from test_cli_export_secrets import PASSWORD, TOKEN, _document

from stackwright.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(list(args))
    return capsys.readouterr().out


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main(list(args))
    err = capsys.readouterr().err
    assert caught.value.code == 2 and err.count("\n") == 1, err
    return err.removeprefix("error: ").strip()


def test_an_earlier_version_is_exported_and_imported_back(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_document()))
    run(capsys, "stack", "import", "--file", str(plain))  # version 1: db, with its secrets
    first = run(capsys, "stack", "export")
    db_urn = "urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::db"
    run(capsys, "state", "delete", "--yes", db_urn)  # version 2: the bad edit
    assert json.loads(run(capsys, "stack", "export"))["resources"] == []

    history = json.loads(run(capsys, "stack", "history", "--json"))
    assert [(e["id"], e["kind"], e["exportable"]) for e in history] == [
        (2, "state delete", True),
        (1, "stack import", True),
    ]
    assert run(capsys, "stack", "export", "--version", "1") == first
    saved = tmp_path / "v1.json"
    run(capsys, "stack", "export", "--version", "1", "--file", str(saved))
    run(capsys, "stack", "import", "--file", str(saved))
    assert run(capsys, "stack", "export") == first  # restored, secrets as they were sealed
    assert json.loads(run(capsys, "stack", "export", "--version", "3")) == json.loads(first)
    # The plain values only where asked for, as the current export's.
    shown = json.loads(run(capsys, "stack", "export", "--version", "1", "--show-secrets"))
    assert shown == _document()

    # The saved bytes hold the sealed secrets, never the plain ones.
    with sqlite3.connect(home / "state.db") as db:
        blobs = [zlib.decompress(d) for (d,) in db.execute("SELECT data FROM snapshots") if d]
    assert len(blobs) == 3
    for blob in blobs:
        assert PASSWORD.encode() not in blob and TOKEN.encode() not in blob
    assert any(b'"@secret"' in blob for blob in blobs)


def test_an_unknown_version_is_one_line_naming_those_there_are(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refused(capsys, "stack", "export", "--version", "1") == (
        "stack dev has no version 1: no operation has run on it yet"
    )
    run(capsys, "destroy", "--yes")
    run(capsys, "destroy", "--yes")
    assert refused(capsys, "stack", "export", "--version", "5") == (
        "stack dev has no version 5: its versions are 1-2 (`stackwright stack history` lists them)"
    )


def test_history_says_which_versions_have_no_saved_state(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(3):
        run(capsys, "destroy", "--yes")
    lines = run(capsys, "stack", "history").splitlines()
    assert [line[:5] for line in lines] == ["#3   ", "#2   ", "#1   "]  # no note: all saved
    # Entries an older Stackwright recorded (before schema version 2) have none.
    with sqlite3.connect(tmp_path / "home" / "state.db") as db:
        db.execute("DELETE FROM snapshots WHERE history_id < 3")
    *entries, note = run(capsys, "stack", "history").splitlines()
    assert len(entries) == 3
    assert note == "(no saved state for versions 1-2: `stack export --version` cannot print them)"
    assert [e["exportable"] for e in json.loads(run(capsys, "stack", "history", "--json"))] == [
        True,
        False,
        False,
    ]
    assert refused(capsys, "stack", "export", "--version", "2") == (
        "version 2 of stack dev has no saved state (its operation is still running, or was "
        "recorded before Stackwright saved each version's state); versions that can be "
        "exported: 3"
    )


def test_stack_rm_removes_the_saved_states(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "destroy", "--yes")
    run(capsys, "stack", "rm", "--yes", "dev")
    with sqlite3.connect(tmp_path / "home" / "state.db") as db:
        assert db.execute("SELECT count(*) FROM snapshots").fetchone() == (0,)
