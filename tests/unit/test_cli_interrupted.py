"""Project commands that stop half-way (killed, or a file operation that fails) and are run again."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.automation.workspace import StackConfig
from stackwright.cli.main import main
from stackwright.state import open_backend


def test_a_stack_rename_stopped_after_the_state_is_finished_by_running_it_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`stack rename` renames the state, then the stack file: stopped between the two, the
    state knows only the new name and the file has the old one. Running the same command
    again must finish the move, not refuse with "no stack dev" and leave `prod` without its
    configuration (its kubeconfig, its secrets' key)."""
    main(["config", "set", "replicas", "3"])

    def stop(self: StackConfig, stack: str) -> None:
        raise KeyboardInterrupt  # the process stopped here

    with monkeypatch.context() as patched:
        patched.setattr(StackConfig, "move_to", stop)
        with pytest.raises(SystemExit):
            main(["stack", "rename", "dev", "prod"])
    assert [s.name for s in open_backend().list_stacks("shop")] == ["prod"]
    assert (project / "Stackwright.dev.yaml").exists()
    capsys.readouterr()

    main(["stack", "rename", "dev", "prod"])

    assert "Renamed stack dev to prod" in capsys.readouterr().out
    assert not (project / "Stackwright.dev.yaml").exists()
    main(["config", "get", "replicas", "--stack", "prod"])
    assert capsys.readouterr().out.strip() == "3"
