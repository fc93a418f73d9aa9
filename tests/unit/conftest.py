"""Fixtures the unit tests of the command line share."""

from __future__ import annotations

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
