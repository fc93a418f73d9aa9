"""The state each operation left, saved under its history entry: `export(version=N)`.

Rules of the store (as test_state.py's), on the SQLite backend: what is saved when an
entry ends, that a no-op saves no second copy, that secrets stay sealed in the saved
bytes, what an unknown version says, and the move of a version-1 store.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import engine_stack
import pytest
from test_engine_lifecycle import settings
from test_state import PROJECT, Clock, live, res, up, urn
from test_state import backend as backend  # the fixtures
from test_state import clock as clock

from stackwright.automation.secrets import DataKey, StateEncrypter
from stackwright.errors import StackwrightError, UsageError
from stackwright.model import Op, ResourceState, SecretValue
from stackwright.state import SQLiteBackend, StateCorrupt, open_backend, version_spans


def saved_rows(path: Path) -> list[tuple[int, int, bytes | None]]:
    """(history id, state version, data) of every saved state in the file."""
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT history_id, version, data FROM snapshots ORDER BY history_id"
        ).fetchall()


def test_each_operation_and_edit_saves_the_state_it_left(backend: SQLiteBackend) -> None:
    exports: list[dict[str, Any]] = []

    def then() -> None:
        exports.append(backend.export(PROJECT, "dev"))

    up(backend, res("a"), res("b", "a"))
    then()
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.UPDATE, live(res("a")))
        op.end(0, live(res("a", inputs={"data": {"key": "changed"}})))
        op.begin(1, Op.CREATE, res("c"))  # never ended: a pending step is part of the state
        op.set_outputs({"name": "a"})
        op.finish("failed")
    then()
    backend.unprotect(PROJECT, "dev", [urn("a")])
    then()
    backend.delete_resource(PROJECT, "dev", urn("b"))
    then()
    backend.import_(PROJECT, "dev", exports[0])
    then()
    history = backend.history(PROJECT, "dev")
    assert [(h.id, h.kind, h.exportable) for h in history] == [
        (5, "stack import", True),
        (4, "state delete", True),
        (3, "state unprotect", True),
        (2, "up", True),
        (1, "up", True),
    ]
    for number, exported in enumerate(exports, 1):
        assert backend.export(PROJECT, "dev", version=number) == exported, number
    assert exports[1]["pending"] and exports[1]["outputs"] == {"name": "a"}
    # What it prints is a document `import_` takes: version 2 restores that state.
    backend.import_(PROJECT, "dev", backend.export(PROJECT, "dev", version=2))
    assert backend.export(PROJECT, "dev") == exports[1]


def test_a_no_op_saves_no_second_copy(backend: SQLiteBackend, tmp_path: Path) -> None:
    up(backend, res("a"))
    up(backend)  # nothing changed: the stack's state version did not move
    (_, first_version, data), (_, second_version, none) = saved_rows(tmp_path / "state.db")
    assert second_version == first_version
    assert data is not None and none is None
    assert backend.export(PROJECT, "dev", version=2) == backend.export(PROJECT, "dev", version=1)
    # The operation counts what it wrote: the saved copy, compressed.
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(0, Op.CREATE, res("b"))
        op.end(0, live(res("b")))
    *_, (_, _, third) = saved_rows(tmp_path / "state.db")
    assert third is not None and op.bytes_written > len(third) > 0


def test_cancel_saves_what_the_cancelled_operation_left(
    backend: SQLiteBackend, clock: Clock
) -> None:
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    op.begin(0, Op.CREATE, res("a"))
    op.end(0, live(res("a")))
    left = backend.export(PROJECT, "dev")
    assert backend.cancel(PROJECT, "dev")
    up(backend, res("b"))  # the next operation's change is not the cancelled one's state
    op.finish("failed")  # its entry was closed by the cancel, and keeps what it saved
    assert [(h.result, h.exportable) for h in backend.history(PROJECT, "dev")][1] == (
        "cancelled",
        True,
    )
    assert backend.export(PROJECT, "dev", version=1) == left
    # A takeover of a lapsed lease saves what the dead holder left, likewise.
    stale = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=30)
    stale.begin(0, Op.CREATE, res("c"))
    left = backend.export(PROJECT, "dev")
    clock.advance(31)
    backend.begin_operation(PROJECT, "dev", kind="refresh").finish()
    interrupted = backend.history(PROJECT, "dev")[1]
    assert (interrupted.id, interrupted.result, interrupted.exportable) == (3, "interrupted", True)
    assert backend.export(PROJECT, "dev", version=3) == left


def test_an_unknown_version_names_the_versions_there_are(
    backend: SQLiteBackend, tmp_path: Path
) -> None:
    with pytest.raises(UsageError) as caught:
        backend.export(PROJECT, "dev", version=1)
    assert str(caught.value) == "stack dev has no version 1: no operation has run on it yet"
    for _ in range(3):
        up(backend)
    with pytest.raises(UsageError) as caught:
        backend.export(PROJECT, "dev", version=7)
    assert str(caught.value) == (
        "stack dev has no version 7: its versions are 1-3 (`stackwright stack history` lists them)"
    )
    # Entries saved before this Stackwright saved states (a version-1 store's) cannot be.
    with sqlite3.connect(tmp_path / "state.db") as db:
        db.execute("DELETE FROM snapshots WHERE history_id IN (1, 2)")
    with pytest.raises(UsageError) as caught:
        backend.export(PROJECT, "dev", version=0)
    assert str(caught.value) == (
        "stack dev has no version 0: its versions are 1-3; versions that can be exported: 3 "
        "(`stackwright stack history` lists them)"
    )
    with pytest.raises(UsageError) as caught:
        backend.export(PROJECT, "dev", version=2)
    assert str(caught.value) == (
        "version 2 of stack dev has no saved state (its operation is still running, or was "
        "recorded before Stackwright saved each version's state); versions that can be "
        "exported: 3"
    )
    assert [h.exportable for h in backend.history(PROJECT, "dev")] == [True, False, False]


def test_version_spans_list_runs_of_numbers() -> None:
    assert version_spans([]) == ""
    assert version_spans([3, 1, 2, 5, 8, 9, 9]) == "1-3, 5, 8-9"


def test_removing_a_stack_removes_its_saved_states(backend: SQLiteBackend, tmp_path: Path) -> None:
    up(backend, res("a"))
    backend.create_stack(PROJECT, "prod")
    with backend.begin_operation(PROJECT, "prod", kind="up"):
        pass
    backend.remove_stack(PROJECT, "dev", force=True)
    assert len(saved_rows(tmp_path / "state.db")) == 1  # prod's
    backend.create_stack(PROJECT, "dev")  # made anew: none of the old stack's versions
    with pytest.raises(UsageError, match="no operation has run on it yet"):
        backend.export(PROJECT, "dev", version=1)


def test_a_version_saved_before_a_rename_imports_into_the_renamed_stack(
    backend: SQLiteBackend,
) -> None:
    up(backend, res("a"), res("b", "a"))
    backend.rename_stack(PROJECT, "dev", "prod")
    up_prod = backend.begin_operation(PROJECT, "prod", kind="destroy")
    up_prod.begin(0, Op.DELETE, live(res("b", "a", stack="prod")))
    up_prod.end(0, None)
    up_prod.finish()
    document = backend.export(PROJECT, "prod", version=1)
    assert (document["stack"], document["formerNames"]) == ("prod", ["dev"])
    assert document["resources"][1]["dependencies"] == [urn("a", "prod")]
    backend.import_(PROJECT, "prod", document)
    assert [r.urn for r in backend.load(PROJECT, "prod").resources] == [
        urn("a", "prod"),
        urn("b", "prod"),
    ]


PLAIN = "hunter2-saved-state"


def test_saved_states_keep_secrets_sealed(tmp_path: Path) -> None:
    key = DataKey(os.urandom(32), "dev")
    backend = open_backend(f"file://{tmp_path}/state.db", encrypter=StateEncrypter(lambda: key))
    backend.create_stack("demo", "dev")
    state = ResourceState(
        urn="urn:sw:dev::demo::kubernetes:core/v1:Secret::creds",
        type="kubernetes:core/v1:Secret",
        id="ns/creds",
        inputs={"stringData": {"password": PLAIN}},
        outputs={"data": {"password": base64.b64encode(PLAIN.encode()).decode()}},
        secret_paths=("stringData", "data"),
    )
    with backend.begin_operation("demo", "dev", kind="up") as op:
        op.begin(1, Op.CREATE, state)
        op.end(1, state)
        op.set_outputs({"password": SecretValue(PLAIN)})
    ((_, _, data),) = saved_rows(tmp_path / "state.db")
    assert data is not None
    plain_bytes = zlib.decompress(data)
    for leak in (PLAIN.encode(), base64.b64encode(PLAIN.encode())):
        assert leak not in plain_bytes
    assert b'"@secret"' in plain_bytes
    # As sealed as the current export, and as importable.
    assert backend.export("demo", "dev", version=1) == backend.export("demo", "dev")
    backend.close()


def test_a_version_1_store_is_moved_on_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    backend = SQLiteBackend(path)
    backend.create_stack(PROJECT, "dev")
    up(backend, res("a"))
    backend.close()
    # What a Stackwright of schema version 1 left: no table of saved states, nor of
    # released names.
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE snapshots")
        db.execute("DROP TABLE released")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    moved = SQLiteBackend(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "3",
        )
    assert [r.urn for r in moved.load(PROJECT, "dev").resources] == [urn("a")]
    up(moved, res("b"))
    assert [(h.id, h.exportable) for h in moved.history(PROJECT, "dev")] == [
        (2, True),
        (1, False),
    ]
    assert [r["urn"] for r in moved.export(PROJECT, "dev", version=2)["resources"]] == [
        urn("a"),
        urn("b"),
    ]
    moved.close()


def test_a_store_put_back_to_version_1_while_open_says_to_run_again(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    backend = SQLiteBackend(path)
    backend.create_stack(PROJECT, "dev")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(StackwrightError) as caught:
        backend.load(PROJECT, "dev")
    assert str(caught.value) == (
        f"the state store {path} has schema version 1, older than this Stackwright's 3 (it "
        "was replaced while the command ran); run the command again to upgrade it"
    )


def test_an_engine_up_saves_its_state_and_a_no_op_up_writes_none(tmp_path: Path) -> None:
    # Through the engine, which only finishes its operation: the store saves the state.
    with contextlib.closing(open_backend(f"file://{tmp_path}/state.db")) as store:
        store.create_stack(engine_stack.PROJECT, engine_stack.STACK)
        stack = engine_stack.Stack(store)
        declare = settings("fast")
        assert stack.up(declare).ok
        assert stack.up(declare).state_bytes_written == 0  # no change, no second copy
        assert stack.up(settings("slow")).ok
        project, name = engine_stack.PROJECT, engine_stack.STACK
        first, again, changed = (store.export(project, name, version=n) for n in (1, 2, 3))
        assert first == again != changed
        assert changed == store.export(project, name)
    assert [data is None for _, _, data in saved_rows(tmp_path / "state.db")] == [
        False,
        True,
        False,
    ]


def test_a_damaged_saved_state_is_named_with_the_versions_to_export_instead(
    backend: SQLiteBackend, tmp_path: Path
) -> None:
    up(backend, res("a"))
    up(backend, res("b"))
    with sqlite3.connect(tmp_path / "state.db") as db:
        db.execute("UPDATE snapshots SET data = ? WHERE history_id = 1", (b"not zlib",))
    with pytest.raises(StateCorrupt) as caught:
        backend.export(PROJECT, "dev", version=1)
    assert str(caught.value) == (
        "the saved state of version 1 of stack dev is damaged: it cannot be read (Error -3 "
        "while decompressing data: incorrect header check); export another version (2)"
    )
    assert backend.export(PROJECT, "dev", version=2) == backend.export(PROJECT, "dev")
