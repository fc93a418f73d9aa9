"""A program runs from its own folder, wherever in the project the command is run: the
project's by default, or the folder `main:` names (as Pulumi's `main: infra/`), so the
relative paths it opens (a ConfigFile's, a chart's) are its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stackwright.cli.main import main

PROGRAM = "import os\nimport stackwright as sw\nsw.export('cwd', os.getcwd())\n"


def _cwd_of_up(capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    main(["up", "--yes", "--json"])
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    return str(summary["outputs"]["cwd"])


@pytest.mark.parametrize("main_entry", [None, "infra", "infra/__main__.py"])
def test_the_program_runs_from_its_folder(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    main_entry: str | None,
) -> None:
    program_folder = project / "infra" if main_entry else project
    program_folder.mkdir(exist_ok=True)
    (program_folder / "__main__.py").write_text(PROGRAM)
    if main_entry:
        (project / "Stackwright.yaml").write_text(
            f"name: shop\nruntime: python\nmain: {main_entry}\n"
        )
    elsewhere = project / "docs" / "deep"
    elsewhere.mkdir(parents=True)
    for cwd in (project, elsewhere):
        monkeypatch.chdir(cwd)
        assert _cwd_of_up(capsys) == os.fspath(program_folder)


def test_policy_check_runs_a_program_from_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`policy check PROJECT` runs the program as `up` does, from the folder `main:` names:
    a relative path of its own (here a file it reads) is found there too."""
    project = tmp_path / "shop"
    (project / "infra").mkdir(parents=True)
    (project / "Stackwright.yaml").write_text("name: shop\nruntime: python\nmain: infra\n")
    (project / "infra" / "image.txt").write_text("nginx:1.29\n")
    (project / "infra" / "__main__.py").write_text(
        "import stackwright.kubernetes as k8s\n"
        "k8s.core.v1.ConfigMap('c', data={'image': open('image.txt').read().strip()})\n"
    )
    monkeypatch.chdir(tmp_path)
    main(["policy", "check", "shop"])
    assert "1 object(s) checked" in capsys.readouterr().out


def test_a_render_folder_is_the_programs_too(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`render_yaml_to_directory="out"` of a program that `main: infra` names writes to
    infra/out, as its other relative paths are its folder's (and Pulumi's cwd is)."""
    (project / "infra").mkdir()
    (project / "infra" / "__main__.py").write_text(
        "import stackwright as sw\nimport stackwright.kubernetes as k8s\n"
        'render = k8s.Provider("render", render_yaml_to_directory="out")\n'
        'k8s.core.v1.ConfigMap("c", metadata={"name": "c", "namespace": "apps"},\n'
        '                      data={"k": "v"}, opts=sw.ResourceOptions(provider=render))\n'
    )
    (project / "Stackwright.yaml").write_text("name: shop\nruntime: python\nmain: infra\n")
    monkeypatch.chdir(project / "infra")
    main(["up", "--yes", "--json"])
    assert len(list((project / "infra" / "out").rglob("*v1_configmap_apps_c.yaml"))) == 1
    assert not (project / "out").exists()
