"""`stackwright.lazy.lazy_module`: a module run on first use, once, whichever threads reach it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackwright.lazy import lazy_module

SLOW = """
import time
RUNS.append(1)
FIRST = 1
time.sleep(0.2)  # the threads below reach the module while it runs
LAST = 2
"""


@pytest.fixture
def slow_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[int]]]:
    name = "sw_lazy_probe"
    runs: list[int] = []
    (tmp_path / f"{name}.py").write_text("from builtins import _sw_lazy_runs as RUNS\n" + SLOW)
    monkeypatch.setattr("builtins._sw_lazy_runs", runs, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, runs
    sys.modules.pop(name, None)


def test_threads_reaching_it_at_once_all_see_it_whole_and_it_runs_once(
    slow_module: tuple[str, list[int]],
) -> None:
    name, runs = slow_module
    module = lazy_module(name)
    assert runs == []  # nothing run until used
    seen: list[object] = []
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        try:
            seen.append(module.LAST)
        except AttributeError as exc:  # a half-made module (LazyLoader before 3.12)
            seen.append(exc)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [2] * 8
    assert runs == [1]
    assert sys.modules[name] is module and type(module).__name__ == "module"


def test_what_was_set_before_it_ran_is_kept_and_a_delete_runs_it_first(
    slow_module: tuple[str, list[int]],
) -> None:
    name, runs = slow_module
    module = lazy_module(name)
    module.EXTRA = "set before"  # type: ignore[attr-defined]
    assert module.FIRST == 1  # type: ignore[attr-defined]
    assert module.EXTRA == "set before"  # type: ignore[attr-defined]
    sys.modules.pop(name)
    again = lazy_module(name)
    del again.LAST
    assert runs == [1, 1] and not hasattr(again, "LAST") and again.FIRST == 1


def test_a_missing_module_is_refused_at_once() -> None:
    with pytest.raises(ModuleNotFoundError):
        lazy_module("sw_no_such_module_anywhere")


def test_a_run_that_failed_leaves_nothing_behind_and_the_next_access_runs_it_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a failed import leaves no module: what the failed run defined is not kept over
    what the next run defines (a registry holding the class `module.Kind` is not)."""
    name = "sw_lazy_flaky"
    registry: list[type] = []
    (tmp_path / f"{name}.py").write_text(
        "from builtins import _sw_lazy_registry as REGISTRY\n"
        "class Kind: pass\n"
        "REGISTRY.append(Kind)\n"
        "if len(REGISTRY) == 1:\n"
        "    raise RuntimeError('first run fails')\n"
        "LAST = 2\n"
    )
    monkeypatch.setattr("builtins._sw_lazy_registry", registry, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    module = lazy_module(name)
    with pytest.raises(RuntimeError, match="first run fails"):
        module.LAST  # noqa: B018
    assert module.LAST == 2  # type: ignore[attr-defined]
    assert module.Kind is registry[-1]  # type: ignore[attr-defined]
    sys.modules.pop(name, None)
