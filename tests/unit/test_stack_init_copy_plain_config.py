"""`stack init NEW --copy-config-from S` copies S's configuration when none of it is secret:
the new stack's file is written though the stack needs no data key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackwright.cli.main import main


def test_plain_configuration_is_copied_to_the_new_stack(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["config", "set", "replicas", "3", "--type", "int"])
    main(["config", "set", "kubernetes:cluster", "local"])
    main(["stack", "init", "prod", "--copy-config-from", "dev"])
    capsys.readouterr()
    main(["config", "ls", "--json"])  # prod, selected by `stack init`
    assert json.loads(capsys.readouterr().out) == {
        "kubernetes:cluster": {"value": "local", "secret": False},
        "shop:replicas": {"value": "3", "secret": False},
    }
    assert "secretsprovider" not in (project / "Stackwright.prod.yaml").read_text()
