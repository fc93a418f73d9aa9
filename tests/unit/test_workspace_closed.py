"""A `Workspace` used after `close()` says so on one line, whatever the script calls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stackwright.automation import Workspace
from stackwright.automation.workspace import Project
from stackwright.errors import UsageError
from stackwright.state import open_backend

USES: dict[str, Callable[[Workspace], Any]] = {
    "outputs": lambda ws: ws.outputs(),
    "history": lambda ws: ws.history(),
    "cancel": lambda ws: ws.cancel(),
    "require_stack": lambda ws: ws.require_stack(),
    "state": lambda ws: ws.state(),
    "backend": lambda ws: ws.backend.has_stack("shop", "dev"),
}


@pytest.mark.parametrize("use", USES.values(), ids=USES.keys())
def test_a_closed_workspace_says_it_was_closed(
    tmp_path: Path, use: Callable[[Workspace], Any]
) -> None:
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    ws = Workspace(Project.load(tmp_path), "dev", store)
    assert ws.outputs() == {}, "usable while open"
    ws.close()
    ws.close()  # closing again does nothing
    with pytest.raises(UsageError) as raised:
        use(ws)
    message = str(raised.value)
    assert message == (
        "the workspace of stack dev (project shop) was closed: use it inside its `with` "
        "block, or open it again with `Workspace.open` or `Workspace.create_or_select`"
    )
    assert "\n" not in message and "closed database" not in message


def test_state_reads_the_workspace_s_own_store(tmp_path: Path) -> None:
    """Masked or not, `state()` reads the store the workspace was opened on, not the
    project's default one."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    with Workspace(Project.load(tmp_path), "dev", store) as ws:
        assert ws.state().resources == ws.state(show_secrets=True).resources == []
