"""A Python program's dict inputs of a built-in kind are checked against the kind's fields, as
a YAML program's properties are: a key that is no field is refused at the declaring line,
naming the kind, the resource, the path and the closest fields. Free-keyed maps take any key,
Outputs are not looked into (their value is known only once applied), typed args and
snake_case keyword arguments keep working, and custom resources are the server's to check."""

from __future__ import annotations

import sys

import pytest
from lightkube.models.core_v1 import Container, ContainerPort, ResourceRequirements
from test_sdk_output import program

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.sdk.context import Program

__all__ = ["program"]  # a fixture, used by name


def pod_spec(container: dict[str, object]) -> dict[str, object]:
    return {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}},
    }


def test_a_misspelt_nested_key_is_refused_at_its_line(program: Program) -> None:
    with pytest.raises(UsageError) as raised:
        line = sys._getframe().f_lineno + 1
        k8s.apps.v1.Deployment("web", spec=pod_spec({"name": "web", "imagee": "nginx"}))
    assert str(raised.value) == (
        f"{__file__}:{line}: Deployment 'web': spec.template.spec.containers[0].imagee: "
        "Container has no field 'imagee'; did you mean 'image'?"
    )
    # In metadata too, and in an object of a map of objects; nothing close: the fields.
    with pytest.raises(UsageError, match=r"metadata\.lables: ObjectMeta .* did you mean 'labels'"):
        k8s.core.v1.ConfigMap("c", metadata={"lables": {"a": "b"}})
    with pytest.raises(UsageError, match=r"spec\.ports\[1\]\.xyzzy: .*its fields: appProtocol, "):
        k8s.core.v1.Service("s", spec={"ports": [{"port": 80}, {"port": 81, "xyzzy": 1}]})
    # Nothing was registered.
    assert program.resources == []


def test_a_field_newer_than_the_definitions_has_a_way_through(program: Program) -> None:
    # Like no field at all: perhaps one a later Kubernetes added. The refusal says how to
    # send it anyway, and that way registers the same resource, unchecked.
    newer = pod_spec({"name": "web", "image": "nginx"})
    newer["template"]["spec"]["brandNewField"] = True  # type: ignore[index]
    with pytest.raises(UsageError) as raised:
        k8s.apps.v1.Deployment("web", spec=newer)
    assert str(raised.value).endswith(
        "(a field newer than Stackwright's definitions of the kinds: declare the object as "
        "k8s.apiextensions.CustomResource('web', api_version='apps/v1', kind='Deployment', …), "
        "whose fields are not checked)"
    )
    made = k8s.apiextensions.CustomResource(
        "web", api_version="apps/v1", kind="Deployment", spec=newer
    )
    assert made.urn.endswith("::kubernetes:apps/v1:Deployment::web")
    # A misspelling is only that: no such advice.
    with pytest.raises(UsageError) as raised:
        k8s.apps.v1.Deployment("web", spec=pod_spec({"name": "web", "imagee": "nginx"}))
    assert "newer" not in str(raised.value)


def test_a_newer_field_like_an_older_one_still_has_a_way_through(program: Program) -> None:
    # Kubernetes 1.34's fields often extend an older one's name: the closest field is said,
    # and so is the way through, since this is no slip of the keys (as `imagee` is).
    newer = pod_spec({"name": "web", "image": "nginx", "restartPolicyRules": []})
    with pytest.raises(UsageError) as raised:
        k8s.apps.v1.Deployment("web", spec=newer)
    assert str(raised.value).endswith(
        "Container has no field 'restartPolicyRules'; did you mean 'restartPolicy'? (or a "
        "field newer than Stackwright's definitions of the kinds: declare the object as "
        "k8s.apiextensions.CustomResource('web', api_version='apps/v1', kind='Deployment', "
        "…), whose fields are not checked)"
    )
    with pytest.raises(UsageError, match=r"'hostname'\? \(or a field newer"):
        k8s.core.v1.Pod("p", spec={"containers": [], "hostnameOverride": "x"})
    # Two letters swapped is a slip, and snake_case (a Pulumi program's dicts) only another
    # spelling: only the closest field.
    for spec, field in (
        ({"contianers": []}, "containers"),
        (
            {"containers": [], "termination_grace_period_seconds": 5},
            "terminationGracePeriodSeconds",
        ),
        ({"containers": [{"name": "a", "ports": [{"host_ip": "::"}]}]}, "hostIP"),
    ):
        with pytest.raises(UsageError) as raised:
            k8s.core.v1.Pod("p", spec=spec)
        assert str(raised.value).endswith(f"did you mean {field!r}?")


def test_free_keyed_maps_take_any_key(program: Program) -> None:
    k8s.core.v1.ConfigMap(
        "c",
        metadata={"labels": {"imagee": "x"}, "annotations": {"anything.io/at-all": "y"}},
        data={"imagee": "z"},
    )
    container = {
        "name": "web",
        "image": "nginx",
        "resources": {"limits": {"cpu": "1", "example.com/gpu": 1}, "requests": {"whatever": 2}},
        "env": [{"name": "A", "value": "1"}],
    }
    k8s.apps.v1.Deployment("web", spec=pod_spec(container))
    k8s.core.v1.Service("s", spec={"selector": {"imagee": "web"}, "ports": [{"port": 80}]})
    assert len(program.resources) == 3


def test_typed_args_and_snake_case_keywords_pass(program: Program) -> None:
    typed = Container(
        name="web",
        image="nginx",
        ports=[ContainerPort(containerPort=80)],
        resources=ResourceRequirements(limits={"cpu": "1"}),
    )
    k8s.apps.v1.Deployment("web", spec=pod_spec(typed))  # type: ignore[arg-type]
    k8s.core.v1.Secret("s", string_data={"password": "x"}, metadata={"name": "s"})
    assert program.resources[0].props["spec"]["template"]["spec"]["containers"][0] == {
        "name": "web",
        "image": "nginx",
        "ports": [{"containerPort": 80}],
        "resources": {"limits": {"cpu": "1"}},
    }
    assert program.resources[1].props["stringData"] == {"password": "x"}


def test_outputs_inside_inputs_are_not_looked_into(program: Program) -> None:
    ns = k8s.core.v1.Namespace("ns")
    # Its value is known only once applied: the server checks what it turns out to be.
    later = ns.metadata.apply(lambda meta: {"name": "web", "imagee": meta["name"]})
    spec = pod_spec({"name": "web", "image": "nginx"})
    spec["template"]["spec"]["containers"] = [later]  # type: ignore[index]
    k8s.apps.v1.Deployment("web", spec=spec, metadata={"namespace": ns.metadata["name"]})
    k8s.apps.v1.Deployment("all", spec=sw.Output.from_input({"imagee": 1}))
    assert len(program.resources) == 3


def test_a_custom_resource_is_not_checked(program: Program) -> None:
    k8s.CustomObject("w", api_version="example.com/v1", kind="Widget", spec={"imagee": "anything"})
    assert len(program.resources) == 1


def test_a_key_that_is_no_str_is_refused_as_no_field(program: Program) -> None:
    with pytest.raises(UsageError, match=r"spec\.containers\[0\]\.1: Container has no field '1'"):
        k8s.core.v1.Pod("p", spec={"containers": [{1: "x"}]})
