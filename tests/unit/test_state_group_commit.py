"""Group commit: several journal steps begun or ended in one transaction.

`Operation.begin_many` / `end_many` must leave exactly the state that the same
`begin` / `end` calls one by one leave, all or nothing; the engine's batcher
(`commits.GroupCommit`) must still record each begin before the step goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from stackwright.engine.commits import GroupCommit
from stackwright.model import Op, ResourceState, make_urn
from stackwright.state import SQLiteBackend

PROJECT, CM = "web", "kubernetes:core/v1:ConfigMap"


def res(name: str) -> ResourceState:
    return ResourceState(
        urn=make_urn("dev", PROJECT, CM, name),
        type=CM,
        id=f"default/{name}",
        inputs={"apiVersion": "v1", "kind": "ConfigMap", "data": {"key": name}},
    )


def applied(state: ResourceState) -> ResourceState:
    return replace(state, outputs={**state.inputs, "metadata": {"uid": "u-" + state.id}})


@pytest.fixture
def backend(tmp_path: Path) -> SQLiteBackend:
    b = SQLiteBackend(tmp_path / "state.db")
    b.create_stack(PROJECT, "dev")
    return b


def names(backend: SQLiteBackend) -> list[str]:
    return [s.urn.rsplit("::", 1)[1] for s in backend.load(PROJECT, "dev").resources]


def test_a_batch_leaves_what_the_steps_one_by_one_leave(tmp_path: Path) -> None:
    one, many = SQLiteBackend(tmp_path / "one.db"), SQLiteBackend(tmp_path / "many.db")
    states = [res(n) for n in ("c", "a", "b")]
    for b in (one, many):
        b.create_stack(PROJECT, "dev")
    with one.begin_operation(PROJECT, "dev", kind="up") as op:
        for step, state in enumerate(states):
            op.begin(step, Op.CREATE, state)
        for step in (2, 0, 1):
            op.end(step, applied(states[step]))
    with many.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin_many([(step, Op.CREATE, state) for step, state in enumerate(states)])
        assert len(many.load(PROJECT, "dev").pending) == 3
        op.end_many([(step, applied(states[step])) for step in (2, 0, 1)])
    assert names(one) == names(many) == ["b", "c", "a"]  # in the order the steps ended
    assert one.load(PROJECT, "dev").resources == many.load(PROJECT, "dev").resources
    assert many.load(PROJECT, "dev").pending == []
    assert many.history(PROJECT, "dev")[0].counts == {"create": 3}


def test_a_bad_batch_records_nothing(backend: SQLiteBackend) -> None:
    with backend.begin_operation(PROJECT, "dev", kind="up") as op:
        op.begin(1, Op.CREATE, res("a"))
        with pytest.raises(ValueError, match="step 1 was already begun"):
            op.begin_many([(2, Op.CREATE, res("b")), (1, Op.CREATE, res("c"))])
        with pytest.raises(ValueError, match="step 3 was already begun"):
            op.begin_many([(3, Op.CREATE, res("b")), (3, Op.CREATE, res("c"))])
        assert [
            p.resource.urn.rsplit("::", 1)[1] for p in backend.load(PROJECT, "dev").pending
        ] == ["a"]
        with pytest.raises(ValueError, match="step 7 was never begun"):
            op.end_many([(1, applied(res("a"))), (7, None)])
        assert names(backend) == []
        op.begin_many([])
        op.end_many([])
        op.end_many([(1, applied(res("a")))])
    assert names(backend) == ["a"]


def test_the_batcher_records_each_begin_before_the_step_goes_on(backend: SQLiteBackend) -> None:
    seen: list[int] = []

    async def main() -> None:
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            commits = GroupCommit(op)

            async def step(number: int) -> None:
                await commits.begin(number, Op.CREATE, res(f"r{number}"))
                # What an API call would see: this step's begin is in the state already.
                pending = {p.resource.urn for p in backend.load(PROJECT, "dev").pending}
                assert make_urn("dev", PROJECT, CM, f"r{number}") in pending
                seen.append(number)
                await commits.end(number, applied(res(f"r{number}")))

            await asyncio.gather(*(step(n) for n in range(20)))

    asyncio.run(main())
    assert sorted(seen) == list(range(20))
    snapshot = backend.load(PROJECT, "dev")
    assert len(snapshot.resources) == 20 and snapshot.pending == []


def test_a_failed_batch_fails_each_of_its_steps(backend: SQLiteBackend) -> None:
    async def main() -> list[BaseException | None]:
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            commits = GroupCommit(op)
            op.begin(5, Op.CREATE, res("taken"))
            results = await asyncio.gather(
                commits.begin(4, Op.CREATE, res("x")),
                commits.begin(5, Op.CREATE, res("y")),  # step 5 is begun already: a bug
                return_exceptions=True,
            )
            op.fail_step(5)
            return results

    results = asyncio.run(main())
    assert all(isinstance(r, ValueError) for r in results)
    assert backend.load(PROJECT, "dev").pending == []


class _Counting:
    """An operation's journal that counts the transactions of ends it is asked for."""

    def __init__(self, journal: object) -> None:
        self.journal = journal
        self.end_batches: list[list[int]] = []

    def begin_many(self, items: list[tuple[int, Op, ResourceState]]) -> None:
        self.journal.begin_many(items)  # type: ignore[attr-defined]

    def end_many(self, items: list[tuple[int, ResourceState | None]]) -> None:
        self.end_batches.append([step for step, _ in items])
        self.journal.end_many(items)  # type: ignore[attr-defined]


def test_an_end_no_other_step_can_join_is_written_without_waiting(
    backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run's last step (a one-object `up`: every run's last), or one every other waits
    # for, waited out the whole window for company that could not come.
    monkeypatch.setattr(GroupCommit, "END_WINDOW", 30.0)

    async def main() -> None:
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            commits = GroupCommit(op)
            await commits.begin(0, Op.CREATE, res("alone"))
            await asyncio.wait_for(commits.end(0, applied(res("alone"))), timeout=5)

    asyncio.run(main())
    assert names(backend) == ["alone"]


def test_an_end_waits_for_company_while_another_step_is_under_way(
    backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(GroupCommit, "END_WINDOW", 30.0)

    async def main() -> list[list[int]]:
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            journal = _Counting(op)
            commits = GroupCommit(journal)  # type: ignore[arg-type]
            await asyncio.gather(*(commits.begin(n, Op.CREATE, res(f"r{n}")) for n in (1, 2)))
            first = asyncio.ensure_future(commits.end(1, applied(res("r1"))))
            await asyncio.sleep(0.05)  # step 2 is still applying: step 1's end waits for it
            assert not first.done() and journal.end_batches == []
            await asyncio.wait_for(commits.end(2, applied(res("r2"))), timeout=5)
            await first
            return journal.end_batches

    assert asyncio.run(main()) == [[1, 2]]  # one transaction, as before
    assert sorted(names(backend)) == ["r1", "r2"]


def test_a_step_that_failed_is_no_company_to_wait_for(
    backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed step's end never passes through the batch (its pending row is dropped, or
    the journal ends it itself): the run's last end is written at once all the same."""
    monkeypatch.setattr(GroupCommit, "END_WINDOW", 30.0)

    async def main() -> None:
        with backend.begin_operation(PROJECT, "dev", kind="up") as op:
            commits = GroupCommit(op)
            await asyncio.gather(*(commits.begin(n, Op.CREATE, res(f"r{n}")) for n in (1, 2)))
            op.fail_step(1)  # refused by the API server
            commits.abandon()
            await asyncio.wait_for(commits.end(2, applied(res("r2"))), timeout=5)

    asyncio.run(main())
    assert names(backend) == ["r2"]
