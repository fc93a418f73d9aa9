"""A provider with `render_yaml_to_directory` writes manifest files instead of applying
objects, and keeps them in sync with the program, with no cluster anywhere: KUBECONFIG
names a file that does not exist, and nothing starts a local cluster. (Applying the files
to a real cluster: tests/integration/test_render_manifests_apply.py.)"""

from __future__ import annotations

import inspect
import os
import time
from pathlib import Path

import pytest
import yaml
from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.cli.main import main
from stackwright.sdk.context import Program
from stackwright.state import open_backend

#: Namespace + Deployment + CRD + custom object, all rendered to `out/`; REPLICAS and EXTRA
#: (more lines) are filled in by each test.
PROGRAM = (Path(__file__).parent.parent / "data" / "render" / "program.py.txt").read_text()


@pytest.fixture
def rendering(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project, with no cluster reachable: a kubeconfig that does not exist."""
    monkeypatch.setenv("KUBECONFIG", str(project / "no-such-kubeconfig"))
    write_program(project)
    return project


#: A rendered Service, whose clusterIP only a server would fill.
SERVICE = (
    'svc = k8s.core.v1.Service("svc", spec={"selector": {"app": "web"}, '
    '"ports": [{"port": 80}]}, opts=opts)\n'
)


def write_program(project: Path, replicas: int = 2, extra: str = "") -> None:
    text = PROGRAM.replace("REPLICAS", str(replicas)).replace("EXTRA", extra)
    (project / "__main__.py").write_text(text)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit code and output of one command."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


def tree(folder: Path) -> dict[str, dict[str, object]]:
    """Each manifest under `folder` (relative path → its object)."""
    return {
        str(p.relative_to(folder)): yaml.safe_load(p.read_text())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_up_writes_one_file_per_object_crds_first_and_no_cluster_is_needed(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "preview")
    assert code == 0, out
    assert "writes out/0-crd/apiextensions.k8s.io_v1_customresourcedefinition_" in out
    assert not (rendering / "out").exists(), "a preview wrote files"

    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    files = tree(rendering / "out")
    names = sorted(files)
    assert (
        names[0]
        == "0-crd/apiextensions.k8s.io_v1_customresourcedefinition_widgets.example.com.yaml"
    )
    namespace = files[names[1]]
    assert names[1].startswith("1-manifest/0-v1_namespace_apps-")  # before what goes in it
    ns = namespace["metadata"]["name"]  # type: ignore[index]
    deployment = next(o for n, o in files.items() if "_deployment_" in n)
    widget = next(o for n, o in files.items() if "_widget_" in n)
    assert deployment["metadata"]["namespace"] == ns  # type: ignore[index]
    assert deployment["metadata"]["name"].startswith("web-")  # type: ignore[index] # auto-named
    assert deployment["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "stackwright"}  # type: ignore[index]
    assert deployment["metadata"]["annotations"]["stackwright.io/urn"].endswith("::web")  # type: ignore[index]
    assert "status" not in deployment and "managedFields" not in deployment["metadata"]  # type: ignore[operator]
    assert widget == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {**widget["metadata"], "namespace": ns},  # type: ignore[dict-item]
        "spec": {"size": 3},
    }
    # Recorded as any resource is, its outputs the object as written.
    state = open_backend().load("shop", "dev")
    recorded = next(s for s in state.resources if s.type == "kubernetes:apps/v1:Deployment")
    assert recorded.outputs["metadata"]["name"] == deployment["metadata"]["name"]  # type: ignore[index]
    assert not any(p.name.startswith(".") for p in (rendering / "out").rglob("*"))  # no temp left


def test_a_no_op_up_writes_nothing(rendering: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "up", "--yes")[0] == 0
    paths = sorted((rendering / "out").rglob("*.yaml"))
    before = {p: p.stat().st_mtime_ns for p in paths}
    os.utime(paths[0], ns=(1, 1))  # a write would change it back
    before[paths[0]] = 1
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert {p: p.stat().st_mtime_ns for p in paths} == before


def test_update_rewrites_the_file_and_removal_deletes_it(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "up", "--yes")[0] == 0
    write_program(rendering, replicas=5)
    out = run(capsys, "preview")[1]
    assert "rewrites out/1-manifest/1-apps_v1_deployment_" in out, out
    assert run(capsys, "up", "--yes")[0] == 0
    deployment = next(o for n, o in tree(rendering / "out").items() if "_deployment_" in n)
    assert deployment["spec"]["replicas"] == 5  # type: ignore[index]

    program = (rendering / "__main__.py").read_text()
    start, end = program.index("k8s.apiextensions.CustomResource("), program.index("sw.export")
    (rendering / "__main__.py").write_text(program[:start] + program[end:])
    out = run(capsys, "preview")[1]
    assert "removes out/1-manifest/1-example.com_v1_widget_" in out, out
    assert run(capsys, "up", "--yes")[0] == 0
    assert not any("_widget_" in n for n in tree(rendering / "out"))


def test_destroy_empties_the_folder(rendering: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "up", "--yes")[0] == 0
    code, out = run(capsys, "destroy", "--yes")
    assert code == 0, out
    assert list((rendering / "out").rglob("*")) == []


def test_refresh_notices_a_file_edited_or_removed_by_hand_and_up_writes_it_back(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "up", "--yes")[0] == 0
    out_dir = rendering / "out" / "1-manifest"
    (widget,) = out_dir.glob("1-example.com_v1_widget_*.yaml")
    widget.write_text(widget.read_text().replace("size: 3", "size: 9"))
    (deployment,) = out_dir.glob("1-apps_v1_deployment_*.yaml")
    deployment.unlink()
    code, out = run(capsys, "refresh", "--yes")
    assert code == 0, out
    assert "drifted" in out and "spec.size: 3 → 9" in out, out
    assert "deleted outside Stackwright" in out, out
    assert run(capsys, "up", "--yes")[0] == 0
    assert deployment.exists() and "size: 3" in widget.read_text()


def test_a_secret_is_refused_and_nothing_written(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(
        rendering,
        extra='k8s.core.v1.ConfigMap("cfg", data={"pw": sw.Output.secret("hunter2")}, opts=opts)',
    )
    for command in (["preview"], ["up", "--yes"]):
        code, out = run(capsys, *command)
        assert code == 2, out
        assert out.count("\n") == 1 and out.startswith("error: "), out
        assert "ConfigMap cfg: its data.pw is secret, and provider render renders it" in out
        assert "SealedSecret" in out and "hunter2" not in out
    assert not (rendering / "out").exists()


def test_a_v1_secret_is_refused(rendering: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_program(
        rendering, extra='k8s.core.v1.Secret("creds", string_data={"pw": "x"}, opts=opts)'
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 2 and "Secret creds: its stringData is secret" in out, out
    assert not (rendering / "out").exists()


def test_a_field_only_a_server_fills_is_unknown_with_a_message_not_a_crash(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(
        rendering,
        extra=SERVICE
        + (
            'sw.export("ip", svc.spec.apply(lambda s: s["clusterIP"]))\n'
            'sw.export("port", svc.spec["ports"][0]["port"])\n'
        ),
    )
    code, out = run(capsys, "preview")
    assert code == 0, out
    assert "stack output ip is not known: it reads svc, which is rendered to a file" in out
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert "stack output ip is not known: it reads svc" in out
    code, out = run(capsys, "stack", "output", "--json")
    assert '"ip": null' in out and '"port": 80' in out, out


def test_a_rendered_input_read_only_a_server_fills_fails_its_step_saying_why(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(
        rendering,
        extra=SERVICE
        + ('k8s.core.v1.ConfigMap("reads", data={"ip": svc.spec["clusterIP"]}, opts=opts)\n'),
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 1, out
    assert "input data.ip is not known: it reads svc, which is rendered to a file" in out, out


def test_a_yaml_program_takes_the_provider_option(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (rendering / "Stackwright.yaml").write_text(
        """name: shop
runtime: yaml
resources:
  render:
    type: pulumi:providers:kubernetes
    properties:
      renderYamlToDirectory: rendered
  settings:
    type: kubernetes:core/v1:ConfigMap
    properties:
      metadata: {name: settings}
      data: {color: blue}
    options:
      provider: ${render}
"""
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert tree(rendering / "rendered") == {
        "1-manifest/1-v1_configmap_default_settings.yaml": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "settings",
                "namespace": "default",
                "labels": {"app.kubernetes.io/managed-by": "stackwright"},
                "annotations": {
                    "stackwright.io/stack": "dev",
                    "stackwright.io/urn": "urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::settings",
                },
            },
            "data": {"color": "blue"},
        }
    }


def test_a_secret_read_from_another_resource_is_refused_and_not_written(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(
        rendering,
        extra=(
            "import stackwright.kx as kx\n"
            'password = kx.RandomPassword("pw", length=16)\n'
            'k8s.core.v1.ConfigMap("cfg", data={"pw": password.result}, opts=opts)\n'
        ),
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 2 and out.count("\n") == 1, out  # refused before anything runs
    assert "ConfigMap cfg: its data.pw is secret" in out, out
    assert not (rendering / "out").exists()


def test_a_secret_known_only_once_read_fails_its_step_at_its_line_named_once(
    stack: Stack, tmp_path: Path
) -> None:
    """A cluster's Secret's data, secret only once read, refused at the rendered step: its
    failure leads with the resource's line, and names it once (against the fake cluster)."""
    out = tmp_path / "out"

    def declare(p: Program) -> None:
        creds = k8s.core.v1.Secret("creds", data={"pw": "aHVudGVy"})
        render = k8s.Provider("render", render_yaml_to_directory=str(out))
        k8s.core.v1.ConfigMap(
            "cfg", data={"pw": creds.data["pw"]}, opts=sw.ResourceOptions(provider=render)
        )

    summary = stack.up(declare)

    (failure,) = summary.failures
    line = inspect.getsourcelines(declare)[1] + 3  # the ConfigMap's
    assert failure.startswith(
        f"{__file__}:{line}: kubernetes:core/v1:ConfigMap cfg: its data.pw is secret, "
    ), failure
    assert failure.count("ConfigMap cfg") == 1 and not out.exists()


def test_a_custom_kind_no_rendered_crd_declares_is_written_as_given_with_a_warning(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(
        rendering,
        extra=(
            'k8s.apiextensions.CustomResource("g1", api_version="example.org/v1", '
            'kind="Gadget", metadata={"namespace": "tools"}, spec={"a": 1}, opts=opts)\n'
            'k8s.apiextensions.CustomResource("g2", api_version="example.org/v1", '
            'kind="Gadget", spec={"a": 2}, opts=opts)\n'
        ),
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert out.count("Gadget (example.org/v1) is no built-in kind") == 1, out
    gadgets = {n: o for n, o in tree(rendering / "out").items() if "_gadget_" in n}
    assert sorted(o["metadata"].get("namespace", "") for o in gadgets.values()) == ["", "tools"]  # type: ignore[attr-defined]
    assert any("_gadget_tools_g1-" in n for n in gadgets)
    # In the order a manifest is written in, though the program gives spec first.
    assert all(list(o) == ["apiVersion", "kind", "metadata", "spec"] for o in gadgets.values())
    assert run(capsys, "destroy", "--yes")[0] == 0
    assert list((rendering / "out").rglob("*")) == []


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        (
            'k8s.core.v1.ConfigMapPatch("p", metadata={"name": "x"}, data={"a": "b"}, opts=opts)',
            "a Patch changes an object in a cluster",
        ),
        (
            'k8s.helm.Release("r", chart="oci://example.com/chart", namespace="web", opts=opts)',
            "a Helm release is installed in a cluster: render the chart's objects with helm.Chart",
        ),
    ],
)
def test_what_only_a_cluster_can_take_is_refused(
    declared: str, said: str, rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(rendering, extra=declared + "\n")
    code, out = run(capsys, "preview")
    assert code == 2 and out.count("\n") == 1 and said in out, out
    assert not (rendering / "out").exists()


def test_a_stack_that_names_a_local_cluster_does_not_start_it_to_render(
    rendering: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As `stackwright new` writes a stack's config: the default provider's local cluster.
    (rendering / "Stackwright.dev.yaml").write_text("config:\n  kubernetes:cluster: local\n")
    for command in (["preview"], ["up", "--yes"], ["refresh", "--yes"], ["destroy", "--yes"]):
        code, out = run(capsys, *command)
        assert code == 0, out
        assert "started the local cluster" not in out, out
    assert not (tmp_path / "home" / "clusters").exists()


def test_an_object_whose_file_name_would_be_too_long_gets_a_shortened_one(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name of Kubernetes' longest (253 characters) with its kind and namespace is longer
    than a file name can be (255 bytes): the file's name ends in a hash instead (the
    write failed with `File name too long`)."""
    long = ".".join(c * 63 for c in "abc") + "." + "d" * 61
    assert len(long) == 253
    write_program(
        rendering,
        extra=(
            f'k8s.core.v1.ConfigMap("long", metadata={{"name": "{long}"}}, data={{"k": "v"}}, '
            "opts=opts)\n"
        ),
    )
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    files = tree(rendering / "out")
    (name,) = [n for n, o in files.items() if o["metadata"]["name"] == long]  # type: ignore[index]
    assert len(Path(name).name) == 255 and name.startswith("1-manifest/1-v1_configmap_default_a")
    assert not any(p.name.startswith(".") for p in (rendering / "out").rglob("*"))
    code, out = run(capsys, "refresh", "--yes")  # read back where it was written
    assert code == 0 and "deleted outside" not in out and "drifted" not in out, out
    assert run(capsys, "destroy", "--yes")[0] == 0
    assert list((rendering / "out").rglob("*")) == []


def test_a_preview_says_which_file_a_replacement_or_a_removal_leaves_where_it_was(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A provider's folder changed (every object written anew, replaced): the preview says
    the old files go, from the folder they are in, as the up then does (it said only the
    writes; a removal in that run named the new folder)."""
    assert run(capsys, "up", "--yes")[0] == 0
    program = (rendering / "__main__.py").read_text().replace('"out"', '"moved"')
    start, end = program.index("k8s.apiextensions.CustomResource("), program.index("sw.export")
    (rendering / "__main__.py").write_text(program[:start] + program[end:])  # w1 removed
    code, out = run(capsys, "preview")
    assert code == 0, out
    assert "writes moved/1-manifest/1-apps_v1_deployment_" in out, out
    assert "removes out/1-manifest/1-apps_v1_deployment_" in out, out
    assert "removes out/1-manifest/1-example.com_v1_widget_" in out, out
    assert "removes moved/" not in out, out
    assert run(capsys, "up", "--yes")[0] == 0
    assert list((rendering / "out").rglob("*")) == []
    assert len(tree(rendering / "moved")) == 3


def test_a_replacement_into_the_same_file_is_not_said_to_remove_it(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "up", "--yes")[0] == 0
    crd = "urn:sw:dev::shop::kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::widgets"
    code, out = run(capsys, "preview", "--replace", crd)
    assert code == 0 and "+- 1 to replace" in out, out
    assert "writes out/0-crd/apiextensions.k8s.io_v1_customresourcedefinition_widgets." in out
    assert "removes" not in out, out


def test_a_name_with_a_slash_is_refused_naming_the_name(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`a/b` in `default` was read back as `b` in a namespace `default/a`, and refused as
    that namespace: no Kubernetes name holds a '/', and the message says it is the name."""
    declared = 'k8s.core.v1.ConfigMap("c", metadata={"name": "a/b"}, data={"k": "v"}, opts=opts)'
    write_program(rendering, extra=declared + "\n")
    line = (rendering / "__main__.py").read_text().splitlines().index(declared) + 1
    for command in (["preview"], ["up", "--yes"]):
        code, out = run(capsys, *command)
        assert (code, out.count("\n")) == (2, 1), out
        assert out.strip() == (
            f"error: __main__.py:{line}: kubernetes:core/v1:ConfigMap c: its "
            "metadata.name 'a/b' holds a '/', which no Kubernetes name may (a name is part of "
            "the object's URL): give it a name of lowercase letters, digits, '-' and '.'; "
            "nothing was changed"
        ), out
    assert not (rendering / "out").exists()


def test_a_name_with_a_slash_known_only_in_the_run_fails_its_step_naming_the_name(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declared = (
        'k8s.core.v1.ConfigMap("c", metadata={"name": ns.metadata["name"].apply(lambda n: '
        'n + "/b")}, data={"k": "v"}, opts=opts)'
    )
    write_program(rendering, extra=declared + "\n")
    code, out = run(capsys, "up", "--yes")
    assert code == 1, out
    assert "ConfigMap c: its metadata.name 'apps-" in out and "/b' holds a '/'" in out, out
    assert "namespace" not in out.split("ConfigMap c:", 1)[1].splitlines()[0], out


def test_a_temporary_file_a_killed_run_left_is_removed_by_the_next_write_there(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed between writing a file's temporary copy and renaming it left the copy;
    the next run that writes the folder removes it (its writer is gone). Never a file of
    another name, nor a copy a running process is writing."""
    import subprocess
    import sys

    assert run(capsys, "up", "--yes")[0] == 0
    folder = rendering / "out" / "1-manifest"
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(ended.stdout)
    killed = folder / f".stackwright-{dead}-abcd_123.tmp"
    earlier = folder / ".tmp-k9x2m_q1"  # an earlier version's, an hour old
    running = folder / f".stackwright-{os.getppid()}-abcd_123.tmp"  # its writer runs
    young = folder / ".tmp-zzzzzzzz"  # an earlier version's, being written
    users = [folder / n for n in (".tmp-notes.yaml", "draft.tmp", ".stackwright-1-x.tmp")]
    for path in (killed, earlier, running, young, *users):
        path.write_text("kind: ConfigMap\n")
    os.utime(earlier, (time.time() - 3600,) * 2)
    run(capsys, "up", "--yes")  # writes nothing: no change
    assert killed.exists() and earlier.exists()
    write_program(rendering, replicas=5)
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert not killed.exists() and not earlier.exists()
    assert running.exists() and young.exists() and all(p.exists() for p in users)
    for path in (running, young, *users):
        path.unlink()
    crd_folder = rendering / "out" / "0-crd"
    (crd_folder / killed.name).write_text("")  # a removal's folder too: destroy leaves none
    assert run(capsys, "destroy", "--yes")[0] == 0
    assert list((rendering / "out").rglob("*")) == []


def test_a_temporary_file_left_under_this_runs_own_pid_is_removed_once_stale(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A container's runs often get one pid: a copy a killed run left under the pid this run
    has is a leftover once older than any write takes, not one this run is writing."""
    assert run(capsys, "up", "--yes")[0] == 0
    folder = rendering / "out" / "1-manifest"
    stale, fresh = (
        folder / f".stackwright-{os.getpid()}-{n}.tmp" for n in ("abcd_123", "wxyz_789")
    )
    for path in (stale, fresh):
        path.write_text("kind: ConfigMap\n")
    os.utime(stale, (time.time() - 3600,) * 2)
    write_program(rendering, replicas=5)
    assert run(capsys, "up", "--yes")[0] == 0
    assert not stale.exists() and fresh.exists()


def test_a_temporary_file_named_with_a_pid_no_process_can_have_is_a_leftover_not_a_crash(
    rendering: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy's name says its writer's pid; one wider than the kernel's pid type (made by
    hand, or on another system) made the check for its writer crash the run."""
    assert run(capsys, "up", "--yes")[0] == 0
    folder = rendering / "out" / "1-manifest"
    impossible = [folder / f".stackwright-{pid}-abcdefgh.tmp" for pid in (99999999999, 0)]
    for path in impossible:
        path.write_text("kind: ConfigMap\n")
    write_program(rendering, replicas=5)
    code, out = run(capsys, "up", "--yes")
    assert code == 0, out
    assert not any(path.exists() for path in impossible)
