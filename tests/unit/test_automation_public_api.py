"""The automation layer's public surface: what a script imports to drive a stack."""

from __future__ import annotations

import stackwright.automation as automation
from stackwright.automation.stack import Selection, Workspace


def test_the_public_names_are_sorted_and_are_the_workspace_and_its_selection() -> None:
    assert automation.__all__ == ["Selection", "Workspace", "event_json"]
    assert automation.__all__ == sorted(automation.__all__)
    assert automation.Workspace is Workspace and automation.Selection is Selection
    for name in (
        "create",
        "create_or_select",
        "preview",
        "up",
        "destroy",
        "refresh",
        "outputs",
        "history",
        "cancel",
    ):
        assert callable(getattr(Workspace, name)), name
