"""`stack export --show-secrets` writes a stack's secrets decrypted, as Pulumi's does, and
`stack import` of such a document encrypts them under the stack's key before anything is
stored; the plain values are written nowhere else (state, stack files, output, errors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackwright.cli.main import main
from stackwright.model import ResourceState, make_urn

CM = "kubernetes:core/v1:ConfigMap"
PASSWORD = "hunter2-S3cr3t-pw"
TOKEN = "tok-9f8e7d6c5b4a"


def _document() -> dict[str, Any]:
    """A stack holding a secret in a resource and a secret output, both in plain text."""
    secret = {"@plaintext": PASSWORD}
    resource = ResourceState(
        urn=make_urn("dev", "shop", CM, "db"),
        type=CM,
        id="default/db",
        inputs={"data": {"pw": secret, "user": "app"}},
        outputs={"data": {"pw": secret, "user": "app"}},
        secret_paths=("data.pw",),
    )
    return {
        "version": 2,
        "project": "shop",
        "stack": "dev",
        "resources": [resource.to_dict()],
        "outputs": {"token": {"@plaintext": TOKEN}, "region": "eu"},
        "pending": [],
    }


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(list(args))
    captured = capsys.readouterr()
    assert PASSWORD not in captured.err + captured.out or "--show-secrets" in args
    return captured.out


def _nowhere(folder: Path, *skip: Path) -> None:
    """Neither plain value in any file below `folder` (the state store, stack files, keys)."""
    for path in folder.rglob("*"):
        if path.is_file() and path not in skip:
            data = path.read_bytes()
            assert PASSWORD.encode() not in data and TOKEN.encode() not in data, path


def test_export_show_secrets_and_import_of_plain_secrets(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_document()))
    assert _run(capsys, "stack", "import", "--file", str(plain)) == (
        f"Imported the state of stack dev from {plain}.\n"
    )
    _nowhere(tmp_path, plain)

    # Encrypted, as stored: both secrets sealed where they were.
    sealed = json.loads(_run(capsys, "stack", "export"))
    assert PASSWORD not in json.dumps(sealed) and TOKEN not in json.dumps(sealed)
    assert set(sealed["outputs"]["token"]) == {"@secret"}
    assert set(sealed["resources"][0]["inputs"]["data"]["pw"]) == {"@secret"}
    assert sealed["outputs"]["region"] == "eu"

    # --show-secrets: the document imported, decrypted again under the stack's key.
    shown = json.loads(_run(capsys, "stack", "export", "--show-secrets"))
    assert shown == _document()
    assert _run(capsys, "stack", "output", "token", "--show-secrets") == f"{TOKEN}\n"

    # The normal round trip is as it was: sealed in, sealed out, still readable.
    again = tmp_path / "sealed.json"
    again.write_text(json.dumps(sealed))
    _run(capsys, "stack", "import", "--file", str(again))
    assert json.loads(_run(capsys, "stack", "export"))["resources"] == sealed["resources"]
    assert json.loads(_run(capsys, "stack", "export", "--show-secrets")) == _document()
    _nowhere(tmp_path, plain)


def test_an_export_file_of_plain_secrets_is_readable_by_its_owner_only(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`stack export --show-secrets --file F` was written 0644 (by the umask): every user of
    the machine could read the stack's secrets, which the state store keeps 0600."""
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_document()))
    _run(capsys, "stack", "import", "--file", str(plain))
    shown, sealed = tmp_path / "shown.json", tmp_path / "sealed.json"
    shown.write_text("")
    shown.chmod(0o644)  # a file there before keeps no looser mode
    _run(capsys, "stack", "export", "--show-secrets", "--file", str(shown))
    _run(capsys, "stack", "export", "--file", str(sealed))
    assert PASSWORD in shown.read_text() and shown.stat().st_mode & 0o777 == 0o600
    assert PASSWORD not in sealed.read_text()


def test_an_import_of_plain_secrets_that_is_refused_shows_none_of_them(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _document()
    document["resources"][0]["dependencies"] = [PASSWORD]  # a plain copy, not at a secret
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    with pytest.raises(SystemExit) as caught:
        main(["stack", "import", "--file", str(bad)])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and err.count("\n") == 1, err
    assert PASSWORD not in err and "[secret]" in err, err
    _nowhere(tmp_path, bad)


def test_stack_output_shell_prints_assignments_a_shell_reads(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As Pulumi's `stack output --shell`: for `eval "$(stackwright stack output --shell)"`.
    document = _document()
    document["outputs"].update({"ports": [80, 443], "motd": "it's up", "not-a-name": "x"})
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(document))
    _run(capsys, "stack", "import", "--file", str(plain))
    main(["stack", "output", "--shell"])
    captured = capsys.readouterr()
    assert captured.out == (
        "motd='it'\"'\"'s up'\nports='[80, 443]'\nregion=eu\ntoken='[secret]'\n"
    )
    assert captured.err == "warning: output 'not-a-name' is no shell variable name: left out\n"
    assert _run(capsys, "stack", "output", "token", "--shell", "--show-secrets") == (
        f"token={TOKEN}\n"
    )
    with pytest.raises(SystemExit) as refused:
        main(["stack", "output", "--shell", "--json"])
    assert refused.value.code == 2
    assert "--shell and --json" in capsys.readouterr().err
