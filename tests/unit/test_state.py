"""The state store's contract: stacks, locks, the journal, history, export/import and edits.

Each test reads as a rule of the store. Clocks are faked where a lease must
lapse; real processes racing and crashing are in test_state_crash.py, damaged
databases in test_state_integrity.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import getpass
import os
import socket
import sqlite3
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stackwright.state as state_pkg
from stackwright.errors import StackLocked, StackwrightError, UsageError
from stackwright.model import ClusterIdentity, Op, PendingOperation, ResourceState, make_urn
from stackwright.state import (
    LockLost,
    Snapshot,
    SQLiteBackend,
    backend_url,
    open_backend,
)
from stackwright.state._codec import decode_resource
from stackwright.state._journal import Demote, Put, Remove, Target, effects

PROJECT = "web"
CM = "kubernetes:core/v1:ConfigMap"


class Clock:
    """Wall-clock seconds the test moves by hand."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def urn(name: str, stack: str = "dev", type_: str = CM) -> str:
    return make_urn(stack, PROJECT, type_, name)


def res(name: str, *deps: str, stack: str = "dev", **fields: Any) -> ResourceState:
    return ResourceState(
        urn=urn(name, stack),
        type=CM,
        id=fields.pop("id", f"default/{name}"),
        inputs=fields.pop("inputs", {"data": {"key": name}}),
        dependencies=tuple(urn(d, stack) for d in deps),
        **fields,
    )


def live(state: ResourceState, **outputs: Any) -> ResourceState:
    """What the provider returns after applying `state`."""
    return replace(state, outputs={**state.inputs, "metadata": {"uid": "u-" + state.id}, **outputs})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def backend(tmp_path: Path, clock: Clock) -> SQLiteBackend:
    b = SQLiteBackend(tmp_path / "state.db", clock=clock)
    b.create_stack(PROJECT, "dev")
    return b


def up(backend: SQLiteBackend, *states: ResourceState) -> None:
    """An `up` that creates each state in order."""
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        for step, state in enumerate(states):
            op.begin(step, Op.CREATE, state)
            op.end(step, live(state))


def urns(snapshot: Snapshot) -> list[str]:
    return [
        s.urn.rsplit("::", 1)[1] + ("(old)" if s.delete_pending else "") for s in snapshot.resources
    ]


def holder_text(kind: str = "up", age: str = "0s") -> str:
    article = "an" if kind[0] in "aeiou" else "a"
    return (
        f"{article} `{kind}` started {age} ago by {getpass.getuser()} on host "
        f"{socket.gethostname()} (pid {os.getpid()})"
    )


def test_a_changed_state_is_the_one_dataclasses_replace_makes() -> None:
    state = ResourceState(
        urn=make_urn("dev", "shop", CM, "cfg"), type=CM, inputs={"a": 1}, secret_paths=("a",)
    )
    others: dict[str, Any] = {
        "urn": make_urn("dev", "shop", CM, "other"),
        "type": "kubernetes:core/v1:Secret",
        "id": "default/other",
        "inputs": {"b": 2},
        "outputs": {"c": 3},
        "parent": "urn:sw:dev::shop::acme:App::app",
        "dependencies": ("urn:sw:dev::shop::acme:App::app",),
        "provider": "urn:sw:dev::shop::pulumi:providers:kubernetes::k",
        "custom": False,
        "protect": True,
        "retain_on_delete": True,
        "deleted_with": "urn:sw:dev::shop::acme:App::app",
        "secret_paths": ("b",),
        "delete_pending": True,
        "init_errors": ("not ready",),
        "external": True,
        "ignore_changes": ("data",),
        "delete_timeout": 5.0,
        "deletion_propagation": "Foreground",
    }
    assert others.keys() == {f.name for f in fields(ResourceState)}
    for name, value in others.items():
        changed = state.changed(**{name: value})
        assert changed == replace(state, **{name: value})
        assert type(changed) is ResourceState
    assert state.changed(id="x", protect=True) == replace(state, id="x", protect=True)
    assert state.id == "" and not state.protect, "the original is left as it was"
    with pytest.raises(TypeError, match="no field 'outptus'"):
        state.changed(outptus={})
    # What `changed` relies on: a state's attributes are its fields, stored as given.
    assert not hasattr(ResourceState, "__post_init__")
    assert not any(isinstance(v, functools.cached_property) for v in vars(ResourceState).values())
    assert vars(state).keys() == others.keys()


# --- the public surface ------------------------------------------------------


def test_public_surface_is_small_and_sorted() -> None:
    # isort-style, as ruff keeps it: constants, then classes, then functions.
    assert state_pkg.__all__ == sorted(
        state_pkg.__all__, key=lambda name: (not name.isupper(), not name[0].isupper(), name)
    )
    assert set(state_pkg.__all__) == {
        "SCHEMES",
        "Backend",
        "DryRunJournal",
        "Encrypter",
        "HistoryEntry",
        "LockHolder",
        "LockLost",
        "Operation",
        "PlaintextEncrypter",
        "SQLiteBackend",
        "SQLiteOperation",
        "Snapshot",
        "StackSummary",
        "StateCorrupt",
        "backend_url",
        "open_backend",
        "require_stack",
        "stackwright_home",
        "version_spans",
    }


def test_state_errors_sit_in_the_one_exception_tree() -> None:
    assert issubclass(state_pkg.StateCorrupt, StackwrightError)
    assert state_pkg.StateCorrupt.exit_code == 1
    assert issubclass(LockLost, StackLocked)


# --- opening a backend -------------------------------------------------------


def test_default_backend_is_state_db_under_stackwright_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STACKWRIGHT_BACKEND_URL", raising=False)
    backend = open_backend()
    assert isinstance(backend, SQLiteBackend)
    assert backend.path == tmp_path / "home" / "state.db"
    assert (tmp_path / "home" / "state.db").exists()


def test_backend_url_env_overrides_the_project_and_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path))
    monkeypatch.delenv("STACKWRIGHT_BACKEND_URL", raising=False)
    assert backend_url() == f"file://{tmp_path / 'state.db'}"
    assert backend_url("file:///project/state") == "file:///project/state"
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", f"file://{tmp_path}/env.db")
    assert backend_url("file:///project/state") == f"file://{tmp_path}/env.db"
    backend = open_backend()
    assert isinstance(backend, SQLiteBackend)
    assert backend.path == tmp_path / "env.db"


def test_file_url_names_a_file_or_a_directory(tmp_path: Path) -> None:
    a = open_backend(f"file://{tmp_path}/a.db")
    assert isinstance(a, SQLiteBackend) and a.path == tmp_path / "a.db"
    d = open_backend(f"file://{tmp_path}")
    assert isinstance(d, SQLiteBackend) and d.path == tmp_path / "state.db"
    (tmp_path / "new" / "folder").mkdir(parents=True)
    nested = open_backend(f"file://{tmp_path}/new/folder/")
    assert isinstance(nested, SQLiteBackend) and nested.path == tmp_path / "new/folder/state.db"


@pytest.mark.parametrize("url", ["file://{tmp}/nonexistent/dir/state.db", "file://{tmp}/new/"])
def test_a_backend_folder_that_does_not_exist_is_refused_and_not_made(
    url: str, tmp_path: Path
) -> None:
    url = url.format(tmp=tmp_path)
    folder = tmp_path / ("new" if url.endswith("/") else "nonexistent/dir")
    with pytest.raises(UsageError) as caught:
        open_backend(url)
    assert str(caught.value) == (
        f"the folder {folder} of state backend {url!r} does not exist: create it (mkdir -p), "
        "or fix the URL"
    )
    assert list(tmp_path.iterdir()) == []


def test_synchronous_full_is_an_option_of_the_url(tmp_path: Path) -> None:
    backend = open_backend(f"file://{tmp_path}/s.db?synchronous=full")
    assert isinstance(backend, SQLiteBackend)
    assert backend.url == f"file://{tmp_path}/s.db?synchronous=full"
    assert backend._conn.db.execute("PRAGMA synchronous").fetchone() == (2,)
    normal = open_backend(f"file://{tmp_path}/n.db")
    assert isinstance(normal, SQLiteBackend)
    assert normal._conn.db.execute("PRAGMA synchronous").fetchone() == (1,)
    assert normal._conn.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "s3://bucket/state",
            "unsupported state backend URL 's3://bucket/state': supported schemes are file://",
        ),
        (
            "/tmp/state.db",
            "unsupported state backend URL '/tmp/state.db': supported schemes are file://; "
            "for a local file write file:///tmp/state.db",
        ),
        (
            "file:///tmp/x.db?sync=full",
            # The value of an option it does not know may be a password: not shown.
            "unknown option 'sync' in state backend URL 'file:///tmp/x.db?sync=[secret]': "
            "options are synchronous",
        ),
        (
            "file:///tmp/x.db?synchronous=off",
            "synchronous='off' is not a SQLite state store option: use normal or full",
        ),
    ],
)
def test_bad_backend_url_is_a_usage_error(url: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        open_backend(url)
    assert str(caught.value) == message


def test_a_foreign_sqlite_database_is_not_taken_over(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "other.db")
    db.execute("CREATE TABLE customers (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(UsageError) as caught:
        open_backend(f"file://{tmp_path}/other.db")
    assert str(caught.value) == (
        f"{tmp_path}/other.db is a SQLite database but not a Stackwright state store; "
        "point the backend URL at another file"
    )


# --- stacks ------------------------------------------------------------------


def test_stacks_are_created_listed_and_removed_per_project(backend: SQLiteBackend) -> None:
    backend.create_stack(PROJECT, "prod")
    backend.create_stack("other", "dev")
    assert backend.has_stack(PROJECT, "prod")
    assert not backend.has_stack(PROJECT, "staging")
    assert [s.name for s in backend.list_stacks(PROJECT)] == ["dev", "prod"]
    assert [s.name for s in backend.list_stacks("other")] == ["dev"]
    backend.remove_stack(PROJECT, "prod")
    assert [s.name for s in backend.list_stacks(PROJECT)] == ["dev"]
    assert backend.has_stack("other", "dev")


def test_creating_an_existing_stack_says_how_to_select_it(backend: SQLiteBackend) -> None:
    with pytest.raises(UsageError) as caught:
        backend.create_stack(PROJECT, "dev")
    assert str(caught.value) == (
        "stack dev already exists in project web; select it with `stackwright stack select dev`"
    )


def test_stack_names_are_checked(backend: SQLiteBackend) -> None:
    with pytest.raises(UsageError) as caught:
        backend.create_stack(PROJECT, "my stack")
    assert str(caught.value) == (
        "stack name 'my stack' is not valid: use letters, digits, '-', '_' and '.', "
        "starting with a letter or digit, at most 100 characters"
    )
    with pytest.raises(UsageError, match="project name 'a::b' is not valid"):
        backend.create_stack("a::b", "dev")


def test_stack_ls_last_update_is_the_last_operation_that_changed_resources(
    backend: SQLiteBackend, clock: Clock
) -> None:
    """As Pulumi's LAST UPDATE: an up, destroy, refresh or import (objects adopted), not an
    edit of the state (a rename, an unprotect), which `stack history` lists all the same."""
    up(backend, res("a"))
    updated = clock.now
    clock.advance(60)
    backend.rename_stack(PROJECT, "dev", "qa")
    clock.advance(60)
    backend.unprotect(PROJECT, "qa", [urn("a", "qa")])
    (summary,) = backend.list_stacks(PROJECT)
    assert summary.last_update is not None
    assert summary.last_update.timestamp() == pytest.approx(updated, abs=0.001)
    kinds = [entry.kind for entry in backend.history(PROJECT, "qa")]
    assert kinds == ["state unprotect", "stack rename", "up"]

    clock.advance(60)
    with backend.begin_operation(PROJECT, "qa", kind="refresh"):
        clock.advance(2)  # the operation's end is its time, as Pulumi shows it
    (summary,) = backend.list_stacks(PROJECT)
    assert summary.last_update is not None
    assert summary.last_update.timestamp() == pytest.approx(clock.now, abs=0.001)


def test_a_missing_stack_is_named_with_the_existing_ones(backend: SQLiteBackend) -> None:
    with pytest.raises(UsageError) as caught:
        backend.load(PROJECT, "prod")
    assert str(caught.value) == (
        "no stack prod in project web (its stacks: dev); create it with `stackwright stack init prod`"
    )


def test_stack_summary_counts_resources_and_shows_the_lock(
    backend: SQLiteBackend, clock: Clock
) -> None:
    up(backend, res("a"), res("b"))
    clock.advance(5)
    backend.create_stack(PROJECT, "fresh")
    summary, fresh = backend.list_stacks(PROJECT)
    assert summary.resource_count == 2
    assert summary.last_update is not None
    assert summary.last_update.timestamp() == pytest.approx(clock.now - 5)
    # No operation has run on it: not updated (it showed the time it was made).
    assert (fresh.name, fresh.last_update) == ("fresh", None)
    assert not summary.locked
    op = backend.begin_operation(PROJECT, "dev", kind="destroy")
    summary, _ = backend.list_stacks(PROJECT)
    assert summary.locked and summary.lock is not None
    assert summary.lock.kind == "destroy" and summary.lock.pid == os.getpid()
    op.finish()


def test_removing_a_stack_with_resources_needs_force(backend: SQLiteBackend) -> None:
    up(backend, res("a"))
    with pytest.raises(UsageError) as caught:
        backend.remove_stack(PROJECT, "dev")
    assert str(caught.value) == (
        "stack dev still records 1 resource; run `stackwright destroy` to delete them first, "
        "or `stackwright stack rm dev --force` to remove the stack anyway and leave its objects "
        "in the cluster"
    )
    backend.remove_stack(PROJECT, "dev", force=True)
    assert not backend.has_stack(PROJECT, "dev")


def test_removing_a_stack_counts_pending_steps_as_resources(backend: SQLiteBackend) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    op.begin(0, Op.CREATE, res("a"))
    op.finish("failed")
    with pytest.raises(UsageError, match="still records 0 resources and 1 pending step;"):
        backend.remove_stack(PROJECT, "dev")


def test_a_locked_stack_cannot_be_removed(backend: SQLiteBackend) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    with pytest.raises(StackLocked):
        backend.remove_stack(PROJECT, "dev", force=True)
    op.finish()
    backend.remove_stack(PROJECT, "dev")


# --- locking -----------------------------------------------------------------


def test_a_second_operation_is_refused_naming_the_holder(
    backend: SQLiteBackend, clock: Clock
) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    clock.advance(12)
    with pytest.raises(StackLocked) as caught:
        backend.begin_operation(PROJECT, "dev", kind="destroy")
    assert str(caught.value) == (
        f"stack dev is locked by {holder_text('up', '12s')}; wait for it to finish, "
        "or run `stackwright cancel` if it is no longer running"
    )
    assert caught.value.exit_code == 4
    op.finish()
    backend.begin_operation(PROJECT, "dev", kind="destroy").finish()


@pytest.mark.parametrize(
    ("env", "job"),
    [
        (
            {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/infra",
             "GITHUB_RUN_ID": "812"},
            "https://github.com/acme/infra/actions/runs/812",
        ),
        ({"CI_JOB_URL": "https://gitlab.example/acme/infra/-/jobs/9"},
         "https://gitlab.example/acme/infra/-/jobs/9"),
        (
            {"SYSTEM_COLLECTIONURI": "https://dev.azure.com/acme/", "SYSTEM_TEAMPROJECT": "infra",
             "BUILD_BUILDID": "77"},
            "https://dev.azure.com/acme/infra/_build/results?buildId=77",
        ),
        ({"BUILD_URL": "https://jenkins.example/job/infra/5/"},
         "https://jenkins.example/job/infra/5/"),
    ],
)  # fmt: skip
def test_a_ci_job_holding_the_lock_is_named_by_its_address(
    env: dict[str, str], job: str, backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every runner is `runner` on a host gone by the time someone reads "locked by": the
    # job's address says which job to look at (or cancel).
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    op = backend.begin_operation(PROJECT, "dev", kind="up", message="deploy")
    with pytest.raises(StackLocked) as caught:
        backend.begin_operation(PROJECT, "dev", kind="destroy")
    assert f"by {getpass.getuser()} (CI job {job}) on host" in str(caught.value)
    op.finish()
    assert backend.history(PROJECT, "dev")[0].owner == f"{getpass.getuser()} (CI job {job})"


def test_locks_are_per_stack(backend: SQLiteBackend) -> None:
    backend.create_stack(PROJECT, "prod")
    dev = backend.begin_operation(PROJECT, "dev", kind="up")
    prod = backend.begin_operation(PROJECT, "prod", kind="up")
    dev.finish()
    prod.finish()


def test_a_lapsed_lease_is_taken_over_and_the_old_operation_fenced_out(
    backend: SQLiteBackend, clock: Clock
) -> None:
    stale = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=30)
    stale.begin(0, Op.CREATE, res("a"))
    clock.advance(29)
    with pytest.raises(StackLocked):
        backend.begin_operation(PROJECT, "dev", kind="up")
    clock.advance(2)  # the holder's lease lapsed: as if its process died
    fresh = backend.begin_operation(PROJECT, "dev", kind="refresh")
    assert fresh.took_over is not None
    assert fresh.took_over.operation_id == stale.id
    assert fresh.took_over.kind == "up"
    with pytest.raises(LockLost) as caught:
        stale.end(0, live(res("a")))
    assert str(caught.value) == (
        f"this `up` on stack dev lost its lock to {holder_text('refresh')}, which took it over "
        "after this operation's lease lapsed; nothing more was recorded, and the next operation "
        "settles its pending steps"
    )
    assert caught.value.exit_code == 4  # another operation holds the stack now
    # The write that raised did not happen: the step is still pending for the new holder.
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.resources == []
    assert snapshot.pending == [PendingOperation(Op.CREATE, res("a"))]
    stale.finish("failed")  # does not release a lock it no longer holds
    with pytest.raises(StackLocked):
        backend.begin_operation(PROJECT, "dev", kind="up")
    fresh.finish()
    assert [(h.kind, h.result) for h in backend.history(PROJECT, "dev")] == [
        ("refresh", "succeeded"),
        ("up", "interrupted"),
    ]


def test_the_lease_is_renewed_while_the_operation_runs(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "state.db")
    backend.create_stack(PROJECT, "dev")
    op = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=0.3)
    first = backend.list_stacks(PROJECT)[0].lock
    assert first is not None
    import time

    time.sleep(0.5)  # longer than the lease: only renewals keep it
    later = backend.list_stacks(PROJECT)[0].lock
    assert later is not None and later.expires > first.expires
    with pytest.raises(StackLocked):
        backend.begin_operation(PROJECT, "dev", kind="up")
    op.finish()
    assert backend.list_stacks(PROJECT)[0].lock is None


def test_an_operation_dropped_without_finish_stops_renewing(tmp_path: Path) -> None:
    import gc
    import time

    backend = SQLiteBackend(tmp_path / "state.db")
    backend.create_stack(PROJECT, "dev")
    op = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=0.3)
    keeper = op._keeper
    del op
    gc.collect()
    time.sleep(0.5)
    assert keeper.lost.is_set()
    backend.begin_operation(PROJECT, "dev", kind="up").finish()  # the lease lapsed


def test_cancel_clears_the_lock_at_once(backend: SQLiteBackend) -> None:
    assert backend.cancel(PROJECT, "dev") is False
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    assert backend.cancel(PROJECT, "dev") is True
    with pytest.raises(LockLost) as caught:
        op.begin(0, Op.CREATE, res("a"))
    assert str(caught.value) == (
        "this `up` on stack dev was cancelled (`stackwright cancel` cleared its lock); nothing "
        "more was recorded, and the next operation settles its pending steps"
    )
    assert caught.value.exit_code == 1  # the operation failed; nothing holds the stack
    other = backend.begin_operation(PROJECT, "dev", kind="up")
    op.finish("failed")
    other.finish()
    assert [(h.kind, h.result) for h in backend.history(PROJECT, "dev")] == [
        ("up", "succeeded"),
        ("up", "cancelled"),
    ]
    assert backend.load(PROJECT, "dev").pending == []


def test_a_cancelled_operation_says_so_even_once_another_took_the_lock(
    backend: SQLiteBackend,
) -> None:
    # Not "lost its lock ... after this operation's lease lapsed": the lease never lapsed.
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    backend.cancel(PROJECT, "dev")
    other = backend.begin_operation(PROJECT, "dev", kind="destroy")
    with pytest.raises(LockLost) as caught:
        op.begin(0, Op.CREATE, res("a"))
    assert str(caught.value) == (
        "this `up` on stack dev was cancelled (`stackwright cancel` cleared its lock), and "
        f"{holder_text('destroy')} has taken the lock since; nothing more was recorded, and the "
        "next operation settles its pending steps"
    )
    assert caught.value.exit_code == 1  # cancelled, not fenced out by a takeover
    op.finish("failed")
    other.finish()


def test_an_operation_is_a_context_manager(backend: SQLiteBackend) -> None:
    with pytest.raises(RuntimeError), backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.CREATE, res("a"))
        op.end(0, live(res("a")))
        raise RuntimeError("the provider broke")
    with pytest.raises(KeyboardInterrupt), backend.begin_operation(PROJECT, "dev", kind="up"):
        raise KeyboardInterrupt
    # asyncio's cancellation too (the store imports asyncio only to tell it)
    with pytest.raises(asyncio.CancelledError), backend.begin_operation(PROJECT, "dev", kind="up"):
        raise asyncio.CancelledError
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.finish("failed", {"create": 0})
    with backend.begin_operation(PROJECT, "dev", kind="preview"):
        pass
    assert [(h.kind, h.result, h.counts) for h in backend.history(PROJECT, "dev")] == [
        ("preview", "succeeded", {}),
        ("up", "failed", {"create": 0}),
        ("up", "cancelled", {}),
        ("up", "cancelled", {}),
        ("up", "failed", {"create": 1}),
    ]
    assert not backend.list_stacks(PROJECT)[0].locked


def test_misusing_an_operation_is_a_value_error(backend: SQLiteBackend) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    with pytest.raises(ValueError, match="step 3 was never begun"):
        op.end(3, None)
    op.begin(1, Op.CREATE, res("a"))
    with pytest.raises(ValueError, match="step 1 was already begun"):
        op.begin(1, Op.CREATE, res("b"))
    with pytest.raises(ValueError, match="rename resources with rename_resource"):
        op.end(1, live(res("b")))
    with pytest.raises(ValueError, match="not 'ok'"):
        op.finish("ok")
    op.finish()
    with pytest.raises(ValueError, match="already finished"):
        op.begin(2, Op.CREATE, res("b"))
    with pytest.raises(ValueError, match="lease_seconds must be positive"):
        backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=0)


# --- the journal -------------------------------------------------------------


def test_the_journal_rules_as_a_table() -> None:
    old, new = res("a"), live(res("a"))
    replaced = replace(old, delete_pending=True)
    live_row, old_row = Target(old.urn, False), Target(old.urn, True, old.id)
    assert effects(Op.CREATE, old, new) == (Put(live_row, new),)
    assert effects(Op.CREATE, old, None) == ()
    assert effects(Op.IMPORT, old, None) == ()
    assert effects(Op.UPDATE, old, new) == (Put(live_row, new),)
    assert effects(Op.UPDATE, old, None) == (Remove(live_row),)
    assert effects(Op.DELETE, old, None) == (Remove(live_row),)
    assert effects(Op.DELETE, old, new) == (Put(live_row, new),)  # it is still there
    assert effects(Op.CREATE_REPLACEMENT, old, new) == (Demote(old.urn), Put(live_row, new))
    assert effects(Op.CREATE_REPLACEMENT, old, None) == ()
    assert effects(Op.DELETE_REPLACED, replaced, None) == (Remove(old_row),)
    assert effects(Op.DELETE_REPLACED, old, None) == (Remove(live_row),)  # delete-before-replace
    assert effects(Op.REFRESH, old, new) == (Put(live_row, new),)


def test_begin_records_a_pending_step_and_end_applies_it(backend: SQLiteBackend) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    op.begin(0, Op.CREATE, res("a"))
    during = backend.load(PROJECT, "dev")
    assert during.resources == []
    assert during.pending == [PendingOperation(Op.CREATE, res("a"))]
    op.end(0, live(res("a")))
    after = backend.load(PROJECT, "dev")
    assert after.resources == [live(res("a"))]
    assert after.pending == []
    assert after.version > during.version
    op.finish()


def test_create_update_delete(backend: SQLiteBackend) -> None:
    up(backend, res("a"), res("b", "a"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        changed = res("a", inputs={"data": {"key": "v2"}})
        op.begin(0, Op.UPDATE, changed)
        op.end(0, live(changed))
        op.begin(1, Op.DELETE, live(res("b", "a")))
        op.end(1, None)
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.resources == [live(changed)]
    assert backend.history(PROJECT, "dev")[0].counts == {"update": 1, "delete": 1}


def test_create_before_delete_replacement_keeps_the_old_object_until_it_is_deleted(
    backend: SQLiteBackend,
) -> None:
    old = res("a", id="default/a-1111")
    up(backend, old, res("b", "a"))
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    new = res("a", id="default/a-2222")
    op.begin(0, Op.CREATE_REPLACEMENT, new)
    op.end(0, live(new))
    middle = backend.load(PROJECT, "dev")
    assert urns(middle) == ["a(old)", "b", "a"]
    assert middle.resource(new.urn) == live(new)
    op.begin(1, Op.UPDATE, res("b", "a"))
    op.end(1, live(res("b", "a")))
    op.begin(2, Op.DELETE_REPLACED, replace(live(old), delete_pending=True))
    op.end(2, None)
    op.finish()
    assert backend.load(PROJECT, "dev").resources == [live(new), live(res("b", "a"))]


def test_delete_before_replace(backend: SQLiteBackend) -> None:
    up(backend, res("a"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.DELETE_REPLACED, live(res("a")))
        op.end(0, None)
        assert backend.load(PROJECT, "dev").resources == []
        new = res("a", inputs={"data": {"key": "new"}})
        op.begin(1, Op.CREATE_REPLACEMENT, new)
        op.end(1, live(new))
    assert backend.load(PROJECT, "dev").resources == [live(new)]


def test_a_failed_replacement_delete_leaves_old_objects_told_apart_by_id(
    backend: SQLiteBackend,
) -> None:
    up(backend, res("a", id="default/a-1"))
    for generation in (2, 3):
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            new = res("a", id=f"default/a-{generation}")
            op.begin(0, Op.CREATE_REPLACEMENT, new)
            op.end(0, live(new))
            old = backend.load(PROJECT, "dev").resources[0]
            op.begin(1, Op.DELETE_REPLACED, old)
            op.fail_step(1)  # the delete failed; the old object stays, awaiting deletion
    snapshot = backend.load(PROJECT, "dev")
    assert [(s.id, s.delete_pending) for s in snapshot.resources] == [
        ("default/a-1", True),
        ("default/a-2", True),
        ("default/a-3", False),
    ]
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.DELETE_REPLACED, snapshot.resources[1])
        op.end(0, None)
    assert [s.id for s in backend.load(PROJECT, "dev").resources] == ["default/a-1", "default/a-3"]


def test_a_failed_create_leaves_nothing(backend: SQLiteBackend) -> None:
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.CREATE, res("a"))
        op.end(0, None)
        op.begin(1, Op.CREATE, res("b"))
        op.fail_step(1)
        op.finish("failed")
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.resources == [] and snapshot.pending == []
    assert backend.history(PROJECT, "dev")[0].counts == {}


def test_resources_load_in_dependency_order_even_when_a_dependency_ended_last(
    backend: SQLiteBackend,
) -> None:
    up(backend, res("c"), res("b", "c"), res("a", "b"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        # c is rewritten after the resources that depend on it (their steps were "same").
        op.begin(0, Op.UPDATE, res("c", inputs={"v": 2}))
        op.end(0, live(res("c", inputs={"v": 2})))
        op.begin(1, Op.CREATE, res("d"))
        op.end(1, live(res("d")))
    assert urns(backend.load(PROJECT, "dev")) == ["c", "b", "a", "d"]


def test_steps_left_pending_by_a_crash_are_resolved_by_the_next_operation(
    backend: SQLiteBackend, clock: Clock
) -> None:
    up(backend, res("gone"), res("kept"))
    crashed = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=10)
    crashed.begin(0, Op.CREATE, res("new"))
    crashed.begin(1, Op.DELETE, live(res("gone")))
    crashed.begin(2, Op.DELETE, live(res("kept")))
    crashed.begin(3, Op.CREATE, res("never"))
    crashed._keeper.stop(1)  # the process "dies": nobody renews its lease
    clock.advance(11)
    snapshot = backend.load(PROJECT, "dev")
    assert [(p.op, p.resource.urn) for p in snapshot.pending] == [
        (Op.CREATE, urn("new")),
        (Op.DELETE, urn("gone")),
        (Op.DELETE, urn("kept")),
        (Op.CREATE, urn("never")),
    ]
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        assert op.took_over is not None and op.took_over.operation_id == crashed.id
        new, gone, kept, never = snapshot.pending
        op.resolve_pending(new, live(res("new")))  # the create reached the cluster
        op.resolve_pending(gone, None)  # the delete did too
        op.resolve_pending(kept, live(res("kept")))  # this delete never went out
        op.resolve_pending(never, None)  # nor this create
        with pytest.raises(ValueError, match="was it resolved already"):
            op.resolve_pending(never, None)
    after = backend.load(PROJECT, "dev")
    assert urns(after) == ["new", "kept"]  # a rewritten row moves last
    assert after.pending == []


def test_a_crashed_replacement_is_resolved_like_its_end(backend: SQLiteBackend) -> None:
    up(backend, res("a", id="default/a-1"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.CREATE_REPLACEMENT, res("a", id="default/a-2"))
        op.finish("failed")  # ended without ending its step: it stays pending
    (pending,) = backend.load(PROJECT, "dev").pending
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.resolve_pending(pending, live(res("a", id="default/a-2")))
    assert [(s.id, s.delete_pending) for s in backend.load(PROJECT, "dev").resources] == [
        ("default/a-1", True),
        ("default/a-2", False),
    ]


def test_a_dry_run_journal_settles_as_an_operation_does_and_writes_nothing(
    backend: SQLiteBackend,
) -> None:
    """A preview settles pending steps into a `DryRunJournal`: its snapshot is the state
    the same calls leave through an operation, and the store is not touched."""
    up(backend, res("a", id="default/a-1"), res("gone"), res("kept"), res("user", "gone"))
    crashed = backend.begin_operation(PROJECT, "dev", kind="up")
    crashed.begin(0, Op.CREATE_REPLACEMENT, res("a", id="default/a-2"))
    crashed.begin(1, Op.CREATE, res("new"))
    crashed.begin(2, Op.DELETE, live(res("gone")))
    crashed.begin(3, Op.DELETE, live(res("kept")))
    crashed.begin(4, Op.CREATE, res("never"))
    crashed.finish("failed")  # its steps stay pending
    snapshot = backend.load(PROJECT, "dev")

    def settle(journal: Any) -> None:
        replacement, new, gone, kept, _never = snapshot.pending
        journal.resolve_pending(replacement, live(res("a", id="default/a-2")))
        journal.resolve_pending(new, live(res("new")))
        # What refers to a resource settled as gone stops naming it, as a step.
        journal.begin(10, Op.REFRESH, live(res("user", "gone")))
        journal.end(10, live(res("user")))
        journal.resolve_pending(gone, None)
        journal.resolve_pending(kept, live(res("kept")))
        with pytest.raises(ValueError, match="was it resolved already"):
            journal.resolve_pending(gone, None)

    dry = state_pkg.DryRunJournal(snapshot)
    settle(dry)
    assert backend.load(PROJECT, "dev") == snapshot
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        settle(op)
    after = backend.load(PROJECT, "dev")
    assert urns(after) == ["a(old)", "a", "new", "user", "kept"]
    assert [(p.op, p.resource.urn) for p in after.pending] == [(Op.CREATE, urn("never"))]
    assert (dry.snapshot().resources, dry.snapshot().pending) == (after.resources, after.pending)


def test_outputs_and_version(backend: SQLiteBackend) -> None:
    start = backend.load(PROJECT, "dev")
    assert start.outputs == {} and start.version == 0
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_outputs({"ip": "10.0.0.1", "ports": [80, 443]})
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.outputs == {"ip": "10.0.0.1", "ports": [80, 443]}
    assert snapshot.version > start.version
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        with pytest.raises(UsageError) as caught:
            op.set_outputs({"bad": object()})
        assert str(caught.value).startswith(
            "the outputs of stack dev cannot be recorded in the state: it is not JSON ("
        )


def test_an_operation_may_journal_from_several_threads(backend: SQLiteBackend) -> None:
    from concurrent.futures import ThreadPoolExecutor

    states = [res(f"r{i}") for i in range(64)]
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:

        def step(i: int) -> None:
            op.begin(i, Op.CREATE, states[i])
            op.end(i, live(states[i]))

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(step, range(64)))
    snapshot = backend.load(PROJECT, "dev")
    assert sorted(s.urn for s in snapshot.resources) == sorted(s.urn for s in states)
    assert backend.history(PROJECT, "dev")[0].counts == {"create": 64}


def test_rename_within_an_operation_rewrites_references(backend: SQLiteBackend) -> None:
    up(backend, res("old"), res("user", "old"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.rename(urn("old"), urn("new"))
    snapshot = backend.load(PROJECT, "dev")
    assert urns(snapshot) == ["new", "user"]
    assert snapshot.resources[1].dependencies == (urn("new"),)


# --- bytes written -----------------------------------------------------------


def realistic(i: int) -> ResourceState:
    """A ConfigMap of about the size the benchmark's objects have."""
    return res(
        f"cm-{i:04d}",
        inputs={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"cm-{i:04d}",
                "namespace": f"ns-{i % 10}",
                "labels": {"app.kubernetes.io/managed-by": "stackwright"},
                "annotations": {
                    "stackwright.io/stack": "dev",
                    "stackwright.io/urn": urn(f"cm-{i}"),
                },
            },
            "data": {"config.yaml": "x" * 200},
        },
    )


def applied(state: ResourceState) -> ResourceState:
    meta = state.inputs["metadata"]
    return replace(
        state,
        outputs={
            **state.inputs,
            "metadata": {
                **meta,
                "uid": f"5f0c{hash(state.urn) & 0xFFFFFFFF:08x}-aaaa-bbbb-cccc-0123456789ab",
                "resourceVersion": "12345",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "managedFields": [
                    {"manager": "stackwright", "operation": "Apply", "fieldsType": "FieldsV1"}
                ],
            },
        },
    )


def up_bytes(tmp_path: Path, n: int) -> tuple[int, int]:
    backend = SQLiteBackend(tmp_path / f"bytes-{n}.db")
    backend.create_stack(PROJECT, "dev")
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        for i in range(n):
            op.begin(i, Op.CREATE, realistic(i))
            op.end(i, applied(realistic(i)))
        written = op.bytes_written
    return written, backend.load(PROJECT, "dev").stored_bytes


def test_bytes_written_grow_linearly_and_stay_under_three_times_the_state(tmp_path: Path) -> None:
    per_step = []
    for n in (50, 100, 400):
        written, final = up_bytes(tmp_path, n)
        assert written < 3 * final, (n, written, final)
        per_step.append(written / n)
    assert max(per_step) / min(per_step) < 1.02


def test_a_step_writes_its_own_rows_not_the_snapshot(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "state.db")
    backend.create_stack(PROJECT, "dev")
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        for i in range(500):
            op.begin(i, Op.CREATE, realistic(i))
            op.end(i, applied(realistic(i)))
    whole = backend.load(PROJECT, "dev").stored_bytes
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        changed = replace(realistic(7), inputs={**realistic(7).inputs, "data": {"k": "v"}})
        op.begin(0, Op.UPDATE, changed)
        op.end(0, applied(changed))
        one_step = op.bytes_written
    assert one_step < whole / 200  # two records of one ~1 KB object, not 500 objects


# --- history -----------------------------------------------------------------


def test_history_is_newest_first_with_kind_times_result_counts_and_message(
    backend: SQLiteBackend, clock: Clock
) -> None:
    with backend.begin_operation(PROJECT, "dev", kind="up", message="first deploy") as op:
        op.begin(0, Op.CREATE, res("a"))
        clock.advance(3)
        op.end(0, live(res("a")))
    clock.advance(60)
    with backend.begin_operation(PROJECT, "dev", kind="destroy") as op:
        op.begin(0, Op.DELETE, live(res("a")))
        op.end(0, None)
        op.finish("succeeded", {"delete": 1})
    first, second = reversed(backend.history(PROJECT, "dev"))
    assert (first.kind, first.result, first.counts, first.message) == (
        "up",
        "succeeded",
        {"create": 1},
        "first deploy",
    )
    assert first.end is not None
    assert (first.end - first.start).total_seconds() == pytest.approx(3)
    assert (second.kind, second.counts) == ("destroy", {"delete": 1})
    assert second.id > first.id
    assert first.owner == getpass.getuser() and first.host == socket.gethostname()
    assert len(backend.history(PROJECT, "dev", limit=1)) == 1


def test_history_is_numbered_within_each_stack(backend: SQLiteBackend) -> None:
    # As Pulumi's update versions: another stack's operations leave no gaps (`#10` came
    # right after `#5` when the store's shared row ids were shown).
    backend.create_stack(PROJECT, "prod")
    for stack in ("dev", "prod", "prod", "dev"):
        with backend.begin_operation(PROJECT, stack, kind="up"):
            pass
    assert [e.id for e in backend.history(PROJECT, "dev")] == [2, 1]
    assert [e.id for e in backend.history(PROJECT, "prod", limit=1)] == [2]


def test_a_running_operation_shows_in_history_as_in_progress(backend: SQLiteBackend) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    (entry,) = backend.history(PROJECT, "dev")
    assert (entry.result, entry.end) == ("in-progress", None)
    op.finish()


# --- export and import -------------------------------------------------------


def test_export_is_a_versioned_document(backend: SQLiteBackend) -> None:
    up(backend, res("a"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_outputs({"x": 1})
        op.begin(0, Op.CREATE, res("b"))
        op.finish("failed")
    document = backend.export(PROJECT, "dev")
    assert document == {
        "version": 2,
        "project": "web",
        "stack": "dev",
        "resources": [live(res("a")).to_dict()],
        "outputs": {"x": 1},
        "pending": [{"op": "create", "resource": res("b").to_dict()}],
    }


def test_the_default_cluster_is_recorded_exported_imported_and_renamed(
    backend: SQLiteBackend,
) -> None:
    """The cluster the stack's default provider talked to goes with the stack: into its
    export (version 2) and back, along a `stack rename`; a version-1 document (an older
    Stackwright's export, without it) is still imported, and records none."""
    identity = ClusterIdentity("uid-1", "https://10.0.0.1:6443", "prod")
    up(backend, res("a"))
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_default_cluster(identity)
    assert backend.load(PROJECT, "dev").default_cluster == identity
    document = backend.export(PROJECT, "dev")
    assert document["version"] == 2
    assert document["defaultCluster"] == {
        "uid": "uid-1",
        "server": "https://10.0.0.1:6443",
        "context": "prod",
    }

    older = {k: v for k, v in document.items() if k != "defaultCluster"} | {"version": 1}
    backend.import_(PROJECT, "dev", older)
    assert backend.load(PROJECT, "dev").default_cluster is None
    backend.import_(PROJECT, "dev", document)
    assert backend.load(PROJECT, "dev").default_cluster == identity

    backend.rename_stack(PROJECT, "dev", "qa")
    assert backend.load(PROJECT, "qa").default_cluster == identity
    backend.create_stack(PROJECT, "dev")
    assert backend.load(PROJECT, "dev").default_cluster is None


def test_import_replaces_the_state_and_is_recorded(backend: SQLiteBackend) -> None:
    up(backend, res("a"), res("b"))
    document = backend.export(PROJECT, "dev")
    up(backend, res("c"))
    version = backend.load(PROJECT, "dev").version
    backend.import_(PROJECT, "dev", document, message="restore")
    snapshot = backend.load(PROJECT, "dev")
    assert urns(snapshot) == ["a", "b"]
    assert snapshot.version > version
    assert (
        backend.history(PROJECT, "dev")[0].kind,
        backend.history(PROJECT, "dev")[0].message,
    ) == (
        "stack import",  # not `import`, an adoption of objects
        "restore",
    )
    # Later steps still end after the imported resources.
    up(backend, res("d", "b"))
    assert urns(backend.load(PROJECT, "dev")) == ["a", "b", "d"]


def test_a_state_import_and_an_adoption_are_told_apart_in_history(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    # Both were `import`: `stack history` could not say which replaced the state.
    document = backend.export(PROJECT, "dev")
    with backend.begin_operation(PROJECT, "dev", kind="import") as op:
        op.begin(0, Op.IMPORT, res("a"))
        op.end(0, live(res("a")))
    backend.import_(PROJECT, "dev", document, message="stack import from dev.json")
    assert [e.kind for e in backend.history(PROJECT, "dev")] == ["stack import", "import"]
    # A state import recorded before it had its kind reads as one still: the CLI's, and a
    # script's (`Workspace.import_state`, whose message is its own), which adopt nothing.
    backend.import_(PROJECT, "dev", document, message="restore")
    backend.import_(PROJECT, "dev", document)
    with contextlib.suppress(RuntimeError), backend.begin_operation(PROJECT, "dev", kind="import"):
        raise RuntimeError("an adoption that failed before adopting anything")
    with sqlite3.connect(tmp_path / "state.db") as db:
        db.execute("UPDATE history SET kind = 'import'")
    assert [(e.kind, e.result) for e in backend.history(PROJECT, "dev")] == [
        ("import", "failed"),
        ("stack import", "succeeded"),
        ("stack import", "succeeded"),
        ("stack import", "succeeded"),
        ("import", "succeeded"),
    ]


def test_import_creates_a_missing_stack(tmp_path: Path, backend: SQLiteBackend) -> None:
    up(backend, res("a"))
    document = backend.export(PROJECT, "dev")
    elsewhere = SQLiteBackend(tmp_path / "elsewhere.db")
    elsewhere.import_(PROJECT, "dev", document)
    assert elsewhere.export(PROJECT, "dev") == document


def test_a_renamed_stack_keeps_its_former_names_until_an_operation_forgets_them(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    up(backend, res("a"))
    backend.rename_stack(PROJECT, "dev", "qa")
    backend.rename_stack(PROJECT, "qa", "prod")
    assert backend.load(PROJECT, "prod").former_names == ("dev", "qa")
    # They travel with an export, so the next `up` wherever it is imported still knows them.
    document = backend.export(PROJECT, "prod")
    assert document["formerNames"] == ["dev", "qa"]
    elsewhere = SQLiteBackend(tmp_path / "elsewhere.db")
    elsewhere.import_(PROJECT, "prod", document)
    assert elsewhere.load(PROJECT, "prod").former_names == ("dev", "qa")
    elsewhere.close()
    # Back to a former name: that one is the stack's own again.
    backend.rename_stack(PROJECT, "prod", "dev")
    assert backend.load(PROJECT, "dev").former_names == ("qa", "prod")

    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_former_names(["prod"])
    assert backend.load(PROJECT, "dev").former_names == ("prod",)
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_former_names([])
    assert backend.load(PROJECT, "dev").former_names == ()
    assert "formerNames" not in backend.export(PROJECT, "dev")


def test_import_takes_the_lock(backend: SQLiteBackend) -> None:
    document = backend.export(PROJECT, "dev")
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    with pytest.raises(StackLocked):
        backend.import_(PROJECT, "dev", document)
    op.finish()


def good_document() -> dict[str, Any]:
    return {
        "version": 1,
        "project": "web",
        "stack": "dev",
        "resources": [res("a").to_dict(), res("b", "a").to_dict()],
        "outputs": {},
        "pending": [],
    }


def edited(**changes: Any) -> dict[str, Any]:
    document = good_document()
    for path, value in changes.items():
        target: Any = document
        *parents, last = path.split("__")
        for key in parents:
            target = target[int(key) if key.isdigit() else key]
        target[int(last) if last.isdigit() else last] = value
    return document


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "the document must be a JSON object made by `stackwright stack export`"),
        (
            {k: v for k, v in good_document().items() if k != "version"},
            "the document has no 'version'; is it the output of `stackwright stack export`?",
        ),
        (
            edited(version=4),
            "the document has version 4; this Stackwright reads versions 1, 2 and 3 "
            "(a newer version needs a newer Stackwright)",
        ),
        (
            edited(extra=1),
            "the document has an unknown field 'extra' (fields: version, project, stack, "
            "resources, outputs, pending, formerNames, defaultCluster, releasedNames)",
        ),
        (
            edited(releasedNames={urn("a"): "a-1a2b3c4d"}),
            f"the document's 'releasedNames' of {urn('a')} must be a list of names",
        ),
        (
            edited(releasedNames={urn("a", "prod"): ["a-1a2b3c4d"]}),
            f"the document's 'releasedNames': {urn('a', 'prod')} belongs to stack prod of "
            "project web, not to stack dev of project web",
        ),
        (
            edited(defaultCluster={"server": "https://a"}),
            "the document's 'defaultCluster' must be an object with a non-empty string 'uid'",
        ),
        (
            edited(formerNames="qa"),
            "the document's 'formerNames' must be a list of stack names",
        ),
        (
            edited(stack="prod"),
            "the document is the state of stack prod of project web, not of stack dev of "
            "project web; import it into that stack; to move resources to another stack of "
            "the project, run `stackwright state move`",
        ),
        (
            edited(project="shop"),
            "the document is the state of stack dev of project shop, not of stack dev of "
            "project web; import it into that stack",
        ),
        (edited(resources={}), "the document's 'resources' must be a list"),
        # Without them the import emptied the stack: every object forgotten, and a step a
        # crash left pending (an object perhaps made) never settled.
        (
            {k: v for k, v in good_document().items() if k != "resources"},
            "the document has no 'resources'; is it the output of `stackwright stack export`?",
        ),
        (
            {k: v for k, v in good_document().items() if k != "pending"},
            "the document has no 'pending'; is it the output of `stackwright stack export`?",
        ),
        # Two resources recording one object: the other's own object was no longer tracked,
        # and deleting either resource deleted the object the other still declares.
        (
            edited(resources__1__id=res("a").id),
            f"resources {urn('a')} and {urn('b')} both record the object {res('a').id}; "
            "each must record its own (its namespace/name)",
        ),
        (edited(outputs=[]), "the document's 'outputs' must be an object"),
        (
            edited(resources__1__dependencies=[3]),
            "resources[1]: field 'dependencies' must be a list of strings, got a list",
        ),
        (
            edited(resources__0__protect="yes"),
            "resources[0]: field 'protect' must be a boolean, got a string",
        ),
        (
            edited(resources__0__colour="red"),
            "resources[0]: unknown field 'colour' (fields: urn, type, id, inputs, outputs, parent, "
            "dependencies, provider, custom, protect, retainOnDelete, deletedWith, secretPaths, deletePending, initErrors, external, ignoreChanges, deleteTimeout, deletionPropagation)",
        ),
        (
            edited(resources__0__deletionPropagation="orphan"),
            "resources[0]: field 'deletionPropagation' must be one of Orphan, Background, "
            "Foreground, got a string",
        ),
        (
            edited(resources__0__deleteTimeout=-1),
            "resources[0]: field 'deleteTimeout' must be a positive number of seconds, got a number",
        ),
        (
            edited(resources__0__deleteTimeout="5m"),
            "resources[0]: field 'deleteTimeout' must be a positive number of seconds, got a string",
        ),
        (
            edited(resources__0__urn="web/dev/a"),
            "resources[0]: field 'urn': 'web/dev/a' is not a Stackwright URN: it must start "
            "with 'urn:sw:'",
        ),
        (
            edited(resources__0__urn=urn("a", "prod")),
            f"resources[0]: {urn('a', 'prod')} belongs to stack prod of project web, not to "
            "stack dev of project web",
        ),
        (
            edited(resources__0__type="garbage"),
            f"resources[0]: field 'type' is 'garbage', but its URN says '{res('a').type}'",
        ),
        (
            edited(resources__0__urn=urn("z")),
            f"resource {urn('b')} depends on {urn('a')} which is not in the state",
        ),
        (
            edited(resources__1__urn=urn("a"), resources__1__dependencies=[]),
            f"resource {urn('a')} appears twice",
        ),
        (
            edited(resources__0__dependencies=[urn("b")]),
            f"resources depend on each other in a cycle: {urn('a')} → {urn('b')} → {urn('a')}",
        ),
        (
            edited(pending=[{"op": "explode", "resource": res("c").to_dict()}]),
            "pending[0]: field 'op' must be one of same, create, update, replace, "
            "create-replacement, delete-replaced, delete, read, discard, import, refresh, got 'explode'",
        ),
    ],
)
def test_a_bad_import_document_is_refused_with_its_first_problem(
    backend: SQLiteBackend, document: Any, problem: str
) -> None:
    up(backend, res("kept"))
    with pytest.raises(UsageError) as caught:
        backend.import_(PROJECT, "dev", document)
    assert str(caught.value) == f"cannot import into stack dev: {problem}"
    assert urns(backend.load(PROJECT, "dev")) == ["kept"]  # nothing replaced


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=10), json_values, max_size=5)


@st.composite
def stack_states(draw: st.DrawFn) -> list[ResourceState]:
    names = draw(st.lists(st.text(min_size=1, max_size=12), min_size=0, max_size=6, unique=True))
    states: list[ResourceState] = []
    for name in names:
        earlier = [s.urn for s in states]
        type_ = draw(st.sampled_from([CM, "kubernetes:apps/v1:Deployment", "my:index:Component"]))
        states.append(
            ResourceState(
                urn=make_urn("dev", PROJECT, type_, name),
                type=type_,
                # Unique: an import refuses two resources recording one object.
                id=draw(st.text(max_size=20)) + f"#{len(states)}",
                inputs=draw(objects),
                outputs=draw(objects),
                parent=draw(st.sampled_from(["", *earlier])),
                dependencies=tuple(draw(st.lists(st.sampled_from(earlier), unique=True)))
                if earlier
                else (),
                provider="",
                custom=draw(st.booleans()),
                protect=draw(st.booleans()),
                retain_on_delete=draw(st.booleans()),
                secret_paths=tuple(draw(st.lists(st.text(max_size=10), max_size=3))),
                delete_timeout=draw(st.none() | st.floats(min_value=0.5, max_value=1e6)),
                deletion_propagation=draw(
                    st.none() | st.sampled_from(["Orphan", "Background", "Foreground"])
                ),
            )
        )
    return states


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(states=stack_states(), outputs=objects)
def test_export_import_round_trip(
    tmp_path_factory: pytest.TempPathFactory, states: list[ResourceState], outputs: dict[str, Any]
) -> None:
    source = SQLiteBackend(tmp_path_factory.mktemp("rt") / "a.db")
    source.create_stack(PROJECT, "dev")
    with source.begin_operation(PROJECT, "dev", kind="up") as op:
        for step, state in enumerate(states):
            op.begin(step, Op.CREATE, state)
            op.end(step, state)
        op.set_outputs(outputs)
    loaded = source.load(PROJECT, "dev")
    assert loaded.resources == states
    assert loaded.outputs == outputs
    document = source.export(PROJECT, "dev")
    target = SQLiteBackend(tmp_path_factory.mktemp("rt") / "b.db")
    target.import_(PROJECT, "dev", document)
    assert target.export(PROJECT, "dev") == document
    assert target.load(PROJECT, "dev").resources == states


def test_a_delete_timeout_is_recorded_and_a_record_without_one_loads(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    """`custom_timeouts.delete` (seconds) is kept with its resource, in the store and in
    exports; records and exports an older Stackwright wrote, which lack it, load as having
    none, and an export without one set stays the document an older Stackwright reads."""
    up(backend, res("timed", delete_timeout=120.0), res("plain"))
    assert [r.delete_timeout for r in backend.load(PROJECT, "dev").resources] == [120.0, None]
    document = backend.export(PROJECT, "dev")
    exported = {r["urn"]: r for r in document["resources"]}
    assert exported[urn("timed")]["deleteTimeout"] == 120.0
    assert "deleteTimeout" not in exported[urn("plain")]

    old = [{k: v for k, v in r.items() if k != "deleteTimeout"} for r in document["resources"]]
    target = SQLiteBackend(tmp_path / "old.db")
    target.import_(PROJECT, "dev", {**document, "version": 1, "resources": old})
    assert [r.delete_timeout for r in target.load(PROJECT, "dev").resources] == [None, None]
    assert "deleteTimeout" not in str(target.export(PROJECT, "dev"))
    # A row's payload as an older Stackwright stored it.
    stored = decode_resource(
        orjson.dumps({"urn": urn("c"), "type": CM}), "row", project=PROJECT, stack="dev"
    )
    assert stored.delete_timeout is None


def test_a_deletion_propagation_is_recorded_and_a_record_without_one_loads(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    """The policy of a `stackwright.io/deletion-propagation` annotation is kept with its
    resource, in the store and in exports (still version 2); records and exports without
    it load as having none, and an export without one set stays the document an older
    Stackwright reads."""
    up(backend, res("orphaned", deletion_propagation="Orphan"), res("plain"))
    loaded = backend.load(PROJECT, "dev").resources
    assert [r.deletion_propagation for r in loaded] == ["Orphan", None]
    document = backend.export(PROJECT, "dev")
    assert document["version"] == 2
    exported = {r["urn"]: r for r in document["resources"]}
    assert exported[urn("orphaned")]["deletionPropagation"] == "Orphan"
    assert "deletionPropagation" not in exported[urn("plain")]

    old = [
        {k: v for k, v in r.items() if k != "deletionPropagation"} for r in document["resources"]
    ]
    target = SQLiteBackend(tmp_path / "old.db")
    target.import_(PROJECT, "dev", {**document, "resources": old})
    assert [r.deletion_propagation for r in target.load(PROJECT, "dev").resources] == [None, None]
    assert "deletionPropagation" not in str(target.export(PROJECT, "dev"))
    stored = decode_resource(
        orjson.dumps({"urn": urn("c"), "type": CM}), "row", project=PROJECT, stack="dev"
    )
    assert stored.deletion_propagation is None


# --- state edits -------------------------------------------------------------


def test_delete_resource_forgets_it(backend: SQLiteBackend) -> None:
    up(backend, res("a"), res("b"))
    assert backend.delete_resource(PROJECT, "dev", urn("a")) == [urn("a")]
    assert urns(backend.load(PROJECT, "dev")) == ["b"]
    assert backend.history(PROJECT, "dev")[0].kind == "state delete"


def test_delete_resource_refuses_a_protected_one(backend: SQLiteBackend) -> None:
    up(backend, res("a", protect=True))
    with pytest.raises(UsageError) as caught:
        backend.delete_resource(PROJECT, "dev", urn("a"))
    assert str(caught.value) == (
        f"resource {urn('a')} cannot be deleted because it is protected: run "
        f"`stackwright state unprotect {urn('a')}` first (or, if the program still declares "
        "it, remove its `protect` option and run `stackwright up`), or pass --force to delete "
        "it anyway"
    )
    assert backend.delete_resource(PROJECT, "dev", urn("a"), force=True) == [urn("a")]


def test_delete_resource_refuses_one_others_refer_to(backend: SQLiteBackend) -> None:
    up(backend, res("a"), res("b", "a"), res("c", parent=urn("a")), res("d", "b"))
    with pytest.raises(UsageError) as caught:
        backend.delete_resource(PROJECT, "dev", urn("a"))
    assert str(caught.value) == (
        f"resource {urn('a')} cannot be deleted because other resources refer to it: "
        f"{urn('b')} (depends on it), {urn('c')} (its child); delete them first, or pass "
        "--target-dependents to delete them with it"
    )
    deleted = backend.delete_resource(PROJECT, "dev", urn("a"), target_dependents=True)
    assert deleted == [urn("a"), urn("b"), urn("c"), urn("d")]
    assert backend.load(PROJECT, "dev").resources == []


def test_an_unknown_urn_gets_a_suggestion(backend: SQLiteBackend) -> None:
    up(backend, res("frontend"))
    with pytest.raises(UsageError) as caught:
        backend.delete_resource(PROJECT, "dev", urn("frontent"))
    assert str(caught.value) == (
        f"no resource {urn('frontent')} in stack dev; did you mean {urn('frontend')}?"
    )


def test_a_resource_named_without_its_urn_gets_its_urns(backend: SQLiteBackend) -> None:
    """`state unprotect web`, as kubectl names an object: the URN to pass, or each one when
    resources of several types share the name; a name nothing has points to the list."""
    up(backend, res("web"), res("api"))
    with pytest.raises(UsageError) as caught:
        backend.unprotect(PROJECT, "dev", ["web"])
    assert str(caught.value) == f"no resource web in stack dev; did you mean {urn('web')}?"
    svc = "kubernetes:core/v1:Service"
    shared = replace(res("api"), urn=urn("api", type_=svc), type=svc)
    up(backend, res("web"), res("api"), shared)
    with pytest.raises(UsageError) as caught:
        backend.delete_resource(PROJECT, "dev", "api")
    assert str(caught.value) == (
        f"no resource api in stack dev; resources named api: {urn('api')}, {shared.urn}; "
        "pass one's URN"
    )
    with pytest.raises(UsageError) as caught:
        backend.unprotect(PROJECT, "dev", ["zzzzzz"])
    assert str(caught.value) == (
        "no resource zzzzzz in stack dev; `stackwright stack --show-urns` lists the URNs in "
        "the state"
    )


def test_unprotect(backend: SQLiteBackend) -> None:
    up(backend, res("a", protect=True))
    backend.unprotect(PROJECT, "dev", [urn("a")])
    assert backend.load(PROJECT, "dev").resources[0].protect is False
    backend.delete_resource(PROJECT, "dev", urn("a"))


def test_unprotect_several_or_all(backend: SQLiteBackend) -> None:
    """As `pulumi state unprotect URN… / --all`: one edit of the state; the URNs it cleared;
    a URN the stack has not refuses the whole edit."""
    up(backend, res("a", protect=True), res("b", protect=True), res("c"), res("d", protect=True))
    protected = lambda: [r.urn for r in backend.load(PROJECT, "dev").resources if r.protect]  # noqa: E731
    with pytest.raises(UsageError, match="no resource zzzzzz"):
        backend.unprotect(PROJECT, "dev", [urn("a"), "zzzzzz"])
    assert protected() == [urn("a"), urn("b"), urn("d")]
    assert backend.unprotect(PROJECT, "dev", [urn("a"), urn("c")]) == [urn("a")]
    assert protected() == [urn("b"), urn("d")]
    assert backend.unprotect(PROJECT, "dev", None) == [urn("b"), urn("d")]
    assert protected() == []
    assert backend.unprotect(PROJECT, "dev", None) == []
    kinds = [entry.kind for entry in backend.history(PROJECT, "dev")]
    assert kinds.count("state unprotect") == 3


def test_edits_take_the_lock(backend: SQLiteBackend, clock: Clock) -> None:
    up(backend, res("a", protect=True))
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    with pytest.raises(StackLocked):
        backend.unprotect(PROJECT, "dev", [urn("a")])
    with pytest.raises(StackLocked):
        backend.delete_resource(PROJECT, "dev", urn("a"), force=True)
    op._keeper.stop(1)
    clock.advance(31)  # a lapsed holder does not block an edit
    backend.unprotect(PROJECT, "dev", [urn("a")])
    with pytest.raises(LockLost):
        op.begin(0, Op.CREATE, res("b"))


def test_rename_resource_rewrites_its_urn_and_references(backend: SQLiteBackend) -> None:
    up(backend, res("a"), res("b", "a"), res("c", parent=urn("a")))
    assert backend.rename_resource(PROJECT, "dev", urn("a"), "z") == urn("z")
    snapshot = backend.load(PROJECT, "dev")
    assert urns(snapshot) == ["z", "b", "c"]
    assert snapshot.resources[1].dependencies == (urn("z"),)
    assert snapshot.resources[2].parent == urn("z")
    with pytest.raises(UsageError, match="already has a resource"):
        backend.rename_resource(PROJECT, "dev", urn("b"), "c")


def test_move_resource_moves_children_and_rewrites_the_stack_part(backend: SQLiteBackend) -> None:
    backend.create_stack(PROJECT, "prod")
    comp = "my:index:App"
    parent = ResourceState(urn=make_urn("dev", PROJECT, comp, "app"), type=comp, custom=False)
    child = replace(
        res("cfg", parent=parent.urn),
        urn=make_urn("dev", PROJECT, CM, "cfg", (comp,)),
    )
    up(backend, res("other"), parent, child)
    moved = backend.move_resource(PROJECT, "dev", "prod", [parent.urn])
    new_parent = make_urn("prod", PROJECT, comp, "app")
    new_child = make_urn("prod", PROJECT, CM, "cfg", (comp,))
    assert moved == [new_parent, new_child]
    assert urns(backend.load(PROJECT, "dev")) == ["other"]
    prod = backend.load(PROJECT, "prod")
    assert [s.urn for s in prod.resources] == [new_parent, new_child]
    assert prod.resources[1].parent == new_parent
    assert backend.history(PROJECT, "prod")[0].kind == "state move"


def test_move_refuses_to_split_a_dependency(backend: SQLiteBackend) -> None:
    backend.create_stack(PROJECT, "prod")
    up(backend, res("a"), res("b", "a"))
    with pytest.raises(UsageError) as caught:
        backend.move_resource(PROJECT, "dev", "prod", [urn("a")])
    assert str(caught.value) == (
        f"cannot move {urn('a')}: {urn('b')} depends on it and would stay in stack dev; "
        f"move {urn('b')} too"
    )
    with pytest.raises(UsageError) as caught:
        backend.move_resource(PROJECT, "dev", "prod", [urn("b")])
    assert str(caught.value) == (
        f"cannot move {urn('b')}: it depends on {urn('a')}, which would stay in stack dev; "
        f"move {urn('a')} too"
    )
    assert backend.move_resource(PROJECT, "dev", "prod", [urn("a"), urn("b")]) == [
        urn("a", "prod"),
        urn("b", "prod"),
    ]
    with pytest.raises(UsageError, match="to itself"):
        backend.move_resource(PROJECT, "prod", "prod", [urn("a", "prod")])


def test_an_edit_ends_no_earlier_than_it_started(tmp_path: Path) -> None:
    """`stack history` read '-0.0s' for a stack rename: its end was read off the clock
    before its start was."""

    class Ticking(Clock):
        def __call__(self) -> float:
            self.now += 0.001
            return self.now

    backend = SQLiteBackend(tmp_path / "state.db", clock=Ticking())
    backend.create_stack(PROJECT, "dev")
    backend.rename_stack(PROJECT, "dev", "qa")
    entry = backend.history(PROJECT, "qa")[0]
    assert entry.kind == "stack rename"
    assert entry.end is not None and entry.end >= entry.start
    backend.close()
