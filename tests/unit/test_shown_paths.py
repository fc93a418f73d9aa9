"""How messages name the user's files: relative to the directory the command was started in
when under it (as mypy, ruff and gcc do), absolute elsewhere and when nothing is recorded
(the automation API from a script)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackwright.errors import located, not_valid_yaml, record_starting_directory, shown_path
from stackwright.sdk.resource import Declaration


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    record_starting_directory(None)
    yield
    record_starting_directory(None)


def test_nothing_recorded_keeps_every_path_as_given(tmp_path: Path) -> None:
    file = str(tmp_path / "__main__.py")
    assert shown_path(file) == file
    assert str(Declaration(file, 3)) == f"{file}:3"
    assert located(f"{file}:3", "boom") == f"{file}:3: boom"


def test_a_file_under_the_starting_directory_is_named_from_it(tmp_path: Path) -> None:
    record_starting_directory(str(tmp_path))
    assert shown_path(str(tmp_path / "__main__.py")) == "__main__.py"
    assert shown_path(tmp_path / "config" / "app.yaml") == os.path.join("config", "app.yaml")
    assert str(Declaration(str(tmp_path / "__main__.py"), 12)) == "__main__.py:12"


def test_the_starting_directory_itself_is_dot(tmp_path: Path) -> None:
    record_starting_directory(str(tmp_path))
    assert shown_path(str(tmp_path)) == "."
    assert shown_path(str(tmp_path) + os.sep) == "."


def test_a_file_outside_keeps_its_absolute_path_never_dot_dot(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    record_starting_directory(str(tmp_path / "proj"))
    for outside in (tmp_path / "other" / "a.py", tmp_path / "a.py", tmp_path / "project2" / "a.py"):
        assert shown_path(str(outside)) == str(outside)


def test_a_path_that_steps_out_through_dot_dot_is_outside(tmp_path: Path) -> None:
    """`main: ../lib/app.py` names a file outside the project as `PROJECT/../lib/app.py`."""
    (tmp_path / "proj").mkdir()
    record_starting_directory(str(tmp_path / "proj"))
    out = os.path.join(str(tmp_path / "proj"), "..", "lib", "app.py")
    assert shown_path(out) == out
    inside = os.path.join(str(tmp_path / "proj"), "sub", "..", "app.py")
    assert shown_path(inside) == "app.py"
    assert shown_path(str(tmp_path / "proj" / "a..b.py")) == "a..b.py"


def test_a_relative_path_or_a_pseudo_file_is_left_as_it_is(tmp_path: Path) -> None:
    record_starting_directory(str(tmp_path))
    assert shown_path("cases.yaml") == "cases.yaml"
    assert str(Declaration("<unknown>", 0)) == "<unknown>:0"
    assert located("<string>:4", "boom") == "<string>:4: boom"


def test_symlinked_names_are_resolved_on_both_sides(tmp_path: Path) -> None:
    """`/tmp` and `/private/tmp` (macOS), a project reached through a link: the working
    directory is the real one, a file may be named through the link, or the other way."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    record_starting_directory(str(link))
    assert shown_path(str(real / "sub" / "a.py")) == os.path.join("sub", "a.py")
    assert shown_path(str(link / "a.py")) == "a.py"
    record_starting_directory(str(real))
    assert shown_path(str(link / "sub" / "a.py")) == os.path.join("sub", "a.py")
    assert shown_path(str(link)) == "."
    outside = tmp_path / "elsewhere.py"
    assert shown_path(str(outside)) == str(outside)


def test_located_shows_its_file_as_shown_path_does(tmp_path: Path) -> None:
    record_starting_directory(str(tmp_path))
    main = str(tmp_path / "__main__.py")
    assert located(f"{main}:7", "boom") == "__main__.py:7: boom"
    assert located(Declaration(main, 7), "boom") == "__main__.py:7: boom"
    assert located(main, "boom") == "__main__.py: boom"  # a file with no line
    elsewhere = "/elsewhere/app.py"
    assert located(f"{elsewhere}:7", "boom") == f"{elsewhere}:7: boom"
    assert located(None, "boom") == "boom"


def test_a_yaml_file_s_problem_names_it_from_the_starting_directory(tmp_path: Path) -> None:
    import yaml

    record_starting_directory(str(tmp_path))
    text = "a: [\n"
    with pytest.raises(yaml.YAMLError) as refused:
        yaml.safe_load(text)
    said = not_valid_yaml(tmp_path / "Stackwright.yaml", refused.value, text)
    assert said.startswith("Stackwright.yaml:2: not valid YAML"), said
    unplaced = yaml.YAMLError("no place known")
    said = not_valid_yaml(tmp_path / "Stackwright.yaml", unplaced)
    assert said == "Stackwright.yaml: not valid YAML: no place known", said


def test_a_command_started_in_a_deleted_folder_still_runs(tmp_path: Path) -> None:
    """No starting directory to record (the shell's folder was removed under it): paths stay
    absolute, and a command that needs no folder works as it did."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "from stackwright.cli.main import main; main(['cluster', 'list'])"
    )
    env = {**os.environ, "STACKWRIGHT_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(gone)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
