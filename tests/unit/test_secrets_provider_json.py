"""`stack change-secrets-provider passphrase --json` in a terminal: stdout is for the one
event line, so the new passphrase is not asked for there; it comes from
STACKWRIGHT_NEW_CONFIG_PASSPHRASE, and the line never holds it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stackwright.cli.main import main

NEW = "n3w-passphrase-never-shown"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_takes_the_new_passphrase_from_the_environment_only(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal(f"{NEW}\n{NEW}\n"))
    command = ["stack", "change-secrets-provider", "passphrase", "--json"]
    with pytest.raises(SystemExit) as caught:
        main(command)
    assert caught.value.code == 2
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "event": "error",
        "message": "set STACKWRIGHT_NEW_CONFIG_PASSPHRASE to the new passphrase (it cannot be "
        "asked for without a terminal)",
        "exitCode": 2,
    }
    assert not (project / "Stackwright.dev.yaml").exists()

    monkeypatch.setenv("STACKWRIGHT_NEW_CONFIG_PASSPHRASE", NEW)
    main(command)
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "event": "secrets-provider",
        "action": "change",
        "project": "shop",
        "stack": "dev",
        "provider": "passphrase",
    }
    assert NEW not in out
