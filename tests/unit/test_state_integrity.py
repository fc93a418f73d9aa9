"""A damaged state store is refused on load with a message saying exactly what is wrong.

Each test damages a real database file by hand, the way an editor, a bad copy
or a failing disk would, and checks the whole message the user gets.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from stackwright.errors import StackwrightError
from stackwright.model import Op, ResourceState, make_urn
from stackwright.state import SQLiteBackend, StateCorrupt, open_backend

PROJECT = "web"
CM = "kubernetes:core/v1:ConfigMap"
FIX = "the state was edited or damaged — restore it with `stackwright stack import`"


def urn(name: str, stack: str = "dev") -> str:
    return make_urn(stack, PROJECT, CM, name)


def res(name: str, *deps: str, **fields: object) -> ResourceState:
    return ResourceState(
        urn=urn(name),
        type=CM,
        id=f"default/{name}",
        inputs={"data": {"k": name}},
        dependencies=tuple(urn(d) for d in deps),
        **fields,  # type: ignore[arg-type]
    )


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A store whose stack dev holds a ← b ← c (c depends on b, b on a) and d, child of a."""
    file = tmp_path / "state.db"
    backend = SQLiteBackend(file)
    backend.create_stack(PROJECT, "dev")
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        for step, state in enumerate(
            [res("a"), res("b", "a"), res("c", "b"), res("d", parent=urn("a"))]
        ):
            op.begin(step, Op.CREATE, state)
            op.end(step, state)
    backend.close()
    return file


@contextmanager
def edit(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(path)
    try:
        yield db
        db.commit()
    finally:
        db.close()


def load_error(path: Path) -> str:
    with pytest.raises(StateCorrupt) as caught:
        SQLiteBackend(path).load(PROJECT, "dev")
    return str(caught.value)


def test_an_undamaged_store_loads(path: Path) -> None:
    snapshot = SQLiteBackend(path).load(PROJECT, "dev")
    assert [s.urn for s in snapshot.resources] == [urn("a"), urn("b"), urn("c"), urn("d")]


def test_a_missing_dependency(path: Path) -> None:
    with edit(path) as db:
        db.execute("DELETE FROM resources WHERE urn = ?", (urn("b"),))
    assert load_error(path) == (
        f"state of stack dev: resource {urn('c')} depends on {urn('b')} which is not in the state; {FIX}"
    )


def test_a_missing_parent(path: Path) -> None:
    with edit(path) as db:
        data = orjson.loads(
            db.execute("SELECT data FROM resources WHERE urn = ?", (urn("b"),)).fetchone()[0]
        )
        data["dependencies"] = []
        db.execute("UPDATE resources SET data = ? WHERE urn = ?", (orjson.dumps(data), urn("b")))
        db.execute("DELETE FROM resources WHERE urn = ?", (urn("a"),))
    assert load_error(path) == (
        f"state of stack dev: resource {urn('d')} has parent {urn('a')} which is not in the state; {FIX}"
    )


def test_a_dependency_of_a_pending_step_counts_as_present(path: Path) -> None:
    backend = SQLiteBackend(path)
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    op.begin(0, Op.CREATE, res("e"))
    op.finish("failed")
    with edit(path) as db:
        data = orjson.loads(
            db.execute("SELECT data FROM resources WHERE urn = ?", (urn("c"),)).fetchone()[0]
        )
        data["dependencies"].append(urn("e"))
        db.execute("UPDATE resources SET data = ? WHERE urn = ?", (orjson.dumps(data), urn("c")))
    assert [p.resource.urn for p in SQLiteBackend(path).load(PROJECT, "dev").pending] == [urn("e")]


def test_a_row_that_is_not_json(path: Path) -> None:
    with edit(path) as db:
        db.execute(
            "UPDATE resources SET data = ? WHERE urn = ?", (b'{"urn": "urn:sw:dev::', urn("c"))
        )
    message = load_error(path)
    assert message.startswith(f"state of stack dev: the row of resource {urn('c')} is not JSON (")
    assert message.endswith(f"); {FIX}")


def test_a_row_with_a_field_of_the_wrong_shape(path: Path) -> None:
    with edit(path) as db:
        data = orjson.loads(
            db.execute("SELECT data FROM resources WHERE urn = ?", (urn("c"),)).fetchone()[0]
        )
        data["inputs"] = ["not", "an", "object"]
        db.execute("UPDATE resources SET data = ? WHERE urn = ?", (orjson.dumps(data), urn("c")))
    assert load_error(path) == (
        f"state of stack dev: the row of resource {urn('c')}: field 'inputs' must be an object, "
        f"got a list; {FIX}"
    )


def test_a_row_filed_under_another_urn(path: Path) -> None:
    with edit(path) as db:
        data = db.execute("SELECT data FROM resources WHERE urn = ?", (urn("a"),)).fetchone()[0]
        db.execute("UPDATE resources SET data = ? WHERE urn = ?", (data, urn("d")))
    assert load_error(path) == (
        f"state of stack dev: the row of resource {urn('d')} holds the state of {urn('a')}; {FIX}"
    )


def test_a_resource_of_another_stack(path: Path) -> None:
    with edit(path) as db:
        data = orjson.loads(
            db.execute("SELECT data FROM resources WHERE urn = ?", (urn("d"),)).fetchone()[0]
        )
        data["urn"] = urn("d", "prod")
        db.execute(
            "UPDATE resources SET urn = ?, data = ? WHERE urn = ?",
            (urn("d", "prod"), orjson.dumps(data), urn("d")),
        )
    assert load_error(path) == (
        f"state of stack dev: the row of resource {urn('d', 'prod')}: {urn('d', 'prod')} belongs to "
        f"stack prod of project web, not to stack dev of project web; {FIX}"
    )


def test_a_duplicate_urn(path: Path) -> None:
    with edit(path) as db:
        db.execute(
            "INSERT INTO resources (stack_id, urn, delete_pending, cluster_id, seq, data) "
            "SELECT stack_id, urn, delete_pending, cluster_id, seq + 100, data FROM resources WHERE urn = ?",
            (urn("c"),),
        )
    assert load_error(path) == f"state of stack dev: resource {urn('c')} appears twice; {FIX}"


def test_a_dependency_cycle(path: Path) -> None:
    with edit(path) as db:
        data = orjson.loads(
            db.execute("SELECT data FROM resources WHERE urn = ?", (urn("a"),)).fetchone()[0]
        )
        data["dependencies"] = [urn("c")]
        db.execute("UPDATE resources SET data = ? WHERE urn = ?", (orjson.dumps(data), urn("a")))
    assert load_error(path) == (
        "state of stack dev: resources depend on each other in a cycle: "
        f"{urn('a')} → {urn('c')} → {urn('b')} → {urn('a')}; {FIX}"
    )


def test_a_pending_step_with_an_unknown_operation(path: Path) -> None:
    backend = SQLiteBackend(path)
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    op.begin(0, Op.CREATE, res("e"))
    op.finish("failed")
    with edit(path) as db:
        db.execute("UPDATE pending SET op = 'explode'")
    assert load_error(path) == (
        f"state of stack dev: the pending explode of {urn('e')}: unknown operation 'explode'; {FIX}"
    )


def test_outputs_that_are_not_an_object(path: Path) -> None:
    with edit(path) as db:
        db.execute("UPDATE stacks SET outputs = ?", (b"[1, 2]",))
    assert (
        load_error(path) == f"state of stack dev: the stack's outputs are not a JSON object; {FIX}"
    )


def test_a_schema_version_from_the_future(path: Path) -> None:
    with edit(path) as db:
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(StackwrightError) as caught:
        open_backend(f"file://{path}")
    assert str(caught.value) == (
        f"the state store {path} has schema version 7, written by a newer Stackwright; "
        "this one reads version 3: upgrade Stackwright"
    )


def test_a_schema_version_that_no_stackwright_wrote(path: Path) -> None:
    with edit(path) as db:
        db.execute("UPDATE meta SET value = 'one' WHERE key = 'schema_version'")
    with pytest.raises(StateCorrupt) as caught:
        open_backend(f"file://{path}")
    assert str(caught.value) == (
        f"the state store {path} records no schema version (found 'one'); it was edited or "
        "damaged — move it aside and restore each stack with `stackwright stack import`"
    )


def test_the_schema_version_is_checked_on_every_load(path: Path) -> None:
    backend = SQLiteBackend(path)
    with edit(path) as db:
        db.execute("DELETE FROM meta")
    with pytest.raises(StateCorrupt, match="records no schema version"):
        backend.load(PROJECT, "dev")


def test_a_missing_table(path: Path) -> None:
    with edit(path) as db:
        db.execute("DROP TABLE history")
    with pytest.raises(StateCorrupt) as caught:
        open_backend(f"file://{path}")
    assert str(caught.value) == (
        f"the state store {path} has no table 'history'; it was edited or damaged — move it "
        "aside and restore each stack with `stackwright stack import`"
    )


def test_a_file_that_is_not_a_database(path: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not SQLite, just text someone saved over it\n" * 200)
    with pytest.raises(StateCorrupt) as caught:
        open_backend(f"file://{path}")
    assert str(caught.value) == (
        f"the state store {path} is damaged (SQLite: file is not a database); move it aside and "
        "restore each stack with `stackwright stack import` from an export"
    )


def test_damaged_pages_fail_the_integrity_check(path: Path) -> None:
    backend = SQLiteBackend(path)
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        for step in range(300):  # enough rows for index pages past the first few
            state = replace(res(f"x{step}"), inputs={"blob": "y" * 300})
            op.begin(step, Op.CREATE, state)
            op.end(step, state)
    backend._conn.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backend.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 20 * page
    # Scribble over the middle of the file's pages, keeping the header readable, as a
    # failing disk or a torn copy would.
    for offset in range(8 * page, len(data) - page, 3 * page):
        data[offset + 100 : offset + 400] = b"\xa5" * 300
    path.write_bytes(bytes(data))
    with pytest.raises(StateCorrupt) as caught:
        SQLiteBackend(path).load(PROJECT, "dev")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"the state store {path} ")
    assert "failed SQLite's integrity check" in message or "is damaged (SQLite:" in message
    assert message.endswith(
        "move it aside and restore each stack with `stackwright stack import` from an export"
    )


# --- the bookkeeping beside the resources: locks, history, meta ---------------------------


def test_a_missing_lock_row_is_made_anew_by_the_next_operation(path: Path) -> None:
    # The row only says who holds the stack; without it every `up` was refused as
    # "locked by another operation at the same moment", for ever.
    with edit(path) as db:
        db.execute("DELETE FROM locks")
    backend = SQLiteBackend(path)
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.set_outputs({"ok": True})
    assert backend.load(PROJECT, "dev").outputs == {"ok": True}
    with (
        backend.begin_operation(PROJECT, "dev", kind="up"),
        pytest.raises(StackwrightError, match="is locked by"),
    ):
        backend.begin_operation(PROJECT, "dev", kind="up")


@pytest.mark.parametrize(
    ("column", "value"),
    [("expires", "soon"), ("expires", 1e15), ("started", None), ("pid", "x")],
)
def test_a_damaged_lock_row_is_named_and_cancel_clears_it(
    path: Path, column: str, value: object
) -> None:
    with edit(path) as db:
        db.execute(
            "UPDATE locks SET operation_id = 99, kind = 'up', owner = 'ann', host = 'h', pid = 7, "
            "started = 1.0, expires = 2e9"
        )
        db.execute(f"UPDATE locks SET {column} = ?", (value,))
    backend = SQLiteBackend(path)
    for attempt in (
        lambda: backend.begin_operation(PROJECT, "dev", kind="up"),
        lambda: backend.list_stacks(PROJECT),
        lambda: backend.unprotect(PROJECT, "dev", [urn("a")]),
    ):
        with pytest.raises(StateCorrupt) as caught:
            attempt()
        assert str(caught.value).startswith("the lock of stack dev is damaged (")
        assert str(caught.value).endswith(
            "); the state store was edited — run `stackwright cancel` to clear it"
        )
    assert backend.cancel(PROJECT, "dev")
    with backend.begin_operation(PROJECT, "dev", kind="up"):
        pass


def test_history_counts_that_are_not_json(path: Path) -> None:
    with edit(path) as db:
        db.execute("UPDATE history SET counts = 'xx'")
    with pytest.raises(StateCorrupt) as caught:
        SQLiteBackend(path).history(PROJECT, "dev")
    assert str(caught.value).startswith(
        "the history of stack dev is damaged: operation 1 has counts that are not a JSON object ("
    )


@pytest.mark.parametrize(
    ("key", "read"),
    [
        ("former-names:web/dev", lambda b: b.load(PROJECT, "dev")),
        ("secrets:web/dev", lambda b: b.secrets_provider(PROJECT, "dev")),
    ],
)
def test_meta_values_that_are_not_json(path: Path, key: str, read: object) -> None:
    with edit(path) as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 'xx')", (key,))
    with pytest.raises(StateCorrupt) as caught:
        read(SQLiteBackend(path))  # type: ignore[operator]
    assert str(caught.value).startswith(f"the state's {key!r} is not JSON (")
