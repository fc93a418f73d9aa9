"""A value of the wrong type in a built-in kind's field (`replicas: "three"`) is refused
before anything changes, from the official schema, in one line naming the file and line,
the resource and the field: the API server refuses it anyway, but a preview skips the dry
run of an object whose namespace the same run creates, and an `up` would have applied the
objects before it. Int-or-string fields and quantities take either."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.yaml_program import run_yaml_program
from stackwright.errors import UsageError, forget_secrets
from stackwright.sdk.context import Program

PROGRAM = """
name: shop
runtime: yaml
config:
  size: {type: string, default: three}
resources:
  ns:
    type: kubernetes:core/v1:Namespace
    properties:
      metadata: {name: shop}
  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      metadata: {namespace: "${ns.metadata.name}"}
      spec:
        replicas: REPLICAS
        selector: {matchLabels: {app: web}}
        strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
              - name: web
                image: nginx:1.29
                resources: {limits: {cpu: 500m, memory: 1}}
  svc:
    type: kubernetes:core/v1:Service
    properties:
      metadata: {namespace: "${ns.metadata.name}"}
      spec:
        selector: {app: web}
        ports: [{port: 80, targetPort: http}]
"""


def _program(tmp_path: Path, replicas: str) -> Path:
    path = tmp_path / "Stackwright.yaml"
    path.write_text(textwrap.dedent(PROGRAM).lstrip().replace("REPLICAS", replicas))
    return path


def _line(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("replicas", ['"three"', "${size}"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_text_in_a_number_field_of_a_yaml_program_is_refused_before_anything_changes(
    tmp_path: Path, stack: Stack, replicas: str, dry_run: bool
) -> None:
    path = _program(tmp_path, replicas)
    with pytest.raises(UsageError) as refused:
        stack.run("up", lambda _: run_yaml_program(path), dry_run=dry_run)
    assert str(refused.value) == (
        f"{path}:{_line(path, 'replicas:')}: kubernetes:apps/v1:Deployment web: spec.replicas "
        'is the string "three", where a Deployment takes an integer; nothing was changed'
    )
    assert stack.fake.calls == []


def test_a_yaml_programs_field_in_a_list_is_named_at_its_own_line(
    tmp_path: Path, stack: Stack
) -> None:
    path = _program(tmp_path, "2")
    ports = "ports:\n          - {port: 80, targetPort: http}\n          - name: tls\n            port: on"
    path.write_text(path.read_text().replace("ports: [{port: 80, targetPort: http}]", ports))
    with pytest.raises(UsageError) as refused:
        stack.preview(lambda _: run_yaml_program(path))
    assert str(refused.value).startswith(
        f"{path}:{_line(path, 'port: on')}: kubernetes:core/v1:Service svc: spec.ports[1].port "
        "is the boolean true, where a Service takes an integer"
    )


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_text_that_is_no_quantity_is_refused_before_anything_changes(
    tmp_path: Path, stack: Stack, dry_run: bool
) -> None:
    """`memory: 1GB` (a quantity says 1G or 1Gi) the API server refuses as it refuses a
    boolean; the preview cannot dry-run it in the namespace the same run creates, and `up`
    would have created that namespace first."""
    path = _program(tmp_path, "2")
    path.write_text(path.read_text().replace("memory: 1}", "memory: 1GB}"))
    with pytest.raises(UsageError) as refused:
        stack.run("up", lambda _: run_yaml_program(path), dry_run=dry_run)
    assert str(refused.value) == (
        f"{path}:{_line(path, 'memory: 1GB')}: kubernetes:apps/v1:Deployment web: "
        'spec.template.spec.containers[0].resources.limits.memory is the string "1GB", where a '
        "Deployment takes a quantity: a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, "
        '…: "1Gi"); nothing was changed'
    )
    assert stack.fake.calls == []


def test_int_or_string_fields_and_quantities_take_either(tmp_path: Path, stack: Stack) -> None:
    path = _program(tmp_path, "2")
    assert stack.up(lambda _: run_yaml_program(path)).ok


def test_a_python_programs_field_of_the_wrong_type_is_refused_at_its_line(stack: Stack) -> None:
    line = 0

    def declare(_: Program) -> None:
        nonlocal line
        k8s.core.v1.Namespace("ns", metadata={"name": "shop"})
        line = declare.__code__.co_firstlineno + 4
        k8s.core.v1.Service(
            "svc",
            metadata={"namespace": "shop"},
            spec={"ports": [{"port": 80, "protocol": "TCP"}, {"port": "443"}]},
        )

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    assert str(refused.value) == (
        f'{__file__}:{line}: kubernetes:core/v1:Service svc: spec.ports[1].port is the string "443", where a '
        "Service takes an integer; nothing was changed"
    )
    assert stack.fake.calls == []


def test_a_secret_of_the_wrong_type_is_not_shown(stack: Stack) -> None:
    def declare(_: Program) -> None:
        k8s.apps.v1.Deployment(
            "web",
            spec={"replicas": sw.Output.secret("hunter22"), "paused": False},
        )

    try:
        with pytest.raises(UsageError) as refused:
            stack.up(declare)
    finally:
        forget_secrets()
    message = str(refused.value)
    assert "hunter22" not in message
    assert message.endswith(
        "kubernetes:apps/v1:Deployment web: spec.replicas is a string ([secret]), where a Deployment takes an "
        "integer; nothing was changed"
    )


def test_inputs_as_recorded_are_not_checked_again(
    tmp_path: Path, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an earlier run applied the server took: a no-op run (auto-named objects too)
    validates nothing, and a change is checked again."""
    import stackwright.localcluster.decoding as decoding

    checked: list[str] = []
    real = decoding.builtin_mismatches

    def counting(obj: dict[str, object]) -> object:
        checked.append(str(obj["kind"]))
        return real(obj)

    monkeypatch.setattr(decoding, "builtin_mismatches", counting)
    path = _program(tmp_path, "2")
    assert stack.up(lambda _: run_yaml_program(path)).ok
    assert sorted(checked) == ["Deployment", "Namespace", "Service"]
    checked.clear()
    stack.preview(lambda _: run_yaml_program(path))
    assert stack.up(lambda _: run_yaml_program(path)).ok
    assert checked == []
    path.write_text(path.read_text().replace("replicas: 2", "replicas: 3"))
    stack.preview(lambda _: run_yaml_program(path))
    assert checked == ["Deployment"]


def test_a_whole_number_out_of_its_fields_range_is_told_the_range(stack: Stack) -> None:
    def declare(_: Program) -> None:
        k8s.apps.v1.Deployment("web", spec={"replicas": 2**40})

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    assert str(refused.value).endswith(
        "kubernetes:apps/v1:Deployment web: spec.replicas is the number 1099511627776, where a "
        "Deployment takes an integer from -2147483648 to 2147483647; nothing was changed"
    )


@pytest.mark.parametrize(
    ("value", "shown"), [(True, "the boolean true"), ({"cores": 1}, "an object")]
)
def test_a_quantity_that_is_no_string_or_number_is_refused(
    stack: Stack, value: object, shown: str
) -> None:
    """A quantity is a string ("500m", "1Gi") or a number: `cpu: True` the API server
    refuses, as Kubernetes' Quantity reads no boolean."""
    container = {"name": "web", "image": "nginx", "resources": {"limits": {"cpu": value}}}

    def declare(_: Program) -> None:
        k8s.core.v1.Pod("web", spec={"containers": [container]})

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    assert str(refused.value).endswith(
        f"kubernetes:core/v1:Pod web: spec.containers[0].resources.limits.cpu is {shown}, "
        'where a Pod takes a quantity (a string such as "500m" or "1Gi", or a number); '
        "nothing was changed"
    )
    assert stack.fake.calls == []


MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: fine}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  replicas: three
"""


def test_an_object_of_a_manifest_file_is_refused_at_its_line_in_the_file(
    stack: Stack, tmp_path: Path
) -> None:
    """The field to fix is in the manifest, not in the program that loads it: the message
    says the file's line, and which document of which file the object is."""
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    for declare in (
        lambda _: k8s.yaml.ConfigGroup("app", files=[str(manifest)]),
        lambda _: k8s.yaml.ConfigFile("app", file=str(manifest)),
    ):
        with pytest.raises(UsageError) as refused:
            stack.up(declare)
        assert str(refused.value) == (
            f"{manifest}:{_line(manifest, 'replicas:')}: kubernetes:apps/v1:Deployment "
            f"Deployment:web (from {manifest} (document 2)): spec.replicas is the string "
            '"three", where a Deployment takes an integer; nothing was changed'
        )
        assert stack.fake.calls == []


def test_an_object_of_a_yaml_program_s_config_group_is_refused_at_its_manifest_line(
    tmp_path: Path, stack: Stack
) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    path = tmp_path / "Stackwright.yaml"
    path.write_text(
        "name: shop\nruntime: yaml\nresources:\n  app:\n"
        "    type: kubernetes:yaml/v2:ConfigGroup\n"
        f"    properties:\n      files: [{manifest}]\n"
    )
    with pytest.raises(UsageError) as refused:
        stack.up(lambda _: run_yaml_program(path))
    assert str(refused.value).startswith(
        f"{manifest}:{_line(manifest, 'replicas:')}: kubernetes:apps/v1:Deployment "
    )
    assert f"(from {manifest} (document 2)): spec.replicas is the string" in str(refused.value)


def test_an_object_without_a_file_names_its_source_at_the_programs_line(
    stack: Stack,
) -> None:
    """A YAML string, a dict or a chart's template has no file line to name: the program's
    line, and where in it the object came from."""
    line = 0

    def declare(_: Program) -> None:
        nonlocal line
        line = declare.__code__.co_firstlineno + 3
        k8s.yaml.ConfigGroup("app", yaml=[MANIFEST])

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    assert str(refused.value).startswith(
        f"{__file__}:{line}: kubernetes:apps/v1:Deployment Deployment:web (from yaml[0] of "
        "ConfigGroup 'app' (document 2)): spec.replicas is the string \"three\""
    )


def test_an_object_of_a_chart_names_its_template(stack: Stack, tmp_path: Path) -> None:
    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
    line = 0

    def declare(_: Program) -> None:
        nonlocal line
        line = declare.__code__.co_firstlineno + 3
        k8s.helm.Chart("demo", chart=str(chart), values={"image": {"tag": "1"}, "replicas": "x"})

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    said = str(refused.value)
    assert said.startswith(f"{__file__}:{line}: kubernetes:apps/v1:Deployment "), said
    assert "(from webapp/templates/deployment.yaml of " in said, said
    assert 'spec.replicas is the string "x", where a Deployment takes an integer' in said, said


def test_the_check_loads_the_decoder_alone_not_the_local_cluster_s_validation() -> None:
    """Every `preview` and `up` of a program with built-in kinds makes the check: it loaded
    all of the local cluster's validation (~5,500 lines, ~5 ms of imports) for its decoder."""
    code = textwrap.dedent(
        f"""
        import sys, tempfile
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from engine_stack import PROJECT, STACK, Stack
        import stackwright.kubernetes as k8s
        from stackwright.state import open_backend

        with tempfile.TemporaryDirectory() as folder:
            backend = open_backend("file://" + folder + "/state.db")
            backend.create_stack(PROJECT, STACK)
            try:
                declare = lambda _: k8s.apps.v1.Deployment("web", spec={{"replicas": 2}})
                assert Stack(backend).up(declare).ok
            finally:
                backend.close()
        print(sorted(m for m in sys.modules if m.startswith("stackwright.localcluster.")))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip().splitlines()[-1]
    assert "stackwright.localcluster.decoding" in loaded  # the check ran
    assert "stackwright.localcluster.validation" not in loaded
