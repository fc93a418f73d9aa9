"""Problems users reported against Pulumi's Kubernetes provider (and kapp / Argo CD), as
scenarios through the CLI against the local cluster: each test names the report it
comes from and pins what Stackwright does instead."""

from __future__ import annotations

import contextlib
import json
import textwrap
import time
from typing import Any

import pytest
from test_cli_lifecycle import (
    PRELUDE_LINES,
    STACK,
    get,
    live,
    release_configmaps,
    warnings,
)
from test_cli_lifecycle import new_project as new_project  # the fixture

from stackwright.model import Op
from stackwright.state import open_backend

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_a_deployment_made_with_the_default_strategy_can_switch_to_recreate(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#2843 (kubernetes/kubernetes#24198; Argo CD's server-side
    sync too): the API server defaulted `strategy.rollingUpdate`, which no field manager
    owns, so an apply of `type: Recreate` is refused ("may not be specified when strategy
    `type` is 'Recreate'") however often it is retried. The preview and the update go
    through, and the field the program sets stays the stack's alone: taken out again, the
    default comes back."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec={**app_spec("web"), **STRATEGY})
        """
    )
    p.program("STRATEGY = {}\n" + body)
    p.up()
    assert "rollingUpdate" in live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]

    p.program('STRATEGY = {"strategy": {"type": "Recreate"}}\n' + body)
    planned = p.preview()
    assert planned.changed() == {"web": "update"}
    assert live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]["type"] == "RollingUpdate"
    assert p.up().ops() == {"web": "update"}
    deployment = live(cluster, "deployment", "web", p.ns)
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    entries = {(m["manager"], m["operation"]) for m in deployment["metadata"]["managedFields"]}
    assert ("stackwright", "Update") not in entries, entries
    assert p.up().changed() == {}

    p.program("STRATEGY = {}\n" + body)
    assert p.up().ops() == {"web": "update"}
    assert live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]["type"] == "RollingUpdate"


def test_a_destroy_held_by_a_finalizer_gives_up_at_the_objects_own_timeout(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#1920: a Namespace stuck Terminating (here, by a ConfigMap
    in it whose finalizer nobody removes) kept `destroy` waiting silently for ten minutes.
    `stackwright.io/timeout-seconds` bounds the wait for a delete as it does for an apply,
    and the wait says what holds the Namespace, as it goes and when it gives up."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={
            "name": NS, "annotations": {"stackwright.io/timeout-seconds": "2"}})
        """
    )
    p.up()
    held = {"finalizers": ["example.com/never"]}
    cluster.kubectl(
        "create", "-f", "-",
        input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "held", "namespace": p.ns, **held}}),
    )  # fmt: skip
    try:
        started = time.monotonic()
        failed = p.sw("destroy", "--yes", "--json", rc=1, process=True, timeout=40)
        assert time.monotonic() - started < 30
        (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
        assert (
            "still present 2s after its deletion (the limit is the object's "
            "stackwright.io/timeout-seconds annotation; raise it to wait longer)"
        ) in error, error
        assert "the namespace is Terminating" in error and "example.com/never" in error, error
        # ... and said so while it waited, not only at the end.
        said = [e["message"] for e in failed.of("step-progress")]
        assert (
            "Terminating: Some resources are remaining: configmaps. has 1 resource instances; "
            "Some content in the namespace has finalizers remaining: example.com/never in 1 "
            "resource instances"
        ) in said, said
    finally:
        release_configmaps(cluster, p.ns, "held")


def test_a_job_its_ttl_removed_after_it_finished_is_not_run_again(
    new_project: Any, cluster: LiveCluster
) -> None:
    """hashicorp/terraform-provider-kubernetes#2531, kubeshop/testkube#2254 (Argo CD shows
    it OutOfSync): a Job with `ttlSecondsAfterFinished` is deleted by the TTL controller
    once complete, as its own spec asks; a refresh took that for a deletion outside, and
    the next `up --refresh` (or the operator's drift remediation) ran it again. It stays
    done; a change to the Job still replaces it."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.batch.v1.Job("migrate", metadata={"name": "migrate", "namespace": NS}, spec={
            "ttlSecondsAfterFinished": 0,
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "m", "image": IMAGE}]}}})
        """
    )
    p.program('IMAGE = "example.com/exit0:1"\n' + body)
    assert p.up().ops() == {"ns": "create", "migrate": "create"}
    deadline = time.monotonic() + 30
    while get(cluster, "job", "migrate", p.ns) is not None:
        assert time.monotonic() < deadline, "the TTL controller did not delete the Job"
        time.sleep(0.2)

    refreshed = p.sw("refresh", "--yes", "--json")
    assert not refreshed.of("drift"), refreshed.out
    assert refreshed.summary["counts"].get("deleted-outside") is None
    assert "migrate" in p.resources()
    again = p.up("--refresh")
    assert again.changed() == {}, again.out
    assert get(cluster, "job", "migrate", p.ns) is None

    p.program('IMAGE = "example.com/exit0:2"\n' + body)
    assert p.up().ops() == {"migrate": "replace"}


def test_replicas_an_autoscaler_took_over_fail_saying_to_leave_them_out(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#2491 (and #2569, #3312): once an autoscaler (here `kubectl
    scale`, through the same scale subresource) has set `spec.replicas`, the next apply of
    the program's count conflicts. The error says why and both ways out; with `replicas`
    left out of the program, the update goes through and the count stays the scaler's."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        spec = app_spec("web", image=IMAGE)
        if not REPLICAS:
            del spec["replicas"]
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
        """
    )
    p.program('IMAGE, REPLICAS = "nginx:1.29", True\n' + body)
    p.up()
    cluster.kubectl("scale", "deployment", "web", "-n", p.ns, "--replicas=2")

    p.program('IMAGE, REPLICAS = "nginx:1.30", True\n' + body)
    failed = p.up(rc=1)
    (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
    assert error == (
        "web: conflict on .spec.replicas with manager kubectl, which scales it through the "
        "scale subresource (an autoscaler, `kubectl scale`); leave `replicas` out of the "
        "program to let it, or re-run with --force-conflicts (or set `force` on the "
        "resource) to set the program's count"
    ), error

    p.program('IMAGE, REPLICAS = "nginx:1.30", False\n' + body)
    assert p.up().ops() == {"web": "update"}
    spec = live(cluster, "deployment", "web", p.ns)["spec"]
    assert spec["replicas"] == 2
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:1.30"


def test_a_statefulset_pod_stuck_on_a_bad_revision_says_to_delete_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes-operator#801 (kubernetes/kubernetes#67250, "forced
    rollback"): after an image that cannot be pulled, fixing the image in the program is
    not enough: under OrderedReady the StatefulSet controller does not replace a pod that
    is not ready, so it keeps the broken revision. The failure says so, and what to do,
    instead of naming only the image the program no longer has."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        spec = {**app_spec("db", image=IMAGE, replicas=2), "serviceName": "db"}
        k8s.apps.v1.StatefulSet("db", metadata={"name": "db", "namespace": NS}, spec=spec)
        """
    )
    p.program('IMAGE = "nginx:1.29"\n' + body)
    p.up()
    p.program('IMAGE = "example.com/doesnotexist:1"\n' + body)
    p.up(rc=1)

    p.program('IMAGE = "nginx:1.30"\n' + body)
    failed = p.up(rc=1)
    (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
    assert "pod db-1: ImagePullBackOff" in error, error
    assert error.endswith(
        "; db-1 has an earlier revision's template, and a StatefulSet does not replace a pod "
        f"that is not ready (OrderedReady): delete it (`kubectl delete pod db-1 -n {p.ns}`) "
        "for it to come back with the new one"
    ), error

    cluster.kubectl("delete", "pod", "db-1", "-n", p.ns)
    assert p.up().ops() == {"db": "update"}
    pods = json.loads(cluster.kubectl("get", "pods", "-n", p.ns, "-o", "json").stdout)["items"]
    assert {c["image"] for pod in pods for c in pod["spec"]["containers"]} == {"nginx:1.30"}


@pytest.mark.parametrize(
    "declared",
    [
        'k8s.apps.v1.StatefulSet("db", spec={**app_spec("db", image=IMAGE, replicas=2),\n'
        '    "serviceName": "db", "updateStrategy": {"type": "OnDelete"}},',
        'spec = app_spec("db", image=IMAGE)\n'
        'del spec["replicas"]\n'
        'k8s.apps.v1.DaemonSet("db", spec={**spec, "updateStrategy": {"type": "OnDelete"}},',
    ],
    ids=["sts", "ds"],
)
def test_on_delete_sets_wait_for_no_rollout(
    new_project: Any, cluster: LiveCluster, declared: str
) -> None:
    """pulumi/pulumi-kubernetes#1066: with `updateStrategy: OnDelete` the controller
    replaces no pod until someone deletes it, and Pulumi waited for the update to roll out
    anyway. The update is done once the pods it has are ready; they keep the old template.
    A DaemonSet's update waited out its whole timeout for it too."""
    p = new_project()
    body = (
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        + declared
        + '\n    metadata={"name": "db", "namespace": NS,'
        ' "annotations": {"stackwright.io/timeout-seconds": "15"}})\n'
    )
    p.program('IMAGE = "nginx:1.29"\n' + body)
    p.up()
    p.program('IMAGE = "nginx:1.30"\n' + body)
    started = time.monotonic()
    assert p.up().ops() == {"db": "update"}
    assert time.monotonic() - started < 15
    pods = json.loads(cluster.kubectl("get", "pods", "-n", p.ns, "-o", "json").stdout)["items"]
    assert {c["image"] for pod in pods for c in pod["spec"]["containers"]} == {"nginx:1.29"}


def test_a_pod_disruption_budget_is_updated_in_place(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#525: PodDisruptionBudgets were immutable, so Pulumi came to
    replace them on any change; policy/v1's spec is mutable (Kubernetes 1.15+), and a
    replacement would leave the pods unprotected in between. An update, same object."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.policy.v1.PodDisruptionBudget("pdb", metadata={"name": "pdb", "namespace": NS},
            spec={"minAvailable": MIN, "selector": {"matchLabels": {"app": "web"}}})
        """
    )
    p.program("MIN = 1\n" + body)
    p.up()
    uid = get(cluster, "poddisruptionbudget", "pdb", p.ns)
    assert uid is not None
    p.program("MIN = 2\n" + body)
    assert p.up().ops() == {"pdb": "update"}
    after = live(cluster, "poddisruptionbudget", "pdb", p.ns)
    assert after["metadata"]["uid"] == uid["metadata"]["uid"] and after["spec"]["minAvailable"] == 2


def test_a_change_to_a_job_its_ttl_removed_previews_as_the_new_job_up_makes(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A review of the test above: once its TTL deleted the Job, a change the API server
    would take as an update (its `ttlSecondsAfterFinished` alone) previewed as "update",
    while the `up` created the Job again, which ran again. The preview says what the `up`
    does: a new Job replaces the recorded one, and why; the program unchanged changes
    nothing, and a change while the Job is still there is an update."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.batch.v1.Job("migrate", metadata={"name": "migrate", "namespace": NS}, spec={
            "ttlSecondsAfterFinished": TTL,
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "m", "image": "example.com/exit0:1"}]}}})
        """
    )
    p.program("TTL = 0\n" + body)
    p.up()
    deadline = time.monotonic() + 30
    while get(cluster, "job", "migrate", p.ns) is not None:
        assert time.monotonic() < deadline, "the TTL controller did not delete the Job"
        time.sleep(0.2)
    assert p.preview().changed() == {}

    p.program("TTL = 600\n" + body)
    planned = p.preview()
    assert planned.changed() == {"migrate": "replace"}, planned.out
    (started,) = [e for e in planned.of("step-started") if e["name"] == "migrate"]
    assert any("runs again" in r for r in started["replaceReasons"]), started
    assert planned.summary["counts"] == {"replace": 1, "same": 1}, planned.summary
    assert get(cluster, "job", "migrate", p.ns) is None
    assert p.up().ops() == {"migrate": "replace"}
    assert live(cluster, "job", "migrate", p.ns)["spec"]["ttlSecondsAfterFinished"] == 600

    p.program("TTL = 900\n" + body)  # there still: its TTL changes in place
    assert p.preview().changed() == {"migrate": "update"}
    assert p.up().ops() == {"migrate": "update"}


def test_an_object_annotated_skip_await_is_not_waited_for_when_deleted(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#2551 (a Namespace whose cloud load balancers take an hour
    to clean up): `pulumi.com/skipAwait` skips the wait for a delete too, for the kinds
    its await logic knows. `stackwright.io/skip-await` does the same: the delete is sent,
    and the record goes once the API server accepted it."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("held", metadata={"name": "held", "namespace": NS,
            "finalizers": ["example.com/never"],
            "annotations": {"stackwright.io/skip-await": "true",
                            "stackwright.io/timeout-seconds": "2"}})
        """
    )
    p.program(body)
    p.up()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})')
    try:
        # Had it waited, its 2 s timeout would fail the up (exit 1, "still present").
        removed = p.up()
        assert removed.ops() == {"held": "delete"}
        assert "held" not in p.resources()
        assert live(cluster, "configmap", "held", p.ns)["metadata"]["deletionTimestamp"]
    finally:
        release_configmaps(cluster, p.ns, "held")


def _interrupted_delete(p: Any, cluster: LiveCluster, name: str, op: Op) -> None:
    """What a run killed mid-delete leaves: the step journaled, never ended, and the
    delete sent (the object Terminating, held by its finalizer)."""
    with contextlib.closing(open_backend()) as backend:
        (recorded,) = [r for r in backend.load(p.name, STACK).resources if r.urn.endswith(name)]
        with backend.begin_operation(p.name, STACK, kind="up") as operation:
            operation.begin(1, op, recorded)
    cluster.kubectl("delete", "configmap", name, "-n", p.ns, "--wait=false")


def test_a_delete_a_crash_left_is_not_waited_for_under_skip_await(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The next run settles a delete a kill interrupted by waiting for the object to go,
    as its delete would have: under skip-await it does not wait, as the delete does not;
    the delete of a delete-before-replace still does, since the new object takes the name."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        for name in ("held", "reused"):
            k8s.core.v1.ConfigMap(name, metadata={"name": name, "namespace": NS,
                "finalizers": ["example.com/never"],
                "annotations": {"stackwright.io/skip-await": "true",
                                "stackwright.io/timeout-seconds": "2"}})
        """
    )
    p.up()
    try:
        _interrupted_delete(p, cluster, "held", Op.DELETE)
        # Had it waited, its 2 s timeout would fail the refresh (exit 1, "still present"),
        # as the delete-before-replace's below does: the exit code says it did not.
        settled = p.sw("refresh", "--yes", "--json")
        assert "still present" not in settled.out, settled.out
        assert "held" not in p.resources()

        _interrupted_delete(p, cluster, "reused", Op.DELETE_REPLACED)
        waited = p.sw("refresh", "--yes", "--json", rc=1)
        assert "reused: still present 2s after its deletion" in waited.out, waited.out
    finally:
        release_configmaps(cluster, p.ns, "held", "reused")


TTL_JOB = textwrap.dedent(
    """
    k8s.core.v1.Namespace("ns", metadata={"name": NS})
    k8s.batch.v1.Job(NAME, metadata={"name": "migrate", "namespace": NS}, spec={
        "ttlSecondsAfterFinished": 0,
        "template": {"spec": {"restartPolicy": "Never",
                              "containers": [{"name": "m", "image": IMAGE}]}}},
        opts=sw.ResourceOptions(**OPTS))
    """
)


def _finished_and_removed(p: Any, cluster: LiveCluster, opts: str) -> None:
    """Up the TTL Job (logical name `migrate`), and wait for its TTL to delete it."""
    p.program(f'NAME = "migrate"\nIMAGE = "example.com/exit0:1"\nOPTS = {opts}\n' + TTL_JOB)
    assert p.up().ops()["migrate"] == "create"
    deadline = time.monotonic() + 30
    while get(cluster, "job", "migrate", p.ns) is not None:
        assert time.monotonic() < deadline, "the TTL controller did not delete the Job"
        time.sleep(0.2)


def test_a_finished_job_its_ttl_removed_renamed_by_an_alias_is_not_run_again(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A rename marks the object anew (an update); the Job its TTL deleted has no object to
    mark, and the update would create it again: it stays done, and the state names it anew."""
    p = new_project()
    _finished_and_removed(p, cluster, "{}")
    p.program(
        'NAME = "migrate2"\nIMAGE = "example.com/exit0:1"\n'
        'OPTS = {"aliases": [sw.Alias(name="migrate")]}\n' + TTL_JOB
    )
    renamed = p.up()
    assert renamed.ops("step-started")["migrate2"] == "same", renamed.out
    assert "nothing to mark" in renamed.out, renamed.out
    assert get(cluster, "job", "migrate", p.ns) is None
    assert set(p.resources()) == {"ns", "migrate2"}
    again = p.up()
    assert again.changed() == {} and "nothing to mark" not in again.out, again.out


def test_a_protected_job_its_ttl_removed_is_made_anew_when_it_changes(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`protect` refuses a delete; replacing a Job its TTL already deleted deletes nothing:
    the new Job is created (and runs), and stays protected."""
    p = new_project()
    _finished_and_removed(p, cluster, '{"protect": True}')
    p.program(
        'NAME = "migrate"\nIMAGE = "example.com/exit0:2"\nOPTS = {"protect": True}\n' + TTL_JOB
    )
    assert p.preview().changed() == {"migrate": "replace"}
    replaced = p.up()
    assert replaced.ops() == {"migrate": "replace"}
    assert "nothing is deleted, the new Job is created" in replaced.out, replaced.out
    (container,) = p.resources()["migrate"]["outputs"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "example.com/exit0:2"
    assert p.resources()["migrate"]["protect"] is True


def test_a_claim_over_the_namespace_storage_quota_fails_the_preview_naming_the_quota(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Shared clusters cap a namespace with a ResourceQuota, which kube-apiserver's admission
    enforces on the server-side dry run too: the preview fails there, naming the quota and
    the amounts, and nothing is made."""
    p = new_project()
    base = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ResourceQuota("cap", metadata={"name": "storage-cap", "namespace": NS},
                                  spec={"hard": {"requests.storage": "5Gi"}})
        """
    )
    p.program(base)
    p.up()
    p.program(
        base
        + textwrap.dedent(
            """
            k8s.core.v1.PersistentVolumeClaim(
                "data", metadata={"name": "data", "namespace": NS},
                spec={"accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "20Gi"}}})
            """
        )
    )
    failed = p.preview(rc=1)
    (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
    assert error == (
        'data: persistentvolumeclaims "data" is forbidden: exceeded quota: storage-cap, '
        "requested: requests.storage=20Gi, used: requests.storage=0, "
        "limited: requests.storage=5Gi"
    ), error
    claims = cluster.kubectl("get", "pvc", "-n", p.ns, "-o", "json").stdout
    assert json.loads(claims)["items"] == []


def test_a_validating_admission_policy_fails_the_preview_and_warns_in_the_up(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Platform teams guard clusters with ValidatingAdmissionPolicies, which kube-apiserver
    evaluates on the server-side dry run too: a Deployment over the replicas a `Deny`
    binding allows in namespaces labelled env=test fails the preview, naming the policy,
    the binding and the message, and nothing is made; a `Warn` binding's message is the
    step's warning in `up`, which goes through."""
    p = new_project()
    where = {
        "matchLabels": {"env": "test"},
        # The cluster is the module's: this test's namespace alone.
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [p.ns]}
        ],
    }
    guards = []
    for name, action, operation, holds, message in (
        ("max-replicas", "Deny", "UPDATE", "object.spec.replicas <= 5", "replicas must be at most 5"),
        ("few-replicas", "Warn", "UPDATE", "object.spec.replicas <= 2", "more than 2 replicas"),
        ("kept", "Warn", "DELETE", "false", "deployments are kept"),
    ):  # fmt: skip
        operations = ["CREATE", operation] if operation == "UPDATE" else [operation]
        rule = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": operations,
                "resources": ["deployments"]}  # fmt: skip
        guards += [
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
             "metadata": {"name": f"{name}-{p.ns}"},
             "spec": {"matchConstraints": {"resourceRules": [rule]},
                      "validations": [{"expression": holds, "message": message}]}},
            {"apiVersion": "admissionregistration.k8s.io/v1",
             "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": f"{name}-{p.ns}"},
             "spec": {"policyName": f"{name}-{p.ns}", "validationActions": [action],
                      "matchResources": {"namespaceSelector": where}}},
        ]  # fmt: skip
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": guards})
    cluster.kubectl("create", "-f", "-", input=listed)
    try:
        base = 'k8s.core.v1.Namespace("ns", metadata={"name": NS, "labels": {"env": "test"}})\n'
        p.program(base)
        p.up()
        deployment = textwrap.dedent(
            """
            k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                                   spec=app_spec("web", replicas=REPLICAS))
            """
        )
        p.program("REPLICAS = 10\n" + base + deployment)
        failed = p.preview(rc=2)  # the policy's reason is Invalid (422): the program's input
        (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
        assert error.endswith(
            f"__main__.py:{PRELUDE_LINES + 4}: kubernetes:apps/v1:Deployment web: "
            'deployments.apps "web" is '
            f"forbidden: ValidatingAdmissionPolicy 'max-replicas-{p.ns}' with binding "
            f"'max-replicas-{p.ns}' denied request: replicas must be at most 5"
        ), error
        deployments = cluster.kubectl("get", "deployments", "-n", p.ns, "-o", "json").stdout
        assert json.loads(deployments)["items"] == []

        p.program("REPLICAS = 3\n" + base + deployment)
        up = p.up()
        assert up.ops() == {"web": "create"}
        said = (
            f"the API server warns: Validation failed for ValidatingAdmissionPolicy "
            f"'few-replicas-{p.ns}' with binding 'few-replicas-{p.ns}': more than 2 replicas"
        )
        assert said in warnings(up), warnings(up)
        # kubectl prints the warnings the server sends with a refusal, and with a delete.
        refused = cluster.kubectl("create", "deployment", "big", "--image=nginx:1.29",
                                  "--replicas=10", "-n", p.ns, check=False)  # fmt: skip
        assert refused.returncode == 1
        assert (
            f"Warning: Validation failed for ValidatingAdmissionPolicy 'few-replicas-{p.ns}' "
            f"with binding 'few-replicas-{p.ns}': more than 2 replicas"
        ) in refused.stderr, refused.stderr
        assert "denied request: replicas must be at most 5" in refused.stderr, refused.stderr
        deleted = cluster.kubectl("delete", "deployment", "web", "-n", p.ns, "--dry-run=server")
        assert (
            f"Warning: Validation failed for ValidatingAdmissionPolicy 'kept-{p.ns}' with "
            f"binding 'kept-{p.ns}': deployments are kept"
        ) in deleted.stderr, deleted.stderr
    finally:
        cluster.kubectl("delete", "-f", "-", input=listed)


def up_failing_within_seconds(p: Any) -> str:
    """Run an `up` that fails, as it must well before the readiness timeout: the error of
    its one failed step."""
    started = time.monotonic()
    failed = p.up(rc=1)
    took = time.monotonic() - started
    (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
    assert took < 30, took
    return str(error)


def test_a_service_whose_only_pods_would_come_from_a_failed_workload_stops_waiting(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The Deployment is not done (its ConfigMap was refused): no Pod will come, so the
    Service's wait for endpoints ends within seconds, naming it, instead of the ten minutes
    of its timeout (the run ended only then, one failure long before)."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program(
        """
        page = k8s.core.v1.ConfigMap("page", metadata={"name": "page", "namespace": NS},
                                     data={"not a key!": "x"})
        spec = app_spec("web")
        spec["template"]["spec"]["volumes"] = [{"name": "p", "configMap": {"name": "page"}}]
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
        # Its own timeout, shorter than the default: without the check, the test ends too.
        front = {"name": "front", "namespace": NS,
                 "annotations": {"stackwright.io/timeout-seconds": "60"}}
        k8s.core.v1.Service("front", metadata=front,
                            spec={"selector": {"app": "web"}, "ports": [{"port": 80}]})
        """
    )
    started = time.monotonic()
    failed = p.up(rc=1)
    assert time.monotonic() - started < 45
    errors = {e["name"]: e["error"] for e in failed.of("step-done") if not e["ok"]}
    assert errors["front"] == (
        "no ready endpoints, and none are coming: the Pods it selects would come from "
        "kubernetes:apps/v1:Deployment web, which failed or was not done"
    ), errors
    assert [e["name"] for e in failed.of("step-skipped")] == ["web"]


def test_a_deployment_over_the_pod_quota_fails_the_up_quickly_naming_the_quota(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The ReplicaSet's pods are refused by the quota (its FailedCreate event, its
    ReplicaFailure condition): `up` reports that cause within seconds, not the timeout."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ResourceQuota("cap", metadata={"name": "pod-cap", "namespace": NS},
                                  spec={"hard": {"pods": "1"}},
                                  opts=sw.ResourceOptions(depends_on=[ns]))
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web", replicas=2),
                               opts=sw.ResourceOptions(depends_on=[ns]))
        """
    )
    error = up_failing_within_seconds(p)
    assert "exceeded quota: pod-cap, requested: pods=1, used: pods=1, limited: pods=1" in error
    events = json.loads(cluster.kubectl("get", "events", "-n", p.ns, "-o", "json").stdout)["items"]
    refusals = [e["message"] for e in events if e["reason"] == "FailedCreate"]
    assert refusals and refusals[0].startswith('Error creating: pods "web-'), refusals
    assert "is forbidden: exceeded quota: pod-cap" in refusals[0]


def test_a_deployment_naming_a_missing_priority_class_fails_the_up_quickly_naming_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A real cluster's Priority admission refuses a pod whose PriorityClass does not
    exist: the ReplicaSet's FailedCreate says so, and `up` reports that cause within
    seconds (the local cluster admitted the pods, so `up` passed here and failed there)."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        spec = app_spec("web")
        spec["template"]["spec"]["priorityClassName"] = "business-critical"
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec,
                               opts=sw.ResourceOptions(depends_on=[ns]))
        """
    )
    error = up_failing_within_seconds(p)
    assert error.startswith('web: 0/1 ready — FailedCreate: pods "web-'), error
    assert error.endswith(
        '-" is forbidden: no PriorityClass with name business-critical was found'
    ), error
    events = json.loads(cluster.kubectl("get", "events", "-n", p.ns, "-o", "json").stdout)["items"]
    refusals = [e["message"] for e in events if e["reason"] == "FailedCreate"]
    assert refusals and refusals[0].startswith('Error creating: pods "web-'), refusals
    assert refusals[0].endswith("no PriorityClass with name business-critical was found")


def test_a_priority_class_declared_after_the_deployment_naming_it_is_made_first(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Nothing in the program orders them: Kubernetes' rule does (pod-classes-before-workloads),
    so the Deployment's pods are not refused by the Priority admission on the way."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)  # nothing else for the Deployment to wait for
    p.program(
        """
        spec = app_spec("web")
        spec["template"]["spec"]["priorityClassName"] = "business-critical"
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
        k8s.scheduling.v1.PriorityClass("critical", metadata={"name": "business-critical"},
                                        value=1000)
        """
    )
    done = p.up()
    order = [(e["event"], e.get("name")) for e in done.events]
    assert order.index(("step-done", "critical")) < order.index(("step-started", "web")), order
    pods = json.loads(cluster.kubectl("get", "pods", "-n", p.ns, "-o", "json").stdout)["items"]
    assert [pod["spec"]["priority"] for pod in pods] == [1000]


def test_a_limit_range_default_shows_in_the_pods_resources(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A namespace's LimitRange fills in what a container leaves out, as a real cluster's
    LimitRanger admission does, and says so in the pod's annotation."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        limits = k8s.core.v1.LimitRange(
            "limits", metadata={"name": "limits", "namespace": NS},
            spec={"limits": [{"type": "Container", "default": {"cpu": "300m"},
                              "defaultRequest": {"cpu": "100m", "memory": "64Mi"}}]},
            opts=sw.ResourceOptions(depends_on=[ns]))
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web"), opts=sw.ResourceOptions(depends_on=[limits]))
        """
    )
    p.up()
    (pod,) = json.loads(cluster.kubectl("get", "pods", "-n", p.ns, "-o", "json").stdout)["items"]
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "300m"},
        "requests": {"cpu": "100m", "memory": "64Mi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container main; "
        "cpu limit for container main"
    )


def test_a_statefulset_whose_pods_a_quota_refuses_fails_the_up_with_its_failed_create(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A StatefulSet has no ReplicaFailure condition: its FailedCreate event is the only
    word of the refusal, and `up` reports it within seconds instead of waiting it out."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ResourceQuota("cap", metadata={"name": "no-pods", "namespace": NS},
                                  spec={"hard": {"pods": "0"}},
                                  opts=sw.ResourceOptions(depends_on=[ns]))
        spec = {**app_spec("db"), "serviceName": "db"}
        k8s.apps.v1.StatefulSet("db", metadata={"name": "db", "namespace": NS}, spec=spec,
                                opts=sw.ResourceOptions(depends_on=[ns]))
        """
    )
    error = up_failing_within_seconds(p)
    assert error == (
        "db: 0/1 ready — FailedCreate: create Pod db-0 in StatefulSet db failed error: "
        'pods "db-0" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, '
        "limited: pods=0"
    ), error


def test_a_patch_conflict_names_the_resource_holding_the_object_through_another_provider(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The stack's object declared through an explicit provider for the cluster the default
    one reaches, and a Patch of it through the default one: the manager the conflict meets
    is named as that object, as it is when both go through one provider."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    parts = {
        "same": f'same = k8s.Provider("same", kubeconfig={str(cluster.kubeconfig)!r})',
        "own": 'k8s.core.v1.ConfigMap("own", metadata={"name": "own", "namespace": NS}, '
        'data={"level": "info"}, opts=sw.ResourceOptions(provider=same))',
        "tuning": 'k8s.core.v1.ConfigMapPatch("tuning", metadata={"name": "own", '
        '"namespace": NS}, data={"level": "debug"})',
    }
    p.program("\n".join(parts[k] for k in ("same", "own")))
    p.up()
    p.program("\n".join(parts.values()))
    named = ".data.level (manager stackwright, kubernetes:core/v1:ConfigMap own of this stack)"
    for run in (p.preview(rc=1), p.up(rc=1)):
        (lost,) = [e for e in run.of("step-done") if not e["ok"]]
        assert (lost["name"], named in lost["error"]) == ("tuning", True), lost["error"]

    # Dropped from the program, its object not deleted yet: named as the state records it.
    p.program("\n".join(parts[k] for k in ("same", "tuning")))
    (lost,) = [e for e in p.preview(rc=1).of("step-done") if not e["ok"]]
    assert (lost["name"], named in lost["error"]) == ("tuning", True), lost["error"]


def test_a_service_whose_pods_come_from_what_waits_for_it_does_not_hang(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/pulumi-kubernetes#1648 (and #303, #1242): a Deployment whose env holds its
    Service's clusterIP waits for the Service, whose endpoints wait for the Deployment's
    Pods — `up` hung until the Service's timeout. Here the Service is not waited on for
    endpoints its dependents will bring; the Deployment's own readiness still is. Also
    through Kubernetes' own rules: a ConfigMap holds the clusterIP, a Role depends on it,
    and RBAC comes before the namespace's workloads (the lifecycle model's seed 318)."""
    p = new_project()
    body = textwrap.dedent(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        svc = k8s.core.v1.Service(
            "web",
            metadata={"name": "web", "namespace": NS,
                      # Without the fix it fails after this, not after 10 minutes.
                      "annotations": {"stackwright.io/timeout-seconds": "20"}},
            spec={"selector": {"app": "web"}, "ports": [{"port": 80}]},
        )
        spec = app_spec("web")
        spec["template"]["spec"]["containers"][0]["env"] = [
            {"name": "WEB", "value": svc.spec.cluster_ip}
        ]
        """
    )
    p.program(
        body
        + 'k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)\n'
    )
    done = p.up()
    said = [e["message"] for e in done.of("step-progress") if e["urn"].endswith("Service::web")]
    assert any("endpoints not waited for: its Pods come from" in m for m in said), said
    assert live(cluster, "deployment", "web", p.ns)["status"]["readyReplicas"] == 1
    p.sw("destroy", "--yes")

    chained = body.replace(
        'spec["template"]["spec"]["containers"][0]["env"] = [\n    {"name": "WEB", "value": svc.spec.cluster_ip}\n]',
        'ip = k8s.core.v1.ConfigMap("ip", metadata={"namespace": NS}, data={"ip": svc.spec.cluster_ip})\n'
        'k8s.rbac.v1.Role("reader", metadata={"namespace": NS}, rules=[],\n'
        "                 opts=sw.ResourceOptions(depends_on=[ip]))",
    )
    assert chained != body
    p.program(
        chained
        + 'k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)\n'
    )
    assert p.up().summary["counts"] == {"create": 5}
    p.sw("destroy", "--yes")
