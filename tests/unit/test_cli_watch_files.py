"""What `stackwright watch` looks at, and how it waits for a burst of changes to end."""

from __future__ import annotations

from pathlib import Path

from stackwright.cli.watch import changed_files, wait_for_change, watched_files


def test_the_project_files_are_watched_but_not_what_tools_keep_beside_them(tmp_path: Path) -> None:
    for name in ("__main__.py", "lib/util.py", "Stackwright.dev.yaml", "notes~", ".hidden",
                 ".git/HEAD", "__pycache__/m.pyc", "lib/x.pyc", "node_modules/a.js",
                 "venv/pyvenv.cfg", "venv/lib/site.py"):  # fmt: skip
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    seen = {str(Path(p).relative_to(tmp_path)) for p in watched_files([tmp_path])}
    assert seen == {"__main__.py", "lib/util.py", "Stackwright.dev.yaml"}
    one = tmp_path / "__main__.py"
    assert list(watched_files([one])) == [str(one)]  # a file given alone is watched
    assert watched_files([tmp_path / "gone"]) == {}


def test_a_change_is_said_once_the_files_are_still(tmp_path: Path) -> None:
    main, other = tmp_path / "__main__.py", tmp_path / "other.py"
    main.write_text("a")
    other.write_text("b")
    since = watched_files([tmp_path])
    # Each sleep is a moment in which an editor writes: nothing, then a burst of three saves.
    edits = [lambda: None, lambda: main.write_text("aa"), lambda: other.unlink(),
             lambda: (tmp_path / "new.py").write_text("c"), lambda: None]  # fmt: skip
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        edits.pop(0)()

    changed, now = wait_for_change([tmp_path], since, sleep=sleep, poll=0.5, settle=0.3)
    assert [Path(p).name for p in changed] == ["__main__.py", "new.py", "other.py"]
    assert slept == [0.5, 0.5, 0.3, 0.3, 0.3] and not edits
    assert now == watched_files([tmp_path]) and changed_files(now, now) == []
