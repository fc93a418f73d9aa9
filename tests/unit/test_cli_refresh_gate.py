"""`refresh` records nothing after a preview that could not read every object: with
`--yes --expect-no-changes` (a CI drift gate) it went on to record the refresh when the
gate's preview had failed, since the gate looked at drift counts of successful previews
only. The workspace's refresh is replaced here (the CLI layer alone is under test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackwright.automation.stack import Workspace
from stackwright.cli.main import main
from stackwright.engine.events import Summary


@pytest.mark.parametrize("flags", [["--yes", "--expect-no-changes"], ["--preview-only"]])
def test_a_refresh_whose_preview_failed_records_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    calls: list[bool] = []

    def refresh(self: Workspace, listener: Any, *, preview: bool = False, **_: Any) -> Summary:
        calls.append(preview)
        return Summary("refresh", ok=not preview, counts={}, failures=["cm: could not read it"])

    monkeypatch.setattr(Workspace, "refresh", refresh)
    with pytest.raises(SystemExit) as exited:
        main(["refresh", *flags])
    assert exited.value.code == 1
    assert calls == [True], "the refresh was recorded after its preview failed"
