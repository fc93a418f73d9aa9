"""`stackwright config` as a Pulumi user drives it: values from stdin, nothing in plain text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from stackwright.cli.main import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with one stack, `dev`, selected; STACKWRIGHT_HOME in the test's folder."""
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    for name in ("STACKWRIGHT_BACKEND_URL", "STACKWRIGHT_STACK", "STACKWRIGHT_CONFIG_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (folder / "__main__.py").write_text("")
    monkeypatch.chdir(folder)
    main(["stack", "init", "dev"])
    return folder


def get(key: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    main(["config", "get", key])
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("piped", "kept"),
    [
        ("S3cr3t-from-stdin\n", "S3cr3t-from-stdin"),
        ("line one\nline two\n\n", "line one\nline two\n"),  # only one newline is dropped
        ("-----BEGIN KEY-----\r\nabc\r\n", "-----BEGIN KEY-----\r\nabc"),
    ],
)
def test_a_value_left_out_is_read_from_stdin(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    piped: str,
    kept: str,
) -> None:
    """`cat cert.pem | pulumi config set --secret cert`: the value is not in the shell's
    history nor in the process list; the one newline that ends the file is not part of it."""
    monkeypatch.setattr("sys.stdin", io.StringIO(piped))
    main(["config", "set", "--secret", "cert"])
    assert "S3cr3t" not in (project / "Stackwright.dev.yaml").read_text()
    assert get("cert", capsys) == kept + "\n"
