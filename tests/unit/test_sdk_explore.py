"""What an experienced Pulumi user expects of the SDK, checked against the engine and the fake cluster."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.cli.main import main
from stackwright.engine.events import UNKNOWN_TEXT, StepStarted, shown_changes
from stackwright.engine.plan import ABSENT, FieldChange
from stackwright.errors import UsageError
from stackwright.model import make_urn
from stackwright.sdk.config import Config
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import UNKNOWN, Output, Secret
from stackwright.sdk.resource import ComponentResource, ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"
SVC = "kubernetes:core/v1:Service"
SECRET = "kubernetes:core/v1:Secret"


def app_and_dependent(p: Program) -> None:
    app = ComponentResource("acme:web:App", "shop")
    inner = ComponentResource("acme:web:Part", "part", opts=ResourceOptions(parent=app))
    k8s.core.v1.ConfigMap(
        "settings", metadata={"name": "settings"}, data={"a": "1"},
        opts=ResourceOptions(parent=inner),
    )  # fmt: skip
    k8s.core.v1.ConfigMap(
        "after", metadata={"name": "after"}, data={"b": "2"},
        opts=ResourceOptions(depends_on=[app]),
    )  # fmt: skip


def test_depends_on_a_component_waits_for_all_its_children(stack: Stack) -> None:
    stack.fake.fail_apply["settings"] = "denied"

    summary = stack.up(app_and_dependent)

    assert not summary.ok
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings"]
    assert summary.not_done and summary.not_done[0].startswith(f"{CM} after:")

    stack.fake.fail_apply.clear()
    assert stack.up(app_and_dependent).ok
    child = make_urn("dev", "shop", CM, "settings", ("acme:web:App", "acme:web:Part"))
    assert child in stack.recorded(urn(CM, "after")).dependencies

    assert stack.destroy().ok
    deleted = [c.name for c in stack.fake.calls_to("delete")]
    assert deleted.index("after") < deleted.index("settings")


# --- the command line --------------------------------------------------------------------


def printing(project: Path, capsys: pytest.CaptureFixture[str], *lines: str) -> None:
    """The project's program: it prints, then `lines`."""
    body = ["import stackwright as sw", "print('hello from the program')", *lines]
    (project / "__main__.py").write_text("\n".join(body) + "\n")
    capsys.readouterr()


def test_what_a_program_prints_stays_off_the_json_lines(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printing(
        project,
        capsys,
        "sw.export('x', sw.Output.from_input(1).apply(lambda v: print('in apply') or v))",
    )

    main(["preview", "--json"])

    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "summary" and events[-1]["outputs"] == {"x": 1}
    assert "hello from the program" in err and "in apply" in err


# --- configuration -------------------------------------------------------------------------


def test_require_secret_of_a_missing_key_says_to_set_it_as_a_secret() -> None:
    with running(Program(project="shop", stack="dev")), pytest.raises(UsageError) as info:
        Config().require_secret("db_password")
    assert str(info.value) == (
        "missing required configuration shop:db_password for stack dev: "
        "set it with `stackwright config set --secret db_password VALUE`"
    )


def test_typed_secret_getters_as_in_pulumi() -> None:
    config = {"shop:port": "5432", "shop:tls": "true", "shop:ratio": "0.5", "shop:db": '{"a": 1}'}
    prog = Program(project="shop", stack="dev", config=config, secret_keys=frozenset(config))
    with running(prog):
        cfg = Config()
        found = {
            "port": cfg.require_secret_int("port"),
            "tls": cfg.get_secret_bool("tls"),
            "ratio": cfg.require_secret_float("ratio"),
            "db": cfg.get_secret_object("db"),
        }
        assert cfg.get_secret_int("absent") is None
        with pytest.raises(UsageError, match="--secret absent"):
            cfg.require_secret_object("absent")
        with pytest.raises(UsageError, match=r"shop:tls must be an integer \(got \[secret\]\)"):
            cfg.get_secret_int("tls")
    assert prog.notes == []  # read as secrets: no warning about reading them as plain values
    for output in found.values():
        assert output is not None and output.is_secret
    values = {k: v.resolve(lambda r: None) for k, v in found.items() if v is not None}
    assert all(isinstance(v, Secret) for v in values.values())
    assert {k: v.value for k, v in values.items()} == {
        "port": 5432, "tls": True, "ratio": 0.5, "db": {"a": 1},
    }  # fmt: skip


# --- typing -------------------------------------------------------------------------------


def test_the_package_is_marked_typed_so_mypy_checks_programs_against_it() -> None:
    # PEP 561: without the marker (installed with the package), mypy reports `import stackwright`
    # as "missing library stubs or py.typed marker" and checks no typed args of a program.
    import tomllib

    import stackwright

    package = Path(stackwright.__file__).parent
    assert (package / "py.typed").is_file()
    pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["stackwright"]


def test_a_resource_declared_in_an_apply_callback_is_refused_saying_why(stack: Stack) -> None:
    def declare(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        made = settings.metadata["name"].apply(
            lambda name: k8s.core.v1.ConfigMap("inner", data={"of": name})
        )
        sw.export("made", made.apply(lambda _: "made"))

    summary = stack.up(declare)

    assert not summary.ok
    (failure,) = summary.failures
    assert failure.startswith(f"{__file__}:") and ": stack output made: " in failure, failure
    assert "inside an apply callback" in failure and "declare it in the program" in failure


def test_a_resource_declared_in_a_callback_of_an_input_is_refused_at_the_callbacks_line(
    stack: Stack,
) -> None:
    """As for a stack output's: the refusal leads with the line in the callback that
    declared, not only the name of the resource whose input it computes."""

    def declare(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        k8s.core.v1.ConfigMap("user", data={"of": settings.metadata["name"].apply(
            lambda name: k8s.core.v1.ConfigMap("inner", data={"of": name}) and name
        )})  # fmt: skip

    summary = stack.up(declare)

    assert not summary.ok
    (failure,) = summary.failures
    line = inspect.getsourcelines(declare)[1] + 3  # the lambda's
    assert failure.startswith(f"{__file__}:{line}: kubernetes:core/v1:ConfigMap user: "), failure
    assert "inside an apply callback" in failure and "declare it in the program" in failure


def test_snake_case_attributes_find_fields_spelled_with_acronyms() -> None:
    from stackwright.sdk.output import UNKNOWN

    with running(Program(project="p", stack="dev")):
        svc = k8s.core.v1.Service("web", spec={"ports": [{"port": 80}]})
        pod = k8s.core.v1.Pod("pod", spec={"containers": [{"name": "c", "image": "nginx"}]})
    live = {
        svc: {
            "spec": {"clusterIP": "10.0.0.7", "clusterIPs": ["10.0.0.7"], "ipFamilies": ["IPv4"]}
        },
        pod: {"status": {"podIP": "10.1.0.3", "hostIP": "192.168.0.2", "qosClass": "BestEffort"}},
    }

    def read(resource: Any) -> Any:
        return live.get(resource, UNKNOWN)

    assert svc.spec.cluster_ip.resolve(read) == "10.0.0.7"
    assert svc.spec.cluster_ips.resolve(read) == ["10.0.0.7"]
    assert svc.spec.ip_families.resolve(read) == ["IPv4"]
    assert pod.status.pod_ip.resolve(read) == "10.1.0.3"
    assert pod.status.host_ip.resolve(read) == "192.168.0.2"
    assert pod.status.qos_class.resolve(read) == "BestEffort"
    # A field the live object does not hold is None; a name no field of PodStatus is refused.
    assert pod.status.nominated_node_name.resolve(read) is None
    with pytest.raises(AttributeError, match=r"no field status\.no_such_field"):
        pod.status.no_such_field  # noqa: B018


# --- aliases ------------------------------------------------------------------------------


def site(component_type: str, *, aliases: tuple[Any, ...] = (), under: str = "") -> Declare:
    """A component holding a ConfigMap (auto-named, so a replacement would rename it)."""

    def declare(p: Program) -> None:
        app = ComponentResource(component_type, "shop", opts=ResourceOptions(aliases=aliases))
        holder = ComponentResource("acme:web:Part", "part") if under else None
        k8s.core.v1.ConfigMap(
            "settings", data={"a": "1"},
            opts=ResourceOptions(
                parent=holder if under else app,
                aliases=(sw.Alias(parent=app),) if under else (),
            ),
        )  # fmt: skip

    return declare


def test_a_component_whose_type_changes_takes_its_children_along(stack: Stack) -> None:
    stack.up(site("acme:web:App"))
    (name,) = stack.fake.names("ConfigMap")
    stack.fake.calls.clear()

    summary = stack.up(site("acme:web:Site", aliases=(sw.Alias(type_="acme:web:App"),)))

    assert summary.ok and "create" not in summary.counts and "replace" not in summary.counts
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == [name]
    child = make_urn("dev", "shop", CM, "settings", ("acme:web:Site",))
    assert stack.recorded(child).id == name


def test_an_alias_naming_the_old_parent_moves_a_child_without_replacing_it(stack: Stack) -> None:
    stack.up(site("acme:web:App"))
    (name,) = stack.fake.names("ConfigMap")
    stack.fake.calls.clear()

    summary = stack.up(site("acme:web:App", under="part"))

    assert summary.ok and stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == [name]
    child = make_urn("dev", "shop", CM, "settings", ("acme:web:Part",))
    assert stack.recorded(child).id == name


def test_an_alias_that_is_neither_a_urn_nor_an_alias_is_refused() -> None:
    with running(Program(project="shop", stack="dev")):
        with pytest.raises(UsageError, match=r"aliases of .* must be URNs or sw.Alias"):
            k8s.core.v1.ConfigMap("a", opts=ResourceOptions(aliases=[{"name": "old"}]))  # type: ignore[list-item]
        with pytest.raises(UsageError, match="is not a Stackwright URN"):
            k8s.core.v1.ConfigMap("b", opts=ResourceOptions(aliases=["old-name"]))
        with pytest.raises(UsageError, match=r"alias parent of .* is not a Stackwright URN"):
            k8s.core.v1.ConfigMap("c", opts=ResourceOptions(aliases=[sw.Alias(parent="app")]))


def test_a_child_moved_under_a_sibling_while_their_component_is_retyped(stack: Stack) -> None:
    stack.up(site("acme:web:App"))
    (name,) = stack.fake.names("ConfigMap")

    def moved(p: Program) -> None:
        app = ComponentResource(
            "acme:web:Site", "shop", opts=ResourceOptions(aliases=[sw.Alias(type_="acme:web:App")])
        )
        part = ComponentResource("acme:web:Part", "part", opts=ResourceOptions(parent=app))
        k8s.core.v1.ConfigMap(
            "settings", data={"a": "1"},
            opts=ResourceOptions(parent=part, aliases=[sw.Alias(parent=app)]),
        )  # fmt: skip

    assert stack.up(moved).ok
    assert stack.fake.calls_to("delete") == [] and stack.fake.names("ConfigMap") == [name]


# --- drift ----------------------------------------------------------------------------------


def settings(**data: str) -> Declare:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data=data)

    return declare


def test_an_update_after_a_refresh_takes_the_drifted_fields_back_too(stack: Stack) -> None:
    stack.up(settings(mode="fast"))
    stack.fake.edit("ConfigMap", "settings", {"data.mode": "edited"})
    assert stack.refresh().counts == {"drifted": 1}

    # The program changes another field as well: one update, which also takes `mode` back
    # (as a `same` step with drift does) instead of conflicting with kubectl-edit over it.
    summary = stack.up(settings(mode="fast", level="3"))

    assert summary.ok, summary.failures
    assert stack.fake.find("ConfigMap", "settings")["data"] == {"mode": "fast", "level": "3"}  # type: ignore[index]
    assert stack.changes(urn(CM, "settings")) == [
        FieldChange("data.level", ABSENT, "3"),
        FieldChange("data.mode", "edited", "fast"),
    ]


# --- what Pulumi programs call -------------------------------------------------------------


def test_get_stack_and_get_project_name_the_running_program() -> None:
    with running(Program(project="shop", stack="prod")):
        assert (sw.get_stack(), sw.get_project()) == ("prod", "shop")


def test_resource_options_merge_as_pulumi_components_use_it() -> None:
    with running(Program(project="shop", stack="dev")):
        a = k8s.core.v1.ConfigMap("a")
        b = k8s.core.v1.ConfigMap("b")
        parent = ComponentResource("acme:web:App", "app")
    given = ResourceOptions(depends_on=[a], protect=True, ignore_changes=["data.x"])
    merged = ResourceOptions.merge(
        given, ResourceOptions(parent=parent, depends_on=[b], ignore_changes=["data.y"])
    )
    assert merged.parent is parent and merged.protect
    assert list(merged.depends_on) == [a, b]
    assert list(merged.ignore_changes) == ["data.x", "data.y"]
    assert ResourceOptions.merge(None, given) == given
    assert ResourceOptions.merge(given, None) == given
    # A later value that is set wins (Pulumi's `merge`: its own False too); one left unset
    # does not undo an earlier one.
    assert ResourceOptions.merge(given, ResourceOptions(ignore_changes=["data.z"])).protect
    assert ResourceOptions.merge(given, ResourceOptions(protect=False)).protect is False


def test_output_json_dumps_keeps_outputs_and_secrets_inside() -> None:
    with running(Program(project="shop", stack="dev")):
        svc = k8s.core.v1.Service("web", spec={"ports": [{"port": 80}]})
        doc = Output.json_dumps({"ip": svc.spec["clusterIP"], "port": 80})
        secret_doc = Output.json_dumps({"password": Output.secret("hunter22")})
    live = {"spec": {"clusterIP": "10.0.0.7"}}
    assert doc.resolve(lambda r: live) == '{"ip": "10.0.0.7", "port": 80}'
    resolved = secret_doc.resolve(lambda r: live)
    assert isinstance(resolved, Secret) and resolved.value == '{"password": "hunter22"}'
    parsed = Output.json_loads(doc).resolve(lambda r: live)
    assert parsed == {"ip": "10.0.0.7", "port": 80}

    def typed(name: sw.Input[str], labels: sw.Inputs) -> sw.Input[str]:
        return name

    assert typed("a", {"b": doc}) == "a"


# --- preview of an update ------------------------------------------------------------------


def service_and_reader(label: str, secret_value: str = "hunter22") -> Declare:
    def declare(p: Program) -> None:
        svc = k8s.core.v1.Service(
            "web", metadata={"name": "web", "labels": {"v": label}},
            spec={"selector": {"app": "web"}, "ports": [{"port": 80}]},
        )  # fmt: skip
        token = k8s.core.v1.Secret(
            "token", metadata={"name": "token", "labels": {"v": label}},
            string_data={"token": secret_value},
        )  # fmt: skip
        k8s.core.v1.ConfigMap(
            "reader", metadata={"name": "reader"},
            data={"ip": svc.spec.cluster_ip, "token": token.string_data["token"]},
        )  # fmt: skip
        sw.export("ip", svc.spec["clusterIP"])
        sw.export("status", svc.status)

    return declare


def test_a_preview_of_an_update_knows_what_the_servers_dry_run_says(stack: Stack) -> None:
    assert stack.up(service_and_reader("1")).ok
    ip = stack.recorded(urn(SVC, "web")).outputs["spec"]["clusterIP"]

    summary = stack.preview(service_and_reader("2"))

    # The Service's update does not touch its clusterIP: its reader is unchanged, as in
    # Pulumi, whose preview of an update takes the server's dry run for its outputs.
    assert summary.ok
    assert {e.step.urn: e.step.op.value for e in stack.of(StepStarted)} == {
        urn(SVC, "web"): "update", urn(SECRET, "token"): "update", urn(CM, "reader"): "same",
    }  # fmt: skip
    assert summary.outputs["ip"] == ip
    assert summary.outputs["status"] == UNKNOWN_TEXT  # status is the controllers' to change

    # A secret read from an updated object stays secret.
    secret = stack.preview(service_and_reader("3", secret_value="changed-token"))
    reader = [e.step for e in stack.of(StepStarted) if e.step.urn == urn(CM, "reader")]
    assert secret.ok and reader[0].op.value == "update"
    assert reader[0].new is not None and "data.token" in reader[0].new.secret_paths
    assert "changed-token" not in repr(shown_changes(reader[0]))


# --- preview of a create -------------------------------------------------------------------


def config_service_and_readers(p: Program) -> None:
    cm = k8s.core.v1.ConfigMap("cm", data={"a": "1"})  # auto-named
    svc = k8s.core.v1.Service(
        "web", metadata={"labels": {"app": "web"}},
        spec={"type": "NodePort", "selector": {"app": "web"},
              "ports": [{"port": 80}, {"port": 81, "nodePort": 30081}]},
    )  # fmt: skip
    k8s.core.v1.ConfigMap(
        "reader", metadata={"name": "reader", "labels": svc.metadata.labels},
        data={"a": cm.data["a"], "uid": cm.metadata["uid"], "ip": svc.spec.cluster_ip},
    )  # fmt: skip
    sw.export("a", cm.data["a"])
    sw.export("name", cm.metadata["name"])
    sw.export("uid", cm.metadata["uid"])
    sw.export("status", svc.status)
    sw.export("ip", svc.spec["clusterIP"])
    sw.export("type", svc.spec["type"])
    sw.export("ports", [svc.spec.ports[0].node_port, svc.spec.ports[1].node_port])
    sw.export("labels", svc.metadata.labels["app"])
    # A callback reading what is not known yet does not run on a marker for it.
    sw.export("url", svc.spec.apply(lambda s: f"http://{s['clusterIP']}:{s.ports[0].port}"))
    sw.export("got", svc.spec.apply(lambda s: s.get("sessionAffinity", "None")))
    sw.export("port", svc.spec.apply(lambda s: s.ports[0].port))
    # Read whole, a map the cluster adds to (the labels it marks) is not known either.
    sw.export("label_keys", svc.metadata.labels.apply(lambda labels: sorted(labels)))
    sw.export("spec_json", sw.Output.json_dumps(svc.spec))


def test_a_preview_of_a_create_knows_what_the_program_gives_its_object(stack: Stack) -> None:
    """As Pulumi's preview, whose outputs of a create are its inputs: the values the program
    gives are known, to stack outputs and to dependents; what the cluster decides is not,
    even where the server's dry run picked a value (a clusterIP is picked anew at the up)."""
    summary = stack.preview(config_service_and_readers)

    assert summary.ok, summary.failures
    out = summary.outputs
    assert (out["a"], out["labels"], out["port"], out["type"]) == ("1", "web", 80, "NodePort")
    assert out["name"].startswith("cm-")
    for server_set in ("uid", "status", "ip", "url", "got", "label_keys", "spec_json"):
        assert out[server_set] == UNKNOWN_TEXT, server_set
    assert out["ports"] == [UNKNOWN_TEXT, 30081]  # a nodePort the program gave is known
    (reader,) = [e.step.new for e in stack.of(StepStarted) if e.step.urn == urn(CM, "reader")]
    assert reader is not None
    assert reader.inputs["data"] == {"a": "1", "uid": UNKNOWN, "ip": UNKNOWN}
    # Taken whole, the Service's labels are not known: the up marks them.
    assert reader.inputs["metadata"]["labels"] is UNKNOWN
    assert stack.fake.writes() == []

    summary = stack.up(config_service_and_readers)

    assert summary.ok and summary.outputs["a"] == "1"
    assert summary.outputs["ip"].startswith("10.96.") and summary.outputs["url"].startswith("http")
    assert "app.kubernetes.io/managed-by" in summary.outputs["label_keys"]
    assert '"clusterIP"' in summary.outputs["spec_json"]


def secret_and_deployment(p: Program) -> None:
    token = k8s.core.v1.Secret("token", string_data={"token": "hunter22-long"})
    password = sw.Output.secret("s3cr3t-pass")
    app = k8s.apps.v1.Deployment(
        "app", metadata={"name": "app"},
        spec={"selector": {"matchLabels": {"app": "a"}},
              "template": {"metadata": {"labels": {"app": "a"}},
                           "spec": {"containers": [{"name": "a", "image": "nginx",
                                                    "env": [{"name": "P", "value": password}]}]}}},
    )  # fmt: skip
    sw.export("token", token.string_data["token"])
    sw.export("data", token.data)
    sw.export("env", app.spec.template.spec.containers[0].env[0].value)
    sw.export("replicas", app.spec["replicas"])  # the server's default
    k8s.core.v1.ConfigMap("reader", metadata={"name": "r"}, data={"t": token.string_data["token"]})


def test_a_preview_of_a_create_keeps_a_secret_input_secret_and_a_default_unknown(
    stack: Stack,
) -> None:
    summary = stack.preview(secret_and_deployment)

    assert summary.ok, summary.failures
    assert summary.outputs == {
        "token": "[secret]",
        "data": UNKNOWN_TEXT,  # the server makes it of stringData
        "env": "[secret]",
        # Marking the secret inside spec leaves what spec lacks unknown, not absent.
        "replicas": UNKNOWN_TEXT,
    }
    (reader,) = [e.step.new for e in stack.of(StepStarted) if e.step.urn == urn(CM, "reader")]
    assert reader is not None and reader.inputs["data"] == {"t": "hunter22-long"}
    assert "data.t" in reader.secret_paths
    assert "hunter22-long" not in repr(shown_changes(next(
        e.step for e in stack.of(StepStarted) if e.step.urn == urn(CM, "reader")
    )))  # fmt: skip


def settings_fed_by(source: str, mode: str) -> Declare:
    def declare(p: Program) -> None:
        made = k8s.core.v1.ConfigMap("source", metadata={"name": source})
        settings = k8s.core.v1.ConfigMap(
            "settings", metadata={"name": "settings"},
            data={"mode": mode, "source": made.metadata["uid"]},
        )  # fmt: skip
        sw.export("mode", settings.data["mode"])
        sw.export("source", settings.data["source"])

    return declare


def test_a_preview_of_an_update_not_dry_run_knows_the_values_the_program_gives(
    stack: Stack,
) -> None:
    """An update whose inputs are not all known yet (the uid of an object it reads, which is
    replaced) is not dry-run: what the program gives its object is known all the same; the
    value its Output cannot know yet is not."""
    assert stack.up(settings_fed_by("one", "a")).ok

    summary = stack.preview(settings_fed_by("two", "b"))

    assert summary.ok, summary.failures
    ops = {e.step.urn: e.step.op.value for e in stack.of(StepStarted)}
    assert (ops[urn(CM, "source")], ops[urn(CM, "settings")]) == ("replace", "update")
    assert summary.outputs == {"mode": "b", "source": UNKNOWN_TEXT}


def test_exporting_a_resource_exports_its_live_object(stack: Stack) -> None:
    def declare(p: Program) -> None:
        cm = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        app = ComponentResource("acme:web:App", "app")
        app.register_outputs({"name": cm.metadata["name"]})
        sw.export("cm", cm)
        sw.export("both", {"app": app, "list": [cm]})

    summary = stack.up(declare)

    assert summary.ok, summary.failures
    assert summary.outputs["cm"]["data"] == {"a": "1"}
    assert summary.outputs["cm"]["metadata"]["name"] == "settings"
    assert summary.outputs["both"]["app"] == {"name": "settings"}
    assert summary.outputs["both"]["list"][0]["kind"] == "ConfigMap"


def test_what_a_program_prints_stays_off_a_policy_checks_json_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printing(
        project,
        capsys,
        "import stackwright.kubernetes as k8s",
        "k8s.core.v1.ConfigMap('settings', data={'a': '1'})",
    )

    main(["policy", "check", str(project), "--format", "json"])

    out, err = capsys.readouterr()
    assert json.loads(out)["checked"] == 1
    assert "hello from the program" in err


def test_a_kubernetes_resources_id_is_namespace_slash_name_as_in_pulumi(stack: Stack) -> None:
    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        cm = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        placed = k8s.core.v1.ConfigMap(
            "placed", metadata={"name": "placed", "namespace": ns.metadata["name"]}
        )
        sw.export("ids", [ns.id, cm.id, placed.id])

    planned = stack.preview(declare)
    # Whether the server puts an object in a namespace is known after apply.
    assert planned.outputs["ids"] == [UNKNOWN_TEXT, UNKNOWN_TEXT, "apps/placed"]

    summary = stack.up(declare)

    assert summary.outputs["ids"] == ["apps", "default/settings", "apps/placed"]
    assert stack.recorded(urn(CM, "settings")).id == "default/settings"


def test_a_field_a_built_in_kind_does_not_have_is_an_attribute_error() -> None:
    with running(Program(project="shop", stack="dev")):
        svc = k8s.core.v1.Service("web", spec={"ports": [{"port": 80}]})
        widget = k8s.apiextensions.CustomResource(
            "w", api_version="example.com/v1", kind="Widget", spec={"size": 1}
        )
    with pytest.raises(
        AttributeError, match=r"Service has no field 'sepc'.*metadata, spec, status"
    ):
        svc.sepc  # noqa: B018
    assert not hasattr(svc, "cluster_ip")
    # A custom kind's fields are its CRD's: any name reads the live object.
    assert widget.size is not None  # type: ignore[attr-defined]
