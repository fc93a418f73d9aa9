"""`stack rm --preserve-config` keeps the stack file and its key, as Pulumi's: a committed
`Stackwright.<stack>.yaml` (an example's, a team's) is not deleted with the stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.cli.main import main
from stackwright.state import open_backend


def test_preserve_config_keeps_the_stack_file_and_its_secrets_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["config", "set", "replicas", "3"])
    main(["config", "set", "--secret", "password", "S3cr3t"])
    before = (project / "Stackwright.dev.yaml").read_text()
    capsys.readouterr()

    main(["stack", "rm", "--preserve-config", "--yes"])

    assert "Removed stack dev; Stackwright.dev.yaml is kept." in capsys.readouterr().out
    assert [row.name for row in open_backend().list_stacks("shop")] == []
    assert (project / "Stackwright.dev.yaml").read_text() == before
    main(["stack", "init", "dev"])  # made again: the same configuration, its secret readable
    main(["config", "get", "password"])
    assert capsys.readouterr().out.splitlines()[-1] == "S3cr3t"


def test_without_it_the_stack_file_goes(project: Path) -> None:
    main(["config", "set", "replicas", "3"])
    main(["stack", "rm", "dev", "--yes"])
    assert not (project / "Stackwright.dev.yaml").exists()


def test_the_stack_is_named_by_stack_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["stack", "init", "qa"])  # selected: only --stack names dev
    main(["stack", "rm", "--stack", "dev", "--yes"])
    assert [row.name for row in open_backend().list_stacks("shop")] == ["qa"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["stack", "rm", "qa", "--stack", "dev", "--yes"])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "error: stack rm qa --stack dev: --stack names another stack than qa; name the stack once\n"
    )
