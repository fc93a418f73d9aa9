"""k8s.yaml.ConfigFile / ConfigGroup: documents to child resources (no cluster)."""

from __future__ import annotations

import dataclasses
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.sdk.context import Program, running
from stackwright.sdk.resource import ResourceOptions

APP = """\
# The app, as a team already keeps it.
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
# an empty document follows
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: fast   # trailing comment
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: shop}
    spec: {ports: [{port: 80}]}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: shop}
    spec: {replicas: 1}
---
apiVersion: v1
kind: ConfigMapList
items:
  - metadata: {name: extra, namespace: shop}
    data: {a: "1"}
...
"""


@pytest.fixture
def program() -> Iterator[Program]:
    with running(Program(project="p", stack="dev")) as prog:
        yield prog


def children(program: Program) -> dict[str, Any]:
    return {r.resource_name: r for r in program.resources if r.custom}


def test_each_document_is_a_child_named_by_kind_namespace_and_name(
    program: Program, tmp_path: Path
) -> None:
    (tmp_path / "app.yaml").write_text(APP)
    app = k8s.yaml.ConfigFile("app", file=str(tmp_path / "app.yaml"))
    found = children(program)
    assert list(found) == [
        "Namespace:shop",
        "ConfigMap:shop/settings",
        "Service:shop/web",
        "Deployment:shop/web",
        "ConfigMap:shop/extra",
    ]
    assert app.urn == "urn:sw:dev::p::kubernetes:yaml:ConfigFile::app"
    assert found["Deployment:shop/web"].urn == (
        "urn:sw:dev::p::kubernetes:yaml:ConfigFile$kubernetes:apps/v1:Deployment::Deployment:shop/web"
    )
    assert all(r.opts.parent is app for r in found.values())
    assert not app.custom
    assert found["ConfigMap:shop/settings"].props == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop"},
        "data": {"mode": "fast"},
    }
    # Items of a typed list get the list's apiVersion and the item kind.
    assert found["ConfigMap:shop/extra"].props["apiVersion"] == "v1"
    assert found["ConfigMap:shop/extra"].resource_type == "kubernetes:core/v1:ConfigMap"
    assert set(app.resources) == set(found)


def test_get_resource_by_kind_or_group_version_kind(program: Program) -> None:
    app = k8s.yaml.ConfigGroup("app", yaml=[APP])
    web = app.get_resource("apps/v1/Deployment", "web", "shop")
    assert web is app.resources["Deployment:shop/web"]
    assert app.get_resource("Service", "web", namespace="shop") is app.resources["Service:shop/web"]
    assert app.get_resource("v1/Namespace", "shop") is app.resources["Namespace:shop"]
    with pytest.raises(UsageError, match="has no v1/Service 'api' in namespace 'shop'"):
        app.get_resource("v1/Service", "api", "shop")
    with pytest.raises(UsageError):
        app.get_resource("apps/v2/Deployment", "web", "shop")


def test_group_takes_globs_strings_and_dicts(program: Program, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
    group = k8s.yaml.ConfigGroup(
        "g",
        files=[str(tmp_path / "*.yaml")],
        yaml="apiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
        objs=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}],
    )
    assert list(group.resources) == ["Namespace:a", "Namespace:b", "Namespace:c", "Namespace:d"]
    assert group.urn.endswith("::kubernetes:yaml:ConfigGroup::g")


def test_transformations_prefix_and_skip_await(program: Program) -> None:
    def relabel(obj: dict[str, Any], opts: ResourceOptions) -> None:
        obj["metadata"].setdefault("labels", {})["team"] = "shop"

    def protect_namespaces(obj: dict[str, Any], opts: ResourceOptions) -> ResourceOptions | None:
        return dataclasses.replace(opts, protect=True) if obj["kind"] == "Namespace" else None

    def rename(obj: dict[str, Any], opts: ResourceOptions) -> None:
        if obj["kind"] == "Service":
            obj["metadata"]["name"] = "frontend"

    group = k8s.yaml.ConfigGroup(
        "g",
        yaml=[APP],
        transformations=[relabel, protect_namespaces, rename],
        resource_prefix="blue",
        skip_await=True,
    )
    found = children(program)
    assert "blue-Service:shop/frontend" in found, "named after the transformations"
    assert "blue-Namespace:shop" in found
    for resource in found.values():
        metadata = resource.props["metadata"]
        assert metadata["labels"]["team"] == "shop"
        assert metadata["annotations"]["stackwright.io/skip-await"] == "true"
        assert resource.opts.parent is group
    assert found["blue-Namespace:shop"].opts.protect
    assert not found["blue-ConfigMap:shop/settings"].opts.protect


def test_a_transformation_drops_an_object(program: Program, tmp_path: Path) -> None:
    # As a Chart's transformations do (`obj.clear()`), and as Pulumi's documentation
    # writes it for ConfigFile (turn the object into an empty `List`).
    def clear_services(obj: dict[str, Any], opts: ResourceOptions) -> None:
        if obj["kind"] == "Service":
            obj.clear()

    def omit_settings(obj: dict[str, Any], opts: ResourceOptions) -> None:
        if obj.get("kind") == "ConfigMap" and obj["metadata"]["name"] == "settings":
            obj["apiVersion"] = "v1"
            obj["kind"] = "List"

    (tmp_path / "app.yaml").write_text(APP)
    app = k8s.yaml.ConfigFile(
        "app", file=str(tmp_path / "app.yaml"), transformations=[clear_services, omit_settings]
    )
    assert list(app.resources) == ["Namespace:shop", "Deployment:shop/web", "ConfigMap:shop/extra"]
    assert list(children(program)) == list(app.resources)


def test_bad_yaml_names_file_document_and_line(program: Program, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: [unclosed\n"
    )
    with pytest.raises(UsageError) as info:
        k8s.yaml.ConfigFile("bad", file=str(bad))
    message = str(info.value)
    assert str(bad) in message
    assert "document 2" in message
    assert "line 9" in message
    assert not program.resources, "nothing declared on bad input"


def test_a_file_that_is_not_utf8_names_the_file(program: Program, tmp_path: Path) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe name: x\n")
    with pytest.raises(UsageError) as info:
        k8s.yaml.ConfigFile("bin", file=str(binary))
    assert str(info.value).endswith(
        f": manifest file {binary} is not UTF-8 text (byte 0xff at offset 0): save it as UTF-8"
    )


def test_document_without_name_names_file_and_document(program: Program, tmp_path: Path) -> None:
    path = tmp_path / "noname.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\n# second\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n"
    )
    # Named with the component and its line, as a missing file or bad YAML is.
    with pytest.raises(
        UsageError,
        match=r"^\S*\.py:\d+: ConfigFile 'x': document 2 of .*noname.yaml \(line 4\) has no "
        "metadata.name",
    ):
        k8s.yaml.ConfigFile("x", file=str(path))
    assert not [r for r in program.resources if r.custom], "nothing of a bad file is declared"
    with pytest.raises(UsageError, match=r"document 1 of yaml\[0\].* has no apiVersion, kind"):
        k8s.yaml.ConfigGroup("y", yaml=["metadata: {name: a}\n"])
    with pytest.raises(UsageError, match="is not a mapping"):
        k8s.yaml.ConfigGroup("z", yaml=["- just\n- a list\n"])


def test_missing_file_glob_and_duplicates_are_usage_errors(
    program: Program, tmp_path: Path
) -> None:
    # Each names the component and the line that declared it, as a Helm chart's does.
    with pytest.raises(UsageError) as missing:
        k8s.yaml.ConfigFile("m", file=str(tmp_path / "missing.yaml"))
    line = missing.traceback[0].lineno + 1  # pytest counts from 0
    assert str(missing.value).startswith(
        f"{__file__}:{line}: ConfigFile 'm': cannot read manifest file {tmp_path}/missing.yaml"
    )
    with pytest.raises(UsageError, match=r"^\S+:\d+: ConfigGroup 'g': files pattern .* matches no"):
        k8s.yaml.ConfigGroup("g", files=[str(tmp_path / "*.yml")])
    with pytest.raises(
        UsageError, match=r"^\S+:\d+: kustomize.Directory 'k': kustomization direct"
    ):
        k8s.kustomize.Directory("k", directory=str(tmp_path / "nope"))
    doc = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
    with pytest.raises(
        UsageError, match=r"^\S+:\d+: ConfigGroup 'd': Namespace 'a' is declared twice"
    ):
        k8s.yaml.ConfigGroup("d", yaml=[doc, doc])


def test_file_from_an_http_url(program: Program, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(APP)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        app = k8s.yaml.ConfigFile("remote", file=f"{url}/app.yaml")
        assert "Deployment:shop/web" in app.resources
        with pytest.raises(UsageError, match=r"cannot fetch manifest .*/nope\.yaml"):
            k8s.yaml.ConfigFile("nope", file=f"{url}/nope.yaml")
    finally:
        server.shutdown()
        server.server_close()


def test_kustomize_directory_shares_the_registration(program: Program, tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [cm.yaml]\nnamespace: shop\ncommonLabels: {team: shop}\n"
    )
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    built = k8s.kustomize.Directory("k", directory=str(tmp_path), resource_prefix="x")
    assert list(built.resources) == ["x-ConfigMap:shop/a"]
    assert built.urn.endswith("::kubernetes:kustomize:Directory::k")
    assert built.resources["x-ConfigMap:shop/a"].props["metadata"]["labels"] == {"team": "shop"}


def test_kustomize_directory_namespace_places_what_names_none(
    program: Program, tmp_path: Path
) -> None:
    # As Pulumi's kustomize.v2.Directory(namespace=...): a namespaced object that names none
    # goes there; one that names its own keeps it; cluster-scoped kinds (built-in, or of a
    # CRD built with them that says `scope: Cluster`) name none.
    (tmp_path / "kustomization.yaml").write_text("resources: [all.yaml]\n")
    (tmp_path / "all.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: own}\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n---\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: gizmos.example.com}\n"
        "spec: {group: example.com, scope: Cluster, names: {kind: Gizmo, plural: gizmos}}\n---\n"
        "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n"
    )
    built = k8s.kustomize.Directory("k", directory=str(tmp_path), namespace="shop")
    assert sorted(built.resources) == [
        "ClusterRole:r",
        "ConfigMap:own/b",
        "ConfigMap:shop/a",
        "CustomResourceDefinition:gizmos.example.com",
        "Gizmo:g",
    ]
    with pytest.raises(UsageError, match="namespace must be a plain string while the program"):
        live = built.resources["ConfigMap:shop/a"].output("metadata", "name")
        k8s.kustomize.Directory("k2", directory=str(tmp_path), namespace=live)  # type: ignore[arg-type]


def test_kustomize_errors(
    program: Program, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: [absent.yaml]\n")
    with pytest.raises(UsageError, match=r"could not build .*absent\.yaml") as caught:
        k8s.kustomize.Directory("k", directory=str(tmp_path))
    assert "run.go" not in str(caught.value)  # kubectl's own log line repeats the error
    with pytest.raises(UsageError, match="does not exist"):
        k8s.kustomize.Directory("k", directory=str(tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError, match="neither `kustomize` nor `kubectl`"):
        k8s.kustomize.Directory("k", directory=str(tmp_path))


def test_values_stay_as_kubernetes_reads_them(program: Program) -> None:
    group = k8s.yaml.ConfigGroup(
        "g",
        yaml=[
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
            "data: {released: 2025-01-01, at: '2025-01-01T10:00:00Z', n: '3'}\n"
        ],
    )
    data = group.resources["ConfigMap:a"].props["data"]
    assert data == {"released": "2025-01-01", "at": "2025-01-01T10:00:00Z", "n": "3"}


NAMESPACE_A = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"


@pytest.mark.parametrize(
    "declare",
    [
        # Pulumi's yaml.v2 and kustomize.v2: the options second, the source by keyword.
        lambda f, d, o: k8s.yaml.ConfigFile("c", o, file=f),
        lambda f, d, o: k8s.yaml.ConfigGroup("c", o, files=[f]),
        lambda f, d, o: k8s.kustomize.Directory("c", o, directory=d),
        # Pulumi's yaml and kustomize: the options after the sources.
        lambda f, d, o: k8s.yaml.ConfigFile("c", f, o),
        lambda f, d, o: k8s.yaml.ConfigGroup("c", [f], None, o),
        lambda f, d, o: k8s.kustomize.Directory("c", d, o),
        # Stackwright's own forms.
        lambda f, d, o: k8s.yaml.ConfigFile("c", f, opts=o),
        lambda f, d, o: k8s.yaml.ConfigFile("c", file=f, opts=o),
        lambda f, d, o: k8s.yaml.ConfigGroup("c", [f], opts=o),
        lambda f, d, o: k8s.yaml.ConfigGroup("c", (f for f in [f]), opts=o),
        lambda f, d, o: k8s.kustomize.Directory("c", d, opts=o),
    ],
)
def test_the_options_go_where_pulumis_classes_take_them(
    program: Program, tmp_path: Path, declare: Any
) -> None:
    """A ported Pulumi program passes its options positionally, where its class takes
    them; they are the options, not a source or transformations."""
    (tmp_path / "a.yaml").write_text(NAMESPACE_A)
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml]\n")
    component = declare(str(tmp_path / "a.yaml"), str(tmp_path), ResourceOptions(protect=True))
    assert component.opts.protect is True
    assert list(component.resources) == ["Namespace:a"]
    assert component.resources["Namespace:a"].opts.protect is True  # the parent's


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (lambda f, o: k8s.yaml.ConfigFile("c", f, file=f),
         "ConfigFile 'c': file given twice, as the second argument and as file=; give it once"),
        (lambda f, o: k8s.yaml.ConfigFile("c", o, file=f, opts=o),
         "ConfigFile 'c': ResourceOptions given twice, as a positional argument and as opts="),
        (lambda f, o: k8s.yaml.ConfigFile("c", f, o, opts=o), "ResourceOptions given twice"),
        (lambda f, o: k8s.yaml.ConfigGroup("c", [f], None, o, opts=o),
         "ResourceOptions given twice"),
        (lambda f, o: k8s.yaml.ConfigFile("c", 3),
         "ConfigFile 'c': the second argument must be the file (a path or an http(s) URL) or a "
         "ResourceOptions, not a int: write ConfigFile('c', file=..., "
         "opts=sw.ResourceOptions(...))"),
        (lambda f, o: k8s.yaml.ConfigGroup("c", {"files": [f]}),
         "not a dict; Stackwright takes no args object: write ConfigGroup('c', files=..., "
         "opts=sw.ResourceOptions(...)), the other fields as keyword arguments"),
        (lambda f, o: k8s.kustomize.Directory("c", [f]),
         "kustomize.Directory 'c': the second argument must be the directory"),
    ],
)  # fmt: skip
def test_a_wrong_second_argument_is_one_line_at_the_programs_line(
    program: Program, tmp_path: Path, declare: Any, message: str
) -> None:
    (tmp_path / "a.yaml").write_text(NAMESPACE_A)
    with pytest.raises(UsageError) as caught:
        declare(str(tmp_path / "a.yaml"), ResourceOptions())
    text = str(caught.value)
    assert message in text and len(text.splitlines()) == 1
    assert text.startswith(f"{__file__}:"), text  # the declaring line, here the lambda's
    assert program.resources == []
