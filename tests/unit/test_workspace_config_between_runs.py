"""A script that changes a stack's configuration between two operations of one
`Workspace` (as Pulumi's Automation API scripts do: `set_config`, then `up`) runs its
program with the new values, not the ones the workspace first read."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.automation import Workspace
from stackwright.automation.secrets import PASSPHRASE_ENV
from stackwright.automation.workspace import Project, StackConfig
from stackwright.errors import UsageError
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


def test_a_change_made_elsewhere_while_a_workspace_is_open_is_kept_and_read(
    tmp_path: Path,
) -> None:
    """The CLI's `config set` (another StackConfig of the same file) while a script holds a
    Workspace: the script's next change kept it (the file was written back from the copy
    read at open, and the CLI's key was lost), and its next run did not see it."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    with Workspace(Project.load(tmp_path), "dev", store) as ws:
        ws.config.adopt_provider(f"file:{tmp_path / 'key'}")
        ws.config.set("token", "first-token", secret=True)

        cli = StackConfig(Project.load(tmp_path), "dev")  # as `stackwright config set` opens it
        cli.set("replicas", 5)
        cli.set("token", "cli-token", secret=True)
        assert ws.run_program().config["shop:replicas"] == 5

        ws.config.set("tier", "web")
        again = StackConfig(Project.load(tmp_path), "dev")
        assert again.get("replicas") == 5 and again.get("tier") == "web"
        assert again.get("token") == "cli-token"


def test_an_environment_mapped_elsewhere_while_a_workspace_is_open_is_checked(
    tmp_path: Path,
) -> None:
    """`config set --path 'stackwright:environments["prod"]' production` in the CLI while a
    script holds a Workspace: its next operation on that context is refused (the mapping
    was read from the copy read at open, without it, and the check let the stack in)."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    with Workspace(Project.load(tmp_path), "dev", store) as ws:
        ws.config.set("tier", "web")
        ws.check_context("prod")  # no mapping yet

        cli = StackConfig(Project.load(tmp_path), "dev")  # as `stackwright config set` opens it
        cli.set('stackwright:environments["prod"]', "production", path=True)
        with pytest.raises(UsageError, match="'prod' belongs to environment production"):
            ws.check_context("prod")


def test_a_secrets_provider_changed_elsewhere_is_the_one_used_next(tmp_path: Path) -> None:
    """`stack change-secrets-provider` in the CLI rewraps the data key under another key
    file; a workspace opened before unwraps it again with the new provider."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    project = Project.load(tmp_path)
    mine = StackConfig(project, "dev")
    mine.adopt_provider(f"file:{tmp_path / 'old-key'}")
    mine.set("token", "t1", secret=True)

    cli = StackConfig(project, "dev")
    cli.change_secrets_provider(f"file:{tmp_path / 'new-key'}")
    (tmp_path / "old-key").unlink()  # only the new provider can unwrap it now

    mine.set("other", "t2", secret=True)
    assert StackConfig(project, "dev").get("other") == "t2"
    assert mine.get("token") == "t1"


def test_operations_need_no_listener(tmp_path: Path) -> None:
    # As Pulumi's `stack.up()` / `preview()` take `on_output` only if given: a script that
    # wants only the summary got a TypeError.
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("import stackwright as sw\nsw.export('tier', 'web')\n")
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    with Workspace(Project.load(tmp_path), "dev", store) as ws:
        assert ws.preview().ok
        assert ws.up().outputs == {"tier": "web"}
        assert ws.refresh().ok
        assert ws.destroy().ok


def test_a_reference_to_a_stack_that_is_not_there_names_those_that_are(tmp_path: Path) -> None:
    # After `stack rename dev prod`, a reference to "shop/dev" said only that there is no
    # dev: the names there tell what it became.
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    store = open_backend("file://" + str(tmp_path / "state.db"))
    for stack in ("prod", "app"):
        store.create_stack("shop", stack)
    with (
        Workspace(Project.load(tmp_path), "app", store) as ws,
        pytest.raises(UsageError) as refused,
    ):
        ws.read_stack("shop/dev")
    assert "has no stack dev of project shop (it has: app, prod); name one of those" in str(
        refused.value
    )


def test_a_refused_together_forgets_the_data_key_it_made(tmp_path: Path) -> None:
    """`together()` (`config set-all`) whose first secret made the stack's data key, and a
    later key was refused: the file keeps no key, and neither may this object, or its next
    secret is sealed under a key the file never holds (unreadable for good)."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    environ = {PASSPHRASE_ENV: "correct horse"}
    mine = StackConfig(Project.load(tmp_path), "dev", environ)
    with pytest.raises(UsageError, match="kubernetes:clustr"), mine.together():
        mine.set("token", "t1", secret=True)
        mine.set("kubernetes:clustr", "x")
    assert not (tmp_path / "Stackwright.dev.yaml").exists()

    mine.set("token", "t2", secret=True)
    assert StackConfig(Project.load(tmp_path), "dev", environ).get("token") == "t2"


def test_together_keeps_none_of_its_changes_when_the_file_changed_meanwhile(
    tmp_path: Path,
) -> None:
    """The CLI's `config set` while a script's `together()` block runs: the block's changes
    made before it were dropped silently (its next change read the file again), the ones
    after saved. Now none is saved, and the other change is kept."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    mine = StackConfig(Project.load(tmp_path), "dev")
    mine.set("tier", "web")
    with pytest.raises(UsageError, match="changed while"), mine.together():
        mine.set("replicas", 3)
        StackConfig(Project.load(tmp_path), "dev").set("region", "eu")  # the CLI meanwhile
        mine.set("zone", "a")
    again = StackConfig(Project.load(tmp_path), "dev")
    assert again.values == {"shop:tier": "web", "shop:region": "eu"}
    assert mine.values == again.values
