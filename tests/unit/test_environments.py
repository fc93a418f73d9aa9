"""`stackwright:environments` maps cluster contexts to environment names: a value that is
no name (a list, a mapping, a number a hand-edited stack file holds) is refused as such,
not compared as its text, which no stack's `env` tag equals: a context so mapped to
production was open to every stack."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from stackwright.automation.stack import Workspace
from stackwright.automation.workspace import Project
from stackwright.cli.main import main
from stackwright.errors import UsageError
from stackwright.state import open_backend


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("[production]", '["production"]'),
        ("{env: production}", '{"env": "production"}'),
        ("1", "1"),
        ("null", "null"),
    ],
)
def test_an_environment_that_is_no_name_is_refused(tmp_path: Path, value: str, shown: str) -> None:
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "Stackwright.dev.yaml").write_text(
        f"config:\n  stackwright:environments:\n    prod-ctx: {value}\n"
    )
    with open_backend("file://" + str(tmp_path / "state.db")) as store:
        ws = Workspace(Project.load(tmp_path), "dev", store)
        with pytest.raises(UsageError) as caught:
            ws.check_context("prod-ctx")
        assert str(caught.value) == (
            "Stackwright.dev.yaml: stackwright:environments maps context 'prod-ctx' to "
            f"{shown}, which is no environment name: give a name such as production, with "
            """`stackwright config set --path 'stackwright:environments["prod-ctx"]' production`"""
        )


def test_a_context_mapped_to_a_name_is_checked(tmp_path: Path) -> None:
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "Stackwright.dev.yaml").write_text(
        "config:\n  stackwright:environments:\n    prod-ctx: production\n    dev-ctx: dev\n"
    )
    with open_backend("file://" + str(tmp_path / "state.db")) as store:
        ws = Workspace(Project.load(tmp_path), "dev", store)
        ws.check_context("dev-ctx")
        ws.check_context("elsewhere")
        with pytest.raises(UsageError, match="has no env tag"):
            ws.check_context("prod-ctx")


def test_the_command_it_gives_maps_a_context_whose_name_has_dots(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fix a refusal names is the bracket form: a dotted path would split the context
    `prod.eu-west-1` into keys."""
    (project / "Stackwright.dev.yaml").write_text(
        "config:\n  stackwright:environments:\n    prod.eu-west-1: [production]\n"
    )
    with open_backend() as store:
        ws = Workspace(Project.load(project), "dev", store)
        with pytest.raises(UsageError) as caught:
            ws.check_context("prod.eu-west-1")
    command = str(caught.value).rpartition("with `")[2].rstrip("`")
    (project / "Stackwright.dev.yaml").write_text("config: {}\n")
    main(shlex.split(command)[1:])
    capsys.readouterr()
    main(["config", "get", "stackwright:environments", "--json"])
    assert json.loads(capsys.readouterr().out) == {"prod.eu-west-1": "production"}
