"""Outputs: values known only once resources are applied, and how secrets travel with them."""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from stackwright.sdk.context import Program, running
from stackwright.sdk.output import (
    ANY_INDEX,
    UNKNOWN,
    Output,
    Secret,
    dependencies_of,
    input_marks,
    join_path,
    parse_path,
    resolve,
    unwrap_secrets,
)
from stackwright.sdk.resource import CustomResource, Resource


@pytest.fixture
def program() -> Iterator[Program]:
    with running(Program(project="p", stack="dev")) as prog:
        yield prog


def reader(live: dict[Resource, Any]) -> Any:
    """A state reader over a fixed map; resources not in it are unknown."""
    return lambda resource: live.get(resource, UNKNOWN)


def test_apply_runs_on_the_known_value(program: Program) -> None:
    svc = CustomResource("kubernetes:core/v1:Service", "web")
    ip = svc.output("spec").apply(lambda spec: spec["clusterIP"])
    assert dependencies_of(ip) == {svc}
    assert ip.resolve(reader({svc: {"spec": {"clusterIP": "10.0.0.7"}}})) == "10.0.0.7"


def test_apply_is_not_run_while_the_value_is_unknown(program: Program) -> None:
    svc = CustomResource("kubernetes:core/v1:Service", "web")
    calls: list[Any] = []
    out = svc.output("spec").apply(lambda spec: calls.append(spec) or "done")
    assert out.resolve(reader({})) is UNKNOWN
    # A value with an unknown part inside is not known either.
    assert out.resolve(reader({svc: {"spec": {"clusterIP": UNKNOWN}}})) is UNKNOWN
    assert calls == []
    assert out.resolve(reader({svc: {"spec": {"clusterIP": "10.0.0.7"}}})) == "done"
    assert calls == [{"clusterIP": "10.0.0.7"}]


def test_unknown_propagates_through_every_combinator(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    b = CustomResource("test:index:B", "b")
    read = reader({a: {"name": "x"}})  # b is unknown
    assert Output.all(a.name, b.name).apply(lambda v: v).resolve(read) is UNKNOWN
    assert Output.concat(a.name, "-", b.name).resolve(read) is UNKNOWN
    assert Output.format("{}-{}", a.name, b.name).resolve(read) is UNKNOWN
    assert b.output("spec")["x"].resolve(read) is UNKNOWN
    assert b.spec.replicas.resolve(read) is UNKNOWN
    # `all` itself keeps the parts (the engine shows which one is unknown), in either form.
    assert Output.all(a.name, b.name).resolve(read) == ["x", UNKNOWN]
    assert Output.all(n=a.name, u=b.name).resolve(read) == {"n": "x", "u": UNKNOWN}
    assert Output.all(n=a.name, u=b.name).apply(lambda v: v).resolve(read) is UNKNOWN
    # ...and one secret part makes it secret, as the list.
    named = Output.all(n=a.name, s=Output.secret("hunter22")).resolve(read)
    assert isinstance(named, Secret) and named.value == {"n": "x", "s": "hunter22"}


def test_a_callback_reading_what_a_partly_known_object_lacks_is_unknown(
    program: Program,
) -> None:
    """A preview's object holds what the program gave it: a callback reading anything else
    (by key, attribute or `get`) gets no stand-in to format into a value no one gave."""
    from stackwright.sdk.output import Partial as EnginePartial

    svc = CustomResource("kubernetes:core/v1:Service", "web")
    read = reader({svc: EnginePartial(spec=EnginePartial(ports=[EnginePartial(port=80)]))})
    spec = svc.output("spec")
    assert spec.apply(lambda s: s["ports"][0]["port"]).resolve(read) == 80
    assert spec.apply(lambda s: s.get("ports")[0].get("port")).resolve(read) == 80
    for reads in (
        lambda s: f"http://{s['clusterIP']}",
        lambda s: f"http://{s.get('clusterIP', 'none')}",
        lambda s: s.ports[0].node_port + 1,
    ):
        assert spec.apply(reads).resolve(read) is UNKNOWN
    # Handed on whole, it is a partly known object again (not one that stops a callback).
    handed = spec.apply(lambda s: s).resolve(read)
    assert type(handed) is EnginePartial and handed["clusterIP"] is UNKNOWN
    # A rendered object is whole as it is: read whole, it is what it holds.
    assert spec.apply(lambda s: sorted(s)).resolve(read) == ["ports"]


def test_a_preview_object_not_made_yet_read_whole_is_unknown(program: Program) -> None:
    """The cluster may add to any map of an object a preview would create (a label, a
    default): what reads one whole knows no more than what reads a field it lacks."""
    import json

    from stackwright.sdk.output import Planned, partly_known

    svc = CustomResource("kubernetes:core/v1:Service", "web")
    planned = partly_known({"spec": {"ports": [{"port": 80}], "clusterIP": None}}, planned=True)
    assert type(planned) is Planned and type(planned["spec"]["ports"][0]) is Planned
    read = reader({svc: planned})
    spec = svc.output("spec")
    assert spec.apply(lambda s: s.ports[0].port).resolve(read) == 80
    assert spec["clusterIP"].resolve(read) is UNKNOWN  # given as None: the server's to fill
    for whole in (sorted, len, json.dumps, lambda s: dict(s), lambda s: {**s}, list):
        assert spec.apply(whole).resolve(read) is UNKNOWN
    assert spec.apply(lambda s: sorted(s.ports[0])).resolve(read) is UNKNOWN
    assert Output.json_dumps({"spec": spec}).resolve(read) is UNKNOWN
    assert type(spec.apply(lambda s: s).resolve(read)) is Planned


def test_all_concat_and_format(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    b = CustomResource("test:index:B", "b")
    read = reader({a: {"host": "db", "port": 5432}, b: {"user": "app"}})
    assert Output.all(a.host, b.user, 3).resolve(read) == ["db", "app", 3]
    assert Output.all(host=a.host, user=b.user).resolve(read) == {"host": "db", "user": "app"}
    url = Output.concat("postgres://", b.user, "@", a.host, ":", a.port)
    assert url.resolve(read) == "postgres://app@db:5432"
    assert dependencies_of(url) == {a, b}
    text = Output.format("{0}@{host}:{port}", b.user, host=a.host, port=a.port)
    assert text.resolve(read) == "app@db:5432"
    assert Output.all().resolve(read) == []
    with pytest.raises(TypeError, match="not both"):
        Output.all(a.host, user=b.user)


def test_format_takes_its_template_as_an_output(program: Program) -> None:
    """As Pulumi's `Output.format(format_string: Input[str], ...)`: a template computed from
    a resource, or a secret one (which makes the text secret), is used once it is known."""
    a = CustomResource("test:index:A", "a")
    read = reader({a: {"pattern": "{}.{zone}"}})
    text = Output.format(a.pattern, "web", zone="example.com")
    assert text.resolve(read) == "web.example.com"
    assert dependencies_of(text) == {a}
    assert Output.format(a.pattern, "web", zone="x").resolve(reader({})) is UNKNOWN
    hidden = Output.format(Output.secret("{}:{}"), "user", a.pattern)
    assert hidden.is_secret
    assert unwrap_secrets(hidden.resolve(read)) == ("user:{}.{zone}", [""])


def test_attribute_and_item_access(program: Program) -> None:
    svc = CustomResource("kubernetes:core/v1:Service", "web")
    live = {
        "spec": {"clusterIP": "10.0.0.7", "ports": [{"port": 80}, {"port": 443}]},
        "status": {"loadBalancer": {}},
        "metadata": {"name": "web"},
    }
    read = reader({svc: live})
    assert svc.spec["clusterIP"].resolve(read) == "10.0.0.7"
    assert svc.spec.ports[1]["port"].resolve(read) == 443
    assert svc.spec.ports[-1].port.resolve(read) == 443
    # A slice reads as Python's does (`ports[0:1]` read null).
    assert svc.spec.ports[0:1].resolve(read) == [{"port": 80}]
    assert svc.spec["ports"][::-1][0]["port"].resolve(read) == 443
    assert svc.spec.ports[5:].resolve(read) == []
    assert unwrap_secrets(Output.secret(["a", "b", "c"])[1:].resolve(read)) == (["b", "c"], [""])
    assert svc.metadata.name.resolve(read) == "web"
    # A snake_case attribute finds the camelCase field, as resource attributes do.
    assert svc.status.load_balancer.resolve(read) == {}
    # Absent fields of a known object are None, however deep the access goes.
    assert svc.status["loadBalancer"]["ingress"][0]["ip"].resolve(read) is None
    assert svc.spec.ports[5].resolve(read) is None
    with pytest.raises(AttributeError):
        svc.spec.__deepcopy__  # noqa: B018


class Partial(dict[str, Any]):
    """Like the engine's preview object: fields it does not hold are unknown."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> Any:
        return UNKNOWN


def test_callbacks_and_selection_get_the_engines_own_objects(program: Program) -> None:
    ns = CustomResource("kubernetes:core/v1:Namespace", "apps")
    read = reader({ns: Partial(metadata=Partial(name="apps"))})
    assert ns.metadata["name"].resolve(read) == "apps"
    assert ns.metadata["uid"].resolve(read) is UNKNOWN
    assert ns.metadata.apply(lambda m: m["uid"]).resolve(read) is UNKNOWN
    assert ns.metadata.apply(lambda m: type(m).__name__).resolve(read) == "Partial"


def test_apply_may_return_an_output(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    b = CustomResource("test:index:B", "b")
    read = reader({a: {"use": "b"}, b: {"value": 7}})
    nested = a.use.apply(lambda _: b.value)
    assert nested.resolve(read) == 7
    secret = a.use.apply(lambda _: Output.secret("pw"))
    resolved = secret.resolve(read)
    assert isinstance(resolved, Secret) and resolved.value == "pw"


def test_from_input_lifts_structures(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    plain = Output.from_input({"x": [1, 2]})
    assert dependencies_of(plain) == frozenset()
    assert plain.resolve(reader({})) == {"x": [1, 2]}
    mixed = Output.from_input({"name": a.name, "list": (a.name, "b")})
    assert dependencies_of(mixed) == {a}
    assert mixed.resolve(reader({a: {"name": "n"}})) == {"name": "n", "list": ["n", "b"]}
    assert Output.from_input(mixed) is mixed


# --- secrets ---------------------------------------------------------------------------------


def test_secretness_propagates(program: Program) -> None:
    db = CustomResource("test:index:Db", "db")
    password = Output.secret("hunter2")
    read = reader({db: {"host": "db"}})
    derived = [
        password.apply(str.upper),
        Output.all(db.host, password),
        Output.concat(db.host, ":", password),
        Output.format("{}:{}", db.host, password),
        Output.from_input({"password": password}),
        password.apply(lambda p: {"p": p})["p"],
    ]
    for output in derived:
        assert output.is_secret, output
        assert isinstance(output.resolve(read), Secret), output
    assert not db.host.is_secret
    assert db.host.resolve(read) == "db"


def test_callbacks_never_see_secret_markers(program: Program) -> None:
    seen: list[Any] = []
    wrapped = Output.from_input({"user": "app", "password": Output.secret("pw")})
    out = wrapped.apply(lambda value: seen.append(value) or "ok")
    resolved = out.resolve(reader({}))
    assert seen == [{"user": "app", "password": "pw"}]
    assert isinstance(resolved, Secret) and resolved.value == "ok"


def test_a_secret_read_from_state_stays_secret_when_selected(program: Program) -> None:
    # An engine that marks a secret field of a live object gets the marker back.
    s = CustomResource("kubernetes:core/v1:Secret", "s")
    read = reader({s: {"data": {"password": Secret("pw")}, "type": "Opaque"}})
    picked = s.data["password"].resolve(read)
    assert isinstance(picked, Secret) and picked.value == "pw"
    assert s.type.resolve(read) == "Opaque"
    upper = s.data["password"].apply(str.upper).resolve(read)
    assert isinstance(upper, Secret) and upper.value == "PW"


def test_unwrap_secrets_reports_paths(program: Program) -> None:
    props = {
        "data": {"password": Output.secret("pw"), "user": "app"},
        "containers": [{"env": [{"value": Output.secret("token")}]}],
        "metadata": {"annotations": {"example.com/key": Output.secret("k")}},
    }
    resolved = resolve(props, reader({}))
    plain, paths = unwrap_secrets(resolved)
    assert plain == {
        "data": {"password": "pw", "user": "app"},
        "containers": [{"env": [{"value": "token"}]}],
        "metadata": {"annotations": {"example.com/key": "k"}},
    }
    assert paths == [
        "data.password",
        "containers[0].env[0].value",
        "metadata.annotations.example.com/key",
    ]
    # A secret holding secrets is reported once, at the outside.
    assert unwrap_secrets(Secret({"a": Secret(1)})) == ({"a": 1}, [""])
    assert unwrap_secrets({"a": 1}) == ({"a": 1}, [])


# --- dependencies and misuse -------------------------------------------------------------------


def test_dependencies_of_collects_resources(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    b = CustomResource("test:index:B", "b")
    c = CustomResource("test:index:C", "c")
    value = {"x": [a.name, {"y": (Output.concat(b.name, "!"),)}], "z": "plain"}
    assert dependencies_of(value) == {a, b}
    assert dependencies_of(Output.all(a.name, c.name)) == {a, c}
    assert dependencies_of({"plain": [1, "two"]}) == set()


def test_input_marks_tell_resources_and_secrets_wherever_they_are(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    b = CustomResource("test:index:B", "b")
    assert input_marks({"plain": [1, "two", (3.5, None)], "n": {"x": True}}) == (set(), False, True)
    assert input_marks({"x": [a.name], "y": Output.secret(b.name)}) == ({a, b}, True, False)
    assert input_marks({"x": (Secret("pw"),)}) == (set(), True, False)
    assert input_marks({"x": Output.secret("pw")}) == (set(), True, False)
    # Found however plain data around them is written: a Mapping that is no dict, a
    # number JSON cannot hold, keys that are not strings.
    assert input_marks({"x": MappingProxyType({"v": a.name})}) == ({a}, False, False)
    assert input_marks({"big": 2**70, "x": [Output.secret("pw")]}) == (set(), True, False)
    assert input_marks({1: "one", "x": b.name}) == ({b}, False, False)
    # Not plain although it holds no marker: a number JSON cannot hold is walked, and the
    # engine then walks it as it would any other (resolving, secrets, unknowns).
    assert input_marks({"big": 2**70}) == (set(), False, False)


def test_input_marks_of_plain_data_walk_nothing() -> None:
    # Plain data (most of a program's objects) is told so in C, not walked node by node.
    counted = _CountedDict(a=1, b=[{"c": "d"}])
    assert input_marks({"x": counted, "y": [counted]}) == (set(), False, True)
    assert counted.walks == 0
    assert input_marks({"x": counted, "y": Secret(1)}) == (set(), True, False)
    assert counted.walks == 1


class _CountedDict(dict[str, Any]):
    """A dict that counts how often a walk asks for its values."""

    walks = 0

    def values(self) -> Any:
        self.walks += 1
        return super().values()


@pytest.mark.parametrize(
    ("use", "message"),
    [
        (bool, "an Output has no truth value while the program runs; use .apply(...)"),
        (list, "an Output cannot be iterated: its value is not known while the program runs"),
        (str, "an Output cannot be turned into a string while the program runs; use Output.concat"),
        (lambda o: f"http://{o}", "an Output cannot be turned into a string"),
        (lambda o: "x" in o, "an Output cannot be searched with `in`"),
        (lambda o: "http://" + o, "an Output cannot be added to a plain value"),
        (lambda o: o + ":80", "an Output cannot be added to a plain value"),
        (lambda o: 1 + o, "an Output cannot be added to a plain value"),
        (int, "an Output cannot be turned into a number while the program runs; use .apply"),
        (float, "an Output cannot be turned into a number"),
        (lambda o: ["a", "b"][o], "an Output cannot be turned into a number"),
    ],
)
def test_using_an_output_as_a_plain_value_says_what_to_do(
    program: Program, use: Any, message: str
) -> None:
    out = CustomResource("test:index:A", "a").name
    with pytest.raises(TypeError) as info:
        use(out)
    assert str(info.value).startswith(message)


def test_repr_says_what_it_is(program: Program) -> None:
    a = CustomResource("test:index:A", "a")
    assert repr(a.name) == "Output(depends on 1 resource(s))"
    assert repr(Output.secret("x")) == "Output(depends on 0 resource(s), secret)"
    assert repr(UNKNOWN) == "(known after apply)"
    assert repr(Secret("x")) == "[secret]"


# --- paths --------------------------------------------------------------------------------------


def test_paths_written_by_the_engine() -> None:
    def path(*keys: str | int) -> str:
        text = ""
        for key in keys:
            text = join_path(text, key)
        return text

    assert path("spec", "containers", 0, "image") == "spec.containers[0].image"
    assert path(0, "a") == "[0].a"
    # Keys are written as they are (secret paths and change paths compare as text).
    assert path("data", "tls.crt") == "data.tls.crt"


def test_paths_written_by_users() -> None:
    assert parse_path("spec.template.spec.containers[0].image") == (
        "spec", "template", "spec", "containers", 0, "image",
    )  # fmt: skip
    assert parse_path("spec.containers[*].image") == ("spec", "containers", ANY_INDEX, "image")
    assert parse_path('metadata.annotations["kubectl.kubernetes.io/restartedAt"]') == (
        "metadata", "annotations", "kubectl.kubernetes.io/restartedAt",
    )  # fmt: skip
    assert parse_path("metadata.labels.app.kubernetes.io/name") == (
        "metadata", "labels", "app", "kubernetes", "io/name",
    )  # fmt: skip
    assert parse_path("x-kubernetes-list-type") == ("x-kubernetes-list-type",)
    assert parse_path('data["we\\"ird key"]') == ("data", 'we"ird key')
    assert parse_path("[0]") == (0,)


@pytest.mark.parametrize("bad", ["", ".a", "a.", "a..b", "a[0]b", "a[x]", 'a["open'])
def test_bad_paths_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_path(bad)


def test_a_callback_runs_once_per_value_however_often_it_is_resolved(program: Program) -> None:
    cm = CustomResource("kubernetes:core/v1:ConfigMap", "settings")
    other = CustomResource("test:index:B", "b")
    calls: list[Any] = []

    def use(data: dict[str, Any]) -> Output[Any]:
        calls.append(dict(data))
        data.clear()  # a callback changing its input does not fool the check
        return other.value

    out = cm.data.apply(use)
    # Planning, the policy check, the apply, the outputs: each resolve reads an equal value.
    assert out.resolve(reader({cm: {"data": {"a": "1"}}, other: {"value": 7}})) == 7
    # What the callback returned is resolved afresh: its resources may have changed.
    assert out.resolve(reader({cm: {"data": {"a": "1"}}, other: {"value": 8}})) == 8
    assert calls == [{"a": "1"}]
    # Another value runs it again.
    assert out.resolve(reader({cm: {"data": {"a": "2"}}, other: {"value": 8}})) == 8
    assert calls == [{"a": "1"}, {"a": "2"}]
    # A leaf is its value and type: 1 is not True.
    seen: list[Any] = []
    flag = cm.data["on"].apply(seen.append)
    for value in (1, 1, True, True):
        flag.resolve(reader({cm: {"data": {"on": value}}}))
    assert seen == [1, True]


def test_a_remembered_result_is_a_copy_a_later_callback_may_change(program: Program) -> None:
    """Each resolve of a chain gets its own copy of a remembered container: a callback that
    changes its input in place (`.append`, `.pop`) changed the one remembered result, so
    every later resolve (planning, the apply, the outputs) saw the edits pile up."""
    cm = CustomResource("kubernetes:core/v1:ConfigMap", "settings")
    copied = cm.data.apply(lambda d: {"items": [d["a"]]})
    grown = copied.apply(lambda d: (d["items"].append("9"), d)[1])
    live = reader({cm: {"data": {"a": "1"}}})
    assert [grown.resolve(live) for _ in range(3)] == [{"items": ["1", "9"]}] * 3


def test_a_callback_on_a_partly_known_object_or_a_users_object_runs_each_time(
    program: Program,
) -> None:
    ns = CustomResource("kubernetes:core/v1:Namespace", "apps")
    calls: list[Any] = []
    meta = ns.metadata.apply(calls.append)
    # A preview's object: `m.get("uid")` reads unknown there, absent in the whole object.
    for _ in range(2):
        meta.resolve(reader({ns: {"metadata": Partial(name="apps")}}))
    assert len(calls) == 2

    class Box:
        def __eq__(self, other: object) -> bool:
            return True

    lifted = Output.from_input(Box()).apply(calls.append)
    lifted.resolve(reader({}))
    lifted.resolve(reader({}))
    assert len(calls) == 4


def test_only_the_users_callbacks_are_recorded_to_run_at_the_end(program: Program) -> None:
    """The Outputs Stackwright computes from others (`concat`, `format`, `all` of keyword
    values, `json_dumps`, an object's `id`) are not callbacks of the user's: left unused,
    they are not run at the end of an up (each was, for nothing)."""
    import stackwright.kubernetes as k8s

    cm = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"})
    Output.concat("a-", cm.metadata["name"])
    Output.format("{}-{n}", cm.metadata["name"], n=1)
    Output.all(name=cm.metadata["name"])
    Output.json_dumps({"n": cm.metadata["name"]})
    assert isinstance(cm.id, Output)
    assert program.applies == []
    mine = cm.metadata["name"].apply(len)
    assert program.applies == [mine]


def test_callbacks_read_fields_as_pulumis_output_types_name_them(program: Program) -> None:
    """A callback's dicts answer Pulumi's attribute names (`spec.cluster_ip`); an absent
    field is None (unknown in a preview's partly known object); what it returns is plain
    data again, so the engine stores and compares dicts."""
    from stackwright.sdk.output import Partial as EnginePartial

    svc = CustomResource("kubernetes:core/v1:Service", "web")
    live = {"spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 80, "nodePort": 30001}]}}
    read = reader({svc: live})
    assert svc.spec.apply(lambda s: s.cluster_ip).resolve(read) == "10.0.0.9"
    assert svc.spec.apply(lambda s: s.ports[0].node_port).resolve(read) == 30001
    assert svc.spec.apply(lambda s: s.external_name).resolve(read) is None
    assert svc.spec.apply(lambda s: s["clusterIP"]).resolve(read) == "10.0.0.9"
    returned = svc.spec.apply(lambda s: (s, s.ports)).resolve(read)
    assert type(returned[0]) is dict and type(returned[1][0]) is dict
    assert returned[0] == live["spec"]
    built = svc.spec.apply(lambda s: {"spec": s, "ports": s.ports}).resolve(read)
    assert type(built["spec"]) is dict and type(built["ports"][0]) is dict

    preview = reader({svc: EnginePartial(spec=EnginePartial(clusterIP="10.0.0.9"))})
    assert svc.spec.apply(lambda s: s.cluster_ip).resolve(preview) == "10.0.0.9"
    assert svc.spec.apply(lambda s: s.external_name).resolve(preview) is UNKNOWN


def test_a_callbacks_dicts_dump_to_yaml_as_plain_mappings(program: Program) -> None:
    """`yaml.safe_dump(s)` / `yaml.dump(s)` of the value a callback gets writes the mapping,
    as of the plain dict it was (PyYAML refuses a dict subclass, or tags it)."""
    import yaml

    svc = CustomResource("kubernetes:core/v1:Service", "web")
    read = reader({svc: {"spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 80}]}}})
    expected = "clusterIP: 10.0.0.9\nports:\n- port: 80\n"
    assert svc.spec.apply(yaml.safe_dump).resolve(read) == expected
    assert svc.spec.apply(yaml.dump).resolve(read) == expected
    safe_c = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    assert svc.spec.apply(lambda s: yaml.dump(s, Dumper=safe_c)).resolve(read) == expected


def test_secret_and_format_are_the_classs_functions_and_an_outputs_fields(
    program: Program,
) -> None:
    """`Output.secret` / `Output.format` build Outputs from the class, as Pulumi's do; taken
    from an Output they read the Kubernetes fields of those names (a Volume's `secret`, a
    JSONSchemaProps' `format`), checked as any attribute is."""
    import stackwright as sw
    import stackwright.kubernetes as k8s

    assert sw.Output.secret is Output.secret and sw.Output.format is Output.format
    assert Output.secret("pw").is_secret
    cm = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"})
    read = reader({cm: {"metadata": {"name": "settings"}}})
    assert Output.format("{}-{n}", cm.metadata.name, n=1).resolve(read) == "settings-1"

    pod = k8s.core.v1.Pod("web", spec={"containers": [{"name": "web", "image": "nginx"}]})
    crd = k8s.apiextensions.v1.CustomResourceDefinition("tabs", spec={})
    volumes = [
        {"name": "tls", "secret": {"secretName": "web-tls"}},
        {"name": "all", "projected": {"sources": [{"secret": {"name": "api-key"}}]}},
    ]
    schema = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
    live_crd = {"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}}
    read = reader({pod: {"spec": {"volumes": volumes}}, crd: live_crd})
    assert pod.spec.volumes[0].secret.secret_name.resolve(read) == "web-tls"
    assert pod.spec.volumes[1].projected.sources[0].secret.name.resolve(read) == "api-key"
    props = crd.spec.versions[0].schema.open_apiv3_schema.properties
    assert props["at"].format.resolve(read) == "date-time"
    assert props["at"].type.resolve(read) == "string"
    # A field the live object does not hold reads None, as any other does.
    assert pod.spec.volumes[1].secret.resolve(read) is None
    # ... and where no field is so named, the name is refused as any misspelt one is.
    with pytest.raises(AttributeError, match=r"no field spec\.volumes\[0\]\.config_map\.secret "):
        pod.spec.volumes[0].config_map.secret  # noqa: B018
    with pytest.raises(AttributeError, match=r"has no field spec\.format \(PodSpec's fields"):
        pod.spec.format  # noqa: B018
    # An Output of no built-in kind's object reads any field, these names too.
    plain = Output.from_input({"secret": "s", "format": "f"})
    assert plain.secret.resolve(read) == "s" and plain.format.resolve(read) == "f"


def test_dependencies_is_a_field_of_an_output_not_its_own(program: Program) -> None:
    """An Output lifts every name but its own methods, as Pulumi's does: `dependencies` is a
    JSONSchemaProps' field (which property requires which), read as an attribute or an item;
    the resources an Output is computed from are `dependencies_of(output)`."""
    import stackwright.kubernetes as k8s

    crd = k8s.apiextensions.v1.CustomResourceDefinition("tabs", spec={})
    schema = {"type": "object", "dependencies": {"card": ["billing_address"]}}
    read = reader({crd: {"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}}})
    props = crd.spec.versions[0].schema.open_apiv3_schema
    assert isinstance(props.dependencies, Output)
    assert props.dependencies.resolve(read) == {"card": ["billing_address"]}
    assert props.dependencies["card"][0].resolve(read) == "billing_address"
    assert props["dependencies"].resolve(read) == {"card": ["billing_address"]}
    assert dependencies_of(props.dependencies) == {crd}
    pod = k8s.core.v1.Pod("web", spec={"containers": [{"name": "web", "image": "nginx"}]})
    with pytest.raises(AttributeError, match=r"has no field spec\.dependencies \(PodSpec's"):
        pod.spec.dependencies  # noqa: B018
