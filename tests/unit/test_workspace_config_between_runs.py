"""A script that changes a stack's configuration between two operations of one
`Workspace` (as Pulumi's Automation API scripts do: `set_config`, then `up`) runs its
program with the new values, not the ones the workspace first read."""

from __future__ import annotations

from pathlib import Path

from stackwright.automation import Workspace
from stackwright.automation.workspace import Project
from stackwright.state import open_backend

PROGRAM = """
import stackwright as sw

cfg = sw.Config()
sw.export("replicas", cfg.get_int("replicas"))
sw.export("token", cfg.get_secret("token"))
"""


def test_the_program_reads_configuration_set_after_an_earlier_run(tmp_path: Path) -> None:
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    key = tmp_path / "key"
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    with Workspace(Project.load(tmp_path), "dev", store) as ws:
        ws.config.adopt_provider(f"file:{key}")
        ws.config.set("replicas", 3)
        ws.config.set("token", "first-token", secret=True)
        assert ws.run_program().config["shop:replicas"] == 3

        ws.config.set("replicas", 4)
        ws.config.set("token", "second-token", secret=True)
        program = ws.run_program()
        assert program.config["shop:replicas"] == 4
        assert program.config["shop:token"] == "second-token"

        ws.config.remove("replicas")
        assert "shop:replicas" not in ws.run_program().config
