"""`stackwright new` into a folder that is not empty: refused unless --force, which writes
the template's files and keeps every other file (as `pulumi new --force`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackwright.automation.workspace import find_project
from stackwright.cli.main import main
from stackwright.engine.program import run_program
from stackwright.localcluster.validation import label_value
from stackwright.state import open_backend


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    for name in ("STACKWRIGHT_BACKEND_URL", "STACKWRIGHT_STACK", "STACKWRIGHT_CONFIG_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(args)
    err = capsys.readouterr().err
    assert caught.value.code == 2 and err.count("\n") == 1, err
    return err.removeprefix("error: ").strip()


def test_new_into_a_folder_that_is_not_empty_needs_force(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = home / "hello"
    folder.mkdir()
    (folder / "__main__.py").write_text("print('mine')\n")
    (folder / "notes.txt").write_text("keep me\n")
    before = _files(folder)
    assert _refused(["new", "kubernetes-python", str(folder)], capsys) == (
        f"{folder} is not empty: pick a new or empty directory, or pass --force to write the "
        "template's files into it (other files are kept)"
    )
    assert _files(folder) == before and not open_backend().list_stacks("hello")

    main(["new", "kubernetes-python", str(folder), "--force"])
    after = _files(folder)
    assert after["notes.txt"] == "keep me\n"
    assert after["__main__.py"].startswith('"""hello: a small web app on Kubernetes')
    assert {"Stackwright.yaml", "Stackwright.dev.yaml", ".gitignore"} <= set(after)
    assert [s.name for s in open_backend().list_stacks("hello")] == ["dev"]

    # Again: the stack exists, so nothing is written over (the stack file keeps its config).
    (folder / "Stackwright.dev.yaml").write_text("config:\n  hello:replicas: '3'\n")
    before = _files(folder)
    assert _refused(["new", "kubernetes-yaml", str(folder), "--force"], capsys) == (
        "stack dev of project hello already exists in the state store: pick another --stack "
        "or --name"
    )
    assert _files(folder) == before


def test_new_into_a_file_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "taken").write_text("x")
    message = _refused(["new", "kubernetes-python", str(home / "taken"), "--force"], capsys)
    assert message == f"{home / 'taken'} is a file: pick a new or empty directory"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--name", "bad name"], "project name 'bad name' is not valid"),
        (["--name", "-x"], "project name '-x' is not valid"),
        (["--stack", "_dev"], "stack name '_dev' is not valid"),
    ],
)
def test_new_with_a_name_refused_writes_no_file(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """`new … --name 'bad name'` wrote the project's files, then the state store refused the
    name: exit 2 with a project left that no command could open."""
    message = _refused(["new", "kubernetes-python", str(home / "made"), *args], capsys)
    assert message.startswith(said)
    assert not (home / "made").exists()


def test_new_with_another_first_stack_writes_that_stacks_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--stack prod`: the configuration the template gives (the local cluster) is prod's;
    it was written to Stackwright.dev.yaml, a file of a stack that does not exist."""
    folder = home / "shop"
    main(["new", "kubernetes-yaml", str(folder), "--stack", "prod"])
    assert "Stackwright.dev.yaml" not in _files(folder)
    assert _files(folder)["Stackwright.prod.yaml"] == "config:\n  kubernetes:cluster: local\n"
    assert [s.name for s in open_backend().list_stacks("shop")] == ["prod"]


def test_the_next_step_printed_is_a_command_a_shell_runs_as_pasted(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["new", "kubernetes-python", "my app (v2)"])
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "Next: cd 'my app (v2)' && stackwright up --yes"


def test_a_project_made_where_the_user_is_is_not_told_to_cd_into_it(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "here").mkdir()
    monkeypatch.chdir(home / "here")
    main(["new", "kubernetes-python", "."])
    assert capsys.readouterr().out.splitlines()[-1] == "Next: stackwright up --yes"


def _pods_and_selectors(folder: Path, project: str) -> tuple[list[dict[str, str]], list[Any]]:
    """The pod labels of the Deployments, and the Service selectors, `folder`'s program
    declares."""
    main_file = folder / (
        "__main__.py" if (folder / "__main__.py").exists() else "Stackwright.yaml"
    )
    declared = run_program(main_file, project=project, stack="dev").resources
    by_type = lambda token: [r.props["spec"] for r in declared if r.resource_type == token]  # noqa: E731
    pods = [
        spec["template"]["metadata"]["labels"] for spec in by_type("kubernetes:apps/v1:Deployment")
    ]
    return pods, [spec["selector"] for spec in by_type("kubernetes:core/v1:Service")]


def test_each_templates_service_selects_its_own_pods_not_another_projects(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README's tour makes `hello` and `hello-yaml` (and runs the quickstart) in the local
    cluster's default namespace: their pods were all `app: web`, so each Service also sent
    traffic to the others' pods."""
    main(["new", "kubernetes-python", "hello"])
    main(["new", "kubernetes-yaml", "hello-yaml"])
    quickstart = Path(__file__).parents[2] / "examples" / "quickstart"
    apps = {
        name: _pods_and_selectors(folder, name)
        for name, folder in (
            ("hello", home / "hello"),
            ("hello-yaml", home / "hello-yaml"),
            ("quickstart", quickstart),
        )
    }
    for name, ((pods,), (selector,)) in apps.items():
        assert pods == selector == {"app": name}
    for name, (_, (selector,)) in apps.items():
        selected = [
            other for other, ((pods,), _) in apps.items() if selector.items() <= pods.items()
        ]
        assert selected == [name], (name, selected)


def test_the_quickstart_example_is_what_the_python_template_makes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As README's examples table says of it."""
    main(["new", "kubernetes-python", "quickstart"])
    example = Path(__file__).parents[2] / "examples" / "quickstart"
    made = _files(home / "quickstart")
    assert made["__main__.py"] == (example / "__main__.py").read_text()
    assert made["Stackwright.yaml"] == (example / "Stackwright.yaml").read_text()


@pytest.mark.parametrize(
    ("name", "label"),
    [("web.v2", "web.v2"), ("app_", "app"), ("x" * 70, "x" * 63), ("y" * 62 + "-.z", "y" * 62)],
)
def test_a_projects_label_is_a_value_kubernetes_takes(
    home: Path, capsys: pytest.CaptureFixture[str], name: str, label: str
) -> None:
    main(["new", "kubernetes-yaml", "app", "--name", name])
    (pods,), (selector,) = _pods_and_selectors(home / "app", name)
    assert pods == selector == {"app": label}
    assert label_value(label) == [], "as the API server checks it"


@pytest.mark.parametrize("template", ["kubernetes-python", "kubernetes-yaml"])
@pytest.mark.parametrize("name", ["2048", "yes", "null"])
def test_a_project_whose_name_yaml_reads_as_another_type_is_that_name(
    home: Path, capsys: pytest.CaptureFixture[str], template: str, name: str
) -> None:
    """`name: 2048` (or `yes`, `null`) read back as a number, a boolean or null: the new
    project's first command said `name` is missing, and a YAML program's pods were labelled
    `app: 2048`, which no label value is."""
    main(["new", template, "app", "--name", name])
    assert find_project(home / "app").name == name
    (pods,), (selector,) = _pods_and_selectors(home / "app", name)
    assert pods == selector == {"app": name}
