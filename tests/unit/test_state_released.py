"""The auto-names a stack let go of: which records release one, and how the store keeps them.

A retained delete and `state delete` leave an auto-named object in the cluster; the state
remembers its name per URN (`Snapshot.released_names`) so a later create of that URN is
named otherwise (`model.auto_name`). Kept through journal effects, settled steps, a
preview's dry run, export / import, saved states, stack renames and schema migration.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_state import PROJECT, live, res, up, urn
from test_state import backend as backend  # the fixtures
from test_state import clock as clock

import stackwright.model
from stackwright.model import Op, auto_name, released_auto_name
from stackwright.state import DryRunJournal, SQLiteBackend
from stackwright.state._journal import Release, Remove, Target, effects

NAME = auto_name("cache", urn("cache"))


def cache(name: str = NAME, **fields: Any) -> Any:
    """The ConfigMap `cache` as recorded, named `name`."""
    inputs = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    return res("cache", id=f"default/{name}", inputs=inputs, **fields)


# --- naming -----------------------------------------------------------------------------------


def test_without_released_names_an_auto_name_is_what_it_always_was() -> None:
    suffix = hashlib.sha256(f"{urn('cache')}\0".encode()).hexdigest()[:8]
    assert auto_name("cache", urn("cache")) == f"cache-{suffix}"
    assert auto_name("My_App", urn("cache"), released=()).startswith("my-app-")


def test_released_names_give_another_name_the_same_each_time() -> None:
    fresh = auto_name("cache", urn("cache"), released=(NAME,))
    assert fresh != NAME and fresh.startswith("cache-")
    assert auto_name("cache", urn("cache"), released=[NAME]) == fresh  # preview == up
    third = auto_name("cache", urn("cache"), released=(NAME, fresh))
    assert third not in (NAME, fresh)
    # The order the names were let go of does not change it.
    assert auto_name("cache", urn("cache"), released=(fresh, NAME)) == third


def test_a_suffix_that_collides_with_a_released_name_is_hashed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    digests = iter(["1a2b3c4d" + "0" * 56, "5e6f7a8b" + "0" * 56])

    class Colliding:
        def __init__(self, data: bytes) -> None:
            pass

        def hexdigest(self) -> str:
            return next(digests)

    monkeypatch.setattr(stackwright.model.hashlib, "sha256", Colliding)
    assert auto_name("cache", urn("cache"), released=("cache-1a2b3c4d",)) == "cache-5e6f7a8b"


@pytest.mark.parametrize(
    ("state", "released"),
    [
        (cache(), NAME),
        (cache("cache-1a2b3c4d"), "cache-1a2b3c4d"),  # an older auto-name, or a replacement's
        (cache("settings"), None),  # a name the user gave
        (cache("other-1a2b3c4d"), None),  # another logical name's shape
        (cache("cache-1A2B3C4D"), None),
        (cache(external=True), None),  # read: never the stack's object
        (cache(custom=False), None),
    ],
)
def test_which_records_let_an_auto_name_go(state: Any, released: str | None) -> None:
    assert released_auto_name(state) == released


def test_a_retained_delete_releases_its_auto_name_and_a_deleted_one_does_not() -> None:
    kept = cache(retain_on_delete=True)
    gone = Remove(Target(kept.urn, False))
    assert effects(Op.DELETE, kept, None) == (gone, Release(kept.urn, NAME))
    assert effects(Op.DELETE, cache(), None) == (gone,)
    assert effects(Op.DELETE, kept, live(kept)) != (gone, Release(kept.urn, NAME))  # it stayed


# --- the store --------------------------------------------------------------------------------


def retained_delete(backend: SQLiteBackend) -> None:
    kept = cache(retain_on_delete=True)
    up(backend, kept)
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(1, Op.DELETE, live(kept))
        op.end(1, None)


def test_the_store_keeps_what_a_retained_delete_released(backend: SQLiteBackend) -> None:
    retained_delete(backend)
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.resources == [] and snapshot.released_names == {urn("cache"): (NAME,)}
    retained_delete(backend)  # the same name again: kept once
    assert backend.load(PROJECT, "dev").released_names == {urn("cache"): (NAME,)}


def test_a_settled_retained_delete_releases_too(backend: SQLiteBackend) -> None:
    kept = cache(retain_on_delete=True)
    up(backend, kept)
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(1, Op.DELETE, live(kept))
        op.finish("failed")  # the step stays pending, as a crash leaves it
    pending = backend.load(PROJECT, "dev").pending
    assert [p.op for p in pending] == [Op.DELETE]

    dry = DryRunJournal(backend.load(PROJECT, "dev"))
    dry.resolve_pending(pending[0], None)  # a preview settles it in memory alike
    assert dry.snapshot().released_names == {urn("cache"): (NAME,)}
    assert backend.load(PROJECT, "dev").released_names == {}

    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.resolve_pending(pending[0], None)
    assert backend.load(PROJECT, "dev").released_names == {urn("cache"): (NAME,)}


def test_a_state_delete_releases_the_auto_names_it_forgets(backend: SQLiteBackend) -> None:
    up(backend, cache(), res("plain", inputs={"metadata": {"name": "plain"}}))
    assert backend.delete_resource(PROJECT, "dev", urn("cache"), dry_run=True) == [urn("cache")]
    assert backend.load(PROJECT, "dev").released_names == {}  # a dry run writes nothing

    backend.delete_resource(PROJECT, "dev", urn("cache"))
    backend.delete_resource(PROJECT, "dev", urn("plain"))

    assert backend.load(PROJECT, "dev").released_names == {urn("cache"): (NAME,)}


def test_export_import_and_saved_states_carry_released_names(
    backend: SQLiteBackend, tmp_path: Path
) -> None:
    before = backend.export(PROJECT, "dev")
    assert before["version"] == 2 and "releasedNames" not in before  # older Stackwrights read it
    retained_delete(backend)
    document = backend.export(PROJECT, "dev")
    assert document["version"] == 3
    assert document["releasedNames"] == {urn("cache"): [NAME]}
    last = backend.history(PROJECT, "dev")[0].id
    assert backend.export(PROJECT, "dev", version=last) == document

    other = SQLiteBackend(tmp_path / "other.db")
    other.import_(PROJECT, "dev", document)
    assert other.load(PROJECT, "dev").released_names == {urn("cache"): (NAME,)}
    other.import_(PROJECT, "dev", before)  # a document without them forgets them
    assert other.load(PROJECT, "dev").released_names == {}
    other.close()


def test_a_stack_rename_moves_its_released_names_and_rm_forgets_them(
    backend: SQLiteBackend,
) -> None:
    retained_delete(backend)
    backend.rename_stack(PROJECT, "dev", "prod")
    assert backend.load(PROJECT, "prod").released_names == {urn("cache", "prod"): (NAME,)}
    saved = backend.history(PROJECT, "prod")[-1].id
    assert "releasedNames" not in backend.export(PROJECT, "prod", version=saved)

    backend.remove_stack(PROJECT, "prod")
    backend.create_stack(PROJECT, "prod")
    assert backend.load(PROJECT, "prod").released_names == {}


def test_a_version_2_store_is_moved_on_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SQLiteBackend(path).close()
    # What a Stackwright of schema version 2 left: no table of released names.
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE released")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    moved = SQLiteBackend(path)
    moved.create_stack(PROJECT, "dev")
    retained_delete(moved)
    assert moved.load(PROJECT, "dev").released_names == {urn("cache"): (NAME,)}
    moved.close()
    with sqlite3.connect(path) as db:
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == "3"


def test_an_import_document_from_before_released_names_is_read(backend: SQLiteBackend) -> None:
    document = backend.export(PROJECT, "dev")
    backend.import_(PROJECT, "dev", {**document, "version": 1})
    assert backend.load(PROJECT, "dev").released_names == {}
