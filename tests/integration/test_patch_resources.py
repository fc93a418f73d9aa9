"""Patch resources (`k8s.core.v1.ConfigMapPatch`, Pulumi's `<Kind>Patch`) end to end: fields of
an object made outside the stack, applied by server-side apply under a field manager of each
Patch's own, the object never marked, never an ApplySet member, never deleted. One cluster
serves the module; each test has its own project and namespace.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import PRELUDE_LINES, create, get, live, managers, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

#: The marks Stackwright puts on the objects a stack owns: none may reach a patched object.
MARKS = ("app.kubernetes.io/managed-by", "applyset.kubernetes.io/part-of")
MARK_ANNOTATIONS = ("stackwright.io/stack", "stackwright.io/urn")


def _namespace(cluster: LiveCluster, ns: str) -> None:
    cluster.kubectl("create", "namespace", ns)


def _patch_manager(p: Any, name: str) -> str:
    """The field manager the state records for a Patch resource."""
    inputs = p.resources()[name]["inputs"]
    manager: str = inputs["metadata"]["annotations"]["stackwright.io/patch-field-manager"]
    return manager


def _config_map_patch(p: Any, name: str, data: dict[str, str], opts: str = "None") -> None:
    """A program of one ConfigMapPatch `name` of ConfigMap `name` in the project's namespace."""
    p.program(
        f"""
        k8s.core.v1.ConfigMapPatch({name!r}, metadata={{"name": {name!r}, "namespace": NS}},
                                   data={data!r}, opts={opts})
        """
    )


def _the_failed_step(run: Any) -> dict[str, Any]:
    (failed,) = [e for e in run.of("step-done") if not e["ok"]]
    return failed  # type: ignore[no-any-return]


def _unmarked(obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    assert not set(MARKS) & set(meta.get("labels") or {}), meta.get("labels")
    assert not set(MARK_ANNOTATIONS) & set(meta.get("annotations") or {}), meta.get("annotations")
    assert "stackwright" not in managers(obj), "the stack's own manager must not touch it"


def test_config_map_patch_lifecycle(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "existing", p.ns, data={"owner": "kubectl"})
    p.program(
        """
        k8s.core.v1.ConfigMapPatch(
            "cm-patch",
            metadata={"name": "existing", "namespace": NS, "labels": {"team": "blue"}},
            data={"k": "v"},
        )
        """
    )
    planned = p.preview()
    assert planned.changed() == {"cm-patch": "create"}
    assert "k" not in live(cluster, "configmap", "existing", p.ns)["data"], "a preview writes"

    up = p.up()
    assert up.summary["counts"] == {"create": 1}
    record = p.resources()["cm-patch"]
    assert record["type"] == "kubernetes:core/v1:ConfigMapPatch"
    manager = _patch_manager(p, "cm-patch")
    assert manager.startswith("stackwright-patch-")
    obj = live(cluster, "configmap", "existing", p.ns)
    assert obj["data"] == {"owner": "kubectl", "k": "v"}
    assert obj["metadata"]["labels"] == {"team": "blue"}
    assert manager in managers(obj)
    _unmarked(obj)
    # Not the stack's: no ApplySet parent was made for it in its namespace.
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is None

    # No change: nothing is written (the object's resourceVersion stays).
    version = obj["metadata"]["resourceVersion"]
    again = p.up()
    assert again.changed() == {}
    assert live(cluster, "configmap", "existing", p.ns)["metadata"]["resourceVersion"] == version
    assert _patch_manager(p, "cm-patch") == manager, "the manager is stable across runs"

    # The label goes from the Patch: server-side apply removes what its manager alone owned.
    p.program(
        """
        k8s.core.v1.ConfigMapPatch(
            "cm-patch", metadata={"name": "existing", "namespace": NS}, data={"k": "v2"}
        )
        """
    )
    assert p.up().changed() == {"cm-patch": "update"}
    obj = live(cluster, "configmap", "existing", p.ns)
    assert obj["data"] == {"owner": "kubectl", "k": "v2"}
    assert "team" not in (obj["metadata"].get("labels") or {})

    # Dropped from the program: its fields are given up, the object stays.
    p.program("")
    assert p.up().changed() == {"cm-patch": "delete"}
    obj = live(cluster, "configmap", "existing", p.ns)
    assert obj["data"] == {"owner": "kubectl"}
    assert manager not in managers(obj)
    assert "cm-patch" not in p.resources()


def test_destroy_gives_fields_up_and_retain_keeps_them(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "one", p.ns, data={"a": "1"})
    create(cluster, "ConfigMap", "two", p.ns, data={"a": "1"})
    p.program(
        """
        MANAGER = {"stackwright.io/patch-field-manager": "ops-tuning"}
        k8s.core.v1.ConfigMapPatch("given-up",
                                   metadata={"name": "one", "namespace": NS, "annotations": MANAGER},
                                   data={"b": "2"})
        k8s.core.v1.ConfigMapPatch("kept", metadata={"name": "two", "namespace": NS},
                                   data={"b": "2"},
                                   opts=sw.ResourceOptions(retain_on_delete=True))
        """
    )
    p.up()
    one = live(cluster, "configmap", "one", p.ns)
    assert "ops-tuning" in managers(one), "the annotation names the Patch's field manager"
    assert not (one["metadata"].get("annotations") or {}), "and is not written on the object"
    # Someone changes fields of the object: only the one a Patch applies is its drift.
    cluster.kubectl(
        "patch", "configmap", "two", "-n", p.ns, "--type=merge",
        "-p", json.dumps({"data": {"b": "changed", "a": "changed"}}),
    )  # fmt: skip
    refreshed = p.sw("refresh", "--yes", "--json")
    (drift,) = refreshed.of("drift")
    assert drift["urn"].endswith("::kept") and [f["path"] for f in drift["fields"]] == ["data.b"], (
        drift
    )
    # The next run takes the Patch's field back, which kubectl's manager owns now: a
    # conflict, said in the preview already, rather than a Patch silently out of date.
    taking_back = p.preview(rc=1)
    assert taking_back.changed() == {"kept": "update"}
    (done,) = taking_back.of("step-done")
    assert "conflict on .data.b (manager kubectl-patch)" in done["error"], done["error"]
    p.sw("destroy", "--yes", "--json")
    assert live(cluster, "configmap", "one", p.ns)["data"] == {"a": "1"}
    assert live(cluster, "configmap", "two", p.ns)["data"] == {"a": "changed", "b": "changed"}
    assert p.resources() == {}


def test_two_patches_on_one_object(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "shared", p.ns, data={"base": "x"})
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("first", metadata={"name": "shared", "namespace": NS},
                                   data={"one": "1"})
        k8s.core.v1.ConfigMapPatch("second", metadata={"name": "shared", "namespace": NS},
                                   data={"two": "2"})
        """
    )
    p.up()
    first, second = _patch_manager(p, "first"), _patch_manager(p, "second")
    assert first != second
    obj = live(cluster, "configmap", "shared", p.ns)
    assert obj["data"] == {"base": "x", "one": "1", "two": "2"}
    assert {first, second} <= managers(obj)
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("second", metadata={"name": "shared", "namespace": NS},
                                   data={"two": "2"})
        """
    )
    assert p.up().changed() == {"first": "delete"}
    assert live(cluster, "configmap", "shared", p.ns)["data"] == {"base": "x", "two": "2"}

    # Another object: the Patch gives its fields up on the old one, then applies to the new.
    create(cluster, "ConfigMap", "other", p.ns, data={"base": "y"})
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("second", metadata={"name": "other", "namespace": NS},
                                   data={"two": "2"})
        """
    )
    moved = p.up()
    assert moved.changed() == {"second": "replace"}
    assert live(cluster, "configmap", "shared", p.ns)["data"] == {"base": "x"}
    assert live(cluster, "configmap", "other", p.ns)["data"] == {"base": "y", "two": "2"}
    assert _patch_manager(p, "second") == second, "the manager stays the Patch's"

    def second_as(manager: str, value: str) -> None:
        p.program(
            f"""
            k8s.core.v1.ConfigMapPatch(
                "second",
                metadata={{"name": "other", "namespace": NS,
                          "annotations": {{"stackwright.io/patch-field-manager": "{manager}"}}}},
                data={{"two": "{value}"}},
            )
            """
        )

    # Another manager named: the new one applies, the former one gives its fields up.
    second_as("renamed", "2")
    assert p.up().changed() == {"second": "update"}
    obj = live(cluster, "configmap", "other", p.ns)
    assert obj["data"] == {"base": "y", "two": "2"}
    assert "renamed" in managers(obj) and second not in managers(obj), managers(obj)
    # Another manager and another value at once: the former manager is the Patch's own, no
    # other's field to conflict with.
    second_as("renamed-again", "3")
    assert p.preview().changed() == {"second": "update"}
    assert p.up().changed() == {"second": "update"}
    obj = live(cluster, "configmap", "other", p.ns)
    assert obj["data"] == {"base": "y", "two": "3"}
    assert "renamed-again" in managers(obj) and "renamed" not in managers(obj), managers(obj)

    # Its object deleted by someone else: a destroy has nothing to give up, and is done.
    cluster.kubectl("delete", "configmap", "other", "-n", p.ns)
    p.sw("destroy", "--yes", "--json")
    assert p.resources() == {}
    assert get(cluster, "configmap", "other", p.ns) is None, "giving up must not create it"


def test_a_conflict_fails_unless_forced(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=platform-team", "-f", "-",
        input=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "owned", "namespace": p.ns},
                "data": {"level": "info"},
            }
        ),
    )  # fmt: skip
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("level", metadata={"name": "owned", "namespace": NS},
                                   data={"level": "debug"})
        """
    )
    failed = p.up(rc=1)
    (done,) = failed.of("step-done")
    assert done["ok"] is False
    assert ".data.level (manager platform-team)" in done["error"], done["error"]
    assert "stackwright.io/patch-force" in done["error"], done["error"]
    assert live(cluster, "configmap", "owned", p.ns)["data"] == {"level": "info"}

    p.program(
        """
        k8s.core.v1.ConfigMapPatch(
            "level",
            metadata={"name": "owned", "namespace": NS,
                      "annotations": {"stackwright.io/patch-force": "true"}},
            data={"level": "debug"},
        )
        """
    )
    p.up()
    obj = live(cluster, "configmap", "owned", p.ns)
    assert obj["data"] == {"level": "debug"}
    # The instruction is Stackwright's: it is not written on the object.
    assert "stackwright.io/patch-force" not in (obj["metadata"].get("annotations") or {})


def test_a_missing_target_fails_and_creates_nothing(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("ghost", metadata={"name": "absent", "namespace": NS},
                                   data={"k": "v"})
        """
    )
    # Bad input, said at the Patch's line: a preview that changed nothing exits 2.
    planned = p.preview(rc=2)
    (done,) = planned.of("step-done")
    assert "does not exist" in done["error"] and "creates none" in done["error"], done["error"]
    assert done["error"].startswith(f"__main__.py:{PRELUDE_LINES + 2}: "), done
    failed = p.up(rc=2)  # nothing changed: bad input, as in the preview
    (done,) = failed.of("step-done")
    assert f"ConfigMap {p.ns}/absent does not exist" in done["error"], done["error"]
    assert get(cluster, "configmap", "absent", p.ns) is None
    assert p.resources() == {}


def test_a_patch_renamed_to_a_missing_object_keeps_its_fields_on_the_former_one(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "settings", p.ns, data={"mode": "blue"})
    _config_map_patch(p, "settings", {"extra": "on"})
    p.up()
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("settings", metadata={"name": "settingz", "namespace": NS},
                                   data={"extra": "on"})
        """
    )
    failed = p.up(rc=2)
    assert f"ConfigMap {p.ns}/settingz does not exist" in _the_failed_step(failed)["error"]
    # Refused before the former object's fields were given up: nothing changed.
    assert live(cluster, "configmap", "settings", p.ns)["data"] == {"mode": "blue", "extra": "on"}
    assert p.resources()["settings"]["inputs"]["metadata"]["name"] == "settings"


def test_a_patch_needs_a_name(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("nameless", metadata={"namespace": NS}, data={"k": "v"})
        """
    )
    failed = p.sw("up", "--yes", rc=2)
    line = one_line(failed)
    assert "ConfigMapPatch 'nameless'" in line and "needs metadata.name" in line, line
    assert f"__main__.py:{PRELUDE_LINES + 2}" in line, line


def test_deployment_patch_waits_for_its_rollout(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": p.ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.29"}]},
            },
        },
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(deployment))
    p.program(
        """
        # kubectl made it, so kubectl-create owns the image: the Patch takes it over.
        FORCE = {"stackwright.io/patch-force": "true"}
        k8s.apps.v1.DeploymentPatch(
            "image",
            metadata={"name": "web", "namespace": NS, "annotations": FORCE},
            spec={"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.30"}]}}},
        )
        """
    )
    p.up()
    obj = live(cluster, "deployment", "web", p.ns)
    status = obj["status"]
    assert status.get("observedGeneration") == obj["metadata"]["generation"]
    assert status.get("updatedReplicas") == 1 and status.get("readyReplicas") == 1, status
    _unmarked(obj)

    # An image that never pulls: the wait reports it rather than hanging or passing.
    p.program(
        """
        k8s.apps.v1.DeploymentPatch(
            "image",
            metadata={"name": "web", "namespace": NS,
                      "annotations": {"stackwright.io/timeout-seconds": "20",
                                      "stackwright.io/patch-force": "true"}},
            spec={"template": {"spec": {"containers": [
                {"name": "main", "image": "example.com/doesnotexist:1"}]}}},
        )
        """
    )
    failed = p.up(rc=1)
    (done,) = failed.of("step-done")
    assert "ImagePullBackOff" in done["error"] or "ErrImagePull" in done["error"], done["error"]


def test_giving_up_a_forced_field_the_object_needs_says_how_to_keep_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The README's DeploymentPatch, dropped: the image it took with patch-force is its
    alone, so giving it up would remove it, which the API server refuses."""
    p = new_project()
    _namespace(cluster, p.ns)
    cluster.kubectl("create", "deployment", "web", "-n", p.ns, "--image=nginx:1.29")
    patch = """
        k8s.apps.v1.DeploymentPatch(
            "web-image",
            metadata={{"name": "web", "namespace": NS,
                      "annotations": {{"stackwright.io/patch-force": "true"}}}},
            spec={{"template": {{"spec": {{"containers": [{{"name": "nginx", "image": "nginx:1.30"}}]}}}}}},
            opts={opts},
        )
        """
    p.program(patch.format(opts="None"))
    p.up()
    p.program("")
    # Said by the preview already (the server's dry run of the giving up), then by `up`.
    for run in (p.preview(rc=1), p.up(rc=1)):
        error = _the_failed_step(run)["error"]
        assert "containers[0].image: Required value" in error, error
        assert "only the Patch holds" in error and "retain_on_delete" in error, error
        # Failed, not also counted a delete: the preview counts it as `up` does.
        assert "delete" not in run.summary["counts"], run.summary
    # Refused, so nothing is left pending: the next run settles nothing.
    p.program(patch.format(opts="sw.ResourceOptions(retain_on_delete=True)"))
    again = p.up()
    assert not [e for e in again.of("diagnostic") if "interrupted" in e.get("message", "")]
    p.program("")
    p.up()
    assert p.resources() == {}
    image = live(cluster, "deployment", "web", p.ns)["spec"]["template"]["spec"]["containers"][0]
    assert image["image"] == "nginx:1.30"


def test_a_renamed_patch_keeps_a_forced_field_the_old_object_needs_with_retain(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Moved to another object (a new metadata.name), a Patch gives its fields up on the old
    one first: where a forced field it needs would go, the preview says so already, and
    `retain_on_delete` set along with the new name keeps them there (as Pulumi's
    retainOnDelete keeps a replaced resource); it was told to set it, which did nothing."""
    p = new_project()
    _namespace(cluster, p.ns)
    for name in ("web", "web2"):
        cluster.kubectl("create", "deployment", name, "-n", p.ns, "--image=nginx:1.29")
    patch = """
        k8s.apps.v1.DeploymentPatch(
            "web-image",
            metadata={{"name": {name!r}, "namespace": NS,
                      "annotations": {{"stackwright.io/patch-force": "true"}}}},
            spec={{"template": {{"spec": {{"containers": [{{"name": "nginx", "image": "nginx:1.30"}}]}}}}}},
            opts={opts},
        )
        """

    def image(name: str) -> str:
        obj = live(cluster, "deployment", name, p.ns)
        return str(obj["spec"]["template"]["spec"]["containers"][0]["image"])

    p.program(patch.format(name="web", opts="None"))
    p.up()
    p.program(patch.format(name="web2", opts="None"))
    for run in (p.preview(rc=1), p.up(rc=1)):
        error = _the_failed_step(run)["error"]
        assert "containers[0].image: Required value" in error, error
        assert "`retain_on_delete` (set it along with the new name)" in error, error
    assert (image("web"), image("web2")) == ("nginx:1.30", "nginx:1.29"), "nothing changed"
    p.program(patch.format(name="web2", opts="sw.ResourceOptions(retain_on_delete=True)"))
    p.preview()
    p.up()
    assert (image("web"), image("web2")) == ("nginx:1.30", "nginx:1.30")


def test_yaml_program_patch(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "existing", p.ns, data={"a": "1"})
    (p.root / "Stackwright.yaml").write_text(f"name: {p.name}\nruntime: yaml\n")
    (p.root / "Stackwright.yaml").write_text(
        f"name: {p.name}\nruntime: yaml\n"
        "resources:\n"
        "  cm-patch:\n"
        "    type: kubernetes:core/v1:ConfigMapPatch\n"
        "    properties:\n"
        f"      metadata: {{name: existing, namespace: {p.ns}}}\n"
        "      data: {b: '2'}\n"
    )
    p.up()
    obj = live(cluster, "configmap", "existing", p.ns)
    assert obj["data"] == {"a": "1", "b": "2"}
    _unmarked(obj)


def test_yaml_program_patch_of_a_custom_kind(new_project: Any, cluster: LiveCluster) -> None:
    """A Patch of a CRD's object, by its kind's `<Kind>Patch` type as Pulumi YAML writes it
    (which refused the object's `kind: Widget` as differing from its type's `WidgetPatch`)."""
    p = new_project()
    _namespace(cluster, p.ns)
    group = f"{p.ns}.example.com"  # the CRD is the cluster's: one of this test's own
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {
                        "size": {"type": "integer"}, "color": {"type": "string"}}}}}}}],
        },
    }  # fmt: skip
    cluster.kubectl("create", "-f", "-", input=json.dumps(crd))
    widget = {"apiVersion": f"{group}/v1", "kind": "Widget",
              "metadata": {"name": "w1", "namespace": p.ns}, "spec": {"size": 1}}  # fmt: skip
    cluster.kubectl("wait", "--for=condition=Established", f"crd/widgets.{group}")
    cluster.kubectl("create", "-f", "-", input=json.dumps(widget))
    (p.root / "Stackwright.yaml").write_text(
        f"name: {p.name}\nruntime: yaml\n"
        "resources:\n"
        "  tuning:\n"
        f"    type: kubernetes:{group}/v1:WidgetPatch\n"
        "    properties:\n"
        f"      apiVersion: {group}/v1\n"
        "      kind: Widget\n"
        f"      metadata: {{name: w1, namespace: {p.ns}}}\n"
        "      spec: {color: blue}\n"
    )
    assert p.preview().changed() == {"tuning": "create"}
    p.up()
    obj = live(cluster, f"widgets.{group}", "w1", p.ns)
    assert obj["spec"] == {"size": 1, "color": "blue"}, "the Patch's field, the others kept"
    assert _patch_manager(p, "tuning") in managers(obj)
    _unmarked(obj)
    p.sw("destroy", "--yes")
    assert live(cluster, f"widgets.{group}", "w1", p.ns)["spec"] == {"size": 1}
    assert p.resources() == {}
    cluster.kubectl("delete", "customresourcedefinition", f"widgets.{group}")


def test_a_patch_of_an_object_the_program_makes_follows_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Declared first and naming no dependency: the Patch still waits for the object.
    p = new_project()
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("extra", metadata={"name": "base", "namespace": NS},
                                   data={"extra": "1"})
        k8s.core.v1.ConfigMap("base", metadata={"name": "base", "namespace": NS},
                              data={"own": "1"})
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        """
    )
    assert p.preview().changed() == {"ns": "create", "base": "create", "extra": "create"}
    up = p.up()
    assert up.index("step-started", "extra") > up.index("step-done", "base")
    obj = live(cluster, "configmap", "base", p.ns)
    assert obj["data"] == {"own": "1", "extra": "1"}
    assert _patch_manager(p, "extra") in managers(obj)

    # And it gives its fields up before the object goes (its relinquishing apply would find
    # the object gone, or deleting): the state records which object it follows.
    destroyed = p.sw("destroy", "--yes", "--json")
    assert destroyed.index("step-started", "base") > destroyed.index("step-done", "extra")
    assert get(cluster, "configmap", "base", p.ns) is None


def test_a_patch_applies_again_to_its_object_replaced_under_the_same_name(
    new_project: Any, cluster: LiveCluster
) -> None:
    # The object the program makes is replaced under its name (delete first): the Patch's
    # inputs are the same, but the new object holds none of its fields (found by hand beside
    # the model test's Patches of the program's own ConfigMaps: `same`, and the fields were
    # gone for good, as `preview --expect-no-changes` said nothing was left to do).
    p = new_project()

    def program(own: str) -> None:
        p.program(
            f"""
            k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
            base = k8s.core.v1.ConfigMap("base", metadata={{"name": "base", "namespace": NS}},
                data={{"own": {own!r}}}, opts=sw.ResourceOptions(replace_on_changes=["data"]))
            k8s.core.v1.ConfigMapPatch("extra",
                metadata={{"name": base.metadata["name"], "namespace": NS}}, data={{"extra": "1"}})
            """
        )

    program("1")
    p.up()
    program("2")
    assert p.preview().changed() == {"base": "replace", "extra": "update"}
    assert p.up().changed() == {"base": "replace", "extra": "update"}
    assert live(cluster, "configmap", "base", p.ns)["data"] == {"own": "2", "extra": "1"}
    p.sw("preview", "--expect-no-changes")


@pytest.mark.parametrize("left_out", ["--target", "--exclude"])
def test_patch_left_out_of_replacing(new_project: Any, cluster: LiveCluster, left_out: str) -> None:
    # The object is replaced under its name (delete first) by a run the Patch is not part
    # of: the new object holds none of its fields, and the next plain `up` said `same` for
    # both, the fields gone until an `up --refresh`.
    p = new_project()

    def program(own: str) -> None:
        p.program(
            f"""
            k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
            k8s.core.v1.ConfigMap("cfg", metadata={{"name": "cfg", "namespace": NS}},
                data={{"own": {own!r}}}, opts=sw.ResourceOptions(replace_on_changes=["data"]))
            k8s.core.v1.ConfigMapPatch("extra",
                metadata={{"name": "cfg", "namespace": NS}}, data={{"extra": "1"}})
            """
        )

    program("1")
    p.up()
    program("2")
    chosen = {
        "--target": p.urn("kubernetes:core/v1:ConfigMap", "cfg"),
        "--exclude": p.urn("kubernetes:core/v1:ConfigMapPatch", "extra"),
    }[left_out]
    assert p.up(left_out, chosen).changed() == {"cfg": "replace"}
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"own": "2"}

    planned = p.preview()
    assert planned.changed() == {"extra": "update"}
    extra = p.urn("kubernetes:core/v1:ConfigMapPatch", "extra")
    said = [d["message"] for d in planned.of("diagnostic") if d["urn"] == extra]
    why = "its ConfigMap was made anew since it was applied: `up` applies it again"
    assert said == [why]
    assert why in p.sw("preview").out
    assert p.up().changed() == {"extra": "update"}
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"own": "2", "extra": "1"}
    p.sw("preview", "--expect-no-changes")


def test_an_object_deleted_just_before_the_apply_is_not_made_again(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Someone deletes (or deletes and makes again) the object between the run's read of it
    # and its apply: the apply names the uid it read, so the server refuses to create it.
    from stackwright.providers.kubernetes.provider import KubernetesProvider

    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "racy", p.ns, data={"a": "1"})

    def patch_sets(value: str) -> None:
        _config_map_patch(p, "racy", {"b": value})

    patch_sets("2")
    before_apply: list[str] = []  # what to do to the object before the next apply reaches it
    original = KubernetesProvider.apply

    async def apply(self: Any, desired: Any, **kwargs: Any) -> Any:
        if desired["metadata"]["name"] == "racy" and before_apply:
            cluster.kubectl("delete", "configmap", "racy", "-n", p.ns)
            if before_apply.pop(0) == "recreate":
                create(cluster, "ConfigMap", "racy", p.ns, data={"again": "1"})
        return await original(self, desired, **kwargs)

    monkeypatch.setattr(KubernetesProvider, "apply", apply)

    # Deleted, then made again under its name: the Patch applies to the object there now.
    before_apply.append("recreate")
    p.up()
    assert live(cluster, "configmap", "racy", p.ns)["data"] == {"again": "1", "b": "2"}

    # Deleted just before a change's apply: the step fails as for a missing object.
    patch_sets("3")
    before_apply.append("delete")
    failed = p.up(rc=2)
    (done,) = failed.of("step-done")
    assert f"ConfigMap {p.ns}/racy does not exist" in done["error"], done["error"]
    assert get(cluster, "configmap", "racy", p.ns) is None, "the apply made the object again"

    # Deleted just before the destroy gives the fields up: nothing is made either.
    create(cluster, "ConfigMap", "racy", p.ns, data={"a": "1"})
    patch_sets("2")
    p.up()
    before_apply.append("delete")
    p.sw("destroy", "--yes", "--json")
    assert get(cluster, "configmap", "racy", p.ns) is None, "giving up made the object again"
    assert p.resources() == {}


def test_a_conflict_names_the_resource_of_the_stack_that_owns_the_field(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "shared", p.ns, data={"base": "x"})
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("first", metadata={"name": "shared", "namespace": NS},
                                   data={"level": "info"})
        k8s.core.v1.ConfigMapPatch("second", metadata={"name": "shared", "namespace": NS},
                                   data={"level": "debug"})
        """
    )
    lost = _the_failed_step(p.up(rc=1))
    winner = ({"first", "second"} - {lost["name"]}).pop()
    manager = _patch_manager(p, winner)
    assert (
        f".data.level (manager {manager}, kubernetes:core/v1:ConfigMapPatch {winner} of this "
        "stack)" in lost["error"]
    ), lost["error"]

    # The stack's own object and a Patch of it: Stackwright's manager is named as that object,
    # in the preview already (it dry-runs the Patch against the object the stack holds).
    own = """
        k8s.core.v1.ConfigMap("own", metadata={"name": "own", "namespace": NS},
                              data={"level": "info"})
        """
    p.program(own)
    p.up()
    p.program(
        own
        + """
        k8s.core.v1.ConfigMapPatch("tuning", metadata={"name": "own", "namespace": NS},
                                   data={"level": "debug"})
        """
    )
    for run in (p.preview(rc=1), p.up(rc=1)):
        lost = _the_failed_step(run)
        assert lost["name"] == "tuning"
        assert (
            ".data.level (manager stackwright, kubernetes:core/v1:ConfigMap own of this stack)"
            in lost["error"]
        ), lost["error"]


def test_ignored_fields_are_sent_as_the_object_has_them(
    new_project: Any, cluster: LiveCluster
) -> None:
    # As for the stack's own objects: another manager may own an ignored field now, and
    # sending the recorded value conflicted with it, failing every change of the Patch.
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "tuned", p.ns, data={"own": "1"})

    def patch_sets(value: str) -> None:
        ignored = 'sw.ResourceOptions(ignore_changes=["data.b"])'
        _config_map_patch(p, "tuned", {"a": value, "b": value}, opts=ignored)

    patch_sets("1")
    p.up()
    cluster.kubectl(
        "patch", "configmap", "tuned", "-n", p.ns, "--type=merge",
        "-p", json.dumps({"data": {"b": "by hand"}}),
    )  # fmt: skip
    patch_sets("2")
    assert p.preview().changed() == {"tuned": "update"}
    assert p.up().changed() == {"tuned": "update"}
    assert live(cluster, "configmap", "tuned", p.ns)["data"] == {
        "own": "1",
        "a": "2",
        "b": "by hand",
    }


def test_the_diff_shows_what_is_applied_not_the_instructions(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The field manager (recorded in the Patch's inputs) and `patch-force` are never written
    on the object: no preview, `--diff` or step event shows them as its fields."""
    p = new_project()
    _namespace(cluster, p.ns)
    create(cluster, "ConfigMap", "shown", p.ns, data={"owner": "kubectl"})
    _config_map_patch(p, "shown", {"k": "v"})
    preview = p.preview()
    (started,) = [e for e in preview.of("step-started") if e["name"] == "shown"]
    assert "patch-field-manager" not in json.dumps(started["changes"]), started["changes"]
    assert {"path": "data", "kind": "add", "new": {"k": "v"}} in started["changes"]
    text = p.sw("preview", "--diff").out
    assert "+ data" in text, text
    assert "patch-field-manager" not in text, text
    p.up()

    # Another manager named: an update, said as the Patch's own info, not as a field.
    p.program(
        """
        k8s.core.v1.ConfigMapPatch("shown", metadata={"name": "shown", "namespace": NS,
            "annotations": {"stackwright.io/patch-field-manager": "team-ops"}}, data={"k": "v"})
        """
    )
    text = p.sw("preview", "--diff").out
    assert "patch-field-manager" not in text and "annotations" not in text, text
    assert "team-ops" in text, text
    assert p.up().changed() == {"shown": "update"}
    assert "team-ops" in managers(live(cluster, "configmap", "shown", p.ns))

    p.program("")
    gone = p.preview()
    (started,) = [e for e in gone.of("step-started") if e["name"] == "shown"]
    assert "patch-field-manager" not in json.dumps(started["changes"]), started["changes"]


def test_objects_in_a_namespace_do_not_wait_for_its_namespace_patch(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Kubernetes' ordering rules count real objects: a NamespacePatch is not the Namespace,
    so a NamespacePatch that fails (a conflict here) skips nothing in that namespace."""
    p = new_project()
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=platform-team", "-f", "-",
        input=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": p.ns, "labels": {"tier": "gold"}}}
        ),
    )  # fmt: skip
    p.program(
        """
        k8s.core.v1.NamespacePatch("tier", metadata={"name": NS, "labels": {"tier": "silver"}})
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings", "namespace": NS},
                              data={"k": "v"})
        """
    )
    failed = p.up(rc=1)
    assert _the_failed_step(failed)["name"] == "tier"
    assert failed.of("step-skipped") == [], failed.of("step-skipped")
    assert live(cluster, "configmap", "settings", p.ns)["data"] == {"k": "v"}


def test_a_patch_in_its_providers_namespace_moves_with_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    # As an object of the program that names no namespace is made anew in its provider's new
    # default namespace (the old one deleted), a Patch that names none patches the object of
    # that name there, and gives its fields up on the one it patched before.
    p = new_project()
    other = f"{p.ns}-b"
    for ns in (p.ns, other):
        _namespace(cluster, ns)
        create(cluster, "ConfigMap", "settings", ns, data={"mode": "blue"})
    program = """
        pp = k8s.Provider("pp", kubeconfig={kubeconfig!r}, namespace={namespace!r})
        k8s.core.v1.ConfigMapPatch("settings", metadata={{"name": "settings"}},
                                   data={{"extra": "on"}}, opts=sw.ResourceOptions(provider=pp))
        """
    kubeconfig = str(cluster.kubeconfig)
    p.program(program.format(kubeconfig=kubeconfig, namespace=p.ns))
    p.up()
    assert live(cluster, "configmap", "settings", p.ns)["data"] == {"mode": "blue", "extra": "on"}
    p.program(program.format(kubeconfig=kubeconfig, namespace=other))
    planned = p.preview()
    assert planned.changed() == {"pp": "update", "settings": "replace"}
    assert p.up().changed() == {"pp": "update", "settings": "replace"}
    assert live(cluster, "configmap", "settings", other)["data"] == {"mode": "blue", "extra": "on"}
    assert live(cluster, "configmap", "settings", p.ns)["data"] == {"mode": "blue"}
    assert p.resources()["settings"]["id"] == f"{other}/settings"
    p.sw("preview", "--expect-no-changes")
    p.sw("destroy", "--yes")
    assert live(cluster, "configmap", "settings", other)["data"] == {"mode": "blue"}
