"""`stack rename` takes Pulumi's one-argument form, `stack rename NEW`, for the selected stack
(or `--stack OLD`), as well as `stack rename OLD NEW`."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.cli.main import main
from stackwright.state import open_backend


def stacks() -> list[str]:
    return sorted(row.name for row in open_backend().list_stacks("shop"))


def test_one_name_renames_the_selected_stack_as_pulumi_does(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["config", "set", "replicas", "3"])

    main(["stack", "rename", "prod"])

    assert "Renamed stack dev to prod." in capsys.readouterr().out
    assert stacks() == ["prod"] and not (project / "Stackwright.dev.yaml").exists()
    main(["config", "get", "replicas"])  # still selected, under its new name
    assert capsys.readouterr().out.strip() == "3"


def test_one_name_with_stack_renames_that_stack(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["stack", "init", "qa"])  # selected now; `dev` is renamed by name

    main(["stack", "rename", "staging", "--stack", "dev"])

    assert "Renamed stack dev to staging." in capsys.readouterr().out
    assert stacks() == ["qa", "staging"]


@pytest.mark.parametrize(
    "args",
    [
        ["stack", "rename", "dev", "prod", "--stack", "dev"],
        ["-s", "dev", "stack", "rename", "dev", "prod"],
    ],
    ids=["option", "global"],
)
def test_a_stack_named_by_stack_too_is_renamed_as_stack_rm_removes_it(
    args: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--stack dev` (or `stackwright -s dev`) naming the stack the argument names is accepted,
    as `stack rm dev --stack dev` is; it was refused as a second stack."""
    main(args)
    assert "Renamed stack dev to prod." in capsys.readouterr().out
    assert stacks() == ["prod"]


@pytest.mark.parametrize("command", [["rename", "dev", "prod"], ["rm", "dev"]])
def test_a_stack_option_naming_another_stack_is_refused_by_rename_and_rm_alike(
    command: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["stack", "init", "qa"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["stack", *command, "--stack", "qa", *(["--yes"] if "rm" in command else [])])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"error: stack {' '.join(command)} --stack qa: --stack names another stack than dev; "
        "name the stack once\n"
    )
    assert stacks() == ["dev", "qa"]


def test_more_names_than_one_stack_and_its_new_name_are_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["stack", "rename", "dev", "prod", "qa"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and err.count("\n") == 1, err
    assert "`stackwright stack rename OLD NEW`, or `stackwright stack rename NEW`" in err
    assert stacks() == ["dev"]


@pytest.mark.parametrize("args", [["dev"], ["dev", "dev"]], ids=["selected", "named"])
def test_a_rename_to_the_stacks_own_name_is_refused_as_such(
    args: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said its own stack file was in the way: "Stackwright.dev.yaml exists; move it away".
    main(["config", "set", "replicas", "3"])  # writes the stack file
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["stack", "rename", *args])
    assert caught.value.code == 2
    assert capsys.readouterr().err == "error: stack dev is named dev already: nothing to rename\n"
    assert stacks() == ["dev"] and (project / "Stackwright.dev.yaml").exists()
