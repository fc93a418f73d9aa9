"""Reading a built-in kind's live fields by Pulumi's attribute names: a name that is no field
of the object's definition is refused, with the closest fields (as Pulumi's typed outputs
raise AttributeError), on an Output where the attribute is taken and on the mappings an apply
callback gets; a real field the object does not hold reads None; free-keyed maps, custom
resources' objects and plain dicts take any name."""

from __future__ import annotations

from typing import Any

import pytest
from test_sdk_output import program, reader

import stackwright.kubernetes as k8s
from stackwright.kubernetes import fields, nested
from stackwright.kubernetes.groups import MODULES
from stackwright.sdk.context import Program
from stackwright.sdk.output import UNKNOWN, Output, Partial

__all__ = ["program"]  # a fixture, used by name


LIVE_SERVICE = {
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"clusterIP": "10.0.0.7", "ports": [{"port": 80}]},
    "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}},
}


def service() -> k8s.core.v1.Service:
    return k8s.core.v1.Service("web", spec={"ports": [{"port": 80}]})


def test_a_misspelt_attribute_of_an_output_is_refused_where_it_is_taken(
    program: Program,
) -> None:
    svc = service()
    with pytest.raises(AttributeError) as raised:
        svc.spec.cluster_ipp  # noqa: B018
    assert str(raised.value) == (
        "Service 'web' has no field spec.cluster_ipp (did you mean cluster_ip or cluster_ips?)"
    )
    with pytest.raises(AttributeError) as raised:
        svc.status.load_balncer  # noqa: B018
    assert str(raised.value) == (
        "Service 'web' has no field status.load_balncer (did you mean load_balancer?)"
    )
    with pytest.raises(AttributeError) as raised:
        svc.status.load_balancer.ingress[0].ipp  # noqa: B018
    assert str(raised.value) == (
        "Service 'web' has no field status.load_balancer.ingress[0].ipp (did you mean ip?)"
    )
    # Kubernetes' spelling is suggested in Kubernetes' spelling.
    with pytest.raises(AttributeError, match=r"spec\.clusterIPP \(did you mean clusterIP\b"):
        svc.spec.clusterIPP  # noqa: B018
    # An attribute of a list names the item to take.
    with pytest.raises(AttributeError) as raised:
        svc.status.load_balancer.ingress.ip  # noqa: B018
    assert str(raised.value) == (
        "Service 'web' has no field status.load_balancer.ingress.ip (status.load_balancer."
        "ingress is a list of LoadBalancerIngress: take an item, "
        "status.load_balancer.ingress[0].ip)"
    )
    # Nothing close: the definition's fields, as Pulumi spells them.
    with pytest.raises(AttributeError, match=r"spec\.xyzzy \(ServiceSpec's fields: .*cluster_ip,"):
        svc.spec.xyzzy  # noqa: B018
    # ... and how to read one newer than the definitions, which the live object may hold.
    with pytest.raises(
        AttributeError, match=r"newer than .* read by its key: \['brandNewThing'\]\)$"
    ):
        svc.spec.brand_new_thing  # noqa: B018
    with pytest.raises(AttributeError, match=r"metadata\.nmae \(did you mean name"):
        k8s.apps.v1.Deployment("d", spec={}).metadata.nmae  # noqa: B018


@pytest.mark.parametrize(
    ("read", "error", "said"),
    [
        # It read null, silently, as an absent field does: the table marked a scalar field
        # and a free-keyed map alike as holding anything.
        (
            lambda dep: dep.spec.replicas.foo,
            AttributeError,
            "Deployment 'web' has no field spec.replicas.foo (spec.replicas is an integer, "
            "which has no fields: read spec.replicas itself)",
        ),
        # As Python refuses `5[0]`; it read null, while YAML's `${web.spec.replicas[0]}` was
        # refused.
        (
            lambda dep: dep.spec.replicas[0],
            TypeError,
            "Deployment 'web' has no item spec.replicas[0] (spec.replicas is an integer, "
            "which has no items: read spec.replicas itself)",
        ),
        # A name on a list of scalars: it read null, as a free value's key did.
        (
            lambda dep: dep.metadata.finalizers.foo,
            AttributeError,
            "Deployment 'web' has no field metadata.finalizers.foo (metadata.finalizers is a "
            "list of strings, which has no fields: read metadata.finalizers itself or an item, "
            "metadata.finalizers[0])",
        ),
    ],
)
def test_nothing_is_read_below_a_scalar_field(
    program: Program, read: Any, error: type[Exception], said: str
) -> None:
    with pytest.raises(error) as raised:
        read(k8s.apps.v1.Deployment("web", spec={}))
    assert str(raised.value) == said


def test_an_attribute_below_a_scalar_field_is_refused(program: Program) -> None:
    dep = k8s.apps.v1.Deployment("web", spec={})
    with pytest.raises(AttributeError, match=r"no field status\.load_balancer\.ingress\[0\]"):
        service().status.load_balancer.ingress[0].ip.v4  # noqa: B018
    # Free-keyed maps and open objects below a scalar's neighbours still take any name.
    assert dep.metadata.labels.anything is not None
    assert k8s.apps.v1.ControllerRevision("r", revision=1).data.spec.any is not None


def test_an_item_below_a_scalar_field_is_refused(program: Program) -> None:
    dep = k8s.apps.v1.Deployment("web", spec={})
    # A key is no item either (it stood for the integer: `replicas["x"].y` named
    # spec.replicas.x as "an integer").
    with pytest.raises(TypeError, match=r"no item spec\.replicas\.x \(spec\.replicas is an int"):
        dep.spec.replicas["x"]
    with pytest.raises(TypeError, match=r"no item spec\.template\.spec\.priority\[0\] "):
        dep.spec.template["spec"]["priority"][0]
    # Items taken from a resource's field before any attribute check nothing (no schema is
    # looked up for `ns.metadata["name"]`) until an attribute is taken: the item is named.
    with pytest.raises(TypeError, match=r"no item spec\.replicas\[0\] \(spec\.replicas is an"):
        dep.spec["replicas"][0].foo  # noqa: B018
    # Items of lists, maps and objects still read.
    assert dep.spec.template.spec.containers[0]["image"] is not None
    assert dep.metadata.labels["app"] is not None


def test_the_items_of_a_list_of_scalars_read(program: Program) -> None:
    dep = k8s.apps.v1.Deployment("web", spec={})
    with pytest.raises(AttributeError, match=r"\[0\]\.foo \(metadata\.finalizers\[0\] is a string"):
        dep.metadata.finalizers[0].foo  # noqa: B018
    with pytest.raises(AttributeError, match=r"is a list of integers, which has no fields"):
        dep.spec.template.spec.security_context.supplemental_groups.first  # noqa: B018
    read = reader({dep: {"metadata": {"finalizers": ["example.com/keep"]}}})
    assert dep.metadata.finalizers[0].resolve(read) == "example.com/keep"
    assert dep.metadata.finalizers.resolve(read) == ["example.com/keep"]
    assert dep.spec.template.spec.containers[0].command[1].resolve(read) is None


def test_the_table_marks_scalars_and_lists_of_them() -> None:
    meta = nested.object_keys("meta_v1.ObjectMeta")
    assert meta["finalizers"] == nested.Scalars(nested.Plain("string"))
    assert meta["generation"] == nested.Plain("integer") and meta["labels"] is None
    assert nested.Scalars(nested.Plain("quantity")).shown == "a list of quantities"
    with pytest.raises(TypeError, match="an integer has no items"):
        nested.Plain("integer").item()


def test_real_fields_the_live_object_does_not_hold_read_none(program: Program) -> None:
    svc = service()
    dep = k8s.apps.v1.Deployment("web", spec={})
    read = reader({svc: LIVE_SERVICE, dep: {"spec": {}}})
    assert svc.spec.cluster_ip.resolve(read) == "10.0.0.7"
    assert svc.status.load_balancer.ingress[0].ip.resolve(read) == "192.0.2.1"
    assert svc.status.load_balancer.ingress[0].hostname.resolve(read) is None
    assert svc.spec.external_name.resolve(read) is None
    assert svc.status.conditions[0].reason.resolve(read) is None
    assert dep.spec.replicas.resolve(read) is None
    assert dep.status.ready_replicas.resolve(read) is None
    assert dep.spec.template.spec.containers[0].image.resolve(read) is None
    # In a preview, before anything is known, the same names are taken.
    assert svc.status.load_balancer.ingress[0].ip.resolve(reader({})) is UNKNOWN
    # ... and only they: absent is not the same as no such field.
    with pytest.raises(AttributeError, match=r"no field status\.ready_replica \(did you mean"):
        dep.status.ready_replica  # noqa: B018


def test_maps_with_free_keys_take_any_key(program: Program) -> None:
    svc = service()
    dep = k8s.apps.v1.Deployment("web", spec={})
    cm = k8s.core.v1.ConfigMap("cfg", data={"a": "1"})
    read = reader({svc: LIVE_SERVICE, cm: {"data": {"a": "1"}}, dep: {}})
    assert svc.metadata.labels.app.resolve(read) == "web"
    assert svc.metadata.labels.anything_at_all.resolve(read) is None
    assert svc.metadata.annotations["example.com/x"].resolve(read) is None
    assert svc.spec.selector.tier.resolve(read) is None
    assert cm.data.a.resolve(read) == "1" and cm.data.b.resolve(read) is None
    limits = dep.spec.template.spec.containers[0]["resources"].limits
    assert limits.cpu.resolve(read) is None
    # By attribute too: `resources` is the container's field, not the Output's dependencies.
    held = {
        "spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]}}}
    }
    by_name = dep.spec.template.spec.containers[0].resources.limits.cpu
    assert by_name.resolve(reader({dep: held})) == "1"
    assert svc.metadata.apply(lambda m: (m.labels.app, m.labels.other)).resolve(read) == (
        "web",
        None,
    )
    # The object holding the map is checked all the same.
    with pytest.raises(AttributeError, match=r"no field metadata\.label \(did you mean labels"):
        svc.metadata.label  # noqa: B018
    with pytest.raises(
        AttributeError, match=r"no field spec\.template\.spec\.containers\[0\]\.imag"
    ):
        dep.spec.template.spec.containers[0].imag  # noqa: B018


def test_a_misspelt_attribute_in_a_callback_is_refused(program: Program) -> None:
    svc = service()
    read = reader({svc: LIVE_SERVICE})
    with pytest.raises(AttributeError) as raised:
        svc.status.apply(lambda s: s.load_balncer).resolve(read)
    assert str(raised.value) == (
        "Service 'web' has no field status.load_balncer (did you mean load_balancer?)"
    )
    with pytest.raises(AttributeError) as raised:
        svc.status.apply(lambda s: s.load_balancer.ingress[0].ipp).resolve(read)
    assert str(raised.value) == (
        "Service 'web' has no field status.loadBalancer.ingress[0].ipp (did you mean ip?)"
    )
    with pytest.raises(AttributeError, match=r"no field spec\.cluster_ipp"):
        Output.all(svc.metadata, svc.spec).apply(lambda a: a[1].cluster_ipp).resolve(read)
    # Real fields: held, or None.
    assert svc.status.apply(lambda s: s.load_balancer.ingress[0].ip).resolve(read) == "192.0.2.1"
    assert svc.status.apply(lambda s: s.load_balancer.ingress[0].hostname).resolve(read) is None
    assert svc.status.apply(lambda s: s.conditions).resolve(read) is None
    assert svc.spec.apply(lambda s: s.ports[0].node_port).resolve(read) is None
    assert Output.all(svc.spec, svc.metadata).apply(
        lambda a: (a[0].external_name, a[1].name)
    ).resolve(read) == (None, "web")


def test_a_preview_refuses_a_misspelt_attribute_and_leaves_real_ones_unknown(
    program: Program,
) -> None:
    svc = service()
    preview = reader({svc: Partial(spec=Partial(clusterIP="10.0.0.9"))})
    assert svc.spec.apply(lambda s: s.cluster_ip).resolve(preview) == "10.0.0.9"
    assert svc.spec.apply(lambda s: s.external_name).resolve(preview) is UNKNOWN
    with pytest.raises(AttributeError, match=r"no field spec\.external_nmae \(did you mean"):
        svc.spec.apply(lambda s: s.external_nmae).resolve(preview)


def test_custom_resources_and_plain_dicts_take_any_name(program: Program) -> None:
    widget = k8s.apiextensions.CustomResource(
        "w", api_version="example.com/v1", kind="Widget", spec={"size": 1}
    )
    read = reader({widget: {"spec": {"size": 1}, "status": {"phase": "Ready"}}})
    assert widget.spec.size.resolve(read) == 1
    assert widget.spec.colour.resolve(read) is None
    assert widget.status.apply(lambda s: (s.phase, s.anything)).resolve(read) == ("Ready", None)
    # A custom resource spelling a built-in kind is no built-in kind's class: free too,
    # where the kind's own class refuses the name.
    svc = k8s.apiextensions.CustomResource("s", api_version="v1", kind="Service", spec={})
    assert svc.spec.cluster_ipp.resolve(reader({svc: {"spec": {}}})) is None
    with pytest.raises(AttributeError, match=r"Service 'web' has no field spec\.cluster_ipp"):
        service().spec.cluster_ipp  # noqa: B018
    plain = Output.from_input({"a": {"b": 1}})
    assert plain.apply(lambda d: (d.a.b, d.a.c, d.z)).resolve(reader({})) == (1, None, None)


def test_statuses_are_listed_apart_from_what_programs_set() -> None:
    """Each kind with a `status` lists what it holds in `STATUSES`, never in `KINDS` (against
    which a YAML program's properties are checked); every definition a status reaches is
    listed, those only a status holds in `STATUS_OBJECTS`, which `object_keys` never reads."""
    for group, versions in fields.KINDS.items():
        for version, kinds in versions.items():
            module = getattr(getattr(k8s, MODULES[group]), version)
            for kind in kinds:
                has_status = isinstance(vars(getattr(module, kind)).get("status"), property)
                listed = fields.STATUSES.get(group, {}).get(version, {}).get(kind)
                assert (listed is not None) == has_status, kind
                assert "status" not in (nested.kind_fields(group, version, kind) or {})
                live = nested.live_fields(group, version, kind) or {}
                assert ("status" in live) == has_status, kind
    seen: set[str] = set()
    todo = [
        held
        for versions in fields.STATUSES.values()
        for kinds in versions.values()
        for listed in kinds.values()
        for held in nested._keys(listed, "").values()
        if isinstance(held, nested.Nested)
    ]
    while todo:
        held = todo.pop()
        if held.definition in seen:
            continue
        seen.add(held.definition)
        todo += [
            n for n in nested.live_keys(held.definition).values() if isinstance(n, nested.Nested)
        ]
    status_only = {
        f"{module}.{name}" for module, names in fields.STATUS_OBJECTS.items() for name in names
    }
    listed_for_programs = {
        f"{module}.{name}" for module, names in fields.OBJECTS.items() for name in names
    }
    assert status_only <= seen and not status_only & listed_for_programs
    assert "core_v1.ServiceStatus" in seen and "apps_v1.DeploymentStatus" in status_only
    with pytest.raises(KeyError):
        nested.object_keys("apps_v1.DeploymentStatus")


def test_json_schemas_own_field_names_read_by_pulumis_spelling(program: Program) -> None:
    # `x-kubernetes-list-map-keys` is Pulumi's `x_kubernetes_list_map_keys`, `$ref` its
    # `_ref`: both were refused, the first while suggesting itself.
    crd = k8s.apiextensions.v1.CustomResourceDefinition("crd", spec={})
    schema = crd.spec.versions[0].schema.open_apiv3_schema
    read = reader({
        crd: {"spec": {"versions": [{"schema": {"openAPIV3Schema": {
            "x-kubernetes-list-map-keys": ["name"], "$ref": "#/a", "x-kubernetes-list-type": "map",
        }}}]}},
    })  # fmt: skip
    assert schema.x_kubernetes_list_map_keys[0].resolve(read) == "name"
    assert schema._ref.resolve(read) == "#/a"
    with pytest.raises(AttributeError, match=r"did you mean x_kubernetes_list_type or "):
        schema.x_kubernetes_list_typ  # noqa: B018
    with pytest.raises(AttributeError, match=r"did you mean _ref\b"):
        schema._reff  # noqa: B018
