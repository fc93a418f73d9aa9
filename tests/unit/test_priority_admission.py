"""Priority admission of the local cluster, with kube-apiserver's words.

A Cluster over a store, no server: a pod's class resolved into `spec.priority` and
`spec.preemptionPolicy` at its creation (dry runs too), the `globalDefault` class for a
pod naming none, the refusals of an unknown class and of a stated priority that differs,
one `globalDefault` class at most, the classes' own validation, the system classes made
at the start and kept from deletion, and what a pod's creation reads (no listing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackwright.localcluster import priority, status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.store import Store

OPTS = WriteOptions(field_manager="test")
GROUP = "scheduling.k8s.io"


@pytest.fixture
def cluster() -> Cluster:
    return Cluster(Store(":memory:"))


def klass(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}  # fmt: skip


def make_class(cluster: Cluster, name: str, value: int, **fields: Any) -> dict[str, Any]:
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    return cluster.create(classes, "", klass(name, value, **fields), OPTS).obj


def pod(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}], **spec}}  # fmt: skip


def make_pod(cluster: Cluster, body: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
    opts = WriteOptions(field_manager="test", dry_run=dry_run)
    namespace = body["metadata"]["namespace"]
    return cluster.create(cluster.type_for("", "v1", "pods"), namespace, body, opts).obj


def refusal(write: Any) -> dict[str, Any]:
    with pytest.raises(status.Forbidden) as caught:
        write()
    return caught.value.to_status()


# --- pods ----------------------------------------------------------------------------------


def test_a_pods_class_gives_its_priority_and_preemption_policy(cluster: Cluster) -> None:
    make_class(cluster, "batch", 1000, preemptionPolicy="Never")
    spec = make_pod(cluster, pod("job", priorityClassName="batch"))["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == (
        "batch",
        1000,
        "Never",
    )
    # A dry run resolves it too, and the same values stated again are accepted.
    spec = make_pod(
        cluster, pod("again", priorityClassName="batch", priority=1000, preemptionPolicy="Never"),
        dry_run=True,
    )["spec"]  # fmt: skip
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "Never")


def test_a_pod_naming_no_class_gets_zero_or_the_global_default(cluster: Cluster) -> None:
    spec = make_pod(cluster, pod("plain"))["spec"]
    assert "priorityClassName" not in spec
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    make_class(cluster, "normal", 100, globalDefault=True)
    spec = make_pod(cluster, pod("defaulted"))["spec"]
    assert (spec["priorityClassName"], spec["priority"]) == ("normal", 100)
    # The default gone, the next pod is back to zero.
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    cluster.delete(classes, "", "normal", DeleteOptions())
    spec = make_pod(cluster, pod("after"))["spec"]
    assert (spec.get("priorityClassName"), spec["priority"]) == (None, 0)


def test_a_missing_class_is_refused_in_the_plugins_words(cluster: Cluster) -> None:
    for dry_run in (True, False):
        answer = refusal(lambda d=dry_run: make_pod(  # type: ignore[misc]
            cluster, pod("web", priorityClassName="high-priority"), dry_run=d
        ))  # fmt: skip
        assert answer["code"] == 403
        assert answer["message"] == (
            'pods "web" is forbidden: no PriorityClass with name high-priority was found'
        )
        assert answer["details"] == {"name": "web", "kind": "pods"}
    assert cluster.store.get(("", "pods"), "default", "web") is None
    # A generated name is not made yet: the refusal names the prefix, as upstream's does.
    body = pod("", priorityClassName="high-priority")
    body["metadata"] = {"generateName": "web-6c8f-", "namespace": "default"}
    assert refusal(lambda: make_pod(cluster, body))["message"].startswith(
        'pods "web-6c8f-" is forbidden: no PriorityClass'
    )


def test_a_stated_priority_or_policy_other_than_the_classs_is_refused(cluster: Cluster) -> None:
    make_class(cluster, "high", 1000)
    assert refusal(lambda: make_pod(cluster, pod("a", priorityClassName="high", priority=5)))[
        "message"
    ] == (
        'pods "a" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 1000 from the given PriorityClass name"
    )
    assert refusal(lambda: make_pod(cluster, pod("b", priority=7)))["message"].endswith(
        "the integer value of priority (7) must not be provided in pod spec; priority admission "
        "controller computed 0 from the given PriorityClass name"
    )
    assert refusal(
        lambda: make_pod(cluster, pod("c", priorityClassName="high", preemptionPolicy="Never"))
    )["message"] == (
        'pods "c" is forbidden: the string value of PreemptionPolicy (Never) must not be provided '
        "in pod spec; priority admission controller computed PreemptLowerPriority from the "
        "given PriorityClass name"
    )


def test_system_classes_exist_from_the_start_and_any_namespace_may_use_them(
    cluster: Cluster,
) -> None:
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    node = cluster.get(classes, "", "system-node-critical")
    assert (node["value"], node["preemptionPolicy"], node.get("globalDefault")) == (
        2000001000,
        "PreemptLowerPriority",
        None,
    )
    assert node["description"] == (
        "Used for system critical pods that must not be moved from their current node."
    )
    assert cluster.get(classes, "", "system-cluster-critical")["value"] == 2000000000
    # Since Kubernetes 1.17 the Priority plugin confines them to no namespace.
    spec = make_pod(cluster, pod("agent", priorityClassName="system-node-critical"))["spec"]
    assert spec["priority"] == 2000001000


def test_an_update_keeps_what_the_creation_resolved(cluster: Cluster) -> None:
    """A PUT of the pod as the client first sent it (no priority) is not a spec change."""
    make_class(cluster, "high", 1000)
    made = make_pod(cluster, pod("web", priorityClassName="high"))
    sent = pod("web", priorityClassName="high")
    sent["metadata"] = {**made["metadata"], "labels": {"tier": "front"}}
    sent["spec"] = {k: v for k, v in made["spec"].items()
                    if k not in ("priority", "preemptionPolicy")}  # fmt: skip
    pods = cluster.type_for("", "v1", "pods")
    updated = cluster.update(pods, "default", "web", sent, OPTS).obj
    assert (updated["spec"]["priority"], updated["spec"]["preemptionPolicy"]) == (
        1000,
        "PreemptLowerPriority",
    )
    assert updated["metadata"]["labels"] == {"tier": "front"}


def test_a_pods_creation_lists_no_classes(cluster: Cluster, monkeypatch: Any) -> None:
    """One look-up by name, and the global default kept as classes are written."""
    make_class(cluster, "high", 1000)
    make_class(cluster, "normal", 10, globalDefault=True)
    listed: list[Any] = []
    items = cluster.store.items

    def counting(key: Any, namespace: Any = None) -> Any:
        listed.append(key)
        return items(key, namespace)

    monkeypatch.setattr(cluster.store, "items", counting)
    make_pod(cluster, pod("named", priorityClassName="high"))
    make_pod(cluster, pod("defaulted"))
    assert priority.CLASS_TYPE not in listed, listed


# --- PriorityClasses -----------------------------------------------------------------------


def test_only_one_class_may_be_the_global_default(cluster: Cluster) -> None:
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    make_class(cluster, "normal", 100, globalDefault=True)
    answer = refusal(lambda: make_class(cluster, "other", 200, globalDefault=True))
    assert answer["message"] == (
        'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is '
        "already marked as default. Only one default can exist"
    )
    assert answer["details"] == {"name": "other", "group": GROUP, "kind": "priorityclasses"}
    # Marking another class default is refused too; the default itself may be written.
    low = make_class(cluster, "low", 1)
    with pytest.raises(status.Forbidden, match="PriorityClass normal is already marked"):
        cluster.update(classes, "", "low", {**low, "globalDefault": True}, OPTS)
    current = cluster.get(classes, "", "normal")
    cluster.update(classes, "", "normal", {**current, "description": "the usual"}, OPTS)
    cluster.delete(classes, "", "normal", DeleteOptions())
    assert make_class(cluster, "other", 200, globalDefault=True)["globalDefault"] is True


def test_the_classes_own_rules_in_upstreams_words(cluster: Cluster) -> None:
    def causes(write: Any) -> list[str]:
        with pytest.raises(status.Invalid) as caught:
            write()
        return [c["message"] for c in caught.value.to_status()["details"]["causes"]]

    assert causes(lambda: make_class(cluster, "huge", 1000000001)) == [
        "Forbidden: maximum allowed value of a user defined priority is 1000000000"
    ]
    assert causes(lambda: make_class(cluster, "system-mine", 5)) == [
        "Forbidden: priority class names with 'system-' prefix are reserved for system use "
        "only. error: system-mine is not a known system priority class"
    ]
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    cluster.delete(classes, "", "system-node-critical", DeleteOptions(), collection=True)
    assert causes(
        lambda: make_class(cluster, "system-node-critical", 2000001000, globalDefault=True)
    ) == [
        "Forbidden: priority class names with 'system-' prefix are reserved for system use "
        "only. error: globalDefault of system-node-critical PriorityClass must be false"
    ]
    # An update checks what may change, only that (upstream's ValidatePriorityClassUpdate).
    current = cluster.get(classes, "", "system-cluster-critical")
    assert causes(lambda: cluster.update(
        classes, "", "system-cluster-critical", {**current, "value": 7}, OPTS
    )) == ["Forbidden: may not be changed in an update."]  # fmt: skip


def test_a_system_class_cannot_be_deleted_but_by_a_collection_delete(cluster: Cluster) -> None:
    classes = cluster.type_for(GROUP, "v1", "priorityclasses")
    answer = refusal(lambda: cluster.delete(classes, "", "system-node-critical", DeleteOptions()))
    assert answer["message"] == (
        'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a '
        "system priority class and cannot be deleted"
    )
    assert cluster.store.get(priority.CLASS_TYPE, "", "system-node-critical") is not None
    # Upstream's deletecollection bypasses the storage's guard; the next start remakes them.
    cluster.delete_collection(classes, None, DeleteOptions())
    assert cluster.store.count(priority.CLASS_TYPE) == 0


def test_a_restart_remakes_missing_system_classes_and_keeps_the_default(tmp_path: Path) -> None:
    path = tmp_path / "cluster.db"
    first = Cluster(Store(path))
    classes = first.type_for(GROUP, "v1", "priorityclasses")
    first.delete_collection(classes, None, DeleteOptions())
    first.create(classes, "", klass("normal", 100, globalDefault=True), OPTS)
    first.store.close()
    again = Cluster(Store(path))
    assert sorted(c["metadata"]["name"] for c in again.store.items(priority.CLASS_TYPE)) == [
        "normal",
        "system-cluster-critical",
        "system-node-critical",
    ]
    assert make_pod(again, pod("web"))["spec"]["priority"] == 100
    with pytest.raises(status.Forbidden, match="PriorityClass normal is already marked"):
        again.create(classes, "", klass("other", 1, globalDefault=True), OPTS)
    again.store.close()
