"""Decoding, built-in validation and custom-resource schemas, in kube-apiserver's words.

Each test states the exact causes (field, reason, message) a real 1.33 server returns for
the same object; objects go through `apply_defaults` first, as they do in the server.
"""

from __future__ import annotations

import base64
import copy
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster import validation as v
from stackwright.localcluster.defaults import apply_defaults
from stackwright.localcluster.schema import builtin_schemas
from stackwright.localcluster.status import Cause

DNS1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_LABEL = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
CONFIG_KEY = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
    "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
QTY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)

INVALID, REQUIRED, NOT_SUPPORTED = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueNotSupported",
)
FORBIDDEN, DUPLICATE, TYPE_INVALID = (
    "FieldValueForbidden",
    "FieldValueDuplicate",
    "FieldValueTypeInvalid",
)

SCHEMAS = builtin_schemas()


def C(field: str, reason: str, message: str) -> Cause:
    return Cause(field, reason, message)


def check(
    obj: dict[str, Any], group: str, kind: str, old: dict[str, Any] | None = None
) -> list[Cause]:
    """Default then validate, as the server's pipeline does."""
    obj = copy.deepcopy(obj)
    apply_defaults(obj, group, kind)
    return v.validate_builtin(obj, old, group, kind)


def stored(obj: dict[str, Any], group: str, kind: str, **meta: Any) -> dict[str, Any]:
    """`obj` as the store holds it after a create: defaulted, with identity fields set."""
    obj = copy.deepcopy(obj)
    apply_defaults(obj, group, kind)
    obj["metadata"].update(
        {"uid": "u-1", "creationTimestamp": "2025-01-01T00:00:00Z", "resourceVersion": "1"}
    )
    obj["metadata"].update(meta)
    return obj


def deployment(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }
    body["spec"].update(spec)
    return body


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


# =====================================================================================
# Decoding
# =====================================================================================


def decode(obj: dict[str, Any], group: str, kind: str, version: str = "v1") -> v.DecodeReport:
    root = SCHEMAS.root(group, version, kind)
    assert root is not None
    return v.decode_check(obj, root, SCHEMAS.resolve)


def test_a_clean_object_decodes_without_findings() -> None:
    report = decode(deployment(replicas=3), "apps", "Deployment")
    assert report == v.DecodeReport([], [])


def test_a_string_for_an_int32_is_a_go_unmarshal_error_with_the_servers_prefix() -> None:
    report = decode(deployment(replicas="3"), "apps", "Deployment")
    assert report.type_errors == [
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "string into Go struct field DeploymentSpec.spec.replicas of type int32"
    ]


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (1.5, "number 1.5"),
        (2**31, "number 2147483648"),
        (True, "bool"),
        ({}, "object"),
        ([], "array"),
    ],
)
def test_values_an_int32_cannot_hold(value: Any, what: str) -> None:
    report = decode(deployment(replicas=value), "apps", "Deployment")
    assert report.type_errors == [
        f'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal {what} '
        "into Go struct field DeploymentSpec.spec.replicas of type int32"
    ]


def test_an_integral_float_passes_as_kubectl_sends_yaml_1_0_as_1() -> None:
    assert decode(deployment(replicas=2.0), "apps", "Deployment").type_errors == []


def test_the_field_path_of_a_type_error_names_go_fields_without_list_indices() -> None:
    body = deployment()
    containers(body)[0]["args"] = ["ok", 5]
    body["spec"]["template"]["spec"]["containers"] = {"name": "web"}
    body["metadata"]["labels"] = {"app": 1}
    report = decode(body, "apps", "Deployment")
    prefix = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
    assert report.type_errors == [
        prefix + "number into Go struct field ObjectMeta.metadata.labels of type string",
        prefix
        + "object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container",
    ]


def test_a_bad_item_inside_a_list_names_the_struct_of_the_item() -> None:
    body = deployment()
    containers(body)[0]["args"] = ["ok", 5]
    report = decode(body, "apps", "Deployment")
    assert report.type_errors == [
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number '
        "into Go struct field Container.spec.template.spec.containers.args of type string"
    ]


def test_int_or_string_and_quantity_errors_come_first_as_go_returns_them_over_saved_ones() -> None:
    body = deployment(replicas="x", strategy={"rollingUpdate": {"maxSurge": True}})
    containers(body)[0]["resources"] = {"limits": {"cpu": "1x"}}
    errors = decode(body, "apps", "Deployment").type_errors
    prefix = 'Deployment in version "v1" cannot be handled as a Deployment: '
    assert (
        errors
        == [  # fatal ones in document order (the template precedes the strategy here)
            prefix + QTY_FORMAT,
            prefix + "json: cannot unmarshal bool into Go struct field "
            "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
            prefix
            + "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ]
    )


def test_a_quantity_with_an_unknown_suffix() -> None:
    body = deployment()
    containers(body)[0]["resources"] = {"requests": {"memory": "1K"}}
    assert decode(body, "apps", "Deployment").type_errors == [
        'Deployment in version "v1" cannot be handled as a Deployment: unable to parse quantity\'s suffix'
    ]


def test_numbers_are_quantities_too() -> None:
    body = deployment()
    containers(body)[0]["resources"] = {"requests": {"cpu": 0.5, "memory": 128}}
    assert decode(body, "apps", "Deployment").type_errors == []


@pytest.mark.parametrize(
    ("data", "offset"),
    [("abc", 0), ("a!bc", 1), ("YQ=", 3), ("YQ==x", 4), ("Y===", 1), ("aGVsbG8", 4)],
)
def test_secret_data_must_be_base64_with_gos_offsets(data: str, offset: int) -> None:
    report = decode({"apiVersion": "v1", "kind": "Secret", "data": {"k": data}}, "", "Secret")
    assert report.type_errors == [
        f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte {offset}'
    ]


@pytest.mark.parametrize("data", ["", "YQ==", "aGVsbG8=", "aGVs\nbG8=", "YWJj"])
def test_valid_base64(data: str) -> None:
    assert (
        decode(
            {"apiVersion": "v1", "kind": "Secret", "data": {"k": data}}, "", "Secret"
        ).type_errors
        == []
    )


def test_unknown_fields_are_dotted_paths_with_indices_in_document_order() -> None:
    body = deployment(foo=1)
    body["metadata"]["nmae"] = "x"
    containers(body)[0]["imagePullPolcy"] = "Always"
    report = decode(body, "apps", "Deployment")
    assert report.type_errors == []
    assert report.unknown_fields == [
        "metadata.nmae",
        "spec.template.spec.containers[0].imagePullPolcy",
        "spec.foo",
    ]


def test_field_names_are_case_sensitive() -> None:
    assert decode(deployment(Replicas=1), "apps", "Deployment").unknown_fields == ["spec.Replicas"]


def test_nulls_are_absent_values() -> None:
    body = deployment(replicas=None, strategy=None)
    body["metadata"]["labels"] = {"a": None}
    assert decode(body, "apps", "Deployment") == v.DecodeReport([], [])


def test_free_form_fields_accept_anything() -> None:
    body = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "r", "managedFields": [{"fieldsV1": {"f:spec": {"anything": 1}}}]},
        "data": {"whatever": [1, "two"]},
        "revision": 1,
    }
    assert decode(body, "apps", "ControllerRevision") == v.DecodeReport([], [])


def test_drop_unknown_returns_a_copy_without_the_unknown_fields() -> None:
    body = deployment(foo=1)
    containers(body)[0]["imagePullPolcy"] = "Always"
    original = copy.deepcopy(body)
    root = SCHEMAS.root("apps", "v1", "Deployment")
    assert root is not None
    dropped = v.drop_unknown(body, root, SCHEMAS.resolve)
    assert body == original
    assert dropped == deployment()
    assert dropped["spec"]["template"] is not body["spec"]["template"]


def test_decode_check_is_fast() -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "labels": {"app": "c"}},
        "data": {"a": "1", "b": "2", "c": "3"},
    }
    body = deployment(replicas=3)
    containers(body)[0].update(
        ports=[{"containerPort": 80, "name": "http"}],
        env=[{"name": "A", "value": "b"}],
        resources={"limits": {"cpu": "1", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
        readinessProbe={"httpGet": {"path": "/", "port": 80}},
    )
    apply_defaults(body, "apps", "Deployment")
    for obj, group, kind, budget in (
        (config_map, "", "ConfigMap", 100e-6),
        (body, "apps", "Deployment", 500e-6),
    ):
        decode(obj, group, kind)  # compiles and caches the schema
        runs = 200
        start = time.process_time()  # CPU time: other processes only stretch the wall clock
        for _ in range(runs):
            decode(obj, group, kind)
        assert (time.process_time() - start) / runs < budget


# =====================================================================================
# Quantities
# =====================================================================================


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0", "0"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("2000", "2k"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("100Mi", "100Mi"),
        ("1Ki", "1Ki"),
        ("512", "512"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1E", "1E"),
        ("-1", "-1"),
        ("0.0000000001", "1n"),
        ("+.5", "500m"),
    ],
)
def test_quantities_print_in_canonical_form(text: str, canonical: str) -> None:
    assert v.parse_quantity(text).canonical() == canonical


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", QTY_FORMAT),
        ("abc", QTY_FORMAT),
        ("1Mb", QTY_FORMAT),
        ("1.5.5", QTY_FORMAT),
        ("1K", "unable to parse quantity's suffix"),
        ("1e", "unable to parse quantity's suffix"),
    ],
)
def test_quantity_errors(text: str, error: str) -> None:
    with pytest.raises(ValueError, match="^" + __import__("re").escape(error) + "$"):
        v.parse_quantity(text)


@given(
    st.integers(min_value=0, max_value=10**12),
    st.sampled_from(["", "m", "k", "Ki", "Mi", "Gi", "M", "G"]),
)
@settings(max_examples=200)
def test_canonical_quantities_parse_back_to_the_same_value(number: int, suffix: str) -> None:
    qty = v.parse_quantity(f"{number}{suffix}")
    assert v.parse_quantity(qty.canonical()).value == qty.value


# =====================================================================================
# Names, metadata
# =====================================================================================


def test_name_is_required_unless_generate_name_is_given() -> None:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": "default"},
    }
    assert check(body, "", "ConfigMap") == [
        C("metadata.name", REQUIRED, "Required value: name or generateName is required")
    ]
    body["metadata"]["generateName"] = "cfg-"
    assert check(body, "", "ConfigMap") == []


def test_most_names_are_dns_subdomains() -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "My_Config", "namespace": "default"},
    }
    assert check(body, "", "ConfigMap") == [
        C("metadata.name", INVALID, f'Invalid value: "My_Config": {DNS1123_SUBDOMAIN}')
    ]


def test_namespace_names_are_dns_labels() -> None:
    assert check({"metadata": {"name": "a.b"}}, "", "Namespace") == [
        C("metadata.name", INVALID, 'Invalid value: "a.b": must not contain dots')
    ]
    assert check({"metadata": {"name": "Prod"}}, "", "Namespace") == [
        C("metadata.name", INVALID, f'Invalid value: "Prod": {DNS1123_LABEL}')
    ]


def test_service_names_must_start_with_a_letter() -> None:
    body = {"metadata": {"name": "1web", "namespace": "default"}, "spec": {"ports": [{"port": 80}]}}
    assert check(body, "", "Service") == [
        C("metadata.name", INVALID, f'Invalid value: "1web": {DNS1035_LABEL}')
    ]


def test_statefulset_names_are_dns_labels() -> None:
    body = {"metadata": {"name": "db.primary", "namespace": "default"}, "spec": {}}
    causes = check(body, "apps", "StatefulSet")
    assert causes[0] == C(
        "metadata.name", INVALID, 'Invalid value: "db.primary": must not contain dots'
    )


def test_rbac_names_only_need_to_be_path_segments() -> None:
    body: dict[str, Any] = {"metadata": {"name": "system:controller:x"}, "rules": []}
    assert check(body, "rbac.authorization.k8s.io", "ClusterRole") == []
    body["metadata"]["name"] = "a/b%c"
    assert check(body, "rbac.authorization.k8s.io", "ClusterRole") == [
        C("metadata.name", INVALID, "Invalid value: \"a/b%c\": may not contain '/'"),
        C("metadata.name", INVALID, "Invalid value: \"a/b%c\": may not contain '%'"),
    ]


def test_names_longer_than_a_subdomain_allows() -> None:
    name = "a" * 254
    body = {"metadata": {"name": name, "namespace": "default"}}
    assert check(body, "", "ConfigMap") == [
        C("metadata.name", INVALID, f'Invalid value: "{name}": must be no more than 253 characters')
    ]


def test_generate_name_may_end_with_a_dash() -> None:
    body = {"metadata": {"generateName": "web-", "name": "web-x7k2p", "namespace": "default"}}
    assert check(body, "", "ConfigMap") == []


def test_namespaced_kinds_need_a_namespace_and_cluster_kinds_do_not() -> None:
    assert check({"metadata": {"name": "c"}}, "", "ConfigMap") == [
        C("metadata.namespace", REQUIRED, "Required value")
    ]
    assert (
        check({"metadata": {"name": "c"}, "rules": []}, "rbac.authorization.k8s.io", "ClusterRole")
        == []
    )


def test_label_keys_and_values() -> None:
    body = {
        "metadata": {
            "name": "c",
            "namespace": "default",
            "labels": {"-bad": "ok", "good": "bad value"},
        }
    }
    assert check(body, "", "ConfigMap") == [
        C("metadata.labels", INVALID, f'Invalid value: "-bad": {QUALIFIED_NAME}'),
        C("metadata.labels", INVALID, f'Invalid value: "bad value": {LABEL_VALUE}'),
    ]


def test_label_key_prefixes_are_subdomains() -> None:
    body = {
        "metadata": {
            "name": "c",
            "namespace": "default",
            "labels": {"Example.com/a": "x", "/a": "y"},
        }
    }
    assert check(body, "", "ConfigMap") == [
        C(
            "metadata.labels",
            INVALID,
            f'Invalid value: "Example.com/a": prefix part {DNS1123_SUBDOMAIN}',
        ),
        C("metadata.labels", INVALID, 'Invalid value: "/a": prefix part must be non-empty'),
    ]


def test_annotations_are_limited_to_256_kib_in_total() -> None:
    body = {
        "metadata": {"name": "c", "namespace": "default", "annotations": {"a": "x" * (256 * 1024)}}
    }
    assert check(body, "", "ConfigMap") == [
        C(
            "metadata.annotations",
            "FieldValueTooLong",
            "Too long: may not be more than 262144 bytes",
        )
    ]


def test_annotation_keys_ignore_case() -> None:
    body = {
        "metadata": {"name": "c", "namespace": "default", "annotations": {"Example.com/Key": "x"}}
    }
    assert check(body, "", "ConfigMap") == []


def test_owner_references_and_finalizers() -> None:
    body = {
        "metadata": {
            "name": "c",
            "namespace": "default",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": ""}
            ],
            "finalizers": ["example.com/cleanup", "cleanup"],
        }
    }
    assert check(body, "", "ConfigMap") == [
        C("metadata.ownerReferences.uid", INVALID, 'Invalid value: "": must not be empty'),
        C(
            "metadata.finalizers[1]",
            INVALID,
            'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
        ),
    ]


def test_custom_objects_get_the_generic_metadata_rules() -> None:
    obj = {"metadata": {"name": "Bad", "namespace": "default", "finalizers": ["cleanup"]}}
    assert v.validate_object_meta(obj) == [
        C("metadata.name", INVALID, f'Invalid value: "Bad": {DNS1123_SUBDOMAIN}')
    ]


def test_identity_fields_cannot_change_on_update() -> None:
    old = stored({"metadata": {"name": "c", "namespace": "default"}}, "", "ConfigMap")
    new = copy.deepcopy(old)
    new["metadata"].update(uid="u-2", namespace="other")
    assert v.validate_builtin(new, old, "", "ConfigMap") == [
        C("metadata.namespace", INVALID, 'Invalid value: "other": field is immutable'),
        C("metadata.uid", INVALID, 'Invalid value: "u-2": field is immutable'),
    ]


def test_no_new_finalizers_while_deleting() -> None:
    old = stored(
        {"metadata": {"name": "c", "namespace": "default"}},
        "",
        "ConfigMap",
        deletionTimestamp="2025-01-02T00:00:00Z",
    )
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["example.com/x"]
    assert v.validate_builtin(new, old, "", "ConfigMap") == [
        C(
            "metadata.finalizers",
            FORBIDDEN,
            'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/x"}',
        )
    ]


# =====================================================================================
# Workloads
# =====================================================================================


def test_a_defaulted_deployment_is_valid() -> None:
    assert check(deployment(), "apps", "Deployment") == []


def test_a_deployment_without_a_selector_also_fails_the_template_match() -> None:
    body = deployment()
    del body["spec"]["selector"]
    assert check(body, "apps", "Deployment") == [
        C("spec.selector", REQUIRED, "Required value"),
        C(
            "spec.template.metadata.labels",
            INVALID,
            'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
        ),
    ]


def test_selector_and_template_labels_must_agree() -> None:
    body = deployment(selector={"matchLabels": {"app": "api"}})
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.template.metadata.labels",
            INVALID,
            'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
        )
    ]


def test_match_expressions_are_matched_and_validated() -> None:
    body = deployment(
        selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
    )
    assert check(body, "apps", "Deployment") == []
    body = deployment(selector={"matchExpressions": [{"key": "app", "operator": "Has"}]})
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.selector.matchExpressions[0].operator",
            INVALID,
            'Invalid value: "Has": not a valid selector operator',
        ),
        C(
            "spec.selector",
            INVALID,
            'Invalid value: {"matchExpressions":[{"key":"app","operator":"Has"}]}: invalid label selector',
        ),
    ]


def test_an_empty_selector_is_invalid() -> None:
    assert check(deployment(selector={}), "apps", "Deployment") == [
        C("spec.selector", INVALID, "Invalid value: {}: empty selector is invalid for deployment")
    ]


def test_negative_replicas() -> None:
    assert check(deployment(replicas=-1), "apps", "Deployment") == [
        C("spec.replicas", INVALID, "Invalid value: -1: must be greater than or equal to 0")
    ]


def test_containers_are_required_and_need_a_name_and_an_image() -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"] = []
    assert check(body, "apps", "Deployment") == [
        C("spec.template.spec.containers", REQUIRED, "Required value")
    ]
    body["spec"]["template"]["spec"]["containers"] = [{}, {"name": "Web_1", "image": "x"}]
    assert check(body, "apps", "Deployment") == [
        C("spec.template.spec.containers[0].name", REQUIRED, "Required value"),
        C("spec.template.spec.containers[0].image", REQUIRED, "Required value"),
        C(
            "spec.template.spec.containers[1].name",
            INVALID,
            f'Invalid value: "Web_1": {DNS1123_LABEL}',
        ),
    ]


def test_container_names_are_unique_across_init_and_regular_containers() -> None:
    body = deployment()
    spec = body["spec"]["template"]["spec"]
    spec["containers"].append({"name": "web", "image": "x"})
    spec["initContainers"] = [{"name": "web", "image": "x"}]
    assert check(body, "apps", "Deployment") == [
        C("spec.template.spec.containers[1].name", DUPLICATE, 'Duplicate value: "web"'),
        C("spec.template.spec.initContainers[0].name", DUPLICATE, 'Duplicate value: "web"'),
    ]


def test_container_ports() -> None:
    body = deployment()
    containers(body)[0]["ports"] = [
        {"containerPort": 70000, "protocol": "tcp", "name": "HTTP"},
        {"containerPort": 81, "name": "metrics"},
        {"containerPort": 82, "name": "metrics"},
    ]
    path = "spec.template.spec.containers[0].ports"
    assert check(body, "apps", "Deployment") == [
        C(
            f"{path}[0].name",
            INVALID,
            'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        ),
        C(
            f"{path}[0].name",
            INVALID,
            'Invalid value: "HTTP": must contain at least one letter (a-z)',
        ),
        C(
            f"{path}[0].containerPort",
            INVALID,
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        C(
            f"{path}[0].protocol",
            NOT_SUPPORTED,
            'Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
        ),
        C(f"{path}[2].name", DUPLICATE, 'Duplicate value: "metrics"'),
    ]


def test_requests_may_not_exceed_limits() -> None:
    body = deployment()
    containers(body)[0]["resources"] = {
        "limits": {"cpu": "500m"},
        "requests": {"cpu": "1", "memory": "-1Mi"},
    }
    path = "spec.template.spec.containers[0].resources"
    assert check(body, "apps", "Deployment") == [
        C(
            f"{path}.requests",
            INVALID,
            'Invalid value: "1": must be less than or equal to cpu limit of 500m',
        ),
        C(
            f"{path}.requests[memory]",
            INVALID,
            'Invalid value: "-1Mi": must be greater than or equal to 0',
        ),
    ]


def test_resource_names_must_be_standard_or_qualified() -> None:
    body = deployment()
    containers(body)[0]["resources"] = {"limits": {"gpu": "1", "example.com/gpu": "1.5"}}
    path = "spec.template.spec.containers[0].resources.limits"
    assert check(body, "apps", "Deployment") == [
        C(
            f"{path}[gpu]",
            INVALID,
            'Invalid value: "gpu": must be a standard resource type or fully qualified',
        ),
        C(
            f"{path}[gpu]",
            INVALID,
            'Invalid value: "gpu": must be a standard resource for containers',
        ),
        C(f"{path}[example.com/gpu]", INVALID, 'Invalid value: "1500m": must be an integer'),
    ]


def test_env_and_volume_mounts() -> None:
    body = deployment()
    containers(body)[0]["env"] = [{"name": "A=B"}, {"name": "C", "valueFrom": {}}]
    containers(body)[0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    path = "spec.template.spec.containers[0]"
    assert check(body, "apps", "Deployment") == [
        C(
            f"{path}.env[0].name",
            INVALID,
            'Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII '
            "characters other than '='",
        ),
        C(
            f"{path}.env[1].valueFrom",
            INVALID,
            'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
        ),
        C(f"{path}.volumeMounts[0].name", "FieldValueNotFound", 'Not found: "data"'),
    ]


def test_volumes_need_a_name_and_one_source() -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["volumes"] = [
        {"name": "a", "secret": {"secretName": "s"}, "configMap": {"name": "c"}},
        {"name": "b", "configMap": {"name": "c", "defaultMode": 1000}},
        {"name": "c"},
        {"name": "c", "secret": {}},
    ]
    path = "spec.template.spec.volumes"
    assert check(body, "apps", "Deployment") == [  # a volume with errors does not claim its name
        C(f"{path}[0].configMap", FORBIDDEN, "Forbidden: may not specify more than 1 volume type"),
        C(
            f"{path}[1].configMap.defaultMode",
            INVALID,
            "Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
        ),
        C(f"{path}[3].secret.secretName", REQUIRED, "Required value"),
        C(f"{path}[3].name", DUPLICATE, 'Duplicate value: "c"'),
    ]


def test_probes() -> None:
    body = deployment()
    containers(body)[0]["livenessProbe"] = {"successThreshold": 2}
    path = "spec.template.spec.containers[0].livenessProbe"
    assert check(body, "apps", "Deployment") == [
        C(path, REQUIRED, "Required value: must specify a handler type"),
        C(f"{path}.successThreshold", INVALID, "Invalid value: 2: must be 1"),
    ]


def test_deployment_strategy() -> None:
    body = deployment(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.strategy.rollingUpdate",
            FORBIDDEN,
            "Forbidden: may not be specified when strategy `type` is 'Recreate'",
        )
    ]
    body = deployment(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "150%"}})
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.strategy.rollingUpdate.maxUnavailable",
            INVALID,
            'Invalid value: "150%": must not be greater than 100%',
        )
    ]
    body = deployment(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}})
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.strategy.rollingUpdate.maxUnavailable",
            INVALID,
            'Invalid value: "0%": may not be 0 when `maxSurge` is 0',
        )
    ]


def test_deployment_restart_policy_must_be_always() -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert check(body, "apps", "Deployment") == [
        C(
            "spec.template.spec.restartPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Never": supported values: "Always"',
        )
    ]


def test_deployment_selector_is_immutable() -> None:
    old = stored(deployment(), "apps", "Deployment")
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    assert v.validate_builtin(new, old, "apps", "Deployment") == [
        C(
            "spec.selector",
            INVALID,
            'Invalid value: {"matchLabels":{"app":"web","tier":"front"}}: field is immutable',
        )
    ]
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    containers(new)[0]["image"] = "nginx:1.28"
    assert v.validate_builtin(new, old, "apps", "Deployment") == []


def test_statefulset_updates_are_limited() -> None:
    body = {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "pg"}]},
            },
        },
    }
    assert check(body, "apps", "StatefulSet") == []
    old = stored(body, "apps", "StatefulSet")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    new["spec"]["minReadySeconds"] = 5
    assert v.validate_builtin(new, old, "apps", "StatefulSet") == []
    new["spec"]["serviceName"] = "db2"
    assert v.validate_builtin(new, old, "apps", "StatefulSet") == [
        C(
            "spec",
            FORBIDDEN,
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
            "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )
    ]


def test_daemonset_rolling_update() -> None:
    body = {
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "a"}]},
            },
        },
    }
    assert check(body, "apps", "DaemonSet") == [
        C(
            "spec.updateStrategy.rollingUpdate.maxSurge",
            INVALID,
            "Invalid value: 1: may not be set when maxUnavailable is non-zero",
        )
    ]


def job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}
            }
        },
    }
    body["spec"].update(spec)
    return body


def test_jobs_need_restart_policy_on_failure_or_never() -> None:
    assert check(job(), "batch", "Job") == []
    body = job()
    del body["spec"]["template"]["spec"]["restartPolicy"]
    assert check(body, "batch", "Job") == [
        C(
            "spec.template.spec.restartPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Always": supported values: "OnFailure", "Never"',
        )
    ]


def test_a_manual_job_selector_is_required_and_must_match() -> None:
    body = job(manualSelector=True)
    assert check(body, "batch", "Job") == [C("spec.selector", REQUIRED, "Required value")]
    body = job(manualSelector=True, selector={"matchLabels": {"a": "b"}})
    assert check(body, "batch", "Job") == [
        C(
            "spec.template.metadata.labels",
            INVALID,
            "Invalid value: {}: `selector` does not match template `labels`",
        )
    ]


def test_a_jobs_template_and_completions_are_immutable() -> None:
    old = stored(job(), "batch", "Job")
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 3
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    causes = v.validate_builtin(new, old, "batch", "Job")
    assert [(c.field, c.reason) for c in causes] == [
        ("spec.completions", INVALID),
        ("spec.template", INVALID),
    ]
    assert causes[0].message == "Invalid value: 3: field is immutable"
    assert causes[1].message.endswith(": field is immutable")


def test_a_suspended_job_may_change_scheduling_directives() -> None:
    old = stored(job(suspend=True), "batch", "Job")
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    assert v.validate_builtin(new, old, "batch", "Job") == []


def cron_job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": job()["spec"]}},
    }
    body["spec"].update(spec)
    return body


def test_cron_jobs() -> None:
    assert check(cron_job(), "batch", "CronJob") == []
    body = cron_job()
    del body["spec"]["schedule"]
    assert check(body, "batch", "CronJob") == [C("spec.schedule", REQUIRED, "Required value")]


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ],
)
def test_cron_schedule_errors_are_robfig_crons(schedule: str, error: str) -> None:
    assert check(cron_job(schedule=schedule), "batch", "CronJob") == [
        C("spec.schedule", INVALID, f'Invalid value: "{schedule}": {error}')
    ]


@pytest.mark.parametrize(
    "schedule",
    [
        "*/5 * * * *",
        "0 0 1 jan *",
        "0 9 * * mon-fri",
        "@hourly",
        "@every 1h30m",
        "15,45 1-5/2 * * 0",
    ],
)
def test_valid_cron_schedules(schedule: str) -> None:
    assert check(cron_job(schedule=schedule), "batch", "CronJob") == []


def test_cron_job_names_leave_room_for_the_job_suffix() -> None:
    body = cron_job()
    body["metadata"]["name"] = "n" * 53
    assert check(body, "batch", "CronJob") == [
        C(
            "metadata.name",
            INVALID,
            f'Invalid value: "{"n" * 53}": must be no more than 52 characters',
        )
    ]


def test_cron_job_time_zones() -> None:
    assert check(cron_job(timeZone="Europe/Paris"), "batch", "CronJob") == []
    assert check(cron_job(timeZone="Mars/Olympus"), "batch", "CronJob") == [
        C("spec.timeZone", INVALID, 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus')
    ]


# =====================================================================================
# Pods
# =====================================================================================


def pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def test_pod_spec_enums() -> None:
    body = pod()
    body["spec"].update(restartPolicy="Sometimes", dnsPolicy="Google")
    assert check(body, "", "Pod") == [
        C(
            "spec.restartPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        ),
        C(
            "spec.dnsPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
        ),
    ]


def test_pod_images_may_change_but_not_much_else() -> None:
    old = stored(pod(), "", "Pod")
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "busybox:2"
    new["spec"]["activeDeadlineSeconds"] = 30
    assert v.validate_builtin(new, old, "", "Pod") == []
    new["spec"]["containers"][0]["command"] = ["sh"]
    assert v.validate_builtin(new, old, "", "Pod") == [
        C(
            "spec",
            FORBIDDEN,
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
            "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
            "previously negative),`spec.containers[*].resources` (for CPU/memory only)",
        )
    ]


def test_pods_may_not_add_containers() -> None:
    old = stored(pod(), "", "Pod")
    new = copy.deepcopy(old)
    new["spec"]["containers"].append({**new["spec"]["containers"][0], "name": "d"})
    assert v.validate_builtin(new, old, "", "Pod") == [
        C("spec.containers", FORBIDDEN, "Forbidden: pod updates may not add or remove containers")
    ]


def test_pod_tolerations_may_only_be_added() -> None:
    body = pod()
    body["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    old = stored(body, "", "Pod")
    new = copy.deepcopy(old)
    new["spec"]["tolerations"].append({"key": "j", "operator": "Exists"})
    assert v.validate_builtin(new, old, "", "Pod") == []
    new["spec"]["tolerations"] = [{"key": "j", "operator": "Exists"}]
    assert v.validate_builtin(new, old, "", "Pod") == [
        C(
            "spec.tolerations",
            FORBIDDEN,
            "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        )
    ]


def test_ephemeral_containers_cannot_be_set_on_create() -> None:
    body = pod()
    body["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]
    assert check(body, "", "Pod") == [
        C("spec.ephemeralContainers", FORBIDDEN, "Forbidden: cannot be set on create")
    ]


# =====================================================================================
# Services
# =====================================================================================


def service(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    body["spec"].update(spec)
    return body


def test_a_defaulted_service_is_valid() -> None:
    assert check(service(), "", "Service") == []


def test_cluster_ip_services_need_ports_headless_and_external_name_ones_do_not() -> None:
    assert check(service(ports=[]), "", "Service") == [C("spec.ports", REQUIRED, "Required value")]
    assert check(service(ports=[], clusterIP="None", clusterIPs=["None"]), "", "Service") == []
    body = {
        "metadata": {"name": "ext", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "example.com."},
    }
    assert check(body, "", "Service") == []


def test_service_ports() -> None:
    body = service(
        ports=[{"port": 0, "protocol": "ICMP"}, {"port": 80, "name": "http", "targetPort": "HTTP"}]
    )
    assert check(body, "", "Service") == [
        C("spec.ports[0].name", REQUIRED, "Required value"),
        C(
            "spec.ports[0].port",
            INVALID,
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        C(
            "spec.ports[0].protocol",
            NOT_SUPPORTED,
            'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        ),
        # the target port defaults to the port, 0 here
        C(
            "spec.ports[0].targetPort",
            INVALID,
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        C(
            "spec.ports[1].targetPort",
            INVALID,
            'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        ),
        C(
            "spec.ports[1].targetPort",
            INVALID,
            'Invalid value: "HTTP": must contain at least one letter (a-z)',
        ),
    ]


def test_service_type_is_one_of_four() -> None:
    assert check(service(type="Internal"), "", "Service") == [
        C(
            "spec.type",
            NOT_SUPPORTED,
            'Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
        )
    ]


def test_external_name_services() -> None:
    body = {"metadata": {"name": "ext", "namespace": "default"}, "spec": {"type": "ExternalName"}}
    assert check(body, "", "Service") == [C("spec.externalName", REQUIRED, "Required value")]


def test_a_cluster_ip_may_not_change_once_set() -> None:
    old = stored(service(clusterIP="10.96.0.11", clusterIPs=["10.96.0.11"]), "", "Service")
    new = copy.deepcopy(old)
    new["spec"].update(clusterIP="10.96.0.12", clusterIPs=["10.96.0.12"])
    assert v.validate_builtin(new, old, "", "Service") == [
        C("spec.clusterIPs[0]", INVALID, 'Invalid value: ["10.96.0.12"]: may not change once set')
    ]


def test_a_malformed_cluster_ip() -> None:
    assert check(service(clusterIP="10.96.0.300", clusterIPs=["10.96.0.300"]), "", "Service") == [
        C(
            "spec.clusterIPs[0]",
            INVALID,
            'Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        )
    ]


def test_node_ports_are_not_for_cluster_ip_services() -> None:
    assert check(service(ports=[{"port": 80, "nodePort": 30080}]), "", "Service") == [
        C(
            "spec.ports[0].nodePort",
            FORBIDDEN,
            "Forbidden: may not be used when `type` is 'ClusterIP'",
        )
    ]


# =====================================================================================
# Config, secrets, storage
# =====================================================================================


def test_config_map_keys() -> None:
    body = {
        "metadata": {"name": "c", "namespace": "default"},
        "data": {"a b": "1", "..x": "2"},
        "binaryData": {"ok": "YQ=="},
    }
    assert check(body, "", "ConfigMap") == [
        C("data[a b]", INVALID, f'Invalid value: "a b": {CONFIG_KEY}'),
        C("data[..x]", INVALID, "Invalid value: \"..x\": must not start with '..'"),
    ]


def test_immutable_config_maps_keep_their_data() -> None:
    old = stored(
        {"metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}, "immutable": True},
        "",
        "ConfigMap",
    )
    new = copy.deepcopy(old)
    new["data"]["a"] = "2"
    assert v.validate_builtin(new, old, "", "ConfigMap") == [
        C("data", FORBIDDEN, "Forbidden: field is immutable when `immutable` is set")
    ]


def test_secret_types() -> None:
    body = {
        "metadata": {"name": "s", "namespace": "default"},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "YQ=="},
    }
    assert check(body, "", "Secret") == [C("data[tls.key]", REQUIRED, "Required value")]
    old = stored({"metadata": {"name": "s", "namespace": "default"}}, "", "Secret")
    new = copy.deepcopy(old)
    new["type"] = "example.com/custom"
    assert v.validate_builtin(new, old, "", "Secret") == [
        C("type", INVALID, 'Invalid value: "example.com/custom": field is immutable')
    ]


@pytest.mark.parametrize(
    ("kind", "key", "content", "message"),
    [
        (
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            "NotJs0nSecretVal",
            "invalid character 'N' looking for beginning of value",
        ),
        (
            "kubernetes.io/dockercfg",
            ".dockercfg",
            '["a"]',
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        ("kubernetes.io/dockerconfigjson", ".dockerconfigjson", '{"auths": {}}', None),
    ],
)
def test_a_docker_config_secret_must_hold_a_json_object(
    kind: str, key: str, content: str, message: str | None
) -> None:
    """As kube-apiserver's ValidateSecret: a pull secret whose config is no JSON object is
    refused, its contents redacted in the message (they hold registry credentials)."""
    encoded = base64.b64encode(content.encode()).decode()
    body = {"metadata": {"name": "s", "namespace": "default"}, "type": kind, "data": {key: encoded}}
    causes = check(body, "", "Secret")
    if message is None:
        assert causes == []
    else:
        invalid = f'Invalid value: "<secret contents redacted>": {message}'
        assert causes == [C(f"data[{key}]", INVALID, invalid)]


def pvc(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body["spec"].update(spec)
    return body


def test_claims_need_access_modes_and_storage() -> None:
    assert check(pvc(), "", "PersistentVolumeClaim") == []
    assert check(pvc(accessModes=[], resources={}), "", "PersistentVolumeClaim") == [
        C("spec.accessModes", REQUIRED, "Required value: at least 1 access mode is required"),
        C("spec.resources[storage]", REQUIRED, "Required value"),
    ]
    assert check(
        pvc(accessModes=["ReadWriteAlways"], resources={"requests": {"storage": 0}}),
        "",
        "PersistentVolumeClaim",
    ) == [
        C(
            "spec.accessModes",
            NOT_SUPPORTED,
            'Unsupported value: "ReadWriteAlways": supported values: "ReadOnlyMany", "ReadWriteMany", '
            '"ReadWriteOnce", "ReadWriteOncePod"',
        ),
        C("spec.resources[storage]", INVALID, 'Invalid value: "0": must be greater than zero'),
    ]


def test_claim_specs_are_immutable_except_requests_once_bound() -> None:
    old = stored(pvc(), "", "PersistentVolumeClaim")
    new = copy.deepcopy(old)
    new["spec"]["resources"]["requests"]["storage"] = "2Gi"
    message = "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
    assert v.validate_builtin(new, old, "", "PersistentVolumeClaim") == [
        C("spec", FORBIDDEN, message)
    ]
    old["status"]["phase"] = new["status"]["phase"] = "Bound"
    assert v.validate_builtin(new, old, "", "PersistentVolumeClaim") == []
    new["spec"]["accessModes"] = ["ReadWriteMany"]
    assert v.validate_builtin(new, old, "", "PersistentVolumeClaim") == [
        C("spec", FORBIDDEN, message)
    ]


def test_storage_classes() -> None:
    assert check({"metadata": {"name": "fast"}}, "storage.k8s.io", "StorageClass") == [
        C("provisioner", REQUIRED, "Required value")
    ]
    old = stored(
        {"metadata": {"name": "fast"}, "provisioner": "example.com/disk"},
        "storage.k8s.io",
        "StorageClass",
    )
    new = copy.deepcopy(old)
    new["parameters"] = {"type": "ssd"}
    assert v.validate_builtin(new, old, "storage.k8s.io", "StorageClass") == [
        C("parameters", FORBIDDEN, "Forbidden: updates to parameters are forbidden.")
    ]


# =====================================================================================
# Networking, RBAC, policy, autoscaling
# =====================================================================================


def test_ingress_needs_rules_or_a_default_backend() -> None:
    body = {"metadata": {"name": "web", "namespace": "default"}, "spec": {}}
    assert check(body, "networking.k8s.io", "Ingress") == [
        C(
            "spec",
            INVALID,
            "Invalid value: null: either `defaultBackend` or `rules` must be specified",
        )
    ]


def test_ingress_paths() -> None:
    body = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "rules": [
                {
                    "host": "10.0.0.1",
                    "http": {
                        "paths": [
                            {"path": "/", "backend": {"service": {"name": "web"}}},
                            {
                                "path": "api",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "api", "port": {"number": 80}}},
                            },
                        ]
                    },
                }
            ]
        },
    }
    path = "spec.rules[0]"
    assert check(body, "networking.k8s.io", "Ingress") == [
        C(
            f"{path}.host",
            INVALID,
            'Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
        ),
        C(f"{path}.http.paths[0].pathType", REQUIRED, "Required value: pathType must be specified"),
        C(
            f"{path}.http.paths[0].backend",
            REQUIRED,
            "Required value: port name or number is required",
        ),
        C(f"{path}.http.paths[1].path", INVALID, 'Invalid value: "api": must be an absolute path'),
    ]


def test_network_policy_peers() -> None:
    body = {
        "metadata": {"name": "np", "namespace": "default"},
        "spec": {
            "podSelector": {},
            "ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}}]}],
        },
    }
    assert check(body, "networking.k8s.io", "NetworkPolicy") == [
        C("spec.ingress[0].from[0]", REQUIRED, "Required value: must specify a peer"),
        C(
            "spec.ingress[0].from[1].ipBlock.cidr",
            INVALID,
            'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ),
    ]


RBAC = "rbac.authorization.k8s.io"


def test_role_rules() -> None:
    body = {
        "metadata": {"name": "r", "namespace": "default"},
        "rules": [{"verbs": []}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
    }
    assert check(body, RBAC, "Role") == [
        C("rules[0].verbs", REQUIRED, "Required value: verbs must contain at least one value"),
        C(
            "rules[0].apiGroups",
            REQUIRED,
            "Required value: resource rules must supply at least one api group",
        ),
        C(
            "rules[0].resources",
            REQUIRED,
            "Required value: resource rules must supply at least one resource",
        ),
        C(
            "rules[1].nonResourceURLs",
            INVALID,
            'Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
        ),
    ]


def test_role_bindings() -> None:
    body = {
        "metadata": {"name": "b", "namespace": "default"},
        "roleRef": {"kind": "Role", "name": ""},
        "subjects": [{"kind": "User", "name": "jane"}, {"kind": "Robot", "name": "r2"}],
    }
    assert check(body, RBAC, "RoleBinding") == [
        C("roleRef.name", REQUIRED, "Required value"),
        C(
            "subjects[1].kind",
            NOT_SUPPORTED,
            'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        ),
    ]


def test_a_role_ref_cannot_change() -> None:
    body = {
        "metadata": {"name": "b", "namespace": "default"},
        "roleRef": {"kind": "Role", "name": "view"},
    }
    old = stored(body, RBAC, "RoleBinding")
    new = copy.deepcopy(old)
    new["roleRef"]["name"] = "edit"
    assert v.validate_builtin(new, old, RBAC, "RoleBinding") == [
        C(
            "roleRef",
            INVALID,
            'Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"edit"}: cannot change roleRef',
        )
    ]


def test_cluster_role_bindings_bind_cluster_roles_to_namespaced_service_accounts() -> None:
    body = {
        "metadata": {"name": "b"},
        "roleRef": {"kind": "Role", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "default"}],
    }
    assert check(body, RBAC, "ClusterRoleBinding") == [
        C(
            "roleRef.kind",
            NOT_SUPPORTED,
            'Unsupported value: "Role": supported values: "ClusterRole"',
        ),
        C("subjects[0].namespace", REQUIRED, "Required value"),
    ]


def test_pod_disruption_budgets() -> None:
    body = {
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": "50%", "maxUnavailable": 1},
    }
    assert check(body, "policy", "PodDisruptionBudget") == [
        C(
            "spec",
            INVALID,
            'Invalid value: {"maxUnavailable":1,"minAvailable":"50%"}: minAvailable and maxUnavailable cannot be both set',
        )
    ]


def test_horizontal_pod_autoscalers() -> None:
    body = {
        "metadata": {"name": "hpa", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 3,
            "maxReplicas": 2,
        },
    }
    assert check(body, "autoscaling", "HorizontalPodAutoscaler") == [
        C(
            "spec.maxReplicas",
            INVALID,
            "Invalid value: 2: must be greater than or equal to `minReplicas`",
        )
    ]


def test_priority_classes() -> None:
    body = {"metadata": {"name": "system-high"}, "value": 10}
    assert check(body, "scheduling.k8s.io", "PriorityClass") == [
        C(
            "metadata.name",
            FORBIDDEN,
            "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: system-high is not a known system priority class",
        )
    ]


@pytest.mark.parametrize(
    ("group", "kind", "body"),
    [
        ("", "ServiceAccount", {"metadata": {"name": "builder", "namespace": "default"}}),
        ("", "Namespace", {"metadata": {"name": "team-a"}}),
        (
            "",
            "Secret",
            {"metadata": {"name": "s", "namespace": "default"}, "stringData": {"password": "x"}},
        ),
        (
            "",
            "PersistentVolume",
            {
                "metadata": {"name": "pv1"},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "hostPath": {"path": "/data"},
                },
            },
        ),
        (
            "",
            "Node",
            {
                "metadata": {"name": "node-1"},
                "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
            },
        ),
        (
            "",
            "Endpoints",
            {
                "metadata": {"name": "web", "namespace": "default"},
                "subsets": [{"addresses": [{"ip": "10.1.0.5"}], "ports": [{"port": 80}]}],
            },
        ),
        (
            "",
            "ResourceQuota",
            {
                "metadata": {"name": "q", "namespace": "default"},
                "spec": {"hard": {"pods": "10", "requests.cpu": "4"}},
            },
        ),
        (
            "",
            "LimitRange",
            {
                "metadata": {"name": "l", "namespace": "default"},
                "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]},
            },
        ),
        (
            "",
            "ReplicationController",
            {
                "metadata": {"name": "rc", "namespace": "default"},
                "spec": {
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    }
                },
            },
        ),
        (
            "apps",
            "ReplicaSet",
            {
                "metadata": {"name": "rs", "namespace": "default"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                },
            },
        ),
        (
            "networking.k8s.io",
            "IngressClass",
            {"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}},
        ),
        (
            "networking.k8s.io",
            "NetworkPolicy",
            {
                "metadata": {"name": "deny", "namespace": "default"},
                "spec": {
                    "podSelector": {},
                    "egress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53}]}],
                },
            },
        ),
        (
            "coordination.k8s.io",
            "Lease",
            {
                "metadata": {"name": "l", "namespace": "default"},
                "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
            },
        ),
        (
            "discovery.k8s.io",
            "EndpointSlice",
            {
                "metadata": {"name": "web-1", "namespace": "default"},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.1.0.5"]}],
                "ports": [{"port": 80}],
            },
        ),
        ("scheduling.k8s.io", "PriorityClass", {"metadata": {"name": "high"}, "value": 1000}),
        (
            "autoscaling",
            "HorizontalPodAutoscaler",
            {
                "metadata": {"name": "h", "namespace": "default"},
                "spec": {
                    "scaleTargetRef": {
                        "kind": "Deployment",
                        "name": "web",
                        "apiVersion": "apps/v1",
                    },
                    "maxReplicas": 3,
                },
            },
        ),
        (
            "policy",
            "PodDisruptionBudget",
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}},
            },
        ),
    ],
)
def test_ordinary_manifests_are_valid(group: str, kind: str, body: dict[str, Any]) -> None:
    assert check(body, group, kind) == []


# =====================================================================================
# Custom resources
# =====================================================================================

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[a-z]+$"},
                "port": {"x-kubernetes-int-or-string": True},
                "ratio": {
                    "type": "number",
                    "exclusiveMaximum": True,
                    "maximum": 1,
                    "multipleOf": 0.25,
                },
                "email": {"type": "string", "format": "email"},
                "when": {"type": "string", "format": "date-time"},
                "tags": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    },
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "maxProperties": 1,
                },
                "note": {"type": "string", "nullable": True},
                "extra": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"level": {"type": "integer"}},
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "choice": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                    "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                },
                "settings": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "mode": {"type": "string", "default": "auto"},
                        "level": {"type": "integer"},
                    },
                },
            },
        },
    },
}


def widget(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": "small"},
    }
    body["spec"].update(spec)
    return body


def test_a_valid_custom_object() -> None:
    assert (
        v.validate_custom(
            widget(replicas=3, name="abc", port="http", tags=["a", "b"]), WIDGET_SCHEMA
        )
        == []
    )


def test_custom_type_errors_name_the_json_type() -> None:
    assert v.validate_custom(widget(replicas="string"), WIDGET_SCHEMA) == [
        C(
            "spec.replicas",
            TYPE_INVALID,
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        )
    ]
    assert v.validate_custom(widget(replicas=1.5), WIDGET_SCHEMA) == [
        C(
            "spec.replicas",
            TYPE_INVALID,
            'Invalid value: "number": spec.replicas in body must be of type integer: "number"',
        )
    ]


def test_custom_required_and_enum() -> None:
    body = widget()
    del body["spec"]["size"]
    assert v.validate_custom(body, WIDGET_SCHEMA) == [C("spec.size", REQUIRED, "Required value")]
    assert v.validate_custom(widget(size="x"), WIDGET_SCHEMA) == [
        C("spec.size", NOT_SUPPORTED, 'Unsupported value: "x": supported values: "small", "large"')
    ]


def test_custom_numeric_bounds() -> None:
    assert v.validate_custom(widget(replicas=11, ratio=1.1), WIDGET_SCHEMA) == [
        C(
            "spec.replicas",
            INVALID,
            "Invalid value: 11: spec.replicas in body should be less than or equal to 10",
        ),
        C("spec.ratio", INVALID, "Invalid value: 1.1: spec.ratio in body should be less than 1"),
        C(
            "spec.ratio",
            INVALID,
            "Invalid value: 1.1: spec.ratio in body should be a multiple of 0.25",
        ),
    ]
    assert v.validate_custom(widget(replicas=-1), WIDGET_SCHEMA) == [
        C(
            "spec.replicas",
            INVALID,
            "Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        )
    ]


def test_custom_strings() -> None:
    assert v.validate_custom(widget(name="ab"), WIDGET_SCHEMA) == [
        C(
            "spec.name",
            INVALID,
            'Invalid value: "ab": spec.name in body should be at least 3 chars long',
        )
    ]
    assert v.validate_custom(widget(name="abcdef"), WIDGET_SCHEMA) == [
        C("spec.name", "FieldValueTooLong", "Too long: may not be more than 5 bytes")
    ]
    assert v.validate_custom(widget(name="AB1"), WIDGET_SCHEMA) == [
        C("spec.name", INVALID, "Invalid value: \"AB1\": spec.name in body should match '^[a-z]+$'")
    ]


def test_custom_formats() -> None:
    assert v.validate_custom(widget(email="nobody", when="yesterday"), WIDGET_SCHEMA) == [
        C(
            "spec.email",
            TYPE_INVALID,
            'Invalid value: "nobody": spec.email in body must be of type email: "nobody"',
        ),
        C(
            "spec.when",
            TYPE_INVALID,
            'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
        ),
    ]
    assert (
        v.validate_custom(widget(email="a@b.io", when="2025-01-01T00:00:00Z"), WIDGET_SCHEMA) == []
    )


def test_custom_int_or_string_and_nullable() -> None:
    assert v.validate_custom(widget(port=True, note=None), WIDGET_SCHEMA) == [
        C(
            "spec.port",
            TYPE_INVALID,
            'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        )
    ]
    assert v.validate_custom(widget(name=None), WIDGET_SCHEMA) == [
        C(
            "spec.name",
            TYPE_INVALID,
            'Invalid value: "null": spec.name in body must be of type string: "null"',
        )
    ]


def test_custom_lists_and_maps() -> None:
    body = widget(
        tags=["a", "a", "b"],
        ports=[{"name": "x", "port": 1}, {"name": "x", "port": 2}],
        labels={"a": "1", "b": "2"},
    )
    assert v.validate_custom(body, WIDGET_SCHEMA) == [
        C("spec.tags", "FieldValueTooMany", "Too many: 3: must have at most 2 items"),
        C("spec.tags[1]", DUPLICATE, 'Duplicate value: "a"'),
        C("spec.ports[1]", DUPLICATE, 'Duplicate value: {"name":"x"}'),
        C("spec.labels", "FieldValueTooMany", "Too many: 2: must have at most 1 item"),
    ]


def test_custom_composites_report_a_nil_field_as_the_server_does() -> None:
    assert v.validate_custom(widget(choice={"a": "1", "b": "2"}), WIDGET_SCHEMA) == [
        C(
            "<nil>",
            INVALID,
            'Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives',
        )
    ]
    assert v.validate_custom(widget(choice={}), WIDGET_SCHEMA) == [
        C(
            "<nil>",
            INVALID,
            'Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found none valid',
        ),
        C("spec.choice.a", REQUIRED, "Required value"),
    ]


def test_pruning_drops_what_the_schema_does_not_specify() -> None:
    body = widget(unknown=1, extra={"anything": {"goes": True}, "level": 1})
    body["metadata"]["bogus"] = "x"
    body["status"] = {"ready": True}
    body["spec"]["template"] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "junk": 1},
        "spec": {},
    }
    original = copy.deepcopy(body)
    pruned = v.prune_custom(body, WIDGET_SCHEMA)
    assert body == original
    assert pruned == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "size": "small",
            "extra": {"anything": {"goes": True}, "level": 1},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
        },
    }


def test_pruning_keeps_the_root_type_fields_even_when_the_schema_omits_them() -> None:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    body = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "x"},
        "spec": {"a": "1", "b": "2"},
        "other": 1,
    }
    assert v.prune_custom(body, schema) == {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "x"},
        "spec": {"a": "1"},
    }


def test_defaulting_fills_absent_fields_and_recurses_into_defaults() -> None:
    body = widget()
    v.default_custom(body, WIDGET_SCHEMA)
    assert body["spec"] == {"size": "small", "replicas": 1, "settings": {"mode": "auto"}}


def test_defaulting_replaces_non_nullable_nulls_and_drops_the_rest() -> None:
    body = widget(replicas=None, name=None, note=None)
    v.default_custom(body, WIDGET_SCHEMA)
    assert body["spec"] == {
        "size": "small",
        "replicas": 1,
        "note": None,
        "settings": {"mode": "auto"},
    }


def test_defaults_do_not_override_given_values() -> None:
    body = widget(replicas=0, settings={"mode": "manual"})
    v.default_custom(body, WIDGET_SCHEMA)
    assert body["spec"]["replicas"] == 0
    assert body["spec"]["settings"] == {"mode": "manual"}


# =====================================================================================
# CustomResourceDefinitions
# =====================================================================================


def crd(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
                }
            ],
        },
    }
    body["spec"].update(spec)
    return body


def check_crd(body: dict[str, Any], old: dict[str, Any] | None = None) -> list[Cause]:
    body = copy.deepcopy(body)
    apply_defaults(body, "apiextensions.k8s.io", "CustomResourceDefinition")
    return v.validate_builtin(
        body, old, "apiextensions.k8s.io", "CustomResourceDefinition"
    ) + v.validate_crd(body, old)


def test_a_valid_crd() -> None:
    assert check_crd(crd()) == []


def test_the_crd_name_is_plural_dot_group() -> None:
    body = crd()
    body["metadata"]["name"] = "widget.example.com"
    assert check_crd(body) == [
        C(
            "metadata.name",
            INVALID,
            'Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group',
        )
    ]


def test_crd_group_scope_and_versions() -> None:
    body = crd(
        group="example", scope="Global", versions=[{"name": "V1", "served": True, "storage": False}]
    )
    body["metadata"]["name"] = "widgets.example"
    assert check_crd(body) == [
        C(
            "spec.group",
            INVALID,
            'Invalid value: "example": should be a domain with at least one dot',
        ),
        C(
            "spec.scope",
            NOT_SUPPORTED,
            'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ),
        C("spec.versions[0].name", INVALID, f'Invalid value: "V1": {DNS1035_LABEL}'),
        C(
            "spec.versions[0].schema.openAPIV3Schema",
            REQUIRED,
            "Required value: schemas are required",
        ),
        C(
            "spec.versions",
            INVALID,
            'Invalid value: [{"name":"V1","served":true,"storage":false}]: must have exactly one version marked as storage version',
        ),
    ]


def test_crd_schemas_must_be_structural() -> None:
    schema = {
        "type": "array",
        "items": {"type": "object"},
        "properties": {"spec": {"properties": {"a": {}}}},
    }
    body = crd(
        versions=[
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
        ]
    )
    path = "spec.versions[0].schema.openAPIV3Schema"
    assert check_crd(body) == [
        C(
            f"{path}.properties[spec].properties[a].type",
            REQUIRED,
            "Required value: must not be empty for specified object fields",
        ),
        C(
            f"{path}.properties[spec].type",
            REQUIRED,
            "Required value: must not be empty for specified object fields",
        ),
        C(f"{path}.type", INVALID, 'Invalid value: "array": must be object at the root'),
    ]


def test_int_or_string_spellings_and_junctor_rules() -> None:
    schema = copy.deepcopy(WIDGET_SCHEMA)
    props = schema["properties"]["spec"]["properties"]
    props["a"] = {
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    }
    props["b"] = {
        "x-kubernetes-int-or-string": True,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+%?$"}],
    }
    props["c"] = {"type": "string", "anyOf": [{"type": "string", "description": "no"}]}
    body = crd(
        versions=[
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
        ]
    )
    path = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[c].anyOf[0]"
    assert check_crd(body) == [
        C(f"{path}.description", FORBIDDEN, "Forbidden: must be empty to be structural"),
        C(f"{path}.type", FORBIDDEN, "Forbidden: must be empty to be structural"),
    ]


def test_crd_names_are_required_after_defaulting() -> None:
    body = crd(names={"plural": "widgets"})
    assert check_crd(body) == [
        C("spec.names.singular", REQUIRED, "Required value"),
        C("spec.names.kind", REQUIRED, "Required value"),
        C("spec.names.listKind", REQUIRED, "Required value"),
    ]


def test_an_established_crd_keeps_its_scope_and_every_crd_its_group() -> None:
    old = crd()
    apply_defaults(old, "apiextensions.k8s.io", "CustomResourceDefinition")
    old["metadata"].update(uid="u", creationTimestamp="2025-01-01T00:00:00Z")
    old["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    assert check_crd(new, old) == [
        C("spec.scope", INVALID, 'Invalid value: "Cluster": field is immutable')
    ]


# =====================================================================================
# Robustness and the public surface
# =====================================================================================

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=12,
)
PLACES = [
    ("spec",),
    ("spec", "replicas"),
    ("spec", "selector"),
    ("spec", "strategy"),
    ("spec", "template"),
    ("spec", "template", "spec"),
    ("spec", "template", "spec", "containers"),
    ("spec", "template", "spec", "volumes"),
    ("metadata",),
    ("metadata", "labels"),
]


@given(st.sampled_from(PLACES), JSON)
@settings(max_examples=300, deadline=None)
def test_any_json_anywhere_is_reported_never_raised(place: tuple[str, ...], value: Any) -> None:
    body = deployment()
    target = body
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    decode(body, "apps", "Deployment")
    apply_defaults(body, "apps", "Deployment")
    v.validate_builtin(body, None, "apps", "Deployment")
    v.validate_builtin(body, copy.deepcopy(body), "apps", "Deployment")


@given(JSON)
@settings(max_examples=200, deadline=None)
def test_any_json_against_a_custom_schema_is_reported_never_raised(value: Any) -> None:
    body = widget(**({"extra": value, "size": value} if not isinstance(value, dict) else value))
    pruned = v.prune_custom(body, WIDGET_SCHEMA)
    v.default_custom(pruned, WIDGET_SCHEMA)
    v.validate_custom(pruned, WIDGET_SCHEMA)


def test_public_surface() -> None:
    assert v.__all__ == sorted(v.__all__)
    assert v.__all__ == [
        "DecodeReport",
        "Mismatch",
        "Quantity",
        "builtin_mismatches",
        "check_custom",
        "decode_check",
        "default_custom",
        "drop_unknown",
        "parse_quantity",
        "prune_custom",
        "pruned_paths",
        "validate_builtin",
        "validate_crd",
        "validate_custom",
        "validate_object_meta",
    ]


def test_check_custom_answers_as_an_apply_would() -> None:
    """Unknown fields refuse the typed patch (every one listed), before validation; defaults
    apply first, so a defaulted required field is no error."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size", "mode"],
                "properties": {
                    "size": {"type": "integer"},
                    "mode": {"type": "string", "default": "fast"},
                    "items": {"type": "array", "items": {"type": "object", "properties": {}}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        },
    }
    base = {"apiVersion": "g.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    assert v.check_custom({**base, "spec": {"size": 1, "free": {"any": [1]}}}, schema) is None
    assert v.check_custom({**base, "spec": {}}, schema) == (
        'Thing.g.example.com "t" is invalid: spec.size: Required value'
    )
    unknown = {**base, "spec": {"size": 1, "colour": "red", "items": [{"x": 1}]}}
    assert v.check_custom(unknown, schema) == (
        "failed to create typed patch object (/t; g.example.com/v1, Kind=Thing): errors:\n"
        "  .spec.colour: field not declared in schema\n"
        "  .spec.items[0].x: field not declared in schema"
    )


def test_a_schema_pattern_reads_as_gos_regexp_does() -> None:
    """kube-apiserver matches `pattern` with Go's regexp (RE2): `\\d` is ASCII digits only,
    and POSIX classes are classes — as CEL's `matches` reads them (one translation)."""
    from stackwright.localcluster.validation import check_custom

    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "pattern": "^\\d+$"},
                    "tag": {"type": "string", "pattern": "^[[:upper:]]+$"},
                },
            }
        },
    }

    def refusal(spec: dict[str, str]) -> str | None:
        obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
        return check_custom({**obj, "spec": spec}, schema)

    assert refusal({"code": "42", "tag": "ABC"}) is None
    assert "spec.code in body should match" in (refusal({"code": "\u0664\u0662"}) or "")
    assert "spec.tag in body should match" in (refusal({"tag": "abc"}) or "")
