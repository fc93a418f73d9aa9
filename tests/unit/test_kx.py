"""stackwright.kx: the specs its builders produce and the objects its components declare."""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any

import pytest

import stackwright as sw
import stackwright.kubernetes as k8s
import stackwright.kx as kx
from stackwright.errors import UsageError
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import Output, Secret, resolve
from stackwright.sdk.resource import Resource


@pytest.fixture
def program() -> Iterator[Program]:
    with running(Program(project="p", stack="dev")) as program:
        yield program


def live(resource: Resource) -> dict[str, Any]:
    """A fake live object: the declared name, or an auto-name, and a cluster IP."""
    meta = resource.props.get("metadata") or {}
    name = meta.get("name")
    return {
        "metadata": {"name": name if isinstance(name, str) else f"{resource.resource_name}-live"},
        "spec": {"clusterIP": "10.96.0.10"},
    }


def plain(value: Any) -> Any:
    return resolve(value, live)


def child(component: Resource) -> Resource:
    (only,) = component.children
    return only


def of_kind(program: Program, kind: str) -> list[Resource]:
    return [r for r in program.resources if r.custom and r.props.get("kind") == kind]


def test_public_surface_is_sorted_and_small() -> None:
    assert kx.__all__ == sorted(kx.__all__)
    assert set(kx.__all__) == {
        "ConfigMap", "Deployment", "Mount", "PersistentVolumeClaim", "PodBuilder",
        "RandomPassword", "Secret",
    }  # fmt: skip


def test_config_map_is_named_after_a_hash_of_its_data(program: Program) -> None:
    one = kx.ConfigMap("settings", data={"GREETING": "hello"})
    obj = child(one).props
    assert obj["kind"] == "ConfigMap" and obj["data"] == {"GREETING": "hello"}
    assert obj["immutable"] is True
    name = obj["metadata"]["name"]
    assert name.startswith("settings-") and len(name) == len("settings-") + 10
    with running(Program(project="p", stack="dev")):
        same = kx.ConfigMap("settings", data={"GREETING": "hello"})
        changed = kx.ConfigMap("other", data={"GREETING": "hi"})
    assert child(same).props["metadata"]["name"] == name
    assert child(changed).props["metadata"]["name"].split("-")[-1] != name.split("-")[-1]
    assert plain(one.object_name) == name


def test_hashed_name_waits_for_outputs_and_is_not_secret(program: Program) -> None:
    token = Output.secret("s3cr3t")
    secret = kx.Secret("creds", string_data={"TOKEN": token}, metadata={"namespace": "apps"})
    meta = child(secret).props["metadata"]
    assert meta["namespace"] == "apps"
    assert isinstance(meta["name"], Output) and not meta["name"].is_secret
    name = plain(meta["name"])
    assert not isinstance(name, Secret) and name.startswith("creds-")
    assert "s3cr3t" not in name
    with running(Program(project="p", stack="dev")):
        other = kx.Secret("creds", string_data={"TOKEN": Output.secret("rotated")})
    assert plain(child(other).props["metadata"]["name"]) != name


def test_pod_builder_env_ports_and_mounts(program: Program) -> None:
    settings = kx.ConfigMap("web-settings", data={"GREETING": "hello", "index.html": "<h1/>"})
    creds = kx.Secret("web-creds", string_data={"TOKEN": "t"})
    data = kx.PersistentVolumeClaim("web-data", size="5Gi", storage_class="fast")
    image = Output.from_input("nginx:1.29")
    pod = kx.PodBuilder(
        "web",
        containers=[
            {
                "image": image,
                "ports": {"http": 80, "metrics": 9090},
                "env": {
                    "MODE": "prod",
                    "WORKERS": 4,
                    "DEBUG": False,
                    "IMAGE": image,
                    "GREETING": settings.as_env_value("GREETING"),
                    "TOKEN": creds.as_env_value("TOKEN"),
                },
                "volume_mounts": [
                    settings.mount("/etc/web", read_only=True),
                    data.mount("/data"),
                    data.mount("/cache", sub_path="cache"),
                ],
            },
            {"image": "busybox", "volume_mounts": [creds.mount("/secrets")]},
        ],
    )
    spec = plain(pod.as_pod_spec())
    web, sidecar = spec["containers"]
    cm_name = child(settings).props["metadata"]["name"]
    secret_name = child(creds).props["metadata"]["name"]
    assert web["name"] == "web" and sidecar["name"] == "web-1"
    assert web["ports"] == [
        {"name": "http", "containerPort": 80, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
    ]
    assert web["env"] == [
        {"name": "MODE", "value": "prod"},
        {"name": "WORKERS", "value": "4"},
        {"name": "DEBUG", "value": "false"},
        {"name": "IMAGE", "value": "nginx:1.29"},
        {
            "name": "GREETING",
            "valueFrom": {"configMapKeyRef": {"name": cm_name, "key": "GREETING"}},
        },
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": secret_name, "key": "TOKEN"}}},
    ]
    assert web["volumeMounts"] == [
        {"name": "web-settings", "mountPath": "/etc/web", "readOnly": True},
        {"name": "web-data", "mountPath": "/data"},
        {"name": "web-data", "mountPath": "/cache", "subPath": "cache"},
    ]
    assert sidecar["volumeMounts"] == [{"name": "web-creds", "mountPath": "/secrets"}]
    assert spec["volumes"] == [
        {"name": "web-settings", "configMap": {"name": cm_name}},
        {"name": "web-data", "persistentVolumeClaim": {"claimName": "web-data-live"}},
        {"name": "web-creds", "secret": {"secretName": secret_name}},
    ]
    assert child(data).props["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}},
        "storageClassName": "fast",
    }
    assert pod.ports == {"http": 80, "metrics": 9090}


def test_workload_specs_derive_labels_and_selector(program: Program) -> None:
    pod = kx.PodBuilder("db", containers=[{"image": "postgres:17", "ports": {"pg": 5432}}])
    deployment = pod.as_deployment_spec(replicas=3, strategy={"type": "Recreate"})
    assert deployment["replicas"] == 3 and deployment["strategy"] == {"type": "Recreate"}
    assert deployment["selector"] == {"matchLabels": {"app": "db"}}
    assert deployment["template"]["metadata"] == {"labels": {"app": "db"}}
    stateful = pod.as_stateful_set_spec("db-headless", replicas=2)
    assert stateful["serviceName"] == "db-headless" and stateful["replicas"] == 2
    assert stateful["selector"] == {"matchLabels": {"app": "db"}}
    job = kx.PodBuilder("migrate", containers=[{"image": "app", "args": ["migrate"]}])
    spec = job.as_job_spec(backoff_limit=2)
    assert spec["backoffLimit"] == 2 and "selector" not in spec
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["template"]["spec"]["containers"] == [
        {"image": "app", "args": ["migrate"], "name": "migrate"}
    ]
    custom = kx.PodBuilder("x", containers=[{"image": "a"}], labels={"tier": "x"})
    assert custom.as_deployment_spec()["selector"] == {"matchLabels": {"tier": "x"}}


def test_deployment_is_a_component_with_a_service(program: Program) -> None:
    pod = kx.PodBuilder("web", containers=[{"image": "nginx", "ports": {"http": 8080}}])
    web = kx.Deployment(
        "web", spec=pod.as_deployment_spec(replicas=2), metadata={"namespace": "apps"}
    )
    service = web.create_service(type="LoadBalancer")
    assert not web.custom and web.resource_type == "kx:apps:Deployment"
    assert [r.resource_type for r in web.children] == [
        "kubernetes:apps/v1:Deployment",
        "kubernetes:core/v1:Service",
    ]
    assert service.urn == "urn:sw:dev::p::kx:apps:Deployment$kubernetes:core/v1:Service::web"
    assert service.props["metadata"] == {"namespace": "apps"}
    assert service.props["spec"] == {
        "type": "LoadBalancer",
        "selector": {"app": "web"},
        "ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}],
    }
    assert web.deployment.props["spec"]["replicas"] == 2
    other = kx.Deployment(
        "api", spec=kx.PodBuilder("api", containers=[{"image": "a", "ports": {"http": 8080}}])
    )
    assert other.create_service(ports={"http": 80}).props["spec"]["ports"] == [
        {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}
    ]


def test_create_service_needs_named_ports(program: Program) -> None:
    bare = kx.Deployment("bare", spec=kx.PodBuilder("bare", containers=[{"image": "a"}]))
    with pytest.raises(UsageError, match="no named container ports"):
        bare.create_service()
    raw = kx.Deployment("raw", spec={"template": {"spec": {"containers": []}}})
    with pytest.raises(UsageError, match="matchLabels"):
        raw.create_service(ports={"http": 80})


def test_bad_env_and_missing_image_are_named(program: Program) -> None:
    with pytest.raises(UsageError, match="env 'X'"):
        kx.PodBuilder("w", containers=[{"image": "a", "env": {"X": object()}}])
    with pytest.raises(UsageError, match="container 0 has no image"):
        kx.PodBuilder("w", containers=[{"name": "w"}])
    with pytest.raises(UsageError) as typo:
        kx.PodBuilder("w", containers=[{"imag": "nginx:1.29"}])
    assert str(typo.value).endswith(
        "container 0 has no image (it has 'imag': did you mean 'image'?)"
    )
    assert str(typo.value).startswith(f"{__file__}:")
    assert ": PodBuilder 'w': container 0" in str(typo.value)


def test_an_env_value_of_a_key_the_data_lacks_is_refused(program: Program) -> None:
    # The pod would never start (CreateContainerConfigError), found only at `up`.
    settings = kx.ConfigMap("settings", data={"GREETING": "hi"}, binary_data={"logo": "AA=="})
    creds = kx.Secret("creds", string_data={"TOKEN": Output.secret("t")}, data={"CA": "AA=="})
    with pytest.raises(UsageError) as missing:
        settings.as_env_value("GREETNG")
    assert str(missing.value).startswith(f"{__file__}:")
    assert ": kx.ConfigMap 'settings' has no key 'GREETNG'; " in str(missing.value)
    assert str(missing.value).endswith("did you mean 'GREETING'? its keys: GREETING, logo")
    with pytest.raises(UsageError, match=r"kx.Secret 'creds' has no key 'token'.*TOKEN"):
        creds.as_env_value("token")
    # Keys the data has, of either map, are taken.
    assert settings.as_env_value("logo")["valueFrom"]["configMapKeyRef"]["key"] == "logo"
    assert creds.as_env_value("CA")["valueFrom"]["secretKeyRef"]["key"] == "CA"


def test_plain_resources_and_kx_mix(program: Program) -> None:
    settings = kx.ConfigMap("s", data={"a": "1"})
    pod = kx.PodBuilder("w", containers=[{"image": "a", "envFrom": [settings.as_env_from()]}])
    k8s.apps.v1.StatefulSet("w", spec=pod.as_stateful_set_spec("w"))
    (sts,) = of_kind(program, "StatefulSet")
    env_from = plain(sts.props["spec"]["template"]["spec"]["containers"][0]["envFrom"])
    assert env_from == [{"configMapRef": {"name": child(settings).props["metadata"]["name"]}}]


def test_random_password_is_a_secret_output_of_a_resource_the_engine_generates() -> None:
    program = Program(project="p", stack="dev")
    with running(program):
        password = kx.RandomPassword("db", length=20)
    assert password.result.is_secret
    (declared,) = program.resources
    assert (declared.resource_type, declared.props) == (
        "stackwright:random:RandomPassword",
        {
            "length": 20,
            "alphabet": string.ascii_letters + string.digits,
        },
    )
    value = resolve(password.result, lambda r: {"result": "s3cret"})
    assert isinstance(value, Secret) and value.value == "s3cret"
    with running(Program(project="p", stack="dev")), pytest.raises(UsageError, match="length"):
        kx.RandomPassword("db", length=0)


def test_components_accept_parent_options(program: Program) -> None:
    app = sw.ComponentResource("acme:web:App", "shop")
    settings = kx.ConfigMap("settings", data={}, opts=sw.ResourceOptions(parent=app))
    assert child(settings).urn == (
        "urn:sw:dev::p::acme:web:App$kx:core:ConfigMap$kubernetes:core/v1:ConfigMap::settings"
    )
