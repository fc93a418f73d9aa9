"""The lock and the journal across real processes: racing, and killed with SIGKILL.

No fakes here: each engine is a separate Python process on the same SQLite file,
killed with SIGKILL at the point under test, and leases are short so that a
takeover happens within the test's time.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackwright.errors import StackLocked
from stackwright.model import Op, PendingOperation, ResourceState, make_urn
from stackwright.state import SQLiteBackend

PROJECT = "web"
CM = "kubernetes:core/v1:ConfigMap"
LEASE = 1.0

#: The engine stand-in run in a child process: `python -c ENGINE PATH MODE [N]`.
ENGINE = textwrap.dedent(
    """
    import sys, time
    from stackwright.model import Op, ResourceState, make_urn
    from stackwright.state import SQLiteBackend

    path, mode, lease = sys.argv[1], sys.argv[2], float(sys.argv[3])

    def res(i):
        return ResourceState(urn=make_urn("dev", "web", "kubernetes:core/v1:ConfigMap", f"r{i}"),
                             type="kubernetes:core/v1:ConfigMap", id=f"default/r{i}",
                             inputs={"data": {"i": str(i)}})

    def live(state):
        return ResourceState(**{**state.__dict__, "outputs": {"uid": "u-" + state.id}})

    backend = SQLiteBackend(path)
    op = backend.begin_operation("web", "dev", kind="up", lease_seconds=lease)
    if mode == "hold":
        print("ready", flush=True)
    elif mode == "between":
        op.begin(0, Op.CREATE, res(0))
        op.end(0, live(res(0)))
        op.begin(1, Op.CREATE, res(1))
        print("ready", flush=True)
    elif mode == "loop":
        print("ready", flush=True)
        for i in range(10**6):
            op.begin(i, Op.CREATE, res(i))
            op.end(i, live(res(i)))
    elif mode == "finish":
        for i in range(int(sys.argv[4])):
            op.begin(i, Op.CREATE, res(i))
            op.end(i, live(res(i)))
        op.finish()
        print("done", flush=True)
        sys.exit(0)
    time.sleep(120)
    """
)


def res(i: int, stack: str = "dev") -> ResourceState:
    return ResourceState(
        urn=make_urn(stack, PROJECT, CM, f"r{i}"),
        type=CM,
        id=f"default/r{i}",
        inputs={"data": {"i": str(i)}},
    )


def live(state: ResourceState) -> ResourceState:
    return ResourceState(**{**state.__dict__, "outputs": {"uid": "u-" + state.id}})


@pytest.fixture
def path(tmp_path: Path) -> Path:
    file = tmp_path / "state.db"
    backend = SQLiteBackend(file)
    backend.create_stack(PROJECT, "dev")
    backend.close()
    return file


def start_engine(path: Path, mode: str, *extra: str, lease: float = LEASE) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", ENGINE, str(path), mode, str(lease), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if line not in ("ready", "done"):
        child.kill()
        raise AssertionError(f"the engine process did not start: {line!r} {child.stderr.read()}")  # type: ignore[union-attr]
    return child


@pytest.fixture
def engines() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait()


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


def wait_for_lock(backend: SQLiteBackend, *, within: float) -> Any:
    deadline = time.monotonic() + within
    while True:
        try:
            return backend.begin_operation(PROJECT, "dev", kind="up")
        except StackLocked:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_killed_holder_on_this_host_is_taken_over_at_once(
    path: Path, engines: list[subprocess.Popen[str]]
) -> None:
    child = start_engine(path, "hold")
    engines.append(child)
    kill(child)
    backend = SQLiteBackend(path)
    # Its process is gone and it ran here: no need to wait for the lease (or a cancel).
    op = backend.begin_operation(PROJECT, "dev", kind="up")
    assert op.took_over is not None and op.took_over.pid == child.pid
    op.finish()
    assert [(h.result, h.end is not None) for h in backend.history(PROJECT, "dev")] == [
        ("succeeded", True),
        ("interrupted", True),
    ]


def test_the_history_of_a_killed_holder_on_this_host_says_interrupted_before_a_takeover(
    path: Path, engines: list[subprocess.Popen[str]]
) -> None:
    # `stack` / `stack history` after a kill -9 said "in-progress" until the next operation
    # took the lock over, though its process was known to be gone.
    child = start_engine(path, "hold")
    engines.append(child)
    backend = SQLiteBackend(path)
    assert [h.result for h in backend.history(PROJECT, "dev")] == ["in-progress"]  # alive
    kill(child)
    assert [h.result for h in backend.history(PROJECT, "dev")] == ["interrupted"]
    assert backend.history(PROJECT, "dev")[0].end is None  # not recorded: only read so


def test_a_killed_holder_on_this_host_leaves_the_stack_unlocked_to_list_and_remove(
    path: Path, engines: list[subprocess.Popen[str]]
) -> None:
    # `stack ls` said "(locked)" and `stack rm` refused while `up` took the lock over at once.
    child = start_engine(path, "hold")
    engines.append(child)
    backend = SQLiteBackend(path)
    assert [s.locked for s in backend.list_stacks(PROJECT)] == [True]  # alive
    kill(child)
    assert [s.locked for s in backend.list_stacks(PROJECT)] == [False]
    assert backend.running(PROJECT, "dev") is None
    backend.remove_stack(PROJECT, "dev", force=True)
    assert backend.list_stacks(PROJECT) == []


def test_a_killed_holder_on_another_host_blocks_until_its_lease_lapses(
    path: Path, engines: list[subprocess.Popen[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    child = start_engine(path, "hold")
    engines.append(child)
    kill(child)
    # Seen from another machine, a dead holder cannot be told from a slow one.
    monkeypatch.setattr("stackwright.state._sqlite.socket.gethostname", lambda: "another-host")
    backend = SQLiteBackend(path)
    with pytest.raises(StackLocked) as caught:
        backend.begin_operation(PROJECT, "dev", kind="up")
    assert f"(pid {child.pid})" in str(caught.value)
    killed_at = time.monotonic()
    op = wait_for_lock(backend, within=LEASE + 2)
    # It took the lease's length (less what had passed since the last renewal).
    assert time.monotonic() - killed_at <= LEASE + 0.5
    assert op.took_over is not None and op.took_over.pid == child.pid
    op.finish()
    assert [(h.result, h.end is not None) for h in backend.history(PROJECT, "dev")] == [
        ("succeeded", True),
        ("interrupted", True),
    ]


def test_a_process_killed_between_begin_and_end_leaves_the_step_pending(
    path: Path, engines: list[subprocess.Popen[str]]
) -> None:
    child = start_engine(path, "between")
    engines.append(child)
    kill(child)
    backend = SQLiteBackend(path)
    snapshot = backend.load(PROJECT, "dev")
    assert snapshot.resources == [live(res(0))]
    assert snapshot.pending == [PendingOperation(Op.CREATE, res(1))]
    op = wait_for_lock(backend, within=LEASE + 2)
    # The next operation reads the cluster (here: the create had gone out) and settles it.
    op.resolve_pending(snapshot.pending[0], live(res(1)))
    op.finish()
    after = backend.load(PROJECT, "dev")
    assert after.resources == [live(res(0)), live(res(1))]
    assert after.pending == []


@pytest.mark.parametrize("seed", range(5))
def test_a_kill_at_any_instant_loses_track_of_nothing(
    path: Path, engines: list[subprocess.Popen[str]], seed: int
) -> None:
    child = start_engine(path, "loop", lease=30)
    engines.append(child)
    time.sleep(random.Random(seed).uniform(0.02, 0.4))
    kill(child)
    snapshot = SQLiteBackend(path).load(PROJECT, "dev")  # integrity checks pass
    ended = len(snapshot.resources)
    assert ended > 0
    # Every step that ended is recorded with its result, in order, with no gap; the
    # one in flight (if any) is pending. Nothing else exists.
    assert snapshot.resources == [live(res(i)) for i in range(ended)]
    assert snapshot.pending in ([], [PendingOperation(Op.CREATE, res(ended))])


def test_two_processes_write_different_stacks_of_one_file_at_once(
    path: Path, engines: list[subprocess.Popen[str]]
) -> None:
    backend = SQLiteBackend(path)
    backend.create_stack(PROJECT, "prod")
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                ENGINE.replace('"dev"', f'"{stack}"'),
                str(path),
                "finish",
                "5",
                "300",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for stack in ("dev", "prod")
    ]
    engines.extend(children)
    for child in children:
        out, err = child.communicate(timeout=60)
        assert (child.returncode, out.strip()) == (0, "done"), err
    for stack in ("dev", "prod"):
        assert backend.load(PROJECT, stack).resources == [live(res(i, stack)) for i in range(300)]


# --- racing for the lock with multiprocessing --------------------------------


def _race(path: str, barrier: Any, results: Any, release: Any) -> None:
    backend = SQLiteBackend(path)
    barrier.wait()
    try:
        op = backend.begin_operation(PROJECT, "dev", kind="up", lease_seconds=30)
    except StackLocked as locked:
        results.put(("locked", os.getpid(), str(locked), None))
        return
    took_over = op.took_over.pid if op.took_over else None
    results.put(("won", os.getpid(), "", took_over))
    release.wait(30)
    op.finish()


@pytest.mark.parametrize("lapsed_holder", [False, True], ids=["free", "lapsed"])
def test_exactly_one_of_many_racing_processes_takes_the_lock(
    path: Path, engines: list[subprocess.Popen[str]], lapsed_holder: bool
) -> None:
    dead_pid = None
    if lapsed_holder:
        child = start_engine(path, "hold", lease=0.3)
        engines.append(child)
        kill(child)
        dead_pid = child.pid
        time.sleep(0.5)  # its lease has lapsed
    racers = 6
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(racers)
    results = context.Queue()
    release = context.Event()
    processes = [
        context.Process(target=_race, args=(str(path), barrier, results, release))
        for _ in range(racers)
    ]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=60) for _ in range(racers)]
    finally:
        release.set()
        for process in processes:
            process.join(30)
    winners = [o for o in outcomes if o[0] == "won"]
    losers = [o for o in outcomes if o[0] == "locked"]
    assert len(winners) == 1 and len(losers) == racers - 1
    (_, winner_pid, _, took_over) = winners[0]
    assert took_over == dead_pid
    for _, _, message, _ in losers:
        assert message.startswith("stack dev is locked by an `up` started ")
        assert f"(pid {winner_pid})" in message
    assert all(process.exitcode == 0 for process in processes)
    history = SQLiteBackend(path).history(PROJECT, "dev")
    assert [h.result for h in history] == (
        ["succeeded", "interrupted"] if lapsed_holder else ["succeeded"]
    )
