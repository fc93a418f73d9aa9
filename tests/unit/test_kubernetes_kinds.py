"""The generated Kubernetes kinds: what a declaration turns into, and the generator itself."""

from __future__ import annotations

import datetime
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lightkube.models.apps_v1 import DeploymentSpec
from lightkube.models.core_v1 import Container, PodSpec, PodTemplateSpec
from lightkube.models.meta_v1 import LabelSelector, ObjectMeta

import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.kubernetes.base import (
    CustomObject,
    KubernetesPatch,
    KubernetesResource,
    _camel,
    parse_type_token,
    type_token,
)
from stackwright.kubernetes.groups import MODULES, VERSIONS
from stackwright.localcluster.schema import builtin_schemas
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import Output, dependencies_of
from stackwright.sdk.resource import ResourceOptions

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "stackwright" / "kubernetes"
GENERATOR = REPO / "tools" / "gen_kubernetes.py"

SPEC = {
    "replicas": 2,
    "selector": {"matchLabels": {"app": "web"}},
    "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
    },
}


@pytest.fixture
def program() -> Iterator[Program]:
    with running(Program(project="p", stack="dev")) as prog:
        yield prog


def every_generated_class() -> list[type[KubernetesResource]]:
    found = []
    for group in sorted(set(k8s.__all__) - set(k8s.__all__[:5])):
        package = getattr(k8s, group)
        # The importers (yaml, kustomize, helm) are modules of the package but not API groups.
        for version in getattr(package, "_VERSIONS", ()):
            module = getattr(package, version)
            found += [getattr(module, name) for name in module.__all__]
    return found


def all_kind_classes() -> list[type[KubernetesResource]]:
    """Each kind's class (its Patch class left out)."""
    return [c for c in every_generated_class() if not issubclass(c, KubernetesPatch)]


def all_patch_classes() -> list[type[KubernetesPatch]]:
    return [c for c in every_generated_class() if issubclass(c, KubernetesPatch)]


# --- declarations -----------------------------------------------------------------------------


def test_dicts_and_typed_args_give_the_same_object(program: Program) -> None:
    plain = k8s.apps.v1.Deployment(
        "plain", metadata={"name": "web", "labels": {"app": "web"}}, spec=SPEC
    )
    typed = k8s.apps.v1.Deployment(
        "typed",
        metadata=ObjectMeta(name="web", labels={"app": "web"}),
        spec=DeploymentSpec(
            replicas=2,
            selector=LabelSelector(matchLabels={"app": "web"}),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "web"}),
                spec=PodSpec(containers=[Container(name="web", image="nginx:1.29")]),
            ),
        ),
    )
    assert plain.props == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": SPEC,
    }
    assert typed.props == plain.props


def test_type_tokens_and_urn(program: Program) -> None:
    web = k8s.apps.v1.Deployment("web", spec=SPEC)
    svc = k8s.core.v1.Service("web", spec={"selector": {"app": "web"}, "ports": [{"port": 80}]})
    assert web.resource_type == "kubernetes:apps/v1:Deployment"
    assert svc.resource_type == "kubernetes:core/v1:Service"
    ingress = k8s.networking.v1.Ingress("web")
    # The token keeps the full group, as Pulumi does (`kubernetes:networking.k8s.io/v1:Ingress`).
    assert ingress.resource_type == "kubernetes:networking.k8s.io/v1:Ingress"
    assert web.urn == "urn:sw:dev::p::kubernetes:apps/v1:Deployment::web"
    assert svc.urn == "urn:sw:dev::p::kubernetes:core/v1:Service::web"
    assert program.resources == [web, svc, ingress]


api_versions = st.one_of(
    st.from_regex(r"v[0-9][a-z0-9]{0,6}", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9.-]{0,20}/v[0-9][a-z0-9]{0,6}", fullmatch=True),
)


@given(api_versions, st.from_regex(r"[A-Z][A-Za-z0-9]{0,20}", fullmatch=True))
def test_a_type_token_parses_back_to_its_api_version_and_kind(api_version: str, kind: str) -> None:
    parsed = parse_type_token(type_token(api_version, kind))
    assert parsed is not None
    assert (parsed.api_version, parsed.kind) == (api_version, kind)
    group, _, version = api_version.rpartition("/")
    assert (parsed.group, parsed.version) == (group, version)


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("kubernetes:apps/v1:Deployment", ("apps/v1", "apps", "v1", "apps/v1", "Deployment")),
        ("kubernetes:core/v1:Service", ("core/v1", "", "v1", "v1", "Service")),
        ("kubernetes:v1:Pod", ("v1", "", "v1", "v1", "Pod")),
        ("kubernetes:example.com/v1:Widget", ("example.com/v1", "example.com", "v1", "example.com/v1", "Widget")),
        ("kubernetes:apps/v1", None),
        ("kubernetes::Deployment", None),
        ("kubernetes:apps/v1:", None),
        ("kubernetes:apps/v1:Deploy:ment", None),
        ("pulumi:providers:kubernetes", None),
        ("acme:web:App", None),
    ],
)  # fmt: skip
def test_parse_type_token(token: str, parts: tuple[str, ...] | None) -> None:
    parsed = parse_type_token(token)
    found = None if parsed is None else (
        parsed.group_version, parsed.group, parsed.version, parsed.api_version, parsed.kind
    )  # fmt: skip
    assert found == parts


def test_the_group_map_names_each_kinds_module_and_version() -> None:
    listed = set()
    for cls in all_kind_classes():
        group, _, version = cls.api_version.rpartition("/")
        assert version in VERSIONS[group], cls
        assert getattr(getattr(getattr(k8s, MODULES[group]), version), cls.kind) is cls
        listed.add((group, version))
    assert listed == {(group, v) for group, versions in VERSIONS.items() for v in versions}
    assert set(MODULES) == set(VERSIONS)


def test_snake_case_arguments_become_kubernetes_fields(program: Program) -> None:
    secret = k8s.core.v1.Secret(
        "s", string_data={"password": "hunter2"}, type="Opaque", immutable=True
    )
    config = k8s.core.v1.ConfigMap("c", binary_data={"blob": "AAEC"}, data={"k": "v"})
    account = k8s.core.v1.ServiceAccount("a", automount_service_account_token=False)
    assert secret.props == {
        "apiVersion": "v1",
        "kind": "Secret",
        "stringData": {"password": "hunter2"},
        "type": "Opaque",
        "immutable": True,
    }
    assert config.props["binaryData"] == {"blob": "AAEC"}
    assert account.props["automountServiceAccountToken"] is False
    assert "status" not in inspect.signature(k8s.apps.v1.Deployment).parameters


def test_an_output_inside_spec_is_kept_and_is_a_dependency(program: Program) -> None:
    ns = k8s.core.v1.Namespace("apps")
    sizing = k8s.apps.v1.Deployment("sizing", spec=SPEC)
    namespace, replicas = ns.metadata["name"], sizing.spec["replicas"]
    web = k8s.apps.v1.Deployment(
        "web", metadata={"namespace": namespace}, spec={**SPEC, "replicas": replicas}
    )
    assert web.props["metadata"]["namespace"] is namespace
    assert web.props["spec"]["replicas"] is replicas
    assert dependencies_of(web.props) == {ns, sizing}
    assert dependencies_of(sizing.props) == set()


def test_an_output_inside_a_typed_arg_is_kept(program: Program) -> None:
    ns = k8s.core.v1.Namespace("apps")
    name = ns.metadata["name"]
    image = Output.concat("nginx:", "1.29")
    # lightkube types these fields as str, so a type checker rejects this too.
    web = k8s.apps.v1.Deployment(
        "web",
        metadata=ObjectMeta(namespace=name, labels={"app": "web"}),  # type: ignore[arg-type]
        spec=DeploymentSpec(
            selector=LabelSelector(matchLabels={"app": "web"}),
            template=PodTemplateSpec(
                spec=PodSpec(containers=[Container(name="web", image=image)])  # type: ignore[arg-type]
            ),
        ),
    )
    assert web.props["metadata"] == {"labels": {"app": "web"}, "namespace": name}
    assert web.props["metadata"]["namespace"] is name
    assert web.props["spec"]["template"]["spec"]["containers"][0]["image"] is image
    assert dependencies_of(web.props) == {ns}


def test_typed_args_use_the_kubernetes_field_names(program: Program) -> None:
    # Keys that are not Python names: lightkube's `from_`, `except_`, `not_`, `d_ref` and
    # `x_kubernetes_*` attributes, and meta/v1 Time values.
    from lightkube.models.apiextensions_v1 import (
        CustomResourceDefinitionSpec,
        CustomResourceDefinitionVersion,
        CustomResourceValidation,
        JSONSchemaProps,
    )
    from lightkube.models.networking_v1 import (
        IPBlock,
        NetworkPolicyIngressRule,
        NetworkPolicyPeer,
        NetworkPolicySpec,
    )

    policy_spec = NetworkPolicySpec(
        podSelector=LabelSelector(matchLabels={"app": "web"}),
        ingress=[
            NetworkPolicyIngressRule(
                from_=[
                    NetworkPolicyPeer(ipBlock=IPBlock(cidr="10.0.0.0/8", except_=["10.1.0.0/16"]))
                ]
            )
        ],
    )
    policy = k8s.networking.v1.NetworkPolicy("p", spec=policy_spec)
    schema = JSONSchemaProps(
        type="object",
        x_kubernetes_preserve_unknown_fields=True,
        not_=JSONSchemaProps(type="string"),
        d_ref="#/definitions/x",
    )
    crd_spec = CustomResourceDefinitionSpec(
        group="example.com",
        names={"kind": "Widget", "plural": "widgets"},  # type: ignore[arg-type]
        scope="Namespaced",
        versions=[
            CustomResourceDefinitionVersion(
                name="v1",
                served=True,
                storage=True,
                schema=CustomResourceValidation(openAPIV3Schema=schema),
            )
        ],
    )
    crd = k8s.apiextensions.v1.CustomResourceDefinition("widgets", spec=crd_spec)
    stamped = k8s.core.v1.ConfigMap(
        "c",
        metadata=ObjectMeta(
            name="c", creationTimestamp=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        ),
    )
    assert policy.props["spec"] == {
        "podSelector": {"matchLabels": {"app": "web"}},
        "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}],
    }
    assert crd.props["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "not": {"type": "string"},
        "$ref": "#/definitions/x",
    }
    assert stamped.props["metadata"] == {"name": "c", "creationTimestamp": "2024-01-02T03:04:05Z"}
    # Field by field gives what lightkube's own serialiser gives (when no Output is inside).
    assert policy_spec.to_dict() == policy.props["spec"]
    assert crd_spec.to_dict() == crd.props["spec"]


def test_live_state_is_an_output_of_the_resource(program: Program) -> None:
    web = k8s.apps.v1.Deployment("web", spec=SPEC)
    secret = k8s.core.v1.Secret("s")
    outputs = {
        web: [web.status, web.spec["replicas"], web.metadata],
        secret: [secret.string_data, secret.type],
    }
    for resource, found in outputs.items():
        for output in found:
            assert isinstance(output, Output)
            assert dependencies_of(output) == {resource}
    live = {"status": {"readyReplicas": 2}, "stringData": {"a": "b"}, "type": "Opaque"}
    assert web.status["readyReplicas"].resolve(lambda _: live) == 2
    assert secret.string_data.resolve(lambda _: live) == {"a": "b"}
    assert secret.type.resolve(lambda _: live) == "Opaque"


def test_a_custom_object_needs_api_version_and_kind(program: Program) -> None:
    with pytest.raises(UsageError) as info:
        CustomObject("w", kind="Widget")
    assert str(info.value).startswith(str(Path(__file__).resolve()) + ":")
    assert ": custom resource 'w' needs " in str(info.value)
    assert str(info.value).endswith('needs api_version= (e.g. "example.com/v1")')
    with pytest.raises(UsageError, match=r'needs api_version= \(e.g. "example.com/v1"\) and kind='):
        CustomObject("w")
    with pytest.raises(UsageError, match=r'needs kind= \(e.g. "Widget"\)$'):
        CustomObject("w", api_version="example.com/v1", spec={})
    assert program.resources == []
    widget = CustomObject(
        "w", api_version="example.com/v1", kind="Widget", spec={"size": 3}, status_note=None
    )
    assert widget.props == {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3}}


def test_custom_resource_and_provider(program: Program) -> None:
    assert k8s.apiextensions.CustomResource is CustomObject
    widget = k8s.apiextensions.CustomResource(
        "w", api_version="example.com/v1", kind="Widget", spec={"size": 3}
    )
    assert widget.resource_type == "kubernetes:example.com/v1:Widget"
    provider = k8s.Provider(
        "other", kubeconfig="/tmp/kubeconfig", context="kind-other", namespace="team"
    )
    assert provider.resource_type == "stackwright:providers:kubernetes"
    assert set(provider.props) == {"kubeconfig", "context", "namespace"}
    assert provider.props["kubeconfig"] == "/tmp/kubeconfig", "a path holds no credentials"
    contents = k8s.Provider("inline", kubeconfig="apiVersion: v1\nkind: Config\n")
    assert contents.props["kubeconfig"].is_secret, "contents hold credentials"
    assert provider.props["context"] == "kind-other"
    assert k8s.Provider("default").props == {}
    config = k8s.core.v1.ConfigMap("c", ResourceOptions(provider=provider), data={"k": "v"})
    assert config.opts.provider is provider
    assert k8s.core.v1.ConfigMap("d", opts=ResourceOptions(protect=True)).opts.protect


# --- the set of kinds -------------------------------------------------------------------------

ISSUE_2_KINDS = [
    "core/v1/Namespace", "core/v1/ConfigMap", "core/v1/Secret", "core/v1/Service", "core/v1/Pod",
    "core/v1/ServiceAccount", "core/v1/PersistentVolume", "core/v1/PersistentVolumeClaim",
    "core/v1/Endpoints", "core/v1/Event", "core/v1/Node", "core/v1/LimitRange", "core/v1/ResourceQuota",
    "apps/v1/Deployment", "apps/v1/ReplicaSet", "apps/v1/StatefulSet", "apps/v1/DaemonSet",
    "apps/v1/ControllerRevision", "batch/v1/Job", "batch/v1/CronJob", "networking/v1/Ingress",
    "networking/v1/IngressClass", "networking/v1/NetworkPolicy", "rbac/v1/Role", "rbac/v1/RoleBinding",
    "rbac/v1/ClusterRole", "rbac/v1/ClusterRoleBinding", "policy/v1/PodDisruptionBudget",
    "autoscaling/v2/HorizontalPodAutoscaler", "storage/v1/StorageClass", "coordination/v1/Lease",
    "discovery/v1/EndpointSlice", "apiextensions/v1/CustomResourceDefinition",
]  # fmt: skip


@pytest.mark.parametrize("path", ISSUE_2_KINDS)
def test_issue_2_kind_exists(path: str) -> None:
    group, version, kind = path.split("/")
    cls = getattr(getattr(getattr(k8s, group), version), kind)
    assert issubclass(cls, KubernetesResource)
    assert cls.kind == kind


def test_every_class_matches_its_official_definition() -> None:
    schemas = builtin_schemas()
    classes = all_kind_classes()
    assert len(classes) == len(set(classes)) >= 70
    for cls in classes:
        group, _, version = cls.api_version.rpartition("/")
        definition = schemas.root(group, version, cls.kind)
        assert definition is not None, cls
        assert cls.__doc__ and cls.__doc__.split()[0] == definition["description"].split()[0]
        fields = set(definition["properties"]) - {"apiVersion", "kind", "status"}
        arguments = list(inspect.signature(cls).parameters)[2:]
        assert sorted(_camel(a) for a in arguments) == sorted(fields), cls
        for name in (*arguments, *(["status"] if "status" in definition["properties"] else [])):
            assert isinstance(inspect.getattr_static(cls, name), property), (cls, name)


def test_every_class_declares_its_kind(program: Program) -> None:
    for cls in all_kind_classes():
        resource = cls(cls.__name__, metadata={"name": "x"})
        group_version = cls.api_version if "/" in cls.api_version else f"core/{cls.api_version}"
        assert resource.resource_type == f"kubernetes:{group_version}:{cls.kind}"
        assert resource.props == {
            "apiVersion": cls.api_version,
            "kind": cls.kind,
            "metadata": {"name": "x"},
        }


def test_kinds_that_cannot_be_managed_have_no_class() -> None:
    assert not hasattr(k8s.autoscaling.v1, "Scale")
    assert not hasattr(k8s.policy.v1, "Eviction")
    assert not hasattr(k8s.core.v1, "Binding")
    assert not hasattr(k8s.core.v1, "ConfigMapList")
    with pytest.raises(AttributeError):
        _ = k8s.authorization  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = k8s.apps.v2  # type: ignore[attr-defined]


# --- generator and import cost --------------------------------------------------------------


def _generate(out: Path, hash_seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out)],
        check=True,
        env=env,
        capture_output=True,
    )
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*.py"))}


def test_the_generator_is_deterministic_and_its_output_is_committed(tmp_path: Path) -> None:
    first = _generate(tmp_path / "a", "1")
    second = _generate(tmp_path / "b", "2")
    assert first == second
    committed = {
        str(p.relative_to(PACKAGE)): p.read_text()
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.read_text().startswith("# Generated by tools/gen_kubernetes.py")
    }
    stale = sorted(
        name for name in first.keys() | committed.keys() if first.get(name) != committed.get(name)
    )
    assert not stale, (
        f"run `python tools/gen_kubernetes.py`: these generated files are stale: {stale}"
    )


def test_import_loads_only_the_kinds_used() -> None:
    """Importing the kinds is cheap by construction: no lightkube, and only the modules of
    the groups a program touches (the time itself is measured by benchmarks/cli_start.py,
    not asserted here: a shared CI machine makes any time bound flaky)."""
    probe = (
        "import sys, json; import stackwright.kubernetes as k8s; "
        "k8s.apps.v1.Deployment; k8s.core.v1.Service; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('lightkube', 'stackwright')))))"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], check=True, cwd=REPO, capture_output=True, text=True
        ).stdout
    )
    assert not [m for m in loaded if m.startswith("lightkube")], loaded
    heavy = ("stackwright.engine", "stackwright.providers", "stackwright.state", "stackwright.cli")
    assert not [m for m in loaded if m.startswith(heavy)], loaded
    kinds = [m.split(".")[2] for m in loaded if m.startswith("stackwright.kubernetes.")]
    groups = {name for name in kinds if (PACKAGE / name).is_dir()}
    assert groups == {"apps", "core"}, loaded


def test_module_getattr_loads_lazily() -> None:
    code = (
        "import sys, stackwright.kubernetes as k8s; "
        "assert 'stackwright.kubernetes.apps' not in sys.modules; "
        "k8s.apps.v1; assert 'stackwright.kubernetes.apps.v1' in sys.modules; "
        "assert 'stackwright.kubernetes.core' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"spec": "nope"}, "spec must be a dict (or an Output of one), not str 'nope'"),
        ({"metadata": ["x"]}, "metadata must be a dict (or an Output of one), not list ['x']"),
    ],
)
def test_an_object_field_that_is_not_a_dict_is_refused_where_it_is_declared(
    fields: dict[str, Any], said: str
) -> None:
    program = Program(project="p", stack="s")
    with running(program), pytest.raises(UsageError) as caught:
        k8s.apps.v1.Deployment("web", **fields)
    message = str(caught.value)
    assert re.match(r"\S*test_kubernetes_kinds\.py:\d+: Deployment 'web': ", message), message
    assert message.endswith(said)


class Handle:
    """Something a program might pass by mistake (a client, a file, a resource)."""


@pytest.mark.parametrize(
    ("cls", "fields", "said"),
    [
        (k8s.core.v1.ConfigMap, {"data": {"k": object()}}, "data.k holds an object"),
        (
            k8s.apps.v1.Deployment,
            {"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"env": Handle()}]}}}},
            "spec.template.spec.containers[1].env holds a Handle",
        ),
        (k8s.core.v1.Secret, {"string_data": {"pw": {1, 2}}}, "string_data.pw holds a set"),
    ],
)
def test_a_value_that_is_not_json_is_refused_where_it_is_declared(
    cls: Any, fields: dict[str, Any], said: str
) -> None:
    # It failed at apply, after other changes were made, with "Type is not JSON
    # serializable: object" and neither the resource nor the field named.
    program = Program(project="p", stack="s")
    with running(program), pytest.raises(UsageError) as caught:
        cls("c", **fields)
    message = str(caught.value)
    assert re.match(rf"\S*test_kubernetes_kinds\.py:\d+: {cls.kind} 'c': ", message), message
    assert message.endswith(
        f": {said}, which is not JSON; pass a str, number, bool, None, list or dict there "
        "(or an Output of one)"
    )


def test_json_values_of_other_types_are_kept_as_they_are() -> None:
    """A `str` enum, an `int` enum, a uuid are JSON when applied: not refused."""
    import enum
    import uuid

    class Tier(enum.StrEnum):
        WEB = "web"

    program = Program(project="p", stack="s")
    with running(program):
        cm = k8s.core.v1.ConfigMap(
            "c", data={"tier": Tier.WEB, "id": uuid.UUID(int=1)}, metadata={"generation": 3.0}
        )
    assert cm.props["data"]["tier"] is Tier.WEB


def test_imported_code_names_a_generated_class_only_when_there_is_one() -> None:
    """`stackwright import` of a kind the cluster serves in a built-in group version but
    the generated 1.33 classes lack (a newer Kubernetes') prints the class for any kind:
    it printed `k8s.core.v1.<Kind>`, which does not exist."""
    from stackwright.automation.stack import python_code

    assert python_code("kubernetes:apps/v1:Deployment", "web", {"spec": {}}).startswith(
        "k8s.apps.v1.Deployment(\n    'web',\n    spec={},"
    )
    newer = python_code("kubernetes:core/v1:PodCertificateRequest", "pcr", {"spec": {"a": 1}})
    assert newer.startswith(
        "k8s.apiextensions.CustomResource(\n    'pcr',\n    api_version='v1',\n"
        "    kind='PodCertificateRequest',\n    spec={'a': 1},"
    )


def test_the_field_table_agrees_with_the_classes_and_typed_dicts() -> None:
    # The YAML program checks properties against `fields.py` alone; the classes and TypedDicts
    # come from the same generator run, so each kind's fields and each object's keys must be
    # theirs, and every definition a key holds must be listed.
    from stackwright.kubernetes import fields, inputs, nested

    for group, versions in fields.KINDS.items():
        assert tuple(versions) == VERSIONS[group]
        for version, kinds in versions.items():
            module = getattr(getattr(k8s, MODULES[group]), version)
            assert sorted([*kinds, *(f"{k}Patch" for k in kinds)]) == module.__all__
            for kind in kinds:
                cls = getattr(module, kind)
                properties = {
                    _camel(n) for n, v in vars(cls).items() if isinstance(v, property)
                } - {"status"}
                assert set(nested.kind_fields(group, version, kind) or {}) == properties, kind
    holding: list[nested.Nested] = []
    for module_name, objects in fields.OBJECTS.items():
        typed = __import__(f"{inputs.__name__}.{module_name}", fromlist=["_"])
        for name in objects:
            keys = nested.object_keys(f"{module_name}.{name}")
            assert set(keys) == set(getattr(typed, f"{name}Dict").__annotations__), name
            holding += [n for n in keys.values() if isinstance(n, nested.Nested)]
    for group, versions in fields.KINDS.items():
        for version, kinds in versions.items():
            for kind in kinds:
                found = nested.kind_fields(group, version, kind) or {}
                holding += [n for n in found.values() if isinstance(n, nested.Nested)]
    for held in holding:
        module_name, _, name = held.definition.partition(".")
        assert name in fields.OBJECTS[module_name], held


# --- Patch classes ------------------------------------------------------------------------------


def test_every_kind_has_a_patch_class_with_the_same_fields(program: Program) -> None:
    kinds = {(c.api_version, c.kind): c for c in all_kind_classes()}
    patches = all_patch_classes()
    assert len(patches) == len(kinds)
    for patch in patches:
        cls = kinds[patch.api_version, patch.kind]
        assert patch.__name__ == f"{cls.__name__}Patch"
        assert list(inspect.signature(patch).parameters) == list(inspect.signature(cls).parameters)
        assert patch.__doc__ and patch.__doc__.startswith(f"Patch of an existing {cls.kind}:")
        resource = patch(patch.__name__, metadata={"name": "x"})
        group_version = cls.api_version if "/" in cls.api_version else f"core/{cls.api_version}"
        assert resource.resource_type == f"kubernetes:{group_version}:{cls.kind}Patch"
        assert resource.props == {
            "apiVersion": cls.api_version,
            "kind": cls.kind,
            "metadata": {"name": "x"},
        }


def test_a_patch_takes_part_of_an_object_and_names_it(program: Program) -> None:
    patch = k8s.apps.v1.DeploymentPatch(
        "image",
        metadata={"name": "web"},
        spec={"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.30"}]}}},
    )
    assert patch.resource_type == "kubernetes:apps/v1:DeploymentPatch"
    # The keys are still checked at the declaring line.
    with pytest.raises(UsageError, match=r"imagee"):
        k8s.apps.v1.DeploymentPatch(
            "typo",
            metadata={"name": "web"},
            spec={"template": {"spec": {"containers": [{"name": "main", "imagee": "x"}]}}},
        )
    with pytest.raises(UsageError, match=r"read it with ConfigMap.get\('c', 'team/c'\)"):
        k8s.core.v1.ConfigMapPatch.get("c", "team/c")
    for metadata in (None, {"namespace": "team"}, {"name": ""}):
        with pytest.raises(UsageError, match=r"^\S+:\d+: ConfigMapPatch 'p' needs metadata.name"):
            k8s.core.v1.ConfigMapPatch("p", metadata=metadata, data={"k": "v"})


def test_custom_resource_patch(program: Program) -> None:
    patch = k8s.apiextensions.CustomResourcePatch(
        "w", api_version="example.com/v1", kind="Widget", metadata={"name": "w1"}, spec={"a": 1}
    )
    assert patch.resource_type == "kubernetes:example.com/v1:WidgetPatch"
    assert patch.props["kind"] == "Widget"
    with pytest.raises(UsageError, match=r"^\S+:\d+: WidgetPatch 'nameless' needs metadata.name"):
        k8s.apiextensions.CustomResourcePatch(
            "nameless", api_version="example.com/v1", kind="Widget", spec={"a": 1}
        )


def test_a_patch_takes_no_import_and_no_read(program: Program) -> None:
    # A Patch is fields of an object: nothing to adopt, nothing to read (both used to be
    # taken and ignored, the Patch applied as if neither were given).
    def config_map(opts: ResourceOptions) -> Any:
        meta = {"name": "c", "namespace": "team"}
        return k8s.core.v1.ConfigMapPatch("p", opts, metadata=meta, data={"k": "v"})

    def widget(opts: ResourceOptions) -> Any:
        return k8s.apiextensions.CustomResourcePatch(
            "p", opts, api_version="example.com/v1", kind="Widget", metadata={"name": "c"}
        )

    for kind, declare in (("ConfigMap", config_map), ("Widget", widget)):
        with pytest.raises(
            UsageError, match=rf"^\S+:\d+: {kind}Patch 'p' cannot be imported: .* as a {kind}$"
        ):
            declare(ResourceOptions(import_="team/c"))
        with pytest.raises(
            UsageError, match=rf"^\S+:\d+: {kind}Patch 'p' cannot be read: .* as a {kind}$"
        ):
            declare(ResourceOptions(id="team/c"))
    assert program.resources == []
