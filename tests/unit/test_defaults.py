"""Server-side defaults of built-in kinds, as kube-apiserver 1.33 writes them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackwright.localcluster import validation
from stackwright.localcluster.defaults import (
    apply_defaults,
    canonical_quantity,
    default_job_selector,
)

CONTAINER_DEFAULTS = {
    "imagePullPolicy": "IfNotPresent",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "resources": {},
}
POD_SPEC_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {},
    "schedulerName": "default-scheduler",
}


def defaulted(obj: dict[str, Any], group: str, kind: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    apply_defaults(obj, group, kind)
    return obj


def template(**container: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", **container}]},
    }


def defaulted_template(**container: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:1.27", **container, **CONTAINER_DEFAULTS}
            ],
            **POD_SPEC_DEFAULTS,
        },
    }


def test_deployment_defaults() -> None:
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    assert defaulted(body, "apps", "Deployment")["spec"] == {
        "selector": {"matchLabels": {"app": "web"}},
        "template": defaulted_template(),
        "replicas": 1,
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
        },
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }


def test_a_recreate_deployment_gets_no_rolling_update_parameters() -> None:
    body = {"spec": {"strategy": {"type": "Recreate"}, "replicas": 0}}
    spec = defaulted(body, "apps", "Deployment")["spec"]
    assert spec["strategy"] == {"type": "Recreate"}
    assert spec["replicas"] == 0


def test_given_values_are_kept_and_nulls_are_defaulted() -> None:
    body = {
        "spec": {
            "replicas": None,
            "revisionHistoryLimit": 3,
            "strategy": {"rollingUpdate": {"maxSurge": 1}},
        }
    }
    spec = defaulted(body, "apps", "Deployment")["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 3
    assert spec["strategy"] == {
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"},
        "type": "RollingUpdate",
    }


def test_replica_set_defaults() -> None:
    assert defaulted({"spec": {"template": template()}}, "apps", "ReplicaSet")["spec"] == {
        "template": defaulted_template(),
        "replicas": 1,
    }


def test_stateful_set_defaults() -> None:
    body = {
        "spec": {
            "template": template(),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1024Mi"}},
                    },
                }
            ],
        }
    }
    assert defaulted(body, "apps", "StatefulSet")["spec"] == {
        "template": defaulted_template(),
        "volumeClaimTemplates": [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Pending"},
            }
        ],
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }


def test_daemon_set_defaults() -> None:
    assert defaulted({"spec": {"template": template()}}, "apps", "DaemonSet")["spec"] == {
        "template": defaulted_template(),
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
        },
        "revisionHistoryLimit": 10,
    }


def test_job_defaults() -> None:
    body = {"metadata": {"name": "pi"}, "spec": {"template": template()}}
    job = defaulted(body, "batch", "Job")
    assert job["metadata"] == {"name": "pi", "labels": {"app": "web"}}  # labels from the template
    assert job["spec"] == {
        "template": defaulted_template(),
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
    }


def test_a_parallel_job_keeps_completions_unset() -> None:
    spec = defaulted({"spec": {"parallelism": 3, "template": template()}}, "batch", "Job")["spec"]
    assert "completions" not in spec
    assert spec["parallelism"] == 3


def test_a_job_with_a_pod_failure_policy() -> None:
    body = {
        "spec": {
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            }
        }
    }
    spec = defaulted(body, "batch", "Job")["spec"]
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}
    ]


def test_job_selector_generation_needs_the_uid() -> None:
    job: dict[str, Any] = {"metadata": {"name": "pi"}, "spec": {"template": template()}}
    default_job_selector(job)
    assert "selector" not in job["spec"]
    job["metadata"]["uid"] = "1234"
    default_job_selector(job)
    assert job["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": "1234"}
    }
    assert job["spec"]["template"]["metadata"]["labels"] == {
        "app": "web",
        "batch.kubernetes.io/controller-uid": "1234",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "1234",
        "job-name": "pi",
    }
    manual = {"metadata": {"name": "pi", "uid": "1"}, "spec": {"manualSelector": True}}
    default_job_selector(manual)
    assert manual["spec"] == {"manualSelector": True}


def test_cron_job_defaults_leave_the_job_spec_alone() -> None:
    body = {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template()}}}}
    assert defaulted(body, "batch", "CronJob")["spec"] == {
        "schedule": "* * * * *",
        "jobTemplate": {"spec": {"template": defaulted_template()}},
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    pod = defaulted({"spec": {"containers": [{"name": "c", "image": image}]}}, "", "Pod")
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_a_set_pull_policy_is_kept() -> None:
    pod = defaulted(
        {"spec": {"containers": [{"name": "c", "image": "x", "imagePullPolicy": "Never"}]}},
        "",
        "Pod",
    )
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_pod_defaults_and_initial_status() -> None:
    body = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox:1.36",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                    "env": [
                        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                    ],
                    "livenessProbe": {"httpGet": {"port": 80}},
                }
            ],
        }
    }
    pod = defaulted(body, "", "Pod")
    assert pod["spec"] == {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "c",
                "image": "busybox:1.36",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "1", "memory": "64Mi"},
                    "requests": {"cpu": "1", "memory": "64Mi"},
                },
                "env": [
                    {
                        "name": "POD",
                        "valueFrom": {
                            "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}
                        },
                    }
                ],
                "livenessProbe": {
                    "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
    }
    assert pod["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ({}, "BestEffort"),
        ({"requests": {"cpu": "100m"}}, "Burstable"),
        ({"limits": {"cpu": "1"}}, "Burstable"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}, "Burstable"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        (
            {
                "limits": {"cpu": "1000m", "memory": "1Gi"},
                "requests": {"cpu": "1", "memory": "1024Mi"},
            },
            "Guaranteed",
        ),
    ],
)
def test_qos_class(resources: dict[str, Any], qos: str) -> None:
    pod = defaulted(
        {"spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}}, "", "Pod"
    )
    assert pod["status"]["qosClass"] == qos


def test_host_network_pods_expose_container_ports_on_the_host() -> None:
    pod = defaulted(
        {
            "spec": {
                "hostNetwork": True,
                "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080}]}],
            }
        },
        "",
        "Pod",
    )
    assert pod["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8080, "protocol": "TCP", "hostPort": 8080}
    ]


def test_templates_do_not_get_pod_only_defaults() -> None:
    body = {"spec": {"template": template(resources={"limits": {"cpu": "1"}})}}
    spec = defaulted(body, "apps", "Deployment")["spec"]["template"]["spec"]
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    assert "enableServiceLinks" not in spec


def test_volume_defaults() -> None:
    volumes = [
        {"name": "scratch"},
        {"name": "cfg", "configMap": {"name": "c"}},
        {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
        {"name": "host", "hostPath": {"path": "/var/log"}},
        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1024Mi"}},
    ]
    pod = defaulted({"spec": {"containers": [], "volumes": volumes}}, "", "Pod")
    assert pod["spec"]["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
        {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
        {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
        {
            "name": "token",
            "projected": {
                "sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}],
                "defaultMode": 420,
            },
        },
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ]


def test_the_deprecated_service_account_field_follows_the_name() -> None:
    pod = defaulted({"spec": {"serviceAccountName": "builder", "containers": []}}, "", "Pod")
    assert pod["spec"]["serviceAccount"] == "builder"
    pod = defaulted({"spec": {"serviceAccount": "old", "containers": []}}, "", "Pod")
    assert pod["spec"]["serviceAccountName"] == "old"


def test_service_defaults() -> None:
    body = {
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"port": 80}, {"port": 443, "targetPort": "https", "protocol": "TCP"}],
        }
    }
    assert defaulted(body, "", "Service")["spec"] == {
        "selector": {"app": "web"},
        "ports": [
            {"port": 80, "protocol": "TCP", "targetPort": 80},
            {"port": 443, "targetPort": "https", "protocol": "TCP"},
        ],
        "sessionAffinity": "None",
        "type": "ClusterIP",
        "internalTrafficPolicy": "Cluster",
        "ipFamilyPolicy": "SingleStack",
        "ipFamilies": ["IPv4"],
    }


def test_externally_reachable_services_get_an_external_traffic_policy() -> None:
    spec = defaulted({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}, "", "Service")[
        "spec"
    ]
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["allocateLoadBalancerNodePorts"] is True
    spec = defaulted({"spec": {"type": "NodePort", "ports": [{"port": 80}]}}, "", "Service")["spec"]
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert "allocateLoadBalancerNodePorts" not in spec


def test_external_name_services_get_no_ip_fields() -> None:
    assert defaulted(
        {"spec": {"type": "ExternalName", "externalName": "example.com"}}, "", "Service"
    )["spec"] == {
        "type": "ExternalName",
        "externalName": "example.com",
        "sessionAffinity": "None",
    }


def test_headless_services_without_a_selector_ask_for_both_families() -> None:
    spec = defaulted({"spec": {"clusterIP": "None"}}, "", "Service")["spec"]
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("RequireDualStack", ["IPv4", "IPv6"])


def test_client_ip_affinity_gets_a_timeout() -> None:
    spec = defaulted(
        {"spec": {"sessionAffinity": "ClientIP", "ports": [{"port": 80}]}}, "", "Service"
    )["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_secret_defaults_fold_string_data_into_data() -> None:
    body = {
        "stringData": {"password": "s3cret", "user": "admin"},
        "data": {"user": "b2xk", "other": "eA=="},
    }
    assert defaulted(body, "", "Secret") == {
        "type": "Opaque",
        "data": {"user": "YWRtaW4=", "other": "eA==", "password": "czNjcmV0"},
    }


def test_namespace_defaults() -> None:
    body = {"metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "wrong"}}}
    assert defaulted(body, "", "Namespace") == {
        "metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "team-a"}},
        "status": {
            "phase": "Active"
        },  # the `kubernetes` finalizer is the create path's, not defaulting's
    }


def test_claims_and_volumes() -> None:
    claim = defaulted(
        {"spec": {"resources": {"requests": {"storage": 1073741824}}}}, "", "PersistentVolumeClaim"
    )
    assert claim == {
        "spec": {"resources": {"requests": {"storage": "1073741824"}}, "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"},
    }
    volume = defaulted({"spec": {"capacity": {"storage": "2Gi"}}}, "", "PersistentVolume")
    assert volume == {
        "spec": {
            "capacity": {"storage": "2Gi"},
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }


def test_replication_controller_takes_selector_and_labels_from_its_template() -> None:
    rc = defaulted(
        {"metadata": {"name": "rc"}, "spec": {"template": template()}}, "", "ReplicationController"
    )
    assert rc["metadata"]["labels"] == {"app": "web"}
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["spec"]["replicas"] == 1


def test_limit_range_container_defaults() -> None:
    body = {
        "spec": {
            "limits": [
                {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
                {"type": "Pod", "max": {"cpu": "4"}},
            ]
        }
    }
    assert defaulted(body, "", "LimitRange")["spec"]["limits"] == [
        {
            "type": "Container",
            "max": {"cpu": "2"},
            "min": {"memory": "64Mi"},
            "default": {"cpu": "2"},
            "defaultRequest": {"cpu": "2", "memory": "64Mi"},
        },
        {"type": "Pod", "max": {"cpu": "4"}},
    ]


def test_network_policy_types() -> None:
    assert defaulted({"spec": {"podSelector": {}}}, "networking.k8s.io", "NetworkPolicy")["spec"][
        "policyTypes"
    ] == ["Ingress"]
    body = {"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}
    spec = defaulted(body, "networking.k8s.io", "NetworkPolicy")["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["egress"][0]["ports"] == [{"port": 53, "protocol": "TCP"}]


@pytest.mark.parametrize("kind", ["RoleBinding", "ClusterRoleBinding"])
def test_binding_api_groups(kind: str) -> None:
    body = {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "jane"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "default", "namespace": "a"},
        ],
    }
    group = "rbac.authorization.k8s.io"
    assert defaulted(body, group, kind) == {
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": group},
        "subjects": [
            {"kind": "User", "name": "jane", "apiGroup": group},
            {"kind": "Group", "name": "devs", "apiGroup": group},
            {"kind": "ServiceAccount", "name": "default", "namespace": "a"},
        ],
    }


def test_horizontal_pod_autoscaler_defaults() -> None:
    spec = defaulted({"spec": {"maxReplicas": 5}}, "autoscaling", "HorizontalPodAutoscaler")["spec"]
    assert spec == {
        "maxReplicas": 5,
        "minReplicas": 1,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ],
    }
    spec = defaulted(
        {"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}},
        "autoscaling",
        "HorizontalPodAutoscaler",
    )["spec"]
    assert spec["behavior"] == {
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
    }


def test_other_small_defaults() -> None:
    assert defaulted({"provisioner": "x"}, "storage.k8s.io", "StorageClass") == {
        "provisioner": "x",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }
    assert (
        defaulted({"value": 1}, "scheduling.k8s.io", "PriorityClass")["preemptionPolicy"]
        == "PreemptLowerPriority"
    )
    assert defaulted({"ports": [{"port": 80}]}, "discovery.k8s.io", "EndpointSlice")["ports"] == [
        {"port": 80, "name": "", "protocol": "TCP"}
    ]
    assert defaulted({"subsets": [{"ports": [{"port": 80}]}]}, "", "Endpoints")["subsets"][0][
        "ports"
    ] == [{"port": 80, "protocol": "TCP"}]
    assert defaulted({"status": {"capacity": {"cpu": "4"}}}, "", "Node")["status"][
        "allocatable"
    ] == {"cpu": "4"}


def test_crd_defaults() -> None:
    body = {
        "spec": {
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "storage": True}],
        }
    }
    assert defaulted(body, "apiextensions.k8s.io", "CustomResourceDefinition") == {
        "spec": {
            "names": {
                "plural": "widgets",
                "kind": "Widget",
                "singular": "widget",
                "listKind": "WidgetList",
            },
            "versions": [{"name": "v1", "storage": True}],
            "conversion": {"strategy": "None"},
        },
        "status": {"storedVersions": ["v1"]},
    }


@pytest.mark.parametrize("kind", ["ConfigMap", "ServiceAccount"])
def test_kinds_without_defaults_are_untouched(kind: str) -> None:
    body = {"metadata": {"name": "x"}, "data": {"a": "b"}}
    assert defaulted(body, "", kind) == body


def test_canonical_quantity() -> None:
    assert canonical_quantity("0.5") == "500m"
    assert canonical_quantity(2) == "2"
    assert canonical_quantity("bogus") == "bogus"


def test_defaulting_twice_changes_nothing() -> None:
    body = {"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}
    once = defaulted(body, "apps", "Deployment")
    assert defaulted(once, "apps", "Deployment") == once


@pytest.mark.parametrize(
    ("group", "kind", "body"),
    [
        (
            "apps",
            "Deployment",
            {
                "metadata": {"name": "web", "namespace": "d"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
            },
        ),
        (
            "apps",
            "DaemonSet",
            {
                "metadata": {"name": "web", "namespace": "d"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
            },
        ),
        (
            "apps",
            "StatefulSet",
            {
                "metadata": {"name": "web", "namespace": "d"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
            },
        ),
        (
            "",
            "Service",
            {
                "metadata": {"name": "web", "namespace": "d"},
                "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
            },
        ),
        ("", "Pod", {"metadata": {"name": "web", "namespace": "d"}, "spec": template()["spec"]}),
        (
            "batch",
            "CronJob",
            {
                "metadata": {"name": "c", "namespace": "d"},
                "spec": {
                    "schedule": "@daily",
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {**template()["spec"], "restartPolicy": "OnFailure"}
                            }
                        }
                    },
                },
            },
        ),
    ],
)
def test_defaults_are_what_validation_requires(group: str, kind: str, body: dict[str, Any]) -> None:
    assert validation.validate_builtin(defaulted(body, group, kind), None, group, kind) == []


def test_public_surface() -> None:
    from stackwright.localcluster import defaults

    assert defaults.__all__ == [
        "apply_defaults",
        "canonical_quantity",
        "default_job_selector",
        "qos_class",
    ]
