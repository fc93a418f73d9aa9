"""`k8s.helm.Chart`: real Helm renders the test chart; each object becomes a child resource."""

from __future__ import annotations

import contextlib
import json
import ssl
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackwright.errors import UsageError
from stackwright.kubernetes.core.v1 import ConfigMap
from stackwright.kubernetes.helm import Chart, Release
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import Output, dependencies_of
from stackwright.sdk.resource import ResourceOptions

WEBAPP = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
VALUES = {"image": {"tag": "1.29"}}


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Program]:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))  # the chart cache
    with running(Program(project="shop", stack="dev")) as prog:
        yield prog


def names(chart: Chart) -> list[str]:
    return list(chart.resources)


def test_every_object_becomes_a_child_named_by_kind_namespace_and_name(program: Program) -> None:
    chart = Chart("demo", chart=WEBAPP, values=VALUES, namespace="shop")
    assert names(chart) == [
        "CustomResourceDefinition:widgets.example.com",  # crds/ first
        "Job:shop/demo-webapp-migrate",  # the pre-install hook
        "Service:shop/demo-redis",  # the subchart
        "StatefulSet:shop/demo-redis",
        "ClusterRole:demo-webapp-reader",  # cluster-scoped: no namespace
        "ConfigMap:shop/demo-webapp-settings",
        "Deployment:shop/demo-webapp",
        "Service:shop/demo-webapp",
        "Widget:shop/demo-webapp",
    ]  # the test hook Pod and NOTES.txt are not objects of the release
    assert all(child.opts.parent is chart for child in chart.resources.values())
    assert chart.custom is False and chart.resource_type == "kubernetes:helm.sh/v4:Chart"
    deployment = chart.resources["Deployment:shop/demo-webapp"]
    assert deployment.resource_type == "kubernetes:apps/v1:Deployment"
    assert deployment.urn == (
        "urn:sw:dev::shop::kubernetes:helm.sh/v4:Chart$kubernetes:apps/v1:Deployment"
        "::Deployment:shop/demo-webapp"
    )
    spec = deployment.props["spec"]
    container = spec["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.29"  # required value given
    assert [p["name"] for p in container["ports"]] == ["http", "metrics"]  # range
    assert container["resources"] == {"limits": {"memory": "128Mi"}}  # toYaml
    labels = deployment.props["metadata"]["labels"]
    assert labels["helm.sh/chart"] == "webapp-1.2.0"  # include of _helpers.tpl
    crd = chart.resources["CustomResourceDefinition:widgets.example.com"]
    assert "namespace" not in crd.props["metadata"]
    assert program.resources[0] is chart and len(program.resources) == 10


def test_pre_install_hooks_come_first_and_the_objects_depend_on_them(program: Program) -> None:
    chart = Chart("demo", chart=WEBAPP, values=VALUES, namespace="shop")
    hook = chart.resources["Job:shop/demo-webapp-migrate"]
    assert hook.opts.depends_on == ()
    for name, child in chart.resources.items():
        if name.startswith("CustomResourceDefinition:"):
            assert child.opts.depends_on == ()  # crds/ need nothing
        elif name != "Job:shop/demo-webapp-migrate":
            assert hook in child.opts.depends_on, name


def test_post_hooks_depend_on_the_objects_and_hook_weights_chain(
    program: Program, tmp_path: Path
) -> None:
    chart_dir = tmp_path / "hooks"
    (chart_dir / "templates").mkdir(parents=True)
    (chart_dir / "Chart.yaml").write_text("apiVersion: v2\nname: hooks\nversion: 0.1.0\n")

    def cm(name: str, hook: str | None = None, weight: int = 0) -> str:
        notes = f'  annotations: {{"helm.sh/hook": "{hook}", "helm.sh/hook-weight": "{weight}"}}\n'
        return f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n" + (
            notes if hook else ""
        )

    (chart_dir / "templates" / "all.yaml").write_text(
        cm("app")
        + cm("first", "pre-install", -1)
        + cm("second", "pre-upgrade,pre-install", 3)
        + cm("after", "post-install")
        + cm("on-delete", "pre-delete")
        + cm("check", "test")
    )
    chart = Chart("h", chart=chart_dir)
    r = chart.resources
    assert list(r) == ["ConfigMap:first", "ConfigMap:second", "ConfigMap:app", "ConfigMap:after"]
    assert r["ConfigMap:second"].opts.depends_on == (r["ConfigMap:first"],)
    assert set(r["ConfigMap:app"].opts.depends_on) == {r["ConfigMap:first"], r["ConfigMap:second"]}
    assert r["ConfigMap:app"] in r["ConfigMap:after"].opts.depends_on


def test_values_override_defaults_after_value_files_in_order(
    program: Program, tmp_path: Path
) -> None:
    first = tmp_path / "first.yaml"
    first.write_text("replicas: 5\nsettings:\n  LOG_LEVEL: debug\n")
    second = tmp_path / "second.yaml"
    second.write_text("replicas: 7\n")
    chart = Chart(
        "demo",
        chart=WEBAPP,
        values={**VALUES, "settings": {"EXTRA": "1"}, "redis": {"enabled": False}},
        value_files=[first, second],
        namespace="shop",
    )
    assert chart.resources["Deployment:shop/demo-webapp"].props["spec"]["replicas"] == 7
    assert chart.resources["ConfigMap:shop/demo-webapp-settings"].props["data"] == {
        "EXTRA": "1",
        "FEATURE_X": "on",
        "LOG_LEVEL": "debug",
    }
    assert "StatefulSet:shop/demo-redis" not in chart.resources  # subchart condition off


def test_skip_crds_prefix_transformations_and_skip_await(program: Program) -> None:
    marker = Chart("marker", chart=WEBAPP, values=VALUES, resource_prefix="m")
    seen: list[ResourceOptions] = []

    def drop_widgets(obj: dict[str, Any], opts: ResourceOptions) -> ResourceOptions | None:
        seen.append(opts)
        if obj["kind"] == "Widget":
            obj.clear()
            return None
        obj["metadata"].setdefault("labels", {})["team"] = "web"
        return ResourceOptions(depends_on=[marker])

    chart = Chart(
        "demo",
        chart=WEBAPP,
        values=VALUES,
        skip_crds=True,
        transformations=[drop_widgets],
        resource_prefix="blue",
        skip_await=True,
    )
    assert "blue-Deployment:demo-webapp" in chart.resources
    assert not any("Widget" in n or "CustomResourceDefinition" in n for n in chart.resources)
    assert all(isinstance(opts, ResourceOptions) for opts in seen)
    for child in chart.resources.values():
        assert child.opts.parent is chart and marker in child.opts.depends_on
        assert child.props["metadata"]["labels"]["team"] == "web"
        assert child.props["metadata"]["annotations"]["stackwright.io/skip-await"] == "true"


def test_a_transformation_may_drop_an_object_as_pulumi_writes_it(program: Program) -> None:
    def omit_services(obj: dict[str, Any], opts: ResourceOptions) -> None:
        if obj["kind"] == "Service":
            obj["apiVersion"], obj["kind"] = "v1", "List"

    chart = Chart("demo", chart=WEBAPP, values=VALUES, transformations=[omit_services])
    assert "Deployment:demo-webapp" in chart.resources
    assert not any(name.startswith(("Service:", "List:")) for name in chart.resources)


def test_every_template_but_partials_and_notes_is_rendered_as_helm_does(
    program: Program, tmp_path: Path
) -> None:
    # Helm installs what any template renders, whatever its extension; only `_`-prefixed
    # partials and NOTES.txt are not manifests (`helm template` prints the same).
    chart = tmp_path / "tpl"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: tpl\nversion: 0.1.0\n")
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n"
    (chart / "templates" / "settings.tpl").write_text(config_map.format("from-tpl"))
    (chart / "templates" / "more.txt").write_text(config_map.format("from-txt"))
    (chart / "templates" / "_helpers.tpl").write_text('{{- define "x" }}y{{ end }}')
    (chart / "templates" / "NOTES.txt").write_text("Thanks for installing {{ .Release.Name }}")
    rendered = Chart("demo", chart=chart, namespace="shop")
    assert names(rendered) == ["ConfigMap:shop/from-txt", "ConfigMap:shop/from-tpl"]


def test_resource_policy_keep_retains_the_object_as_helm_uninstall_does(
    program: Program, tmp_path: Path
) -> None:
    chart = tmp_path / "keep"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: keep\nversion: 0.1.0\n")
    (chart / "templates" / "objects.yaml").write_text(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n"
        '  annotations: {"helm.sh/resource-policy": keep}\n'
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
    )
    rendered = Chart("demo", chart=chart, namespace="shop")
    assert rendered.resources["PersistentVolumeClaim:shop/data"].opts.retain_on_delete
    assert not rendered.resources["ConfigMap:shop/settings"].opts.retain_on_delete


def test_a_tgz_renders_as_the_directory_does(program: Program, tmp_path: Path) -> None:
    archive = tmp_path / "webapp-1.2.0.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(WEBAPP, arcname="webapp")
    chart = Chart("demo", chart=str(archive), values=VALUES, namespace="shop")
    assert len(chart.resources) == 9


def test_config_outputs_and_secrets_in_values(program: Program) -> None:
    chart = Chart(
        "demo",
        chart=WEBAPP,
        values={"image": {"tag": Output.secret("1.29")}, "settings": {"TOKEN": "visible"}},
        namespace="shop",
    )
    deployment = chart.resources["Deployment:shop/demo-webapp"]
    image = deployment.props["spec"]["template"]["spec"]["containers"][0]["image"]
    assert isinstance(image, Output) and image.is_secret
    assert deployment.props["spec"]["replicas"] == 2


def test_a_secret_value_makes_secret_only_what_it_reaches(program: Program) -> None:
    # Every field of every object secret would remember each of their strings ("shop",
    # "true", "ConfigMap", the objects' names) as a secret, and every message and line of
    # the display would show them as [secret].
    from stackwright.errors import _known_secrets

    chart = Chart(
        "demo",
        chart=WEBAPP,
        values={"image": {"tag": Output.secret("s3cr3t-tag")}, "settings": {"A": "visible"}},
        namespace="shop",
    )
    deployment = chart.resources["Deployment:shop/demo-webapp"].props
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert isinstance(image, Output) and image.is_secret
    settings = chart.resources["ConfigMap:shop/demo-webapp-settings"].props
    assert settings["data"]["A"] == "visible"
    assert {"shop", "visible", "ConfigMap", "demo-webapp", "nginx"}.isdisjoint(_known_secrets)
    assert "nginx:s3cr3t-tag" in _known_secrets  # what the secret reached is masked too


def test_values_from_another_resources_state_make_every_field_wait_for_it(
    program: Program,
) -> None:
    other = Chart("other", chart=WEBAPP, values=VALUES, resource_prefix="o")
    source = other.resources["o-Deployment:other-webapp"]
    chart = Chart("demo", chart=WEBAPP, values={"image": {"tag": source.output("metadata", "uid")}})
    assert names(chart) == [n.replace("o-", "").replace("other", "demo") for n in names(other)]
    deployment = chart.resources["Deployment:demo-webapp"].props
    # Identity stays plain (the engine names and orders by it); the rest waits for `source`.
    assert deployment["kind"] == "Deployment" and deployment["metadata"]["name"] == "demo-webapp"
    spec = deployment["spec"]
    assert isinstance(spec, Output) and dependencies_of(spec) == {source} and not spec.is_secret
    # The placeholder rendering is the shape ordering rules read: the envFrom reference.
    container = spec.shape["template"]["spec"]["containers"][0]
    assert container["envFrom"] == [{"configMapRef": {"name": "demo-webapp-settings"}}]
    assert container["image"].startswith("nginx:sw-unknown-")


def test_an_object_named_after_a_live_value_is_a_usage_error(
    program: Program, tmp_path: Path
) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: named\nversion: 0.1.0\n")
    (tmp_path / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"
    )
    other = Chart("other", chart=WEBAPP, values=VALUES)
    uid = other.resources["Deployment:other-webapp"].output("metadata", "uid")
    with pytest.raises(UsageError, match="name and namespace must be known while the program"):
        Chart("demo", chart=tmp_path, values={"name": uid})


def test_a_chart_namespace_or_version_from_a_live_value_is_a_usage_error(
    program: Program,
) -> None:
    # Pulumi's Chart takes Inputs; Helm renders here while the program runs.
    page = ConfigMap("page", data={"a": "1"})
    live = page.output("metadata", "name")
    for args, kwargs in [
        ((), {"chart": live}),
        ((live,), {}),
        ((WEBAPP,), {"namespace": live}),
        ((WEBAPP,), {"version": live}),
    ]:
        key = next(iter(kwargs), "chart")
        said = rf"Helm chart 'web'( \(\S+webapp\))?: {key} must be a plain string while the"
        with pytest.raises(UsageError, match=said):
            Chart("web", *args, **kwargs)


def test_a_missing_required_value_is_helms_own_message(program: Program) -> None:
    with pytest.raises(UsageError) as caught:
        Chart("demo", chart=WEBAPP, namespace="shop")
    message = str(caught.value)
    assert "Helm chart 'demo'" in message
    assert "webapp/templates/deployment.yaml:19" in message
    assert "image.tag is required: set values.image.tag" in message
    assert program.resources == []  # nothing registered


def test_missing_chart_and_value_files_name_the_file(program: Program, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no chart directory or .tgz at .*nope"):
        Chart("demo", chart=tmp_path / "nope")
    with pytest.raises(UsageError, match=r"cannot read value file .*missing.yaml"):
        Chart("demo", chart=WEBAPP, value_files=[tmp_path / "missing.yaml"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(UsageError, match=r"value file .*bad.yaml is not valid YAML"):
        Chart("demo", chart=WEBAPP, value_files=[bad])
    # Valid YAML, but no map: said as such, not as YAML Helm could not parse.
    listed = tmp_path / "list.yaml"
    listed.write_text("- replicas: 3\n")
    with pytest.raises(
        UsageError, match=r"value file .*list.yaml holds a list, where Helm takes a map"
    ):
        Chart("demo", chart=WEBAPP, value_files=[listed])
    # A lone value is not quoted: a file given by mistake may hold a token.
    token = tmp_path / "token.yaml"
    token.write_text("ghp_0123456789abcdefTOKEN\n")
    with pytest.raises(UsageError) as lone:
        Chart("demo", chart=WEBAPP, value_files=[token])
    assert "holds a single value, where Helm takes a map" in str(lone.value), lone.value
    assert "TOKEN" not in str(lone.value)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe a: 1\n")
    with pytest.raises(UsageError) as caught:
        Chart("demo", chart=WEBAPP, value_files=[binary])
    assert str(caught.value).endswith(
        f": value file {binary} is not UTF-8 text (byte 0xff at offset 0): save it as UTF-8"
    )


def test_bad_rendered_yaml_and_template_errors_name_the_file(
    program: Program, tmp_path: Path
) -> None:
    chart_dir = tmp_path / "broken"
    (chart_dir / "templates").mkdir(parents=True)
    (chart_dir / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
    (chart_dir / "templates" / "cm.yaml").write_text("kind: ConfigMap\nmetadata: {name: [x\n")
    with pytest.raises(UsageError) as caught:
        Chart("b", chart=chart_dir)
    message = str(caught.value)  # libyaml's wording differs from PyYAML's: not asserted
    assert "\n" not in message
    assert ": broken/templates/cm.yaml rendered invalid YAML at line 3, column 1: " in message
    assert message.endswith(
        "(while parsing a flow sequence from line 2, column 18); fix the template"
    )
    (chart_dir / "templates" / "cm.yaml").write_text("{{ .Values.nope.deeper }}\n")
    with pytest.raises(UsageError, match=r"Helm chart 'b'.*broken/templates/cm.yaml"):
        Chart("b", chart=chart_dir)
    (chart_dir / "templates" / "cm.yaml").write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(
        UsageError, match=r"document 1 of broken/templates/cm.yaml has no apiVersion"
    ):
        Chart("b", chart=chart_dir)


def test_chart_options_reach_the_component(program: Program) -> None:
    parent = Chart("outer", chart=WEBAPP, values=VALUES, resource_prefix="x")
    chart = Chart("demo", chart=WEBAPP, values=VALUES, opts=ResourceOptions(parent=parent))
    assert chart.opts.parent is parent
    assert chart.resources["Deployment:demo-webapp"].parent_types() == (
        "kubernetes:helm.sh/v4:Chart",
        "kubernetes:helm.sh/v4:Chart",
    )


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[str]:
    with serving_repository(tmp_path) as url:
        yield url


@contextlib.contextmanager
def serving_repository(
    tmp_path: Path,
    login: tuple[str, str] | None = None,
    chart: Path = WEBAPP,
    tls: ssl.SSLContext | None = None,
) -> Iterator[str]:
    """`chart` (the test chart) as a .tgz with an index.yaml, served over HTTP on 127.0.0.1
    (HTTPS with `tls`); with `login` (user, password), to requests carrying it alone."""
    import functools
    import http.server
    import threading

    import helm_python as helm
    import yaml

    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    served = tmp_path / "repo"
    served.mkdir()
    with tarfile.open(served / f"{meta['name']}-{meta['version']}.tgz", "w:gz") as tar:
        tar.add(chart, arcname=meta["name"])

    class Repository(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if not refused_without(login, self):
                super().do_GET()

    handler = functools.partial(Repository, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    url = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    helm.repo_index_generate(served, base_url=url)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def refused_without(login: tuple[str, str] | None, request: Any) -> bool:
    """Whether the server `request` (an `http.server` handler) came to answered 401 for
    lack of `login` (user, password) as HTTP basic auth."""
    import base64

    wanted = login and "Basic " + base64.b64encode(":".join(login).encode()).decode()
    if not wanted or request.headers.get("Authorization") == wanted:
        return False
    request.send_response(401)
    request.send_header("WWW-Authenticate", 'Basic realm="charts"')
    request.send_header("Content-Length", "0")
    request.end_headers()
    return True


def test_a_chart_from_an_http_repository(program: Program, repository: str) -> None:
    chart = Chart(
        "demo",
        chart="webapp",
        version="1.2.0",
        repository_opts={"repo": repository},
        values=VALUES,
        namespace="shop",
    )
    assert len(chart.resources) == 9
    with pytest.raises(UsageError, match=r"Helm chart 'nope'.*nope"):
        Chart("nope", chart="nope", repository_opts={"repo": repository})
    with pytest.raises(UsageError, match="unknown repository_opts"):
        Chart("demo2", chart="webapp", repository_opts={"repo": repository, "rpeo": 1})
    for kind in (Chart, Release):  # a URL alone, as `helm install --repo URL` takes it
        with pytest.raises(UsageError, match=r"repository_opts must be a mapping, not a str"):
            kind("demo3", chart="webapp", repository_opts=repository)  # type: ignore[arg-type]


def refusals(
    chart: str, opts: dict[str, Any], more: dict[str, dict[str, Any]] | None = None
) -> dict[str, str]:
    """Why a Chart of `chart` with `repository_opts` `opts` is refused without credentials
    ("none"), with wrong ones ("wrong") and with each of `more`: its message past the
    component's name."""
    found = {}
    cases = {"none": opts, "wrong": {**opts, "username": "ci", "password": "wrong-pw-1"}}
    for name, given in {**cases, **(more or {})}.items():
        with pytest.raises(UsageError) as caught:
            Chart(name, chart=chart, repository_opts=given, values=VALUES)
        where, _, said = str(caught.value).partition(f": Helm chart {name!r} ({chart}): ")
        assert where.startswith(f"{__file__}:"), caught.value  # the line declaring the chart
        found[name] = said
    return found


def test_a_chart_from_a_repository_that_requires_credentials(
    program: Program, tmp_path: Path
) -> None:
    """As `helm pull --username --password`; the password may be a secret Output (a config
    secret). A refusal is one line naming the repository and the fix, without the password."""
    with serving_repository(tmp_path, login=("ci", "pw-Qz81x")) as url:
        opts = {"repo": url, "username": "ci", "password": Output.secret("pw-Qz81x")}
        chart = Chart("demo", chart="webapp", repository_opts=opts, values=VALUES)
        assert len(chart.resources) == 9
        shown = json.dumps([chart.props, *(c.props for c in chart.resources.values())])
        assert "pw-Qz81x" not in shown  # the options are not inputs of the chart or its objects

        # Helm sends a URL's own credentials for the index alone, not the archive.
        in_url = {"repo": url.replace("://", "://ci:pw-Qz81x@")}
        as_user = {"repo": url.replace("://", "://pw-Qz81x@")}  # a token, no password
        said = refusals("webapp", {"repo": url}, {"in url": in_url, "token": as_user})
        # Helm pulls while the program runs: another resource's live state is not known then.
        token = ConfigMap("token", metadata={"name": "token"}).metadata["uid"]
        with pytest.raises(UsageError, match="repository_opts must be known while the program"):
            Chart("late", chart="webapp", repository_opts={**opts, "password": token})
    assert said == {
        "none": f"the chart repository {url} requires credentials (401 Unauthorized); give "
        "them as repository_opts username and password",
        "wrong": f"the chart repository {url} refused the credentials given (401 Unauthorized); "
        "check repository_opts username and password",
        "in url": f"the chart repository {url.replace('://', '://ci:[secret]@')} requires "
        "credentials (401 Unauthorized); give them as repository_opts username and password",
        "token": f"the chart repository {url.replace('://', '://[secret]@')} requires "
        "credentials (401 Unauthorized); give them as repository_opts username and password",
    }


def test_a_pinned_remote_chart_is_pulled_once_and_then_read_from_the_cache(
    program: Program, tmp_path: Path
) -> None:
    with serving_repository(tmp_path) as url:
        Chart(
            "first", chart="webapp", version="1.2.0", repository_opts={"repo": url}, values=VALUES
        )
    (cached,) = (tmp_path / "home" / "cache" / "charts").glob("*.tgz")
    # The repository is gone: the pinned version comes from the cache.
    again = Chart(
        "again",
        chart="webapp",
        version="1.2.0",
        repository_opts={"repo": url},
        values=VALUES,
        skip_crds=True,  # the first chart declared the CRD already
    )
    assert len(again.resources) == 8
    # An unpinned version may move: it is pulled every time, and so fails without the server;
    # so may a range (Helm's `--version ^1.2.0`): its newest match is another version later.
    with pytest.raises(UsageError, match="Helm chart 'latest'"):
        Chart("latest", chart="webapp", repository_opts={"repo": url}, values=VALUES)
    (tmp_path / "again").mkdir()
    with serving_repository(tmp_path / "again") as moved:
        ranged = {"chart": "webapp", "version": "^1.2.0", "repository_opts": {"repo": moved}}
        Chart("ranged", **ranged, values=VALUES, skip_crds=True)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Helm chart 'ranged-again'"):
        Chart("ranged-again", **ranged, values=VALUES, skip_crds=True)  # type: ignore[arg-type]
    assert list(cached.parent.glob("*.tgz")) == [cached]


def test_secret_values_keep_the_objects_identity_plain(program: Program) -> None:
    chart = Chart("demo", chart=WEBAPP, values={"image": {"tag": Output.secret("1.29")}})
    metadata = chart.resources["Deployment:demo-webapp"].props["metadata"]
    assert metadata["name"] == "demo-webapp"
    assert metadata["labels"]["app.kubernetes.io/instance"] == "demo"  # not reached


def test_a_secret_that_changes_the_objects_makes_every_field_secret(program: Program) -> None:
    chart = Chart(
        "demo", chart=WEBAPP, values={**VALUES, "redis": {"enabled": Output.secret(True)}}
    )
    redis = chart.resources["StatefulSet:demo-redis"].props
    assert redis["metadata"]["name"] == "demo-redis"
    assert isinstance(redis["spec"], Output) and redis["spec"].is_secret


def test_objects_of_the_charts_own_cluster_scoped_crds_stay_cluster_scoped(
    program: Program, tmp_path: Path
) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: scoped\nversion: 0.1.0\n")
    crd = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %(plural)s.example.com}
spec:
  group: example.com
  scope: %(scope)s
  names: {kind: %(kind)s, plural: %(plural)s}
  versions: [{name: v1, served: true, storage: true,
              schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
"""
    (tmp_path / "crds" / "crds.yaml").write_text(
        crd % {"plural": "gateways", "kind": "Gateway", "scope": "Cluster"}
        + "---\n"
        + crd % {"plural": "routes", "kind": "Route", "scope": "Namespaced"}
    )
    (tmp_path / "templates" / "objects.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Gateway\nmetadata: {name: edge}\n---\n"
        "apiVersion: example.com/v1\nkind: Route\nmetadata: {name: web}\n"
    )
    chart = Chart("scoped", chart=tmp_path, namespace="shop")
    assert names(chart) == [
        "CustomResourceDefinition:gateways.example.com",
        "CustomResourceDefinition:routes.example.com",
        "Gateway:edge",
        "Route:shop/web",
    ]
    assert "namespace" not in chart.resources["Gateway:edge"].props["metadata"]


@pytest.fixture
def oci_registry(tmp_path: Path) -> Iterator[str]:
    with serving_registry(tmp_path) as reference:
        yield reference


@contextlib.contextmanager
def serving_registry(
    tmp_path: Path, login: tuple[str, str] | None = None, tls: ssl.SSLContext | None = None
) -> Iterator[str]:
    """An OCI registry on 127.0.0.1 (the distribution API's read side) holding the test
    chart as Helm stores it: a manifest whose config is the Chart.yaml as JSON and whose
    one layer is the chart's .tgz; with `login` (user, password), to requests carrying it
    (HTTP basic auth) alone."""
    import hashlib
    import http.server
    import threading

    import yaml

    archive = tmp_path / "webapp-1.2.0.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(WEBAPP, arcname="webapp")
    chart_blob = archive.read_bytes()
    config_blob = json.dumps(yaml.safe_load((WEBAPP / "Chart.yaml").read_text())).encode()

    def digest(data: bytes) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()

    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.cncf.helm.config.v1+json",
                "digest": digest(config_blob),
                "size": len(config_blob),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                    "digest": digest(chart_blob),
                    "size": len(chart_blob),
                }
            ],
        }
    ).encode()
    blobs = {digest(b): b for b in (chart_blob, config_blob)}
    requested: list[str] = []

    class Registry(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def answer(self, body: bytes, media: str, digest_: str | None = None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            if digest_:
                self.send_header("Docker-Content-Digest", digest_)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            if refused_without(login, self):
                return
            requested.append(self.path)
            path = self.path.split("?")[0]
            if path == "/v2/":
                self.answer(b"{}", "application/json")
            elif path == "/v2/charts/webapp/tags/list":
                self.answer(
                    json.dumps({"name": "charts/webapp", "tags": ["1.2.0"]}).encode(),
                    "application/json",
                )
            elif path in (
                "/v2/charts/webapp/manifests/1.2.0",
                f"/v2/charts/webapp/manifests/{digest(manifest)}",
            ):
                self.answer(
                    manifest, "application/vnd.oci.image.manifest.v1+json", digest(manifest)
                )
            elif path.startswith("/v2/charts/webapp/blobs/") and path.rsplit("/", 1)[1] in blobs:
                found = path.rsplit("/", 1)[1]
                self.answer(blobs[found], "application/octet-stream", found)
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"oci://127.0.0.1:{server.server_address[1]}/charts/webapp"
    finally:
        server.shutdown()
        server.server_close()
    assert any("/blobs/" + digest(chart_blob) in p for p in requested), requested


def test_a_chart_from_an_oci_registry(program: Program, oci_registry: str) -> None:
    chart = Chart(
        "demo",
        chart=oci_registry,
        version="1.2.0",
        repository_opts={"plain_http": True},
        values=VALUES,
        namespace="shop",
    )
    local = Chart("local", chart=WEBAPP, values=VALUES, namespace="shop", resource_prefix="l")
    assert len(chart.resources) == len(local.resources) == 9
    deployment = chart.resources["Deployment:shop/demo-webapp"].props
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"


def test_a_chart_from_an_oci_registry_that_requires_credentials(
    program: Program, tmp_path: Path
) -> None:
    """As `helm pull oci://… --username --password` (Helm's pull alone hands them to an HTTP
    repository, not to a registry: a registry client logs in first)."""
    with serving_registry(tmp_path, login=("ci", "pw-Qz81x")) as reference:
        opts = {"plain_http": True, "username": "ci", "password": Output.secret("pw-Qz81x")}
        chart = Chart("demo", chart=reference, repository_opts=opts, values=VALUES)
        assert len(chart.resources) == 9

        said = refusals(reference, {"plain_http": True})
    assert said == {
        "none": f"the chart registry {reference} requires credentials (401 Unauthorized); give "
        "them as repository_opts username and password",
        "wrong": f"the chart registry {reference} refused the credentials given (401 "
        "Unauthorized); check repository_opts username and password",
    }


def test_a_registry_whose_certificate_is_not_trusted(program: Program, tmp_path: Path) -> None:
    """insecure_skip_tls_verify reaches a registry through a login; helm-python-sdk's pull
    without one ignores it (its registry client has no such setting): the refusal then says
    so, instead of asking for the option given."""
    from stackwright.localcluster.credentials import ensure_credentials

    certificate = ensure_credentials(tmp_path / "tls")
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(certificate.server_cert, certificate.server_key)
    with serving_registry(tmp_path, login=("ci", "pw-Qz81x"), tls=tls) as reference:
        login = {"username": "ci", "password": "pw-Qz81x", "insecure_skip_tls_verify": True}
        assert len(Chart("demo", chart=reference, repository_opts=login, values=VALUES).resources)
        said = refusals(reference, {}, {"skip": {"insecure_skip_tls_verify": True}})
    untrusted = (
        f"the chart registry {reference} has a certificate this machine does not trust (x509: "
        "certificate signed by unknown authority); "
    )
    assert said == {
        "none": f"{untrusted}name its CA bundle in the SSL_CERT_FILE environment variable, or "
        "set repository_opts insecure_skip_tls_verify",
        "wrong": f"{untrusted}name its CA bundle in the SSL_CERT_FILE environment variable, or "
        "set repository_opts insecure_skip_tls_verify",
        "skip": f"{untrusted}insecure_skip_tls_verify reaches a registry only through a login "
        "(repository_opts username and password): name its CA bundle in the SSL_CERT_FILE "
        "environment variable",
    }


def test_a_failed_pull_leaves_no_registry_login_on_disk(
    program: Program, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The login's credentials file is in the pull's temporary folder: removed when the pull
    fails too, not when the failure is garbage collected (or never, for a killed run)."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with serving_registry(tmp_path, login=("ci", "pw-Qz81x")) as reference:
        opts = {"plain_http": True, "username": "ci", "password": "pw-Qz81x"}
        with pytest.raises(UsageError, match=r"9\.9\.9: not found") as caught:
            Chart("demo", chart=reference, version="9.9.9", repository_opts=opts)
        assert caught.value.__cause__ is not None  # the failure, alive still
        assert list(scratch.iterdir()) == []
        Chart("demo", chart=reference, version="1.2.0", repository_opts=opts, values=VALUES)


def test_a_yaml_program_spells_repository_opts_in_camel_case(
    oci_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YAML programs write `repositoryOpts: {plainHttp: true}`, as Pulumi YAML spells keys;
    the Python spelling there is refused naming the YAML one."""
    from stackwright.engine.program import run_program
    from stackwright.errors import UsageError

    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    program = tmp_path / "Stackwright.yaml"

    def chart(opts: str) -> str:
        return (
            "name: shop\nruntime: yaml\nresources:\n  demo:\n"
            "    type: kubernetes:helm.sh/v4:Chart\n"
            f"    properties: {{chart: '{oci_registry}', version: 1.2.0, namespace: shop, "
            "values: {image: {tag: '1.29'}}, "
            f"repositoryOpts: {opts}}}\n"
        )

    program.write_text(chart("{plainHttp: true}"))
    made = run_program(program, project="shop", stack="dev", config={})
    assert sum(r.props.get("kind") == "Deployment" for r in made.resources) == 1
    program.write_text(chart("{plain_http: true}"))
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config={})
    assert str(caught.value) == (
        f"{program}:4: resource demo: unknown repositoryOpts key 'plain_http'; did you mean "
        "'plainHttp'? it takes insecureSkipTlsVerify, password, plainHttp, repo, username"
    )


def test_a_template_error_over_several_lines_is_one_line(program: Program, tmp_path: Path) -> None:
    chart = tmp_path / "nil"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: nil\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
        "data: {a: {{ .Values.missing.deeper.key | quote }}}\n"
    )
    with pytest.raises(UsageError) as caught:
        Chart("demo", chart=chart, namespace="shop")
    message = str(caught.value)
    assert "\n" not in message and "nil pointer" in message, message
    assert "nil/templates/cm.yaml" in message


@pytest.mark.parametrize(
    "declare",
    [
        # Pulumi's helm.v4.Chart: the options second, the chart by keyword.
        lambda o: Chart("demo", o, chart=WEBAPP, values=VALUES, namespace="shop"),
        # Stackwright's own forms.
        lambda o: Chart("demo", WEBAPP, values=VALUES, namespace="shop", opts=o),
        lambda o: Chart("demo", chart=WEBAPP, values=VALUES, namespace="shop", opts=o),
        lambda o: Chart("demo", WEBAPP, None, None, VALUES, None, "shop", opts=o),
    ],
)
def test_a_charts_options_may_come_second_as_pulumis_chart_takes_them(
    program: Program, declare: Any
) -> None:
    chart = declare(ResourceOptions(protect=True))
    assert chart.opts.protect is True
    assert chart.props["chart"] == str(WEBAPP)
    assert chart.resources["Deployment:shop/demo-webapp"].opts.protect is True


@pytest.mark.parametrize(
    "declare",
    [
        # Pulumi's helm.v3.Release: the options second, the chart by keyword.
        lambda o: Release("web", o, chart=str(WEBAPP), namespace="shop"),
        lambda o: Release("web", str(WEBAPP), namespace="shop", opts=o),
        lambda o: Release("web", chart=str(WEBAPP), namespace="shop", opts=o),
    ],
)
def test_a_releases_options_may_come_second_as_pulumis_release_takes_them(
    program: Program, declare: Any
) -> None:
    release = declare(ResourceOptions(protect=True))
    assert release.opts.protect is True
    assert release.props["chart"] == str(WEBAPP) and release.props["namespace"] == "shop"


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (lambda o: Chart("demo", o),
         "Chart 'demo' names no chart: write Chart('demo', chart=...) with a local chart's "
         "path, a chart name and repository_opts, or an oci:// reference"),
        (lambda o: Release("web", o, opts=o), "Release 'web': ResourceOptions given twice"),
        (lambda o: Release("web", WEBAPP, chart=WEBAPP), "Release 'web': chart given twice"),
        (lambda o: Chart("demo", {"chart": str(WEBAPP)}, o),
         "Chart 'demo': the second argument must be the chart (a local chart's path, a chart "
         "name or an oci:// reference) or a ResourceOptions, not a dict; Stackwright takes no "
         "args object: write Chart('demo', chart=..., opts=sw.ResourceOptions(...)), the other "
         "fields as keyword arguments"),
    ],
)  # fmt: skip
def test_a_chart_or_release_without_a_chart_or_given_one_twice_is_one_line(
    program: Program, declare: Any, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        declare(ResourceOptions())
    text = str(caught.value)
    assert message in text and len(text.splitlines()) == 1
    assert text.startswith(f"{__file__}:"), text
    assert program.resources == []


def test_a_transformation_may_return_options_with_pulumis_none_lists(program: Program) -> None:
    """Pulumi's list options default to None: a transformation returning such options (as
    a ported one does) orders its object after the hooks as any other."""

    def protect(obj: dict[str, Any], opts: ResourceOptions) -> ResourceOptions:
        return ResourceOptions(protect=True, depends_on=None, aliases=None)  # type: ignore[arg-type]

    chart = Chart("demo", chart=WEBAPP, values=VALUES, namespace="shop", transformations=[protect])
    deployment = chart.resources["Deployment:shop/demo-webapp"]
    assert deployment.opts.protect is True and deployment.opts.aliases == ()
    assert deployment.opts.depends_on == (chart.resources["Job:shop/demo-webapp-migrate"],)
