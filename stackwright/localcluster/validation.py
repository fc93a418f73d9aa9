"""What kube-apiserver checks before it stores an object, in its words.

Three stages, each a pure function over plain JSON objects:

- decoding (`decode_check`, `drop_unknown`, in decoding.py and re-exported here): the
  checks the typed JSON decoder does — wrong JSON types become `json: cannot unmarshal …`
  (400 BadRequest), unknown fields are listed for `fieldValidation` Strict / Warn / Ignore;
- built-in validation (`validate_builtin`, `validate_object_meta`): the semantic rules of
  `pkg/apis/*/validation` — names, labels, required fields, ranges, selectors and the
  fields an update may not change — as `Cause`s with the API server's field paths and
  messages;
- custom resources (`validate_custom`, `prune_custom`, `default_custom`, `validate_crd`):
  apiextensions' structural pruning, defaulting and OpenAPI v3 schema validation, and the
  rules for CustomResourceDefinitions themselves.

Nothing here does I/O, and nothing mutates its inputs except `default_custom` (which says
so). Messages follow Kubernetes 1.33; where the real server's text cannot be reproduced
exactly the approximation is named next to the code. Known differences, by design:

- `x-kubernetes-validations` (CEL rules) are evaluated by celrules.py, except a rule that
  calls a function its interpreter does not implement (left to a real server);
- a Go value inside a message (`field.Invalid(path, someStruct, …)`) is shown as JSON, not
  as Go's `%#v` rendering, and the diffs the server appends to some Forbidden messages are
  left out;
- only validations a user meets in practice are implemented: volume plugins, Windows
  options, sysctls, topology spread and similar corners are accepted unchecked;
- admission plugins and cross-object checks (quota, the service CIDR, a Job's generated
  selector) belong to the caller.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import json
import math
import re
import urllib.parse
import zoneinfo
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from stackwright.lazy import lazy_module
from stackwright.localcluster import re2
from stackwright.localcluster.decoding import (
    DecodeReport,
    Mismatch,
    base64_error,
    builtin_mismatches,
    decode_check,
    deep_copy,
    drop_unknown,
    json_kind,
    number_literal,
    quantity,
)
from stackwright.localcluster.quantities import Quantity, parse_quantity
from stackwright.localcluster.schema import (
    Node,
    builtin_schemas,
)
from stackwright.localcluster.status import (
    Cause,
    forbidden,
    invalid_object,
    required,
    too_long,
)
from stackwright.localcluster.status import duplicate as _duplicate
from stackwright.localcluster.status import invalid as _invalid
from stackwright.localcluster.status import not_supported as _not_supported

if TYPE_CHECKING:
    from stackwright.localcluster import celrules
else:
    # CEL (~10 ms of imports) is loaded by the first schema with `x-kubernetes-validations`:
    # a program's built-in kinds, which `preview` and `up` check before they run, need none.
    celrules = lazy_module("stackwright.localcluster.celrules")

__all__ = [
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

Obj = dict[str, Any]

# Reasons status.py has no constructor for.
NOT_FOUND = "FieldValueNotFound"
TOO_MANY = "FieldValueTooMany"

FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"


def _sorted(value: Any) -> Any:
    """Objects with sorted keys, so a value reads the same whatever order it arrived in."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def invalid(path: str, value: Any, detail: str) -> Cause:
    return _invalid(path, _sorted(value), detail)


def duplicate(path: str, value: Any) -> Cause:
    return _duplicate(path, _sorted(value))


def not_supported(path: str, value: Any, supported: list[str]) -> Cause:
    return _not_supported(path, _sorted(value), supported)


def not_found(path: str, value: Any) -> Cause:
    return Cause(path, NOT_FOUND, f"Not found: {_show(value)}")


def _show(value: Any) -> str:
    """A value as status.py quotes it (strings quoted, the rest as compact JSON)."""
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(_sorted(value), separators=(",", ":"), default=str)


# =====================================================================================
# Names, labels and other string formats (k8s.io/apimachinery/pkg/util/validation)
# =====================================================================================


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_QUALIFIED_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"
_WILDCARD_FMT = "\\*\\." + _DNS1123_SUBDOMAIN_FMT

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)
_PERCENT_RE = re.compile(_PERCENT_FMT)
_WILDCARD_RE = re.compile(_WILDCARD_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")


def dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def wildcard_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _WILDCARD_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
                _WILDCARD_FMT,
                "*.example.com",
            )
        )
    return errs


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: label keys, annotation keys, finalizers, resource names."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, *_QUALIFIED_NAME_EXAMPLES)
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, *_QUALIFIED_NAME_EXAMPLES)
        )
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def config_map_key(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _CONFIG_KEY_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def port_name(value: str) -> list[str]:
    errs = []
    if len(value) > 15:
        errs.append(_max_len(15))
    if not _PORT_NAME_CHARSET_RE.fullmatch(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def port_number(value: int) -> list[str]:
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def percent(value: str) -> list[str]:
    if _PERCENT_RE.fullmatch(value):
        return []
    return [
        _regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            _PERCENT_FMT,
            "1%",
            "93%",
        )
    ]


def path_segment_name(value: str, prefix: bool = False) -> list[str]:
    """IsValidPathSegmentName: names that must only be usable in a URL path (RBAC, volumes)."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _mask_trailing_dash(name: str) -> str:
    # generateName prefixes may end in '-': apimachinery swaps the last two characters for
    # an 'a' before checking, exactly so.
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


NameRule = Callable[[str, bool], list[str]]


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    return path_segment_name(name, prefix)


_IP_EXAMPLE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _ip_causes(path: str, value: str) -> list[Cause]:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return [invalid(path, value, _IP_EXAMPLE)]
    return []


def _cidr_causes(path: str, value: str) -> list[Cause]:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [
            invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")
        ]
    return []


# =====================================================================================
# Small readers: JSON values as the Go structs see them (null and wrong types = zero)
# =====================================================================================


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _i(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _nonneg(value: Any, path: str) -> list[Cause]:
    number = _i(value)
    return [invalid(path, number, IS_NEGATIVE)] if number is not None and number < 0 else []


def _immutable(new: Any, old: Any, path: str) -> list[Cause]:
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


def _go_strings(values: Iterable[str]) -> str:
    return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"


# =====================================================================================
# Object metadata
# =====================================================================================

_ANNOTATIONS_LIMIT = 256 * 1024
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def _label_causes(labels: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for key, value in _d(labels).items():
        causes.extend(invalid(path, key, m) for m in qualified_name(key))
        text = _s(value)
        causes.extend(invalid(path, text, m) for m in label_value(text))
    return causes


def _annotation_causes(annotations: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    total = 0
    for key, value in _d(annotations).items():
        # The key rule is the label-key rule, except that case does not matter.
        causes.extend(invalid(path, key, m) for m in qualified_name(key.lower()))
        total += len(key) + len(_s(value))
    if total > _ANNOTATIONS_LIMIT:
        causes.append(too_long(path, "", _ANNOTATIONS_LIMIT))
    return causes


def _owner_reference_causes(refs: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    controller = ""
    for ref in _l(refs):
        ref = _d(ref)
        api_version = _s(ref.get("apiVersion"))
        parts = api_version.split("/")
        version = parts[-1] if len(parts) <= 2 else ""
        if not version:
            causes.append(invalid(path + ".apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not _s(ref.get(key)):
                causes.append(invalid(f"{path}.{key}", _s(ref.get(key)), "must not be empty"))
        if ref.get("controller") is True:
            current = f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}"
            if controller:
                causes.append(
                    invalid(
                        path,
                        refs,
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {controller} and {current}',
                    )
                )
            else:
                controller = current
    return causes


def _finalizer_causes(finalizers: Any, path: str, *, kube: bool) -> list[Cause]:
    causes: list[Cause] = []
    names = [_s(f) for f in _l(finalizers)]
    for index, name in enumerate(names):
        causes.extend(invalid(path, name, m) for m in qualified_name(name))
        if kube and "/" not in name and name not in _STANDARD_FINALIZERS:
            causes.append(
                invalid(
                    f"{path}[{index}]",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    if "orphan" in names and "foregroundDeletion" in names:
        causes.append(
            invalid(path, names, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    return causes


def validate_object_meta(
    obj: dict[str, Any],
    *,
    name_rule: NameRule = name_is_dns_subdomain,
    namespaced: bool | None = None,
    kube_finalizers: bool = False,
) -> list[Cause]:
    """ValidateObjectMeta: the name, namespace, labels, annotations, owners and finalizers.

    `namespaced=None` (the default, for callers that settled the namespace themselves)
    checks a namespace only when one is given. Custom resources use the defaults: a DNS
    subdomain name and apimachinery's finalizer rule.
    """
    meta = _d(obj.get("metadata"))
    causes: list[Cause] = []
    generate_name = _s(meta.get("generateName"))
    if generate_name:
        causes.extend(
            invalid("metadata.generateName", generate_name, m)
            for m in name_rule(generate_name, True)
        )
    name = _s(meta.get("name"))
    if not name:
        if not generate_name:  # the caller turns generateName into a name before storing
            causes.append(required("metadata.name", "name or generateName is required"))
    else:
        causes.extend(invalid("metadata.name", name, m) for m in name_rule(name, False))
    namespace = _s(meta.get("namespace"))
    if namespaced and not namespace:
        causes.append(required("metadata.namespace"))
    elif namespace and namespaced is not False:
        causes.extend(invalid("metadata.namespace", namespace, m) for m in dns1123_label(namespace))
    causes.extend(_nonneg(meta.get("generation"), "metadata.generation"))
    causes.extend(_label_causes(meta.get("labels"), "metadata.labels"))
    causes.extend(_annotation_causes(meta.get("annotations"), "metadata.annotations"))
    causes.extend(_owner_reference_causes(meta.get("ownerReferences"), "metadata.ownerReferences"))
    causes.extend(
        _finalizer_causes(meta.get("finalizers"), "metadata.finalizers", kube=kube_finalizers)
    )
    return causes


def _object_meta_update(obj: Obj, old: Obj) -> list[Cause]:
    """ValidateObjectMetaUpdate: identity fields never change; generation never goes back."""
    meta, old_meta = _d(obj.get("metadata")), _d(old.get("metadata"))
    causes: list[Cause] = []
    if old_meta.get("deletionTimestamp"):
        added = [f for f in _l(meta.get("finalizers")) if f not in _l(old_meta.get("finalizers"))]
        if added:
            causes.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {_go_strings(sorted(set(added)))}",
                )
            )
    new_generation, old_generation = (
        _i(meta.get("generation")) or 0,
        _i(old_meta.get("generation")) or 0,
    )
    if new_generation < old_generation:
        causes.append(invalid("metadata.generation", new_generation, "must not be decremented"))
    for key in (
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ):
        new_value, old_value = meta.get(key), old_meta.get(key)
        if (new_value or None) != (old_value or None):
            shown = (
                new_value
                if new_value is not None
                else ("" if key in ("name", "namespace", "uid") else None)
            )
            causes.append(invalid(f"metadata.{key}", shown, FIELD_IMMUTABLE))
    return causes


# =====================================================================================
# Label selectors
# =====================================================================================

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _selector_causes(selector: Any, path: str) -> list[Cause]:
    """ValidateLabelSelector (label values in selectors checked strictly)."""
    if not isinstance(selector, dict):
        return []
    causes = _label_causes(selector.get("matchLabels"), path + ".matchLabels")
    for index, expr in enumerate(_l(selector.get("matchExpressions"))):
        expr = _d(expr)
        here = f"{path}.matchExpressions[{index}]"
        operator = _s(expr.get("operator"))
        values = [_s(v) for v in _l(expr.get("values"))]
        if operator in ("In", "NotIn"):
            if not values:
                causes.append(
                    required(
                        here + ".values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    forbidden(
                        here + ".values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            causes.append(invalid(here + ".operator", operator, "not a valid selector operator"))
        key = _s(expr.get("key"))
        causes.extend(invalid(here + ".key", key, m) for m in qualified_name(key))
        for vi, value in enumerate(values):
            causes.extend(invalid(f"{here}.values[{vi}]", value, m) for m in label_value(value))
    return causes


def _selector_usable(selector: Any) -> bool:
    """LabelSelectorAsSelector succeeds: the selector can be matched at all."""
    return isinstance(selector, dict) and not _selector_causes(selector, "")


def _selector_empty(selector: Any) -> bool:
    selector = _d(selector)
    return not _d(selector.get("matchLabels")) and not _l(selector.get("matchExpressions"))


def _selector_matches(selector: Any, labels: Any) -> bool:
    selector, labels = _d(selector), _d(labels)
    for key, value in _d(selector.get("matchLabels")).items():
        if key not in labels or labels[key] != value:
            return False
    for expr in _l(selector.get("matchExpressions")):
        expr = _d(expr)
        key, operator, values = _s(expr.get("key")), expr.get("operator"), _l(expr.get("values"))
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _map_selector_matches(selector: Any, labels: Any) -> bool:
    """A map selector (Service, ReplicationController): every pair present."""
    labels = _d(labels)
    return all(labels.get(k) == v for k, v in _d(selector).items())


# =====================================================================================
# Resources (cpu, memory, …) and quantities
# =====================================================================================

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = _STANDARD_CONTAINER_RESOURCES | frozenset(
    {
        "requests.cpu", "requests.memory", "requests.ephemeral-storage", "requests.storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage",
        "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
        "persistentvolumeclaims", "storage", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
_INTEGER_RESOURCES = frozenset(
    {
        "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
        "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-") or name.startswith("requests.hugepages-")


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _quantity_value_causes(name: str, value: Any, path: str) -> list[Cause]:
    """ValidateResourceQuantityValue: not negative, whole for countable resources."""
    qty = quantity(value)
    if qty is None:
        return []  # the decoder already refused it
    causes: list[Cause] = []
    if qty.value < 0:
        causes.append(invalid(path, qty.canonical(), IS_NEGATIVE))
    if (name in _INTEGER_RESOURCES or not _is_native(name)) and math.ceil(qty.value * 1000) % 1000:
        causes.append(invalid(path, qty.canonical(), "must be an integer"))
    return causes


def _resource_name_causes(name: str, path: str, *, container: bool) -> list[Cause]:
    causes = [invalid(path, name, m) for m in qualified_name(name)]
    if causes:
        return causes
    if "/" not in name:
        if not (name in _STANDARD_RESOURCES or _is_hugepages(name)):
            causes.append(
                invalid(path, name, "must be a standard resource type or fully qualified")
            )
        if container and not (
            name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-")
        ):
            causes.append(invalid(path, name, "must be a standard resource for containers"))
    return causes


def _resources_causes(resources: Any, path: str) -> list[Cause]:
    """ValidateResourceRequirements for a container."""
    resources = _d(resources)
    limits, requests = _d(resources.get("limits")), _d(resources.get("requests"))
    causes: list[Cause] = []
    for name, value in limits.items():
        here = f"{path}.limits[{name}]"
        causes.extend(_resource_name_causes(name, here, container=True))
        causes.extend(_quantity_value_causes(name, value, here))
    for name, value in requests.items():
        here = f"{path}.requests[{name}]"
        causes.extend(_resource_name_causes(name, here, container=True))
        causes.extend(_quantity_value_causes(name, value, here))
        request = quantity(value)
        if name in limits:
            limit = quantity(limits[name])
            if request is None or limit is None:
                continue
            if request.value != limit.value and not _overcommit_allowed(name):
                causes.append(
                    invalid(
                        path + ".requests",
                        request.canonical(),
                        f"must be equal to {name} limit of {limit.canonical()}",
                    )
                )
            elif request.value > limit.value:
                causes.append(
                    invalid(
                        path + ".requests",
                        request.canonical(),
                        f"must be less than or equal to {name} limit of {limit.canonical()}",
                    )
                )
        elif not _overcommit_allowed(name):
            causes.append(
                required(path + ".limits", "Limit must be set for non overcommitable resources")
            )
    return causes


# =====================================================================================
# Pods and pod templates (pkg/apis/core/validation)
# =====================================================================================

# Volume sources in the order ValidateVolumes checks them, with the path segment its
# "may not specify more than 1 volume type" error uses (two are misspelt upstream).
_VOLUME_SOURCES = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
    ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"),
    ("fc", "fc"), ("flexVolume", "flexVolume"), ("configMap", "configMap"), ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"), ("storageos", "storageos"),
    ("projected", "projected"), ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"),
    ("image", "image"),
)  # fmt: skip
_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_CLAIM_SOURCES = frozenset({"persistentVolumeClaim", "ephemeral"})


def _mode_causes(value: Any, path: str) -> list[Cause]:
    mode = _i(value)
    return [invalid(path, mode, _FILE_MODE)] if mode is not None and not 0 <= mode <= 0o777 else []


def _no_backsteps(target: str, path: str) -> list[Cause]:
    return [invalid(path, target, "must not contain '..'")] if ".." in target.split("/") else []


def _local_descending_path(target: str, path: str) -> list[Cause]:
    causes = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    return causes + _no_backsteps(target, path)


def _local_non_reserved_path(target: str, path: str) -> list[Cause]:
    causes = _local_descending_path(target, path)
    if target.startswith(".."):
        causes.append(invalid(path, target, "must not start with '..'"))
    return causes


def _key_to_path_causes(items: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for index, item in enumerate(_l(items)):
        item = _d(item)
        here = f"{path}[{index}]"
        if not _s(item.get("key")):
            causes.append(required(here + ".key"))
        target = _s(item.get("path"))
        if not target:
            causes.append(required(here + ".path"))
        causes.extend(_local_non_reserved_path(target, here + ".path"))
        causes.extend(_mode_causes(item.get("mode"), here + ".mode"))
    return causes


def _volume_source_causes(source: str, spec: Obj, path: str) -> list[Cause]:
    here = f"{path}.{source}"
    if source == "secret":
        causes = [] if _s(spec.get("secretName")) else [required(here + ".secretName")]
        return (
            causes
            + _mode_causes(spec.get("defaultMode"), here + ".defaultMode")
            + _key_to_path_causes(spec.get("items"), here + ".items")
        )
    if source == "configMap":
        causes = [] if _s(spec.get("name")) else [required(here + ".name")]
        return (
            causes
            + _mode_causes(spec.get("defaultMode"), here + ".defaultMode")
            + _key_to_path_causes(spec.get("items"), here + ".items")
        )
    if source == "persistentVolumeClaim":
        return [] if _s(spec.get("claimName")) else [required(here + ".claimName")]
    if source == "hostPath":
        target = _s(spec.get("path"))
        if not target:
            return [required(here + ".path")]
        causes = _no_backsteps(target, here + ".path")
        kind = spec.get("type")
        supported = [
            "",
            "BlockDevice",
            "CharDevice",
            "Directory",
            "DirectoryOrCreate",
            "File",
            "FileOrCreate",
            "Socket",
        ]
        if kind is not None and kind not in supported:
            causes.append(not_supported(here + ".type", kind, supported))
        return causes
    if source == "emptyDir":
        limit = quantity(spec.get("sizeLimit"))
        if limit is not None and limit.value < 0:
            return [
                forbidden(here + ".sizeLimit", "SizeLimit field must be a valid resource quantity")
            ]
        return []
    if source == "nfs":
        causes = [] if _s(spec.get("server")) else [required(here + ".server")]
        target = _s(spec.get("path"))
        if not target:
            causes.append(required(here + ".path"))
        if not target.startswith("/"):
            causes.append(invalid(here + ".path", target, "must be an absolute path"))
        return causes
    if source in ("downwardAPI", "projected"):
        return _mode_causes(spec.get("defaultMode"), here + ".defaultMode")
    return []


def _volume_causes(volumes: Any, path: str) -> tuple[dict[str, str], list[Cause]]:
    """ValidateVolumes: each volume's name and its one source; returns name → source kind."""
    causes: list[Cause] = []
    known: dict[str, str] = {}
    for index, volume in enumerate(_l(volumes)):
        volume = _d(volume)
        here = f"{path}[{index}]"
        found: list[Cause] = []
        sources = 0
        kind = ""
        for key, shown in _VOLUME_SOURCES:
            spec = volume.get(key)
            if spec is None:
                continue
            if sources:
                found.append(
                    forbidden(f"{here}.{shown}", "may not specify more than 1 volume type")
                )
                continue
            sources, kind = 1, key
            found.extend(_volume_source_causes(key, _d(spec), here))
        if not sources:
            found.append(required(here, "must specify a volume type"))
        name = _s(volume.get("name"))
        if not name:
            found.append(required(here + ".name"))
        else:
            found.extend(invalid(here + ".name", name, m) for m in dns1123_label(name))
        if name in known:
            found.append(duplicate(here + ".name", name))
        if not found:
            known[name] = kind
        causes.extend(found)
    return known, causes


_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def _container_port_causes(ports: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for index, port in enumerate(_l(ports)):
        port = _d(port)
        here = f"{path}[{index}]"
        name = _s(port.get("name"))
        if name:
            messages = port_name(name)
            if messages:
                causes.extend(invalid(here + ".name", name, m) for m in messages)
            elif name in names:
                causes.append(duplicate(here + ".name", name))
            else:
                names.add(name)
        number = _i(port.get("containerPort")) or 0
        if number == 0:
            causes.append(required(here + ".containerPort"))
        else:
            causes.extend(invalid(here + ".containerPort", number, m) for m in port_number(number))
        host = _i(port.get("hostPort")) or 0
        if host:
            causes.extend(invalid(here + ".hostPort", host, m) for m in port_number(host))
        protocol = _s(port.get("protocol"))
        if not protocol:
            causes.append(required(here + ".protocol"))
        elif protocol not in _PROTOCOLS:
            causes.append(not_supported(here + ".protocol", protocol, _PROTOCOLS))
    return causes


_ENV_FIELD_PATHS = [
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
    "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
]  # fmt: skip
_ENV_RESOURCE_PATHS = [
    "limits.cpu", "limits.ephemeral-storage", "limits.memory",
    "requests.cpu", "requests.ephemeral-storage", "requests.memory",
]  # fmt: skip
_RELAXED_ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def _env_name_causes(name: str, path: str) -> list[Cause]:
    # RelaxedEnvironmentVariableValidation is on by default in 1.33.
    causes: list[Cause] = []
    if not name:
        causes.append(invalid(path, name, "environment variable name must be non-empty"))
    if any(not (32 <= ord(c) < 127) or c == "=" for c in name):
        causes.append(invalid(path, name, _RELAXED_ENV_NAME))
    return causes


def _key_selector_causes(ref: Obj, path: str) -> list[Cause]:
    name = _s(ref.get("name"))
    causes = [invalid(path + ".name", name, m) for m in dns1123_subdomain(name)]
    key = _s(ref.get("key"))
    if not key:
        causes.append(required(path + ".key"))
    else:
        causes.extend(invalid(path + ".key", key, m) for m in config_map_key(key))
    return causes


def _env_causes(env: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for index, var in enumerate(_l(env)):
        var = _d(var)
        here = f"{path}[{index}]"
        name = _s(var.get("name"))
        if not name:
            causes.append(required(here + ".name"))
        else:
            causes.extend(_env_name_causes(name, here + ".name"))
        source = var.get("valueFrom")
        if not isinstance(source, dict):
            continue
        there = here + ".valueFrom"
        sources = 0
        field_ref = source.get("fieldRef")
        if isinstance(field_ref, dict):
            sources += 1
            if not _s(field_ref.get("apiVersion")):
                causes.append(required(there + ".fieldRef.apiVersion"))
            elif not _s(field_ref.get("fieldPath")):
                causes.append(required(there + ".fieldRef.fieldPath"))
            else:
                target = _s(field_ref.get("fieldPath"))
                subscripted = re.fullmatch(r"(metadata\.(?:labels|annotations))\['(.*)'\]", target)
                if subscripted:
                    key = subscripted.group(2)
                    key = key.lower() if subscripted.group(1).endswith("annotations") else key
                    causes.extend(invalid(there + ".fieldRef", key, m) for m in qualified_name(key))
                elif target not in _ENV_FIELD_PATHS:
                    causes.append(
                        not_supported(there + ".fieldRef.fieldPath", target, _ENV_FIELD_PATHS)
                    )
        resource_ref = source.get("resourceFieldRef")
        if isinstance(resource_ref, dict):
            sources += 1
            resource = _s(resource_ref.get("resource"))
            if not resource:
                causes.append(required(there + ".resourceFieldRef.resource"))
            elif resource not in _ENV_RESOURCE_PATHS and not re.match(
                r"(requests|limits)\.hugepages-", resource
            ):
                causes.append(
                    not_supported(
                        there + ".resourceFieldRef.resource", resource, _ENV_RESOURCE_PATHS
                    )
                )
        for key in ("configMapKeyRef", "secretKeyRef"):
            ref = source.get(key)
            if isinstance(ref, dict):
                sources += 1
                causes.extend(_key_selector_causes(ref, f"{there}.{key}"))
        if sources == 0:
            causes.append(
                invalid(
                    there,
                    "",
                    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                )
            )
        elif _s(var.get("value")):
            causes.append(invalid(there, "", "may not be specified when `value` is not empty"))
        elif sources > 1:
            causes.append(
                invalid(there, "", "may not have more than one field specified at a time")
            )
    return causes


def _env_from_causes(env_from: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for index, source in enumerate(_l(env_from)):
        source = _d(source)
        here = f"{path}[{index}]"
        prefix = _s(source.get("prefix"))
        if prefix:
            causes.extend(_env_name_causes(prefix, here + ".prefix"))
        sources = 0
        for key in ("configMapRef", "secretRef"):
            ref = source.get(key)
            if isinstance(ref, dict):
                sources += 1
                name = _s(ref.get("name"))
                if not name:
                    causes.append(required(f"{here}.{key}.name"))
                else:
                    causes.extend(
                        invalid(f"{here}.{key}.name", name, m)
                        for m in name_is_dns_subdomain(name, True)
                    )
        if sources == 0:
            causes.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif sources > 1:
            causes.append(invalid(path, "", "may not have more than one field specified at a time"))
    return causes


def _volume_mount_causes(mounts: Any, volumes: Mapping[str, str], path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for index, mount in enumerate(_l(mounts)):
        mount = _d(mount)
        here = f"{path}[{index}]"
        name = _s(mount.get("name"))
        if not name:
            causes.append(required(here + ".name"))
        if name not in volumes:
            causes.append(not_found(here + ".name", name))
        target = _s(mount.get("mountPath"))
        if not target:
            causes.append(required(here + ".mountPath"))
        if target in seen:
            causes.append(invalid(here + ".mountPath", target, "must be unique"))
        seen.add(target)
        sub_path = _s(mount.get("subPath"))
        if sub_path:  # upstream names the list, not the item, for these two
            causes.extend(_local_descending_path(sub_path, path + ".subPath"))
        expr = _s(mount.get("subPathExpr"))
        if expr:
            if sub_path:
                causes.append(
                    invalid(
                        here + ".subPathExpr",
                        expr,
                        "subPathExpr and subPath are mutually exclusive",
                    )
                )
            causes.extend(_local_descending_path(expr, path + ".subPathExpr"))
    return causes


def _port_num_or_name(value: Any, path: str) -> list[Cause]:
    if isinstance(value, str):
        return [invalid(path, value, m) for m in port_name(value)]
    number = _i(value) or 0
    return [invalid(path, number, m) for m in port_number(number)]


def _handler_causes(handler: Obj, path: str, *, probe: bool) -> list[Cause]:
    causes: list[Cause] = []
    kinds = (
        ("exec", "httpGet", "tcpSocket", "grpc")
        if probe
        else ("exec", "httpGet", "tcpSocket", "sleep")
    )
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if not isinstance(action, dict):
            continue
        if count:
            causes.append(forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        here = f"{path}.{kind}"
        if kind == "exec" and not _l(action.get("command")):
            causes.append(required(here + ".command"))
        elif kind == "httpGet":
            if not _s(action.get("path")):
                causes.append(required(here + ".path"))
            causes.extend(_port_num_or_name(action.get("port"), here + ".port"))
            scheme = _s(action.get("scheme"))
            if scheme not in ("HTTP", "HTTPS"):
                causes.append(not_supported(here + ".scheme", scheme, ["HTTP", "HTTPS"]))
        elif kind == "tcpSocket":
            causes.extend(_port_num_or_name(action.get("port"), here + ".port"))
        elif kind == "grpc":
            causes.extend(_port_num_or_name(_i(action.get("port")) or 0, here + ".port"))
    if count == 0:
        causes.append(required(path, "must specify a handler type"))
    return causes


def _probe_causes(probe: Any, path: str, kind: str) -> list[Cause]:
    if not isinstance(probe, dict):
        return []
    causes = _handler_causes(probe, path, probe=True)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        causes.extend(_nonneg(probe.get(key), f"{path}.{key}"))
    grace = _i(probe.get("terminationGracePeriodSeconds"))
    if grace is not None and grace <= 0:
        causes.append(
            invalid(path + ".terminationGracePeriodSeconds", grace, "must be greater than 0")
        )
    if kind in ("liveness", "startup"):
        threshold = _i(probe.get("successThreshold")) or 0
        if threshold != 1:
            causes.append(invalid(path + ".successThreshold", threshold, "must be 1"))
    elif probe.get("terminationGracePeriodSeconds") is not None:
        causes.append(
            invalid(
                path + ".terminationGracePeriodSeconds",
                probe.get("terminationGracePeriodSeconds"),
                "must not be set for readinessProbes",
            )
        )
    return causes


_ID_RANGE = "must be between 0 and 4294967295, inclusive"


def _id_causes(context: Obj, path: str, keys: Iterable[str]) -> list[Cause]:
    causes: list[Cause] = []
    for key in keys:
        value = _i(context.get(key))
        if value is not None and not 0 <= value <= 0xFFFFFFFF:
            causes.append(invalid(f"{path}.{key}", value, _ID_RANGE))
    return causes


def _container_common(container: Obj, volumes: Mapping[str, str], path: str) -> list[Cause]:
    """validateContainerCommon: what every container, init or regular, must get right."""
    causes: list[Cause] = []
    name = _s(container.get("name"))
    if not name:
        causes.append(required(path + ".name"))
    else:
        causes.extend(invalid(path + ".name", name, m) for m in dns1123_label(name))
    if not _s(container.get("image")):
        causes.append(required(path + ".image"))
    policy = _s(container.get("terminationMessagePolicy"))
    if not policy:
        causes.append(required(path + ".terminationMessagePolicy"))
    elif policy not in ("File", "FallbackToLogsOnError"):
        causes.append(
            not_supported(
                path + ".terminationMessagePolicy", policy, ["File", "FallbackToLogsOnError"]
            )
        )
    causes.extend(_container_port_causes(container.get("ports"), path + ".ports"))
    causes.extend(_env_causes(container.get("env"), path + ".env"))
    causes.extend(_env_from_causes(container.get("envFrom"), path + ".envFrom"))
    causes.extend(
        _volume_mount_causes(container.get("volumeMounts"), volumes, path + ".volumeMounts")
    )
    pull = _s(container.get("imagePullPolicy"))
    if not pull:
        causes.append(required(path + ".imagePullPolicy"))
    elif pull not in ("Always", "IfNotPresent", "Never"):
        causes.append(
            not_supported(path + ".imagePullPolicy", pull, ["Always", "IfNotPresent", "Never"])
        )
    causes.extend(_resources_causes(container.get("resources"), path + ".resources"))
    context = container.get("securityContext")
    if isinstance(context, dict):
        here = path + ".securityContext"
        causes.extend(_id_causes(context, here, ("runAsUser", "runAsGroup")))
        if context.get("allowPrivilegeEscalation") is False and context.get("privileged") is True:
            causes.append(
                invalid(
                    here,
                    context,
                    "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                )
            )
    return causes


def _containers_causes(containers: Any, volumes: Mapping[str, str], path: str) -> list[Cause]:
    items = _l(containers)
    if not items:
        return [required(path)]
    causes: list[Cause] = []
    names: set[str] = set()
    for index, container in enumerate(items):
        container = _d(container)
        here = f"{path}[{index}]"
        causes.extend(_container_common(container, volumes, here))
        name = _s(container.get("name"))
        if name in names:
            causes.append(duplicate(here + ".name", name))
        else:
            names.add(name)
        lifecycle = container.get("lifecycle")
        if isinstance(lifecycle, dict):
            for hook in ("postStart", "preStop"):
                if isinstance(lifecycle.get(hook), dict):
                    causes.extend(
                        _handler_causes(lifecycle[hook], f"{here}.lifecycle.{hook}", probe=False)
                    )
        for kind in ("liveness", "readiness", "startup"):
            causes.extend(_probe_causes(container.get(kind + "Probe"), f"{here}.{kind}Probe", kind))
        if container.get("restartPolicy") is not None:
            causes.append(
                forbidden(here + ".restartPolicy", "may not be set for non-init containers")
            )
    causes.extend(_host_port_conflicts(items, path))
    return causes


def _host_port_conflicts(containers: list[Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for ci, container in enumerate(containers):
        for pi, port in enumerate(_l(_d(container).get("ports"))):
            port = _d(port)
            host = _i(port.get("hostPort")) or 0
            if not host:
                continue
            key = f"{_s(port.get('protocol'))}/{_s(port.get('hostIP'))}/{host}"
            if key in seen:
                causes.append(duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return causes


def _init_containers_causes(
    init: Any, regular: Any, volumes: Mapping[str, str], path: str
) -> list[Cause]:
    causes: list[Cause] = []
    names = {_s(_d(c).get("name")) for c in _l(regular)}
    for index, container in enumerate(_l(init)):
        container = _d(container)
        here = f"{path}[{index}]"
        causes.extend(_container_common(container, volumes, here))
        policy = container.get("restartPolicy")
        sidecar = policy == "Always"
        if policy is not None and not sidecar:
            causes.append(not_supported(here + ".restartPolicy", policy, ["Always"]))
        name = _s(container.get("name"))
        if name in names:
            causes.append(duplicate(here + ".name", name))
        elif name:
            names.add(name)
        causes.extend(_host_port_conflicts([container], path))
        for kind in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if container.get(kind) is None:
                continue
            if not sidecar:
                causes.append(
                    forbidden(
                        f"{here}.{kind}",
                        "may not be set for init containers without restartPolicy=Always",
                    )
                )
            elif kind != "lifecycle":
                causes.extend(
                    _probe_causes(container[kind], f"{here}.{kind}", kind.removesuffix("Probe"))
                )
        if _l(container.get("resizePolicy")):
            causes.append(
                invalid(
                    here + ".resizePolicy",
                    container["resizePolicy"],
                    "must not be set for init containers",
                )
            )
    return causes


def _toleration_causes(tolerations: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
    for index, toleration in enumerate(_l(tolerations)):
        toleration = _d(toleration)
        here = f"{path}[{index}]"
        key, operator = _s(toleration.get("key")), _s(toleration.get("operator"))
        value, effect = _s(toleration.get("value")), _s(toleration.get("effect"))
        if key:
            causes.extend(invalid(here + ".key", key, m) for m in qualified_name(key))
        if not key and operator != "Exists":
            causes.append(
                invalid(
                    here + ".operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(
                invalid(
                    here + ".effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            messages = label_value(value)
            if messages:
                causes.append(invalid(here + ".operator", value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                causes.append(
                    invalid(
                        here + ".operator",
                        toleration,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            causes.append(not_supported(here + ".operator", operator, ["Equal", "Exists"]))
        if effect and effect not in effects:
            causes.append(not_supported(here + ".effect", effect, effects))
    return causes


_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_RESTART_POLICIES = ["Always", "OnFailure", "Never"]


def _pod_spec_causes(spec: Any, path: str, *, is_pod: bool) -> list[Cause]:
    """ValidatePodSpec (plus the pod-only checks when `is_pod`)."""
    spec = _d(spec)
    causes: list[Cause] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        causes.append(required(path + ".terminationGracePeriodSeconds"))
    volumes, volume_causes = _volume_causes(spec.get("volumes"), path + ".volumes")
    causes.extend(volume_causes)
    causes.extend(_containers_causes(spec.get("containers"), volumes, path + ".containers"))
    causes.extend(
        _init_containers_causes(
            spec.get("initContainers"), spec.get("containers"), volumes, path + ".initContainers"
        )
    )
    if spec.get("hostNetwork") is True:
        for ci, container in enumerate(_l(spec.get("containers"))):
            for pi, port in enumerate(_l(_d(container).get("ports"))):
                port = _d(port)
                host, target = _i(port.get("hostPort")) or 0, _i(port.get("containerPort")) or 0
                if (is_pod or host != 0) and host != target:
                    causes.append(
                        invalid(
                            f"{path}.containers[{ci}].ports[{pi}].hostPort",
                            host,
                            "must match `containerPort` when `hostNetwork` is true",
                        )
                    )
    restart = _s(spec.get("restartPolicy"))
    if not restart:
        causes.append(required(path + ".restartPolicy"))
    elif restart not in _RESTART_POLICIES:
        causes.append(not_supported(path + ".restartPolicy", restart, _RESTART_POLICIES))
    dns = _s(spec.get("dnsPolicy"))
    if not dns:
        causes.append(required(path + ".dnsPolicy"))
    elif dns not in _DNS_POLICIES:
        causes.append(not_supported(path + ".dnsPolicy", dns, _DNS_POLICIES))
    causes.extend(_label_causes(spec.get("nodeSelector"), path + ".nodeSelector"))
    context = spec.get("securityContext")
    if isinstance(context, dict):
        causes.extend(
            _id_causes(context, path + ".securityContext", ("runAsUser", "runAsGroup", "fsGroup"))
        )
        for index, gid in enumerate(_l(context.get("supplementalGroups"))):
            number = _i(gid)
            if number is not None and not 0 <= number <= 0xFFFFFFFF:
                causes.append(
                    invalid(
                        f"{path}.securityContext.supplementalGroups[{index}]", number, _ID_RANGE
                    )
                )
    for index, secret in enumerate(_l(spec.get("imagePullSecrets"))):
        if isinstance(secret, dict) and set(secret) - {"name"}:
            causes.append(
                invalid(f"{path}.imagePullSecrets[{index}]", secret, "only name may be set")
            )
    if dns == "None":
        config = spec.get("dnsConfig")
        if not isinstance(config, dict):
            causes.append(
                required(path + ".dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")
            )
        elif not _l(config.get("nameservers")):
            causes.append(
                required(
                    path + ".dnsConfig.nameservers",
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )
            )
    for key, rule in (("serviceAccountName", dns1123_subdomain), ("nodeName", dns1123_subdomain)):
        value = _s(spec.get(key))
        if value:
            causes.extend(invalid(f"{path}.{key}", value, m) for m in rule(value))
    deadline = _i(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        causes.append(
            invalid(
                path + ".activeDeadlineSeconds",
                deadline,
                "must be between 1 and 2147483647, inclusive",
            )
        )
    for key in ("hostname", "subdomain"):
        value = _s(spec.get(key))
        if value:
            causes.extend(invalid(f"{path}.{key}", value, m) for m in dns1123_label(value))
    causes.extend(_toleration_causes(spec.get("tolerations"), path + ".tolerations"))
    priority_class = _s(spec.get("priorityClassName"))
    if priority_class:
        causes.extend(
            invalid(path + ".priorityClassName", priority_class, m)
            for m in dns1123_subdomain(priority_class)
        )
    if is_pod:
        for key in ("containers", "initContainers"):
            for index, container in enumerate(_l(spec.get(key))):
                image = _s(_d(container).get("image"))
                if image != image.strip():
                    causes.append(
                        invalid(
                            f"{path}.{key}[{index}].image",
                            image,
                            "must not have leading or trailing whitespace",
                        )
                    )
    return causes


def _pod_template_causes(template: Any, path: str) -> list[Cause]:
    """ValidatePodTemplateSpec."""
    template = _d(template)
    meta = _d(template.get("metadata"))
    causes = _label_causes(meta.get("labels"), path + ".labels")
    causes.extend(_annotation_causes(meta.get("annotations"), path + ".annotations"))
    spec = _d(template.get("spec"))
    causes.extend(_pod_spec_causes(spec, path + ".spec", is_pod=False))
    if _l(spec.get("ephemeralContainers")):
        causes.append(
            forbidden(
                path + ".spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return causes


def _pod_create(obj: Obj) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _pod_spec_causes(spec, "spec", is_pod=True)
    if _l(spec.get("ephemeralContainers")):
        causes.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if _s(spec.get("nodeName")) and _l(spec.get("schedulingGates")):
        causes.append(
            forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")
        )
    return causes


_UPDATABLE_POD_FIELDS = ",".join(
    [
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        "`spec.containers[*].resources` (for CPU/memory only)",
    ]
)


def _pod_update(obj: Obj, old: Obj) -> list[Cause]:
    """ValidatePodUpdate: images, a shorter deadline and new tolerations; nothing else."""
    spec, old_spec = _d(obj.get("spec")), _d(old.get("spec"))
    causes = _pod_spec_causes(spec, "spec", is_pod=True)
    for key in ("containers", "initContainers"):
        new_list, old_list = _l(spec.get(key)), _l(old_spec.get(key))
        if len(new_list) != len(old_list):
            causes.append(forbidden(f"spec.{key}", "pod updates may not add or remove containers"))
            return causes
    deadline, old_deadline = (
        _i(spec.get("activeDeadlineSeconds")),
        _i(old_spec.get("activeDeadlineSeconds")),
    )
    if deadline is not None:
        if not 0 <= deadline <= 2**31 - 1:
            causes.append(
                invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    "must be between 0 and 2147483647, inclusive",
                )
            )
            return causes
        if old_deadline is not None and old_deadline < deadline:
            causes.append(
                invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    "must be less than or equal to previous value",
                )
            )
            return causes
    elif old_deadline is not None:
        causes.append(
            invalid(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )
    new_tolerations = [_strip_nulls(t) for t in _l(spec.get("tolerations"))]
    for toleration in _l(old_spec.get("tolerations")):
        wanted = {k: v for k, v in _strip_nulls(toleration).items() if k != "tolerationSeconds"}
        if not any(
            {k: v for k, v in t.items() if k != "tolerationSeconds"} == wanted
            for t in new_tolerations
        ):
            causes.append(
                forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            )
            break
    munged, reference = _strip_nulls(spec), _strip_nulls(old_spec)
    for key in ("containers", "initContainers"):
        for new_c, old_c in zip(_l(munged.get(key)), _l(reference.get(key)), strict=False):
            if isinstance(new_c, dict) and isinstance(old_c, dict):
                new_c["image"] = old_c.get("image")
                if key == "containers":
                    new_c["resources"] = _munge_cpu_memory(
                        _d(new_c.get("resources")), _d(old_c.get("resources"))
                    )
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        munged.pop(key, None)
        if key in reference:
            munged[key] = reference[key]
    old_grace = _i(reference.get("terminationGracePeriodSeconds"))
    if old_grace is not None and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if munged != reference:
        causes.append(
            forbidden(
                "spec", f"pod updates may not change fields other than {_UPDATABLE_POD_FIELDS}"
            )
        )
    return causes


#: What an ephemeral container may not set: validateEphemeralContainers allows a list of
#: fields, so that nothing a pod relies on (ports, probes, resources, hooks) runs in one.
_EPHEMERAL_FORBIDDEN = (
    "lifecycle", "livenessProbe", "ports", "readinessProbe", "resizePolicy", "resources",
    "restartPolicy", "startupProbe",
)  # fmt: skip


def validate_ephemeral_containers_update(obj: Obj, old: Obj) -> list[Cause]:
    """ValidatePodEphemeralContainersUpdate, for pods/NAME/ephemeralcontainers (`kubectl debug`).

    New debug containers are checked as containers, named uniquely among all the pod's, with
    only the fields an ephemeral container may have; those already there may be neither
    changed nor removed.
    """
    causes = _object_meta_update(obj, old)
    spec, old_spec = _d(obj.get("spec")), _d(old.get("spec"))
    volumes, _ = _volume_causes(spec.get("volumes"), "spec.volumes")
    regular = {
        _s(_d(c).get("name")) for key in ("containers", "initContainers") for c in _l(spec.get(key))
    }
    path = "spec.ephemeralContainers"
    named: dict[str, Any] = {}
    for index, container in enumerate(_l(spec.get("ephemeralContainers"))):
        container, here = _d(container), f"{path}[{index}]"
        causes.extend(_container_common(container, volumes, here))
        name = _s(container.get("name"))
        if name in regular or name in named:
            causes.append(duplicate(here + ".name", name))
        named[name] = container
        causes.extend(
            forbidden(f"{here}.{key}", "cannot be set for an Ephemeral Container")
            for key in _EPHEMERAL_FORBIDDEN
            if container.get(key)
        )
        target = _s(container.get("targetContainerName"))
        if target and target not in regular:
            causes.append(not_found(here + ".targetContainerName", target))
    for existing in _l(old_spec.get("ephemeralContainers")):
        name = _s(_d(existing).get("name"))
        if name not in named:
            causes.append(
                forbidden(path, f'existing ephemeral containers "{name}" may not be removed')
            )
        elif _strip_nulls(named[name]) != _strip_nulls(existing):
            causes.append(
                forbidden(
                    f"{path}[{name}]", f'existing ephemeral containers "{name}" may not be changed'
                )
            )
    return causes


def _munge_cpu_memory(new: Obj, old: Obj) -> Obj:
    """Resources with cpu and memory taken from `old` (InPlacePodVerticalScaling, beta in 1.33)."""
    result = dict(new)
    for part in ("limits", "requests"):
        old_list = _d(old.get(part))
        if part not in old:
            if part in result:
                result[part] = {
                    k: v for k, v in _d(result[part]).items() if k not in ("cpu", "memory")
                } or None
                if result[part] is None:
                    del result[part]
            continue
        merged = {k: v for k, v in _d(result.get(part)).items() if k not in ("cpu", "memory")}
        merged.update({k: v for k, v in old_list.items() if k in ("cpu", "memory")})
        result[part] = merged
    return result


def _strip_nulls(value: Any) -> Any:
    """A deep copy without null members: how Go's semantic equality sees omitted fields."""
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


# --- workloads (pkg/apis/apps/validation, pkg/apis/batch/validation) ------------------


def _template_selector_causes(
    selector: Any, template: Any, path: str, *, bad_selector: str | None, full_template: bool = True
) -> list[Cause]:
    """The selector/template pairing every controller checks.

    A missing selector matches nothing (so a Required selector also fails the match, as on
    a real server); an unusable one is reported with `bad_selector` and the template is not
    matched.
    """
    labels = _d(_d(_d(template).get("metadata")).get("labels"))
    causes: list[Cause] = []
    if selector is not None and not _selector_usable(selector):
        if bad_selector is not None:
            message = f"Invalid value: {_show(selector)}" + (
                f": {bad_selector}" if bad_selector else ""
            )
            causes.append(Cause("spec.selector", "FieldValueInvalid", message))
        return causes
    if selector is None or (
        not _selector_empty(selector) and not _selector_matches(selector, labels)
    ):
        causes.append(
            invalid(
                path + ".metadata.labels", labels, "`selector` does not match template `labels`"
            )
        )
    if full_template:
        causes.extend(_pod_template_causes(template, path))
    return causes


def _int_or_percent(value: Any, path: str) -> list[Cause]:
    """ValidatePositiveIntOrPercent."""
    if isinstance(value, str):
        return [invalid(path, value, m) for m in percent(value)]
    number = _i(value)
    if number is not None:
        return _nonneg(number, path)
    return [invalid(path, value, "must be an integer or percentage (e.g '5%')")]


def _int_or_percent_value(value: Any) -> int:
    if isinstance(value, str):
        return int(value[:-1]) if not percent(value) else 0
    return _i(value) or 0


def _over_100_percent(value: Any, path: str) -> list[Cause]:
    if isinstance(value, str) and not percent(value) and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _replica_set_spec(spec: Obj, *, what: str) -> list[Cause]:
    """The part of ValidateDeploymentSpec / ValidateReplicaSetSpec they share."""
    causes = _nonneg(spec.get("replicas"), "spec.replicas")
    selector = spec.get("selector")
    if selector is None:
        causes.append(required("spec.selector"))
    else:
        causes.extend(_selector_causes(selector, "spec.selector"))
        if _selector_empty(selector):
            # Upstream says "deployment" for ReplicaSets too.
            causes.append(
                invalid("spec.selector", selector, "empty selector is invalid for deployment")
            )
    template = spec.get("template")
    causes.extend(
        _template_selector_causes(
            selector, template, "spec.template", bad_selector="invalid label selector"
        )
    )
    template_spec = _d(_d(template).get("spec"))
    restart = _s(template_spec.get("restartPolicy"))
    if restart != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if template_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {what} is not Supported",
            )
        )
    return causes


def _deployment(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _replica_set_spec(spec, what="ReplicaSet")
    strategy = _d(spec.get("strategy"))
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            causes.append(
                forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            causes.append(
                required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")
            )
        else:
            path = "spec.strategy.rollingUpdate"
            unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
            causes.extend(_int_or_percent(unavailable, path + ".maxUnavailable"))
            causes.extend(_int_or_percent(surge, path + ".maxSurge"))
            if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
                causes.append(
                    invalid(
                        path + ".maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0"
                    )
                )
            causes.extend(_over_100_percent(unavailable, path + ".maxUnavailable"))
    else:
        causes.append(not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))
    causes.extend(_nonneg(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    causes.extend(_nonneg(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
    deadline = _i(spec.get("progressDeadlineSeconds"))
    if deadline is not None:
        causes.extend(_nonneg(deadline, "spec.progressDeadlineSeconds"))
        if deadline <= (_i(spec.get("minReadySeconds")) or 0):
            causes.append(
                invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    if old is not None:  # apps/v1 strategy: the selector is fixed at creation
        causes.extend(
            _immutable(spec.get("selector"), _d(old.get("spec")).get("selector"), "spec.selector")
        )
    return causes


def _replica_set(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _replica_set_spec(spec, what="ReplicaSet")
    causes.extend(_nonneg(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    if old is not None:
        causes.extend(
            _immutable(spec.get("selector"), _d(old.get("spec")).get("selector"), "spec.selector")
        )
    return causes


_STATEFULSET_MUTABLE = (
    "replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds",
)  # fmt: skip


def _stateful_set(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    policy = _s(spec.get("podManagementPolicy"))
    if not policy:
        causes.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        causes.append(
            invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = _d(spec.get("updateStrategy"))
    kind = _s(strategy.get("type"))
    rolling = strategy.get("rollingUpdate")
    if not kind:
        causes.append(required("spec.updateStrategy"))
    elif kind == "OnDelete":
        if rolling is not None:
            causes.append(
                invalid(
                    "spec.updateStrategy.rollingUpdate",
                    rolling,
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif kind == "RollingUpdate":
        if isinstance(rolling, dict):
            path = "spec.updateStrategy.rollingUpdate"
            causes.extend(_nonneg(rolling.get("partition"), path + ".partition"))
            if rolling.get("maxUnavailable") is not None:
                value = rolling["maxUnavailable"]
                causes.extend(_int_or_percent(value, path + ".maxUnavailable"))
                if _int_or_percent_value(value) == 0:
                    causes.append(invalid(path + ".maxUnavailable", value, "cannot be 0"))
                causes.extend(_over_100_percent(value, path + ".maxUnavailable"))
    else:
        causes.append(
            invalid("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'")
        )
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            value = _s(retention.get(key))
            if value not in ("Retain", "Delete"):
                causes.append(
                    not_supported(
                        f"spec.persistentVolumeClaimRetentionPolicy.{key}",
                        value,
                        ["Retain", "Delete"],
                    )
                )
    causes.extend(_nonneg(spec.get("replicas"), "spec.replicas"))
    causes.extend(_nonneg(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    if isinstance(spec.get("ordinals"), dict):
        causes.extend(_nonneg(spec["ordinals"].get("start"), "spec.ordinals.start"))
    selector = spec.get("selector")
    if selector is None:
        causes.append(required("spec.selector"))
    else:
        causes.extend(_selector_causes(selector, "spec.selector"))
        if _selector_empty(selector):
            causes.append(
                invalid("spec.selector", selector, "empty selector is invalid for statefulset")
            )
    template = _d(spec.get("template"))
    # Upstream checks only the template's labels and annotations here (a TODO of theirs).
    causes.extend(
        _template_selector_causes(
            selector, template, "spec.template", bad_selector="", full_template=False
        )
    )
    meta = _d(template.get("metadata"))
    causes.extend(_label_causes(meta.get("labels"), "spec.template.labels"))
    causes.extend(_annotation_causes(meta.get("annotations"), "spec.template.annotations"))
    template_spec = _d(template.get("spec"))
    restart = _s(template_spec.get("restartPolicy"))
    if restart != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if template_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    if old is not None:
        new_rest = {k: v for k, v in _strip_nulls(spec).items() if k not in _STATEFULSET_MUTABLE}
        old_rest = {
            k: v
            for k, v in _strip_nulls(_d(old.get("spec"))).items()
            if k not in _STATEFULSET_MUTABLE
        }
        if new_rest != old_rest:
            causes.append(
                forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
                )
            )
    return causes


def _daemon_set(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    selector = spec.get("selector")
    causes = _selector_causes(selector, "spec.selector")
    labels = _d(_d(_d(spec.get("template")).get("metadata")).get("labels"))
    if (selector is None or _selector_usable(selector)) and not (
        selector is not None and (_selector_empty(selector) or _selector_matches(selector, labels))
    ):
        causes.append(
            invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    if selector is not None and _selector_empty(selector):
        causes.append(invalid("spec.selector", selector, "empty selector is invalid for daemonset"))
    causes.extend(_pod_template_causes(spec.get("template"), "spec.template"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    restart = _s(template_spec.get("restartPolicy"))
    if restart != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if template_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in DaemonSet is not Supported",
            )
        )
    causes.extend(_nonneg(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    causes.extend(_nonneg(spec.get("templateGeneration"), "spec.templateGeneration"))
    strategy = _d(spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        path = "spec.updateStrategy.rollingUpdate"
        if not isinstance(rolling, dict):
            causes.append(required(path))
        else:
            unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
            causes.extend(_int_or_percent(unavailable, path + ".maxUnavailable"))
            causes.extend(_int_or_percent(surge, path + ".maxSurge"))
            causes.extend(_over_100_percent(unavailable, path + ".maxUnavailable"))
            causes.extend(_over_100_percent(surge, path + ".maxSurge"))
            has_unavailable, has_surge = (
                _int_or_percent_value(unavailable) != 0,
                _int_or_percent_value(surge) != 0,
            )
            if has_unavailable and has_surge:
                causes.append(
                    invalid(
                        path + ".maxSurge", surge, "may not be set when maxUnavailable is non-zero"
                    )
                )
            elif not has_unavailable and not has_surge:
                causes.append(required(path + ".maxUnavailable", "cannot be 0 when maxSurge is 0"))
    elif kind != "OnDelete":
        causes.append(not_supported("spec.updateStrategy", strategy, ["RollingUpdate", "OnDelete"]))
    causes.extend(_nonneg(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
    if old is not None:
        causes.extend(
            _immutable(spec.get("selector"), _d(old.get("spec")).get("selector"), "spec.selector")
        )
    return causes


def _controller_revision(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = [] if obj.get("data") is not None else [required("data", "data is mandatory")]
    causes.extend(_nonneg(obj.get("revision"), "revision"))
    if old is not None:
        causes.extend(_immutable(obj.get("data"), old.get("data"), "data"))
    return causes


def _job_spec(spec: Obj, path: str) -> list[Cause]:
    """validateJobSpec: what Jobs and CronJob job templates share."""
    causes: list[Cause] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit"):
        causes.extend(_nonneg(spec.get(key), f"{path}.{key}"))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        causes.append(not_supported(path + ".completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed" and spec.get("completions") is None:
        causes.append(required(path + ".completions", "when completion mode is Indexed"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in ("TerminatingOrFailed", "Failed"):
        causes.append(
            not_supported(
                path + ".podReplacementPolicy", replacement, ["TerminatingOrFailed", "Failed"]
            )
        )
    causes.extend(_pod_template_causes(spec.get("template"), path + ".template"))
    restart = _s(_d(_d(spec.get("template")).get("spec")).get("restartPolicy"))
    if restart not in ("OnFailure", "Never"):
        causes.append(
            not_supported(path + ".template.spec.restartPolicy", restart, ["OnFailure", "Never"])
        )
    return causes


def _job(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _job_spec(spec, "spec")
    selector = spec.get("selector")
    manual = spec.get("manualSelector") is True
    if selector is None:
        # The server generates the selector (from the uid) unless manualSelector is set;
        # a caller that has not generated it yet is not failed for it.
        if manual:
            causes.append(required("spec.selector"))
    else:
        causes.extend(_selector_causes(selector, "spec.selector"))
        labels = _d(_d(_d(spec.get("template")).get("metadata")).get("labels"))
        if (
            _selector_usable(selector)
            and not _selector_empty(selector)
            and not _selector_matches(selector, labels)
        ):
            causes.append(
                invalid(
                    "spec.template.metadata.labels",
                    labels,
                    "`selector` does not match template `labels`",
                )
            )
    if old is not None:
        old_spec = _d(old.get("spec"))
        completions, old_completions = spec.get("completions"), old_spec.get("completions")
        elastic = (
            spec.get("completionMode") == "Indexed"
            and completions == spec.get("parallelism")
            and old_completions == old_spec.get("parallelism")
        )
        if not elastic:
            causes.extend(_immutable(completions, old_completions, "spec.completions"))
        causes.extend(_immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector"))
        causes.extend(_job_template_update(spec, old_spec))
        for key in (
            "completionMode",
            "podFailurePolicy",
            "backoffLimitPerIndex",
            "managedBy",
            "successPolicy",
        ):
            causes.extend(
                _immutable(
                    _strip_nulls(spec.get(key)), _strip_nulls(old_spec.get(key)), f"spec.{key}"
                )
            )
    return causes


def _job_template_update(spec: Obj, old_spec: Obj) -> list[Cause]:
    """A Job's pod template is fixed, except scheduling directives while it is suspended."""
    new_template, old_template = (
        _strip_nulls(_d(spec.get("template"))),
        _strip_nulls(_d(old_spec.get("template"))),
    )
    if old_spec.get("suspend") is True and spec.get("suspend") is True:
        for template in (new_template, old_template):
            meta = template.get("metadata")
            if isinstance(meta, dict):
                meta.pop("labels", None)
                meta.pop("annotations", None)
            pod_spec = template.get("spec")
            if isinstance(pod_spec, dict):
                for key in ("nodeSelector", "tolerations", "affinity", "schedulingGates"):
                    pod_spec.pop(key, None)
    if new_template != old_template:
        return [invalid("spec.template", spec.get("template"), FIELD_IMMUTABLE)]
    return []


def _cron_job(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    name = _s(_d(obj.get("metadata")).get("name"))
    if len(name) > 52:  # job names get an 11-character suffix and must stay DNS labels
        causes.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    schedule = _s(spec.get("schedule"))
    if not schedule:
        causes.append(required("spec.schedule"))
    else:
        error = _cron_error(schedule)
        if error:
            causes.append(invalid("spec.schedule", schedule, error))
        if "TZ" in schedule:
            causes.append(
                invalid(
                    "spec.schedule",
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    zone = spec.get("timeZone")
    if isinstance(zone, str):
        if not zone:
            causes.append(
                invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")
            )
        elif zone.lower() == "local":
            causes.append(
                invalid(
                    "spec.timeZone",
                    zone,
                    "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                )
            )
        elif not _known_zone(zone):
            causes.append(invalid("spec.timeZone", zone, f"unknown time zone {zone}"))
    causes.extend(_nonneg(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds"))
    policy = _s(spec.get("concurrencyPolicy"))
    if not policy:
        causes.append(required("spec.concurrencyPolicy"))
    elif policy not in ("Allow", "Forbid", "Replace"):
        causes.append(
            not_supported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"])
        )
    job_spec = _d(_d(spec.get("jobTemplate")).get("spec"))
    causes.extend(_job_spec(job_spec, "spec.jobTemplate.spec"))
    if job_spec.get("selector") is not None:
        causes.append(
            invalid(
                "spec.jobTemplate.spec.selector",
                job_spec["selector"],
                "`selector` will be auto-generated",
            )
        )
    if job_spec.get("manualSelector") is True:
        causes.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"]))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        causes.extend(_nonneg(spec.get(key), f"spec.{key}"))
    return causes


@functools.cache
def _known_zone(zone: str) -> bool:
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


# Cron fields of robfig/cron/v3's standard parser: (minimum, maximum, names).
_CRON_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (
        1,
        12,
        {
            m: i + 1
            for i, m in enumerate(
                ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
            )
        },
    ),
    (0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}),
)
_CRON_DESCRIPTORS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)


def _cron_error(spec: str) -> str:
    """The error robfig/cron/v3 ParseStandard gives for `spec`, or "" when it parses."""
    if spec.startswith(("TZ=", "CRON_TZ=")):
        zone, _, spec = spec.partition(" ")
        zone = zone.split("=", 1)[1]
        if not _known_zone(zone):
            return f"provided bad location {zone}: unknown time zone {zone}"
        spec = spec.strip()
    if spec.startswith("@"):
        if spec in _CRON_DESCRIPTORS:
            return ""
        if spec.startswith("@every "):
            duration = spec[len("@every ") :]
            if re.fullmatch(r"(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+", duration):
                return ""
            return f'failed to parse duration {spec}: time: invalid duration "{duration}"'
        return f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, (low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        for expr in text.split(","):
            error = _cron_range_error(expr, low, high, names)
            if error:
                return error
    return ""


def _cron_int(text: str, names: Mapping[str, int]) -> tuple[int, str]:
    if text.lower() in names:
        return names[text.lower()], ""
    if not re.fullmatch(r"[+-]?\d+", text):
        return 0, f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
    number = int(text)
    if number < 0:
        return 0, f"negative number ({number}) not allowed: {text}"
    return number, ""


def _cron_range_error(expr: str, low: int, high: int, names: Mapping[str, int]) -> str:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start, error = _cron_int(low_high[0], names)
        if error:
            return error
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end, error = _cron_int(low_high[1], names)
            if error:
                return error
        else:
            return f"too many hyphens: {expr}"
    if len(range_and_step) == 2:
        step, error = _cron_int(range_and_step[1], {})
        if error:
            return error
        if len(low_high) == 1 and low_high[0] not in ("*", "?"):
            end = high  # "N/step" means "N-max/step"
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    else:
        step = 1
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return ""


def _replication_controller(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _nonneg(spec.get("minReadySeconds"), "spec.minReadySeconds")
    selector = _d(spec.get("selector"))
    if not selector:
        causes.append(required("spec.selector"))
    causes.extend(_nonneg(spec.get("replicas"), "spec.replicas"))
    template = spec.get("template")
    if not isinstance(template, dict):
        causes.append(required("spec.template"))
        return causes
    labels = _d(_d(template.get("metadata")).get("labels"))
    if selector and not _map_selector_matches(selector, labels):
        causes.append(
            invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    causes.extend(_pod_template_causes(template, "spec.template"))
    template_spec = _d(template.get("spec"))
    restart = _s(template_spec.get("restartPolicy"))
    if restart != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if template_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicationController is not Supported",
            )
        )
    return causes


# --- core: services, config, storage ------------------------------------------------

_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_IP_FAMILIES = ["IPv4", "IPv6"]
_IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]


def _headless(spec: Obj) -> bool:
    ips = _l(spec.get("clusterIPs"))
    return len(ips) == 1 and ips[0] == "None"


def _service(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    kind = _s(spec.get("type"))
    ports = _l(spec.get("ports"))
    headless = _headless(spec)
    causes: list[Cause] = []
    if old is not None:
        causes.extend(_service_ip_updates(spec, _d(old.get("spec"))))
        old_spec = _d(old.get("spec"))
        both_balanced = old_spec.get("type") == "LoadBalancer" and kind == "LoadBalancer"
        if both_balanced and spec.get("loadBalancerClass") != old_spec.get("loadBalancerClass"):
            causes.append(
                invalid(
                    "spec.loadBalancerClass",
                    spec.get("loadBalancerClass"),
                    "may not change once set",
                )
            )
    if not ports and not headless and kind != "ExternalName":
        causes.append(required("spec.ports"))
    cluster_ips = [_s(ip) for ip in _l(spec.get("clusterIPs"))]
    if kind in ("LoadBalancer", "NodePort"):
        for index, port in enumerate(ports):
            if kind == "LoadBalancer" and _i(_d(port).get("port")) == 10250:
                causes.append(
                    invalid(
                        f"spec.ports[{index}]",
                        10250,
                        "may not expose port 10250 externally since it is used by kubelet",
                    )
                )
        if headless:
            causes.append(
                invalid(
                    "spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"
                )
            )
    elif kind == "ExternalName":
        if cluster_ips:
            causes.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if _l(spec.get("ipFamilies")):
            causes.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            causes.append(
                forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services")
            )
        cname = _s(spec.get("externalName")).removesuffix(".")
        if cname:
            causes.extend(invalid("spec.externalName", cname, m) for m in dns1123_subdomain(cname))
        else:
            causes.append(required("spec.externalName"))
    names: set[str] = set()
    for index, port in enumerate(ports):
        causes.extend(_service_port(_d(port), len(ports) > 1, names, f"spec.ports[{index}]"))
    if spec.get("selector") is not None:
        causes.extend(_label_causes(spec.get("selector"), "spec.selector"))
    affinity = _s(spec.get("sessionAffinity"))
    if not affinity:
        causes.append(required("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        causes.append(not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    elif affinity == "ClientIP":
        config = _d(_d(spec.get("sessionAffinityConfig")).get("clientIP"))
        timeout = _i(config.get("timeoutSeconds"))
        detail = "when session affinity type is ClientIP"
        if not isinstance(spec.get("sessionAffinityConfig"), dict):
            causes.append(required("spec.sessionAffinityConfig", detail))
        elif not config:
            causes.append(required("spec.sessionAffinityConfig.clientIP", detail))
        elif timeout is None:
            causes.append(required("spec.sessionAffinityConfig.clientIP.timeoutSeconds", detail))
        elif not 0 < timeout <= 86400:
            causes.append(
                invalid(
                    "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    timeout,
                    "must be greater than 0 and less than 86400",
                )
            )
    elif spec.get("sessionAffinityConfig") is not None:
        causes.append(
            forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")
        )
    if kind != "ExternalName":
        causes.extend(_service_ip_fields(spec))
    for index, ip in enumerate(_l(spec.get("externalIPs"))):
        causes.extend(_ip_causes(f"spec.externalIPs[{index}]", _s(ip)))
    if not kind:
        causes.append(required("spec.type"))
    elif kind not in _SERVICE_TYPES:
        causes.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ClusterIP":
        for index, port in enumerate(ports):
            if _i(_d(port).get("nodePort")):
                causes.append(
                    forbidden(
                        f"spec.ports[{index}].nodePort",
                        "may not be used when `type` is 'ClusterIP'",
                    )
                )
    seen_node_ports: set[tuple[str, int]] = set()
    seen_ports: set[tuple[str, int]] = set()
    for index, port in enumerate(ports):
        port = _d(port)
        protocol = _s(port.get("protocol"))
        node_port = _i(port.get("nodePort")) or 0
        if node_port:
            if (protocol, node_port) in seen_node_ports:
                causes.append(duplicate(f"spec.ports[{index}].nodePort", node_port))
            seen_node_ports.add((protocol, node_port))
        key = (protocol, _i(port.get("port")) or 0)
        if key in seen_ports:
            causes.append(duplicate(f"spec.ports[{index}]", {"port": key[1], "protocol": protocol}))
        seen_ports.add(key)
    ranges = _l(spec.get("loadBalancerSourceRanges"))
    if ranges:
        if kind != "LoadBalancer":
            causes.append(
                forbidden(
                    "spec.LoadBalancerSourceRanges",
                    "may only be used when `type` is 'LoadBalancer'",
                )
            )
        for index, cidr in enumerate(ranges):
            causes.extend(_cidr_causes(f"spec.LoadBalancerSourceRanges[{index}]", _s(cidr).strip()))
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        causes.append(
            forbidden(
                "spec.allocateLoadBalancerNodePorts",
                "may only be used when `type` is 'LoadBalancer'",
            )
        )
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        causes.append(required("allocateLoadBalancerNodePorts"))  # sic: upstream drops the "spec."
    if kind != "LoadBalancer" and spec.get("loadBalancerClass") is not None:
        causes.append(
            forbidden("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'")
        )
    external = kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(_l(spec.get("externalIPs")))
    )
    policy = _s(spec.get("externalTrafficPolicy"))
    if not external:
        if policy:
            causes.append(
                invalid(
                    "spec.externalTrafficPolicy",
                    policy,
                    "may only be set for externally-accessible services",
                )
            )
    elif not policy:
        causes.append(required("spec.externalTrafficPolicy"))
    elif policy not in ("Cluster", "Local"):
        causes.append(not_supported("spec.externalTrafficPolicy", policy, ["Cluster", "Local"]))
    internal = spec.get("internalTrafficPolicy")
    if internal is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        causes.append(required("spec.internalTrafficPolicy"))
    elif internal is not None and internal not in ("Cluster", "Local"):
        causes.append(not_supported("spec.internalTrafficPolicy", internal, ["Cluster", "Local"]))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        causes.append(not_supported("spec.trafficDistribution", distribution, ["PreferClose"]))
    return causes


def _service_port(port: Obj, require_name: bool, names: set[str], path: str) -> list[Cause]:
    causes: list[Cause] = []
    name = _s(port.get("name"))
    if require_name and not name:
        causes.append(required(path + ".name"))
    elif name:
        causes.extend(invalid(path + ".name", name, m) for m in dns1123_label(name))
        if name in names:
            causes.append(duplicate(path + ".name", name))
        else:
            names.add(name)
    number = _i(port.get("port")) or 0
    causes.extend(invalid(path + ".port", number, m) for m in port_number(number))
    protocol = _s(port.get("protocol"))
    if not protocol:
        causes.append(required(path + ".protocol"))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(path + ".protocol", protocol, _PROTOCOLS))
    causes.extend(_port_num_or_name(port.get("targetPort"), path + ".targetPort"))
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        causes.extend(
            invalid(path + ".appProtocol", app_protocol, m) for m in qualified_name(app_protocol)
        )
    return causes


def _service_ip_fields(spec: Obj) -> list[Cause]:
    """ValidateServiceClusterIPsRelatedFields."""
    causes: list[Cause] = []
    cluster_ip = _s(spec.get("clusterIP"))
    cluster_ips = [_s(ip) for ip in _l(spec.get("clusterIPs"))]
    if cluster_ip:
        if not cluster_ips:
            causes.append(required("spec.clusterIPs"))
        elif cluster_ips[0] != cluster_ip:
            causes.append(
                invalid("spec.clusterIPs", cluster_ips, "first value must match `clusterIP`")
            )
    elif cluster_ips:
        causes.append(
            invalid(
                "spec.clusterIPs", cluster_ips, "must be empty when `clusterIP` is not specified"
            )
        )
    seen: set[str] = set()
    for index, family in enumerate(_l(spec.get("ipFamilies"))):
        if family not in _IP_FAMILIES:
            causes.append(not_supported(f"spec.ipFamilies[{index}]", family, _IP_FAMILIES))
        if family in seen:
            causes.append(duplicate(f"spec.ipFamilies[{index}]", family))
        seen.add(_s(family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _IP_FAMILY_POLICIES:
        causes.append(not_supported("spec.ipFamilyPolicy", policy, _IP_FAMILY_POLICIES))
    bad = False
    for index, ip in enumerate(cluster_ips):
        if index == 0 and ip == "None":
            if len(cluster_ips) > 1:
                bad = True
                causes.append(
                    invalid(
                        "spec.clusterIPs", cluster_ips, "'None' must be the first and only value"
                    )
                )
            continue
        found = _ip_causes(f"spec.clusterIPs[{index}]", ip)
        bad = bad or bool(found)
        causes.extend(found)
    if len(cluster_ips) > 2:
        causes.append(invalid("spec.clusterIPs", cluster_ips, "may only hold up to 2 values"))
    if bad:
        return causes
    if len(cluster_ips) > 1:
        versions = {ipaddress.ip_address(ip).version for ip in cluster_ips}
        if len(versions) != len(cluster_ips):
            causes.append(
                invalid(
                    "spec.clusterIPs",
                    cluster_ips,
                    "may specify no more than one IP for each IP family",
                )
            )
    families = _l(spec.get("ipFamilies"))
    if not _headless(spec):
        for index, ip in enumerate(cluster_ips[: len(families)]):
            version = ipaddress.ip_address(ip).version
            if families[index] == "IPv4" and version == 6:
                causes.append(
                    invalid(
                        f"spec.clusterIPs[{index}]",
                        ip,
                        f"expected an IPv4 value as indicated by `ipFamilies[{index}]`",
                    )
                )
            if families[index] == "IPv6" and version == 4:
                causes.append(
                    invalid(
                        f"spec.clusterIPs[{index}]",
                        ip,
                        f"expected an IPv6 value as indicated by `ipFamilies[{index}]`",
                    )
                )
    return causes


def _service_ip_updates(spec: Obj, old_spec: Obj) -> list[Cause]:
    """validateUpgradeDowngradeClusterIPs: an allocated cluster IP stays."""
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    if _headless(spec) and _headless(old_spec):
        return []
    new_ips, old_ips = _l(spec.get("clusterIPs")), _l(old_spec.get("clusterIPs"))
    causes: list[Cause] = []
    if len(old_ips) == len(new_ips):
        for index, ip in enumerate(old_ips):
            if ip != new_ips[index]:
                causes.append(
                    invalid(f"spec.clusterIPs[{index}]", new_ips, "may not change once set")
                )
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            causes.append(
                invalid("spec.clusterIPs[0]", new_ips, "primary clusterIP can not be unset")
            )
        elif new_ips[0] != old_ips[0]:
            causes.append(invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
        if len(new_ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            causes.append(
                invalid(
                    "spec.ipFamilyPolicy",
                    spec.get("ipFamilyPolicy"),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                )
            )
    elif old_ips and new_ips[0] != old_ips[0]:
        causes.append(invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
    return causes


_MAX_SECRET_SIZE = 1024 * 1024


def _config_map(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    data, binary = _d(obj.get("data")), _d(obj.get("binaryData"))
    total = 0
    for key, value in data.items():
        causes.extend(invalid(f"data[{key}]", key, m) for m in config_map_key(key))
        if key in binary:
            causes.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(_s(value).encode())
    for key, value in binary.items():
        causes.extend(invalid(f"binaryData[{key}]", key, m) for m in config_map_key(key))
        total += len(_s(value)) * 3 // 4
    if total > _MAX_SECRET_SIZE:
        causes.append(too_long("", "", _MAX_SECRET_SIZE))
    if old is not None and old.get("immutable") is True:
        causes.extend(_immutable_data(obj, old, ("data", "binaryData")))
    return causes


def _immutable_data(obj: Obj, old: Obj, keys: Iterable[str]) -> list[Cause]:
    detail = "field is immutable when `immutable` is set"
    causes = [] if obj.get("immutable") is True else [forbidden("immutable", detail)]
    for key in keys:
        if (obj.get(key) or {}) != (old.get(key) or {}):
            causes.append(forbidden(key, detail))
    return causes


# Keys each well-known Secret type must carry.
_SECRET_TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


#: The types whose key kube-apiserver decodes as a JSON object (a map[string]interface{}).
_DOCKER_CONFIGS = frozenset({"kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"})

#: Go's encoding/json words for the syntax errors Python's json module names.
_GO_SYNTAX = {
    "Expecting value": "looking for beginning of value",
    "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
    "Expecting ':' delimiter": "after object key",
    "Extra data": "after top-level value",
}


def _not_a_json_object(encoded: Any) -> str | None:
    """Why a base64 value is no JSON object, as Go's json.Unmarshal says it; None if it is
    one (or null, which Unmarshal takes)."""
    try:
        text = base64.b64decode(_s(encoded)).decode("utf-8", "replace")
    except ValueError:
        return None  # not base64: the decoder refused it before validation
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if not text[exc.pos :].strip():
            return "unexpected end of JSON input"
        char = text[exc.pos]
        quoted = "'\\''" if char == "'" else f"'{char}'"
        return f"invalid character {quoted} {_GO_SYNTAX.get(exc.msg, exc.msg.lower())}"
    if value is None or isinstance(value, dict):
        return None
    return (
        f"json: cannot unmarshal {json_kind(value)} into Go value of type map[string]interface {{}}"
    )


def _secret(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    data = _d(obj.get("data"))
    total = 0
    for key, value in data.items():
        causes.extend(invalid(f"data[{key}]", key, m) for m in config_map_key(key))
        total += len(_s(value)) * 3 // 4
    if total > _MAX_SECRET_SIZE:
        causes.append(too_long("data", "", _MAX_SECRET_SIZE))
    kind = _s(obj.get("type"))
    if kind == "kubernetes.io/service-account-token":
        annotations = _d(_d(obj.get("metadata")).get("annotations"))
        if not _s(annotations.get("kubernetes.io/service-account.name")):
            causes.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            causes.extend([required("data[username]"), required("data[password]")])
    elif kind in _SECRET_TYPE_KEYS:
        for key in _SECRET_TYPE_KEYS[kind]:
            if key not in data or (kind == "kubernetes.io/ssh-auth" and not data[key]):
                causes.append(required(f"data[{key}]"))
                if kind != "kubernetes.io/tls":
                    break
            elif kind in _DOCKER_CONFIGS and (problem := _not_a_json_object(data[key])):
                # kube-apiserver redacts the value: a pull secret holds registry credentials.
                causes.append(invalid(f"data[{key}]", "<secret contents redacted>", problem))
    if old is not None:
        causes.extend(_immutable(obj.get("type"), old.get("type"), "type"))
        if old.get("immutable") is True:
            causes.extend(_immutable_data(obj, old, ("data",)))
    return causes


def _namespace(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    for finalizer in _l(_d(obj.get("spec")).get("finalizers")):
        name = _s(finalizer)
        causes.extend(invalid("spec.finalizers", name, m) for m in qualified_name(name))
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            causes.append(
                invalid(
                    "spec.finalizers",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return causes


_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_VOLUME_MODES = ["Block", "Filesystem"]


def _claim_spec(spec: Obj, path: str) -> list[Cause]:
    """ValidatePersistentVolumeClaimSpec."""
    causes: list[Cause] = []
    modes = [_s(m) for m in _l(spec.get("accessModes"))]
    if not modes:
        causes.append(required(path + ".accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        causes.extend(_selector_causes(spec.get("selector"), path + ".selector"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(not_supported(path + ".accessModes", mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(
        m != "ReadWriteOncePod" and m in _ACCESS_MODES for m in modes
    ):
        causes.append(
            forbidden(path + ".accessModes", "may not use ReadWriteOncePod with other access modes")
        )
    storage_path = path + ".resources[storage]"
    requests = _d(_d(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        causes.append(required(storage_path))
    else:
        qty = quantity(requests["storage"])
        if qty is not None and qty.value <= 0:
            causes.append(invalid(storage_path, qty.canonical(), "must be greater than zero"))
    class_name = spec.get("storageClassName")
    if isinstance(class_name, str) and class_name:
        causes.extend(
            invalid(path + ".storageClassName", class_name, m)
            for m in dns1123_subdomain(class_name)
        )
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in _VOLUME_MODES:
        causes.append(not_supported(path + ".volumeMode", volume_mode, _VOLUME_MODES))
    return causes


def _persistent_volume_claim(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _claim_spec(spec, "spec")
    if old is None:
        return causes
    old_spec = _d(old.get("spec"))
    new_clone, old_clone = _strip_nulls(spec), _strip_nulls(old_spec)
    if not old_clone.get("volumeName"):  # binding sets the volume name once
        old_clone.pop("volumeName", None)
        if "volumeName" in new_clone:
            old_clone["volumeName"] = new_clone["volumeName"]
    if old_clone.get("storageClassName") is None and "storageClassName" in new_clone:
        old_clone["storageClassName"] = new_clone["storageClassName"]
    if _d(obj.get("status")).get("phase") == "Bound":
        for clone, source in ((new_clone, old_spec), (old_clone, old_spec)):
            requests = _d(_d(clone.get("resources")).get("requests"))
            if requests or "storage" in _d(_d(source.get("resources")).get("requests")):
                clone.setdefault("resources", {}).setdefault("requests", {})["storage"] = _d(
                    _d(source.get("resources")).get("requests")
                ).get("storage")
    for clone in (new_clone, old_clone):
        clone.pop("volumeAttributesClassName", None)
    if new_clone != old_clone:
        causes.append(
            forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
            )
        )
    new_size = quantity(_d(_d(spec.get("resources")).get("requests")).get("storage"))
    old_size = quantity(_d(_d(old_spec.get("resources")).get("requests")).get("storage"))
    capacity = quantity(_d(_d(old.get("status")).get("capacity")).get("storage"))
    shrunk = new_size is not None and old_size is not None and new_size.value < old_size.value
    # RecoverVolumeExpansionFailure (beta, on): shrinking is allowed down to above the capacity.
    if shrunk and new_size is not None and new_size.value <= (capacity.value if capacity else 0):
        causes.append(
            forbidden(
                "spec.resources.requests.storage", "field can not be less than status.capacity"
            )
        )
    causes.extend(_immutable(spec.get("volumeMode"), old_spec.get("volumeMode"), "volumeMode"))
    return causes


_PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte", "cinder",
    "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "photonPersistentDisk",
    "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi", "iscsi",
)  # fmt: skip


def _persistent_volume(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    modes = _l(spec.get("accessModes"))
    if not modes:
        causes.append(required("spec.accessModes"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    capacity = _d(spec.get("capacity"))
    if not capacity:
        causes.append(required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        causes.append(not_supported("spec.capacity", capacity, ["storage"]))
    for name, value in capacity.items():
        causes.extend(_quantity_value_causes(name, value, f"spec.capacity[{name}]"))
    sources = [key for key in _PV_SOURCES if spec.get(key) is not None]
    for key in sources[1:]:
        causes.append(forbidden(f"spec.{key}", "may not specify more than 1 volume type"))
    if not sources:
        causes.append(required("spec", "must specify a volume type"))
    if "local" in sources and spec.get("nodeAffinity") is None:
        causes.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in ("Delete", "Recycle", "Retain"):
        causes.append(
            not_supported(
                "spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"]
            )
        )
    class_name = _s(spec.get("storageClassName"))
    if class_name:
        causes.extend(
            invalid("spec.storageClassName", class_name, m) for m in dns1123_subdomain(class_name)
        )
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        causes.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    if old is not None:
        old_spec = _d(old.get("spec"))
        new_source = {k: _strip_nulls(spec.get(k)) for k in _PV_SOURCES if spec.get(k) is not None}
        old_source = {
            k: _strip_nulls(old_spec.get(k)) for k in _PV_SOURCES if old_spec.get(k) is not None
        }
        if new_source != old_source:
            causes.append(
                forbidden(
                    "spec.persistentvolumesource",
                    "spec.persistentvolumesource is immutable after creation",
                )
            )
        causes.extend(_immutable(spec.get("volumeMode"), old_spec.get("volumeMode"), "volumeMode"))
    return causes


def _node(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
    seen: set[tuple[str, str]] = set()
    for index, taint in enumerate(_l(spec.get("taints"))):
        taint = _d(taint)
        here = f"metadata.taints[{index}]"  # sic: upstream roots taint errors at metadata
        key, value, effect = _s(taint.get("key")), _s(taint.get("value")), _s(taint.get("effect"))
        causes.extend(invalid(here + ".key", key, m) for m in qualified_name(key))
        messages = label_value(value)
        if messages:
            causes.append(invalid(here + ".value", value, ";".join(messages)))
        if not effect:
            causes.append(required(here + ".effect"))
        elif effect not in effects:
            causes.append(not_supported(here + ".effect", effect, effects))
        if (effect, key) in seen:
            causes.append(
                Cause(
                    here,
                    "FieldValueDuplicate",
                    f"Duplicate value: {_show(taint)}: taints must be unique by key and effect pair",
                )
            )
        seen.add((effect, key))
    for index, cidr in enumerate(_l(spec.get("podCIDRs"))):
        causes.extend(_cidr_causes(f"spec.podCIDRs[{index}]", _s(cidr)))
    if old is not None:
        old_spec = _d(old.get("spec"))
        old_cidrs = _l(old_spec.get("podCIDRs"))
        if old_cidrs and old_cidrs != _l(spec.get("podCIDRs")):
            causes.append(
                forbidden(
                    "spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'
                )
            )
        if _s(old_spec.get("providerID")) and old_spec.get("providerID") != spec.get("providerID"):
            causes.append(
                forbidden(
                    "spec.providerID",
                    'node updates may not change providerID except from "" to valid',
                )
            )
    return causes


def _endpoints(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    for index, subset in enumerate(_l(obj.get("subsets"))):
        subset = _d(subset)
        here = f"subsets[{index}]"
        if not _l(subset.get("addresses")) and not _l(subset.get("notReadyAddresses")):
            causes.append(required(here, "must specify `addresses` or `notReadyAddresses`"))
        for key in ("addresses", "notReadyAddresses"):
            for ai, address in enumerate(_l(subset.get(key))):
                causes.extend(_ip_causes(f"{here}.{key}[{ai}].ip", _s(_d(address).get("ip"))))
        ports = _l(subset.get("ports"))
        for pi, port in enumerate(ports):
            port = _d(port)
            there = f"{here}.ports[{pi}]"
            name = _s(port.get("name"))
            if len(ports) > 1 and not name:
                causes.append(required(there + ".name"))
            elif name:
                causes.extend(invalid(there + ".name", name, m) for m in dns1123_label(name))
            number = _i(port.get("port")) or 0
            causes.extend(invalid(there + ".port", number, m) for m in port_number(number))
            protocol = _s(port.get("protocol"))
            if not protocol:
                causes.append(required(there + ".protocol"))
            elif protocol not in _PROTOCOLS:
                causes.append(not_supported(there + ".protocol", protocol, _PROTOCOLS))
    return causes


def _resource_quota(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    for name, value in _d(spec.get("hard")).items():
        here = f"spec.hard[{name}]"
        causes.extend(invalid(here, name, m) for m in qualified_name(name))
        causes.extend(_quantity_value_causes(name, value, here))
    causes.extend(_quota_scopes_causes(spec))
    causes.extend(_quota_scope_selector_causes(spec))
    if old is not None:
        new_scopes, old_scopes = (
            set(_l(spec.get("scopes"))),
            set(_l(_d(old.get("spec")).get("scopes"))),
        )
        if new_scopes != old_scopes:
            causes.append(invalid("spec.scopes", spec.get("scopes"), FIELD_IMMUTABLE))
    return causes


#: The scopes a quota may name (helper.IsStandardResourceQuotaScope of Kubernetes 1.33,
#: whose VolumeAttributesClass scope waits behind a feature gate left off there).
QUOTA_SCOPES = (
    "Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
    "CrossNamespacePodAffinity",
)  # fmt: skip
#: The scopes a selector may only ask to exist (PriorityClass takes any operator).
_EXISTS_ONLY_SCOPES = frozenset(QUOTA_SCOPES) - {"PriorityClass"}
_CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
_STANDARD_QUOTA_RESOURCES = _STANDARD_RESOURCES - {"storage"}
_POD_COMPUTE_QUOTA = frozenset(
    {"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _scope_fits(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource, asked of the standard quota resources only: a
    BestEffort quota tracks `pods` alone, the other pod scopes `pods` and cpu / memory."""
    if resource not in _STANDARD_QUOTA_RESOURCES and not _is_hugepages(resource):
        return True
    if scope == "BestEffort":
        return resource == "pods"
    if scope in QUOTA_SCOPES:
        return resource == "pods" or resource in _POD_COMPUTE_QUOTA
    return True


def _conflicting(path: str, value: Any, scopes: set[str]) -> list[Cause]:
    return [
        invalid(path, value, "conflicting scopes")
        for pair in _CONFLICTING_SCOPES
        if scopes.issuperset(pair)
    ]


def _quota_scopes_causes(spec: Obj) -> list[Cause]:
    """validateResourceQuotaScopes: each of `spec.scopes` known and fitting every `hard`
    resource, and no scope with its opposite (each message shows the whole list)."""
    scopes = _l(spec.get("scopes"))
    hard = sorted(_d(spec.get("hard")))
    causes: list[Cause] = []
    for scope in scopes:
        if scope not in QUOTA_SCOPES:
            causes.append(invalid("spec.scopes", scopes, "unsupported scope"))
        causes.extend(
            invalid("spec.scopes", scopes, "unsupported scope applied to resource")
            for resource in hard
            if not _scope_fits(_s(scope), resource)
        )
    return causes + _conflicting("spec.scopes", scopes, {_s(s) for s in scopes})


def _quota_scope_selector_causes(spec: Obj) -> list[Cause]:
    """validateScopedResourceSelectorRequirement, in its words and paths (no index)."""
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    here = "spec.scopeSelector.matchExpressions"
    hard = sorted(_d(spec.get("hard")))
    causes: list[Cause] = []
    named: set[str] = set()
    for requirement in _l(_d(selector).get("matchExpressions")):
        requirement = _d(requirement)
        scope, operator = _s(requirement.get("scopeName")), _s(requirement.get("operator"))
        values = _l(requirement.get("values"))
        if scope not in QUOTA_SCOPES:
            causes.append(invalid(here + ".scopeName", scope, "unsupported scope"))
        causes.extend(
            invalid(here, selector, "unsupported scope applied to resource")
            for resource in hard
            if not _scope_fits(scope, resource)
        )
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            causes.append(invalid(here + ".operator", operator, (
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
            )))  # fmt: skip
        if operator not in _SELECTOR_OPERATORS:
            causes.append(invalid(here + ".operator", operator, "not a valid selector operator"))
        elif operator in ("In", "NotIn") and not values:
            causes.append(required(here + ".values", (
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
            )))  # fmt: skip
        elif operator in ("Exists", "DoesNotExist") and values:
            causes.append(invalid(here + ".values", values, (
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
            )))  # fmt: skip
        named.add(scope)
    # Upstream shows `spec.scopes` here, not the selector.
    return causes + _conflicting(here, spec.get("scopes"), named)


def _limit_range(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    types: set[str] = set()
    for index, limit in enumerate(_l(_d(obj.get("spec")).get("limits"))):
        limit = _d(limit)
        here = f"spec.limits[{index}]"
        kind = _s(limit.get("type"))
        messages = qualified_name(kind)
        causes.extend(invalid(here + ".type", kind, m) for m in messages)
        if (
            not messages
            and "/" not in kind
            and kind not in ("Pod", "Container", "PersistentVolumeClaim")
        ):
            causes.append(
                invalid(here + ".type", kind, "must be a standard limit type or fully qualified")
            )
        if kind in types:
            causes.append(duplicate(here + ".type", kind))
        types.add(kind)
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if _d(limit.get(key)):
                    causes.append(
                        forbidden(f"{here}.{key}", "may not be specified when `type` is 'Pod'")
                    )
        lows, highs = _d(limit.get("min")), _d(limit.get("max"))
        for name in lows.keys() & highs.keys():
            low, high = quantity(lows[name]), quantity(highs[name])
            if low is not None and high is not None and low.value > high.value:
                causes.append(
                    invalid(
                        f"{here}.min[{name}]",
                        low.canonical(),
                        f"min value {low.canonical()} is greater than max value {high.canonical()}",
                    )
                )
    return causes


# --- networking, RBAC, policy, autoscaling, storage, the rest --------------------------

_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]


def _ingress_backend(backend: Obj, path: str) -> list[Cause]:
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    causes: list[Cause] = []
    if isinstance(resource, dict):
        if not _s(resource.get("kind")):
            causes.append(required(path + ".resource.kind"))
        if not _s(resource.get("name")):
            causes.append(required(path + ".resource.name"))
        return causes
    if not isinstance(service, dict):
        return [invalid(path, "", "resource or service backend is required")]
    name = _s(service.get("name"))
    if not name:
        causes.append(required(path + ".service.name"))
    else:
        causes.extend(invalid(path + ".service.name", name, m) for m in dns1035_label(name))
    port = _d(service.get("port"))
    port_name_value, number = _s(port.get("name")), _i(port.get("number")) or 0
    if port_name_value and number:
        causes.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name_value:
        causes.extend(
            invalid(path + ".service.port.name", port_name_value, m)
            for m in port_name(port_name_value)
        )
    elif number:
        causes.extend(
            invalid(path + ".service.port.number", number, m) for m in port_number(number)
        )
    else:
        causes.append(required(path, "port name or number is required"))
    return causes


def _host_causes(host: str, path: str) -> list[Cause]:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [invalid(path, host, "must be a DNS name, not an IP address")]
    rule = wildcard_subdomain if "*" in host else dns1123_subdomain
    return [invalid(path, host, m) for m in rule(host)]


def _ingress(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    rules = _l(spec.get("rules"))
    default_backend = spec.get("defaultBackend")
    if not rules and default_backend is None:
        causes.append(
            invalid(
                "spec", spec.get("rules"), "either `defaultBackend` or `rules` must be specified"
            )
        )
    if isinstance(default_backend, dict):
        causes.extend(_ingress_backend(default_backend, "spec.defaultBackend"))
    for index, rule in enumerate(rules):
        rule = _d(rule)
        here = f"spec.rules[{index}]"
        host = _s(rule.get("host"))
        if host:
            causes.extend(_host_causes(host, here + ".host"))
        http = rule.get("http")
        if not isinstance(http, dict):
            continue
        paths = _l(http.get("paths"))
        if not paths:
            causes.append(required(here + ".http.paths"))
        for pi, item in enumerate(paths):
            item = _d(item)
            there = f"{here}.http.paths[{pi}]"
            target = _s(item.get("path"))
            kind = item.get("pathType")
            if kind is None:
                causes.append(required(there + ".pathType", "pathType must be specified"))
            elif kind not in _PATH_TYPES:
                causes.append(not_supported(there + ".pathType", kind, _PATH_TYPES))
            elif kind in ("Exact", "Prefix"):
                if not target.startswith("/"):
                    causes.append(invalid(there + ".path", target, "must be an absolute path"))
                for sequence in ("//", "/./", "/../", "%2f", "%2F"):
                    if sequence in target:
                        causes.append(
                            invalid(there + ".path", target, f"must not contain '{sequence}'")
                        )
                for suffix in ("/..", "/."):
                    if target.endswith(suffix):
                        causes.append(
                            invalid(there + ".path", target, f"cannot end with '{suffix}'")
                        )
            elif target and not target.startswith("/"):
                causes.append(invalid(there + ".path", target, "must be an absolute path"))
            causes.extend(_ingress_backend(_d(item.get("backend")), there + ".backend"))
    for index, tls in enumerate(_l(spec.get("tls"))):
        tls = _d(tls)
        for hi, host in enumerate(_l(tls.get("hosts"))):
            rule = wildcard_subdomain if "*" in _s(host) else dns1123_subdomain
            causes.extend(
                invalid(f"spec.tls[{index}].hosts[{hi}]", host, m) for m in rule(_s(host))
            )
        secret = _s(tls.get("secretName"))
        if secret:
            causes.extend(
                invalid(f"spec.tls[{index}].secretName", secret, m)
                for m in dns1123_subdomain(secret)
            )
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        causes.extend(
            invalid("spec.ingressClassName", class_name, m) for m in dns1123_subdomain(class_name)
        )
    return causes


def _ingress_class(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    controller = _s(spec.get("controller"))
    causes: list[Cause] = []
    if not controller:
        causes.append(required("spec.controller"))
    else:
        host, slash, rest = controller.partition("/")
        if not slash or not host or not rest:
            causes.append(
                invalid(
                    "spec.controller",
                    controller,
                    'must be a domain-prefixed path (such as "acme.io/foo")',
                )
            )
        else:
            causes.extend(invalid("spec.controller", host, m) for m in dns1123_subdomain(host))
        if len(controller) > 250:
            causes.append(too_long("spec.controller", controller, 250))
    if old is not None:
        causes.extend(
            _immutable(
                spec.get("controller"), _d(old.get("spec")).get("controller"), "spec.controller"
            )
        )
    return causes


def _network_policy(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes = _selector_causes(spec.get("podSelector"), "spec.podSelector")
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for index, rule in enumerate(_l(spec.get(direction))):
            rule = _d(rule)
            here = f"spec.{direction}[{index}]"
            for pi, port in enumerate(_l(rule.get("ports"))):
                causes.extend(_network_policy_port(_d(port), f"{here}.ports[{pi}]"))
            for pi, peer in enumerate(_l(rule.get(peers_key))):
                causes.extend(_network_policy_peer(_d(peer), f"{here}.{peers_key}[{pi}]"))
    types = _l(spec.get("policyTypes"))
    for index, kind in enumerate(types):
        if kind not in ("Ingress", "Egress"):
            causes.append(not_supported(f"spec.policyTypes[{index}]", kind, ["Ingress", "Egress"]))
    if len(types) > 2:
        causes.append(
            invalid("spec.policyTypes", types, "may not specify more than two policyTypes")
        )
    return causes


def _network_policy_port(port: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _PROTOCOLS:
        causes.append(not_supported(path + ".protocol", protocol, _PROTOCOLS))
    value = port.get("port")
    end = _i(port.get("endPort"))
    if value is not None:
        if isinstance(value, str):
            causes.extend(invalid(path + ".port", value, m) for m in port_name(value))
            if end is not None:
                causes.append(
                    invalid(
                        path + ".endPort", end, "may not be specified when `port` is non-numeric"
                    )
                )
        else:
            number = _i(value) or 0
            causes.extend(invalid(path + ".port", number, m) for m in port_number(number))
            if end is not None:
                if end < number:
                    causes.append(
                        invalid(path + ".endPort", end, "must be greater than or equal to `port`")
                    )
                causes.extend(invalid(path + ".endPort", end, m) for m in port_number(end))
    elif end is not None:
        causes.append(required(path + ".port", "must be specified when `endPort` is specified"))
    return causes


def _network_policy_peer(peer: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    selectors = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            selectors = 1
            causes.extend(_selector_causes(peer[key], f"{path}.{key}"))
    block = peer.get("ipBlock")
    if isinstance(block, dict):
        if selectors:
            causes.append(forbidden(path, "may not specify more than 1 peer type"))
        cidr = _s(block.get("cidr"))
        if not cidr:
            causes.append(required(path + ".ipBlock.cidr"))
        else:
            causes.extend(_cidr_causes(path + ".ipBlock.cidr", cidr))
        for ei, except_cidr in enumerate(_l(block.get("except"))):
            causes.extend(_cidr_causes(f"{path}.ipBlock.except[{ei}]", _s(except_cidr)))
    elif not selectors:
        causes.append(required(path, "must specify a peer"))
    return causes


_RBAC_GROUP = "rbac.authorization.k8s.io"


def _policy_rules(rules: Any, *, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    for index, rule in enumerate(_l(rules)):
        rule = _d(rule)
        here = f"rules[{index}]"
        if not _l(rule.get("verbs")):
            causes.append(required(here + ".verbs", "verbs must contain at least one value"))
        urls = _l(rule.get("nonResourceURLs"))
        if urls:
            if namespaced:
                causes.append(
                    invalid(
                        here + ".nonResourceURLs",
                        urls,
                        "namespaced rules cannot apply to non-resource URLs",
                    )
                )
            if (
                _l(rule.get("apiGroups"))
                or _l(rule.get("resources"))
                or _l(rule.get("resourceNames"))
            ):
                causes.append(
                    invalid(
                        here + ".nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not _l(rule.get("apiGroups")):
            causes.append(
                required(here + ".apiGroups", "resource rules must supply at least one api group")
            )
        if not _l(rule.get("resources")):
            causes.append(
                required(here + ".resources", "resource rules must supply at least one resource")
            )
    return causes


def _role(obj: Obj, old: Obj | None) -> list[Cause]:
    return _policy_rules(obj.get("rules"), namespaced=True)


def _cluster_role(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = _policy_rules(obj.get("rules"), namespaced=False)
    aggregation = obj.get("aggregationRule")
    if isinstance(aggregation, dict):
        selectors = _l(aggregation.get("clusterRoleSelectors"))
        if not selectors:
            causes.append(
                required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                )
            )
        for index, selector in enumerate(selectors):
            causes.extend(
                _selector_causes(selector, f"aggregationRule.clusterRoleSelectors[{index}]")
            )
    return causes


def _binding(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    ref = _d(obj.get("roleRef"))
    if ref.get("apiGroup") != _RBAC_GROUP:
        causes.append(not_supported("roleRef.apiGroup", _s(ref.get("apiGroup")), [_RBAC_GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        causes.append(not_supported("roleRef.kind", _s(ref.get("kind")), kinds))
    name = _s(ref.get("name"))
    if not name:
        causes.append(required("roleRef.name"))
    else:
        causes.extend(invalid("roleRef.name", name, m) for m in path_segment_name(name))
    for index, subject in enumerate(_l(obj.get("subjects"))):
        subject = _d(subject)
        here = f"subjects[{index}]"
        subject_name = _s(subject.get("name"))
        if not subject_name:
            causes.append(required(here + ".name"))
        kind, group = subject.get("kind"), _s(subject.get("apiGroup"))
        if kind == "ServiceAccount":
            if subject_name:
                causes.extend(
                    invalid(here + ".name", subject_name, m)
                    for m in dns1123_subdomain(subject_name)
                )
            if group:
                causes.append(not_supported(here + ".apiGroup", group, [""]))
            if not namespaced and not _s(subject.get("namespace")):
                causes.append(required(here + ".namespace"))
        elif kind in ("User", "Group"):
            if group != _RBAC_GROUP:
                causes.append(not_supported(here + ".apiGroup", group, [_RBAC_GROUP]))
        else:
            causes.append(
                not_supported(here + ".kind", _s(kind), ["ServiceAccount", "User", "Group"])
            )
    if old is not None and _strip_nulls(obj.get("roleRef")) != _strip_nulls(old.get("roleRef")):
        causes.append(invalid("roleRef", obj.get("roleRef"), "cannot change roleRef"))
    return causes


def _role_binding(obj: Obj, old: Obj | None) -> list[Cause]:
    return _binding(obj, old, namespaced=True)


def _cluster_role_binding(obj: Obj, old: Obj | None) -> list[Cause]:
    return _binding(obj, old, namespaced=False)


def _pod_disruption_budget(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            causes.extend(_int_or_percent(spec[key], f"spec.{key}"))
            causes.extend(_over_100_percent(spec[key], f"spec.{key}"))
    causes.extend(_selector_causes(spec.get("selector"), "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        causes.append(
            not_supported(
                "spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"]
            )
        )
    return causes


def _horizontal_pod_autoscaler(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    ref = _d(spec.get("scaleTargetRef"))
    for key in ("kind", "name"):
        value = _s(ref.get(key))
        if not value:
            causes.append(required(f"spec.scaleTargetRef.{key}"))
        else:
            causes.extend(
                invalid(f"spec.scaleTargetRef.{key}", value, m) for m in path_segment_name(value)
            )
    low = _i(spec.get("minReplicas"))
    high = _i(spec.get("maxReplicas")) or 0
    if low is not None and low < 1:
        causes.append(invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        causes.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        causes.append(
            invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    kinds = ["ContainerResource", "External", "Object", "Pods", "Resource"]
    for index, metric in enumerate(_l(spec.get("metrics"))):
        kind = _d(metric).get("type")
        if not kind:
            causes.append(
                required(f"spec.metrics[{index}].type", "must specify a metric source type")
            )
        elif kind not in kinds:
            causes.append(not_supported(f"spec.metrics[{index}].type", kind, kinds))
    return causes


def _storage_class(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    provisioner = _s(obj.get("provisioner"))
    if not provisioner:
        causes.append(required("provisioner"))
    else:
        causes.extend(
            invalid("provisioner", provisioner, m) for m in qualified_name(provisioner.lower())
        )
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in ("Delete", "Retain"):
        causes.append(not_supported("reclaimPolicy", policy, ["Delete", "Retain"]))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        causes.append(required("volumeBindingMode"))
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        causes.append(
            not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"])
        )
    if old is not None:
        if _d(obj.get("parameters")) != _d(old.get("parameters")):
            causes.append(forbidden("parameters", "updates to parameters are forbidden."))
        if obj.get("provisioner") != old.get("provisioner"):
            causes.append(forbidden("provisioner", "updates to provisioner are forbidden."))
        if obj.get("reclaimPolicy") != old.get("reclaimPolicy"):
            causes.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        causes.extend(
            _immutable(
                obj.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode"
            )
        )
    return causes


#: The system PriorityClasses' values (schedulingapiv1.SystemPriorityClasses); priority.py makes them.
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


def _priority_class(obj: Obj, old: Obj | None) -> list[Cause]:
    """ValidatePriorityClass at creation, ValidatePriorityClassUpdate after (value and
    preemptionPolicy immutable): a `system-` name must be one of the system classes as
    kube-apiserver makes them (IsKnownSystemPriorityClass), a user's value at most 1e9."""
    if old is not None:
        causes: list[Cause] = []
        if obj.get("value") != old.get("value"):
            causes.append(forbidden("value", "may not be changed in an update."))
        causes.extend(
            _immutable(obj.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy")
        )
        return causes
    causes = []
    name = _s(_d(obj.get("metadata")).get("name"))
    value = _i(obj.get("value")) or 0
    if name.startswith("system-"):
        expected = SYSTEM_PRIORITY_CLASSES.get(name)
        if expected is None:
            error = f"{name} is not a known system priority class"
        elif expected != value:
            error = f"value of {name} PriorityClass must be {expected}"
        elif obj.get("globalDefault") is True:
            error = f"globalDefault of {name} PriorityClass must be false"
        else:
            error = ""
        if error:
            causes.append(
                forbidden(
                    "metadata.name",
                    f"priority class names with 'system-' prefix are reserved for system use only. error: {error}",
                )
            )
    elif value > 1000000000:
        causes.append(
            forbidden("value", "maximum allowed value of a user defined priority is 1000000000")
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        causes.append(not_supported("preemptionPolicy", policy, ["PreemptLowerPriority", "Never"]))
    return causes


def _lease(obj: Obj, old: Obj | None) -> list[Cause]:
    spec = _d(obj.get("spec"))
    causes: list[Cause] = []
    duration = _i(spec.get("leaseDurationSeconds"))
    if duration is not None and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    causes.extend(_nonneg(spec.get("leaseTransitions"), "spec.leaseTransitions"))
    return causes


_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]


def _endpoint_slice(obj: Obj, old: Obj | None) -> list[Cause]:
    causes: list[Cause] = []
    kind = _s(obj.get("addressType"))
    if not kind:
        causes.append(required("addressType"))
    elif kind not in _ADDRESS_TYPES:
        causes.append(not_supported("addressType", kind, _ADDRESS_TYPES))
    for index, endpoint in enumerate(_l(obj.get("endpoints"))):
        addresses = _l(_d(endpoint).get("addresses"))
        here = f"endpoints[{index}].addresses"
        if not addresses:
            causes.append(required(here, "must contain at least 1 address"))
        elif len(addresses) > 100:
            causes.append(
                Cause(here, TOO_MANY, f"Too many: {len(addresses)}: must have at most 100 items")
            )
        for ai, address in enumerate(addresses):
            if kind in ("IPv4", "IPv6"):
                causes.extend(_ip_causes(f"{here}[{ai}]", _s(address)))
    for index, port in enumerate(_l(obj.get("ports"))):
        port = _d(port)
        here = f"ports[{index}]"
        name = _s(port.get("name"))
        if name:
            causes.extend(invalid(here + ".name", name, m) for m in dns1123_label(name))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            causes.append(not_supported(here + ".protocol", protocol, _PROTOCOLS))
    if old is not None:
        causes.extend(_immutable(obj.get("addressType"), old.get("addressType"), "addressType"))
    return causes


def _pod_template(obj: Obj, old: Obj | None) -> list[Cause]:
    """ValidatePodTemplate (a v1 PodTemplate object, not a workload's template)."""
    return _pod_template_causes(obj.get("template"), "template")


# --- admissionregistration.k8s.io: webhook configurations -----------------------------

# The AdmissionReview versions this server's predecessor understands (upstream's list).
_ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1", "v1alpha1"]
_WEBHOOK_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_RULE_SCOPES = ["*", "Cluster", "Namespaced"]
_URL_FORM = "; desired format: https://host[/path]"


def _fully_qualified_name(name: str, path: str) -> list[Cause]:
    """IsFullyQualifiedName: a DNS subdomain of at least three labels (webhook names)."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    errors = dns1123_subdomain(name)
    if errors:
        return [invalid(path, name, ",".join(errors))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _webhook_url(url: str, path: str) -> list[Cause]:
    parsed = urllib.parse.urlsplit(url)
    causes: list[Cause] = []
    if parsed.scheme != "https":
        causes.append(
            invalid(path, parsed.scheme, "'https' is the only allowed URL scheme" + _URL_FORM)
        )
    if not parsed.netloc:
        causes.append(invalid(path, parsed.netloc, "host must be specified" + _URL_FORM))
    if "@" in parsed.netloc:
        causes.append(
            invalid(
                path,
                parsed.netloc.rpartition("@")[0],
                "user information is not permitted in the URL",
            )
        )
    if parsed.fragment:
        causes.append(invalid(path, parsed.fragment, "fragments are not permitted in the URL"))
    if parsed.query:
        causes.append(invalid(path, parsed.query, "query parameters are not permitted in the URL"))
    return causes


def _webhook_service(service: Obj, path: str) -> list[Cause]:
    """ValidateWebhookService: the in-cluster Service a webhook calls."""
    causes: list[Cause] = []
    if not _s(service.get("name")):
        causes.append(required(path + ".name", "service name is required"))
    if not _s(service.get("namespace")):
        causes.append(required(path + ".namespace", "service namespace is required"))
    port = _i(service.get("port"))
    if port is not None and port_number(port):
        causes.append(
            invalid(path + ".port", port, "port is not valid: " + ", ".join(port_number(port)))
        )
    url_path = _s(service.get("path"))
    if url_path in ("", "/"):
        return causes
    if url_path == "//":
        return [*causes, invalid(path + ".path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        causes.append(invalid(path + ".path", url_path, "must start with a '/'"))
    return causes


def _client_config(config: Obj, path: str) -> list[Cause]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return _webhook_url(_s(url), path + ".url")
    return _webhook_service(_d(service), path + ".service")


def _wildcard_alone(values: list[Any], path: str, what: str) -> list[Cause]:
    if len(values) > 1 and "*" in values:
        return [invalid(path, values, f"if '*' is present, must not specify other {what}")]
    return []


def _webhook_rule(rule: Obj, path: str) -> list[Cause]:
    """validateRuleWithOperations (the resource checks kept to the required ones)."""
    operations = _l(rule.get("operations"))
    causes = [] if operations else [required(path + ".operations")]
    causes.extend(_wildcard_alone(operations, path + ".operations", "operations"))
    causes.extend(
        not_supported(f"{path}.operations[{i}]", op, _WEBHOOK_OPERATIONS)
        for i, op in enumerate(operations)
        if op not in _WEBHOOK_OPERATIONS
    )
    groups, versions = _l(rule.get("apiGroups")), _l(rule.get("apiVersions"))
    if not groups:
        causes.append(required(path + ".apiGroups"))
    causes.extend(_wildcard_alone(groups, path + ".apiGroups", "API groups"))
    if not versions:
        causes.append(required(path + ".apiVersions"))
    causes.extend(_wildcard_alone(versions, path + ".apiVersions", "API versions"))
    causes.extend(required(f"{path}.apiVersions[{i}]") for i, v in enumerate(versions) if v == "")
    if not _l(rule.get("resources")):
        causes.append(required(path + ".resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in _RULE_SCOPES:
        causes.append(not_supported(path + ".scope", scope, _RULE_SCOPES))
    return causes


def _admission_review_versions(versions: list[Any], path: str) -> list[Cause]:
    accepted = ", ".join(_ADMISSION_REVIEW_VERSIONS)
    if not versions:
        return [required(path, f"must specify one of {accepted}")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for index, version in enumerate(_s(v) for v in versions):
        if version in seen:
            causes.append(invalid(f"{path}[{index}]", version, "duplicate version"))
            continue
        seen.add(version)
        causes.extend(invalid(f"{path}[{index}]", version, m) for m in dns1035_label(version))
    if not seen & set(_ADMISSION_REVIEW_VERSIONS):
        causes.append(invalid(path, versions, f"must include at least one of {accepted}"))
    return causes


def _enum(obj: Obj, key: str, path: str, allowed: list[str]) -> list[Cause]:
    value = obj.get(key)
    return [] if value is None or value in allowed else [not_supported(path, value, allowed)]


def _webhook(hook: Obj, path: str, *, mutating: bool) -> list[Cause]:
    causes = _fully_qualified_name(_s(hook.get("name")), path + ".name")
    for index, rule in enumerate(_l(hook.get("rules"))):
        causes.extend(_webhook_rule(_d(rule), f"{path}.rules[{index}]"))
    causes.extend(_enum(hook, "failurePolicy", path + ".failurePolicy", ["Fail", "Ignore"]))
    causes.extend(_enum(hook, "matchPolicy", path + ".matchPolicy", ["Equivalent", "Exact"]))
    side_effects = ["None", "NoneOnDryRun"]
    if hook.get("sideEffects") is None:
        causes.append(required(path + ".sideEffects", "must specify one of None, NoneOnDryRun"))
    causes.extend(_enum(hook, "sideEffects", path + ".sideEffects", side_effects))
    timeout = _i(hook.get("timeoutSeconds"))
    if timeout is not None and not 1 <= timeout <= 30:
        causes.append(
            invalid(
                path + ".timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    for selector in ("namespaceSelector", "objectSelector"):
        causes.extend(_selector_causes(hook.get(selector), f"{path}.{selector}"))
    if mutating:
        causes.extend(
            _enum(hook, "reinvocationPolicy", path + ".reinvocationPolicy", ["IfNeeded", "Never"])
        )
    causes.extend(_client_config(_d(hook.get("clientConfig")), path + ".clientConfig"))
    return causes


def _webhook_configuration(obj: Obj, old: Obj | None, *, mutating: bool) -> list[Cause]:
    """Validate(Mutating|Validating)WebhookConfiguration, with v1's requirements: side
    effects None or NoneOnDryRun, a recognized AdmissionReview version, unique names."""
    causes: list[Cause] = []
    names: set[str] = set()
    for index, hook in enumerate(_l(obj.get("webhooks"))):
        hook = _d(hook)
        path = f"webhooks[{index}]"
        causes.extend(_webhook(hook, path, mutating=mutating))
        causes.extend(
            _admission_review_versions(
                _l(hook.get("admissionReviewVersions")), path + ".admissionReviewVersions"
            )
        )
        name = _s(hook.get("name"))
        if name and name in names:
            causes.append(duplicate(path + ".name", name))
        names.add(name)
    return causes


def _validating_webhook_configuration(obj: Obj, old: Obj | None) -> list[Cause]:
    return _webhook_configuration(obj, old, mutating=False)


def _mutating_webhook_configuration(obj: Obj, old: Obj | None) -> list[Cause]:
    return _webhook_configuration(obj, old, mutating=True)


# --- apiregistration.k8s.io -----------------------------------------------------------


def _api_service(obj: Obj, old: Obj | None) -> list[Cause]:
    """kube-aggregator's ValidateAPIService."""
    spec = _d(obj.get("spec"))
    group, version = _s(spec.get("group")), _s(spec.get("version"))
    name = _s(_d(obj.get("metadata")).get("name"))
    wanted = f"{version}.{group}"
    causes: list[Cause] = []
    if name and not path_segment_name(name) and name != wanted:
        causes.append(
            invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: "{wanted}"')
        )
    if not group and version != "v1":
        causes.append(
            required("spec.group", "only v1 may have an empty group and it better be legacy kube")
        )
    if group:
        causes.extend(invalid("spec.group", group, m) for m in dns1123_subdomain(group))
    causes.extend(invalid("spec.version", version, m) for m in dns1035_label(version))
    group_priority = _i(spec.get("groupPriorityMinimum")) or 0
    if not 0 < group_priority <= 20000:
        causes.append(
            invalid(
                "spec.groupPriorityMinimum", group_priority, "must be positive and less than 20000"
            )
        )
    version_priority = _i(spec.get("versionPriority")) or 0
    if not 0 < version_priority <= 1000:
        causes.append(
            invalid("spec.versionPriority", version_priority, "must be positive and less than 1000")
        )
    service = spec.get("service")
    ca_bundle, insecure = _s(spec.get("caBundle")), spec.get("insecureSkipTLSVerify") is True
    if service is None:
        if ca_bundle:
            size = len(base64.b64decode(ca_bundle + "=" * (-len(ca_bundle) % 4), validate=False))
            causes.append(
                invalid(
                    "spec.caBundle", f"{size} bytes", "local APIServices may not have a caBundle"
                )
            )
        if insecure:
            causes.append(
                invalid(
                    "spec.insecureSkipTLSVerify",
                    True,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return causes
    service = _d(service)
    for key in ("namespace", "name"):
        if not _s(service.get(key)):
            causes.append(required(f"spec.service.{key}"))
    port = _i(service.get("port"))
    if port is not None and port_number(port):
        causes.append(
            invalid("spec.service.port", port, "port is not valid: " + ", ".join(port_number(port)))
        )
    if insecure and ca_bundle:
        causes.append(
            invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present")
        )
    return causes


# --- certificates.k8s.io ----------------------------------------------------------------

_KEY_USAGES = sorted(
    """any;cert sign;client auth;code signing;content commitment;crl sign;data encipherment;
    decipher only;digital signature;email protection;encipher only;ipsec end system;
    ipsec tunnel;ipsec user;key agreement;key encipherment;microsoft sgc;netscape sgc;
    ocsp signing;s/mime;server auth;signing;timestamping""".replace("\n    ", " ").split(";")
)
_DECISIONS = ("Approved", "Denied", "Failed")


def _certificate_signing_request(obj: Obj, old: Obj | None) -> list[Cause]:
    """ValidateCertificateSigningRequest(Create|Update) for certificates.k8s.io/v1."""
    return _csr_spec(_d(obj.get("spec"))) + _csr_conditions(obj, old)


def _csr_spec(spec: Obj) -> list[Cause]:
    from stackwright.localcluster.certificates import request_error

    causes: list[Cause] = []
    request = _s(spec.get("request"))
    problem = request_error(request)
    if problem:
        causes.append(invalid("spec.request", request, problem))
    usages = _l(spec.get("usages"))
    if not usages:
        causes.append(required("spec.usages"))
    seen: set[str] = set()
    for index, usage in enumerate(usages):
        if usage not in _KEY_USAGES:
            causes.append(not_supported(f"spec.usages[{index}]", usage, _KEY_USAGES))
        if usage in seen:
            causes.append(duplicate(f"spec.usages[{index}]", usage))
        seen.add(usage)
    signer = _s(spec.get("signerName"))
    if not signer:
        causes.append(required("spec.signerName"))
    elif signer == "kubernetes.io/legacy-unknown":
        causes.append(
            invalid(
                "spec.signerName",
                signer,
                "the legacy signerName is not allowed via this API version",
            )
        )
    elif "/" not in signer:
        causes.append(
            invalid(
                "spec.signerName",
                signer,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        )
    expiration = _i(spec.get("expirationSeconds"))
    if expiration is not None and expiration < 600:
        causes.append(
            invalid(
                "spec.expirationSeconds",
                expiration,
                "may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    return causes


def _csr_conditions(obj: Obj, old: Obj | None) -> list[Cause]:
    """At most one decision (Approved or Denied), each True and once; none taken back."""
    causes: list[Cause] = []
    conditions = [_d(c) for c in _l(_d(obj.get("status")).get("conditions"))]
    types = [_s(c.get("type")) for c in conditions]
    for index, condition in enumerate(conditions):
        here = f"status.conditions[{index}]"
        kind = types[index]
        if not kind:
            causes.append(required(here + ".type"))
        other = {"Approved": "Denied", "Denied": "Approved"}.get(kind)
        if other and other in types[:index]:
            causes.append(
                invalid(
                    here + ".type", kind, "Approved and Denied conditions are mutually exclusive"
                )
            )
        if kind in _DECISIONS and condition.get("status") != "True":
            causes.append(not_supported(here + ".status", condition.get("status"), ["True"]))
        if kind in types[:index]:
            causes.append(duplicate(here + ".type", kind))
    if old is not None:
        old_types = [_s(_d(c).get("type")) for c in _l(_d(old.get("status")).get("conditions"))]
        for kind in _DECISIONS:
            if types.count(kind) < old_types.count(kind):
                causes.append(
                    forbidden(
                        "status.conditions", f'updates may not remove a condition of type "{kind}"'
                    )
                )
    return causes


def _no_rules(obj: Obj, old: Obj | None) -> list[Cause]:
    return []


# =====================================================================================
# The table of built-in kinds
# =====================================================================================

KindRule = Callable[[Obj, "Obj | None"], list[Cause]]


@dataclass(frozen=True)
class _Kind:
    name_rule: NameRule
    rules: KindRule


def _pod(obj: Obj, old: Obj | None) -> list[Cause]:
    return _pod_create(obj) if old is None else _pod_update(obj, old)


_RBAC = "rbac.authorization.k8s.io"

# Per kind: the rule its name follows and its semantic checks. Names are DNS subdomains
# unless a row says otherwise, with the reason.
_KINDS: dict[tuple[str, str], _Kind] = {
    # Namespaces are the last label of in-cluster DNS names (svc.NAMESPACE.svc.cluster.local).
    ("", "Namespace"): _Kind(name_is_dns_label, _namespace),
    # Service names become DNS labels and the prefix of environment variables, so they must
    # also start with a letter (RFC 1035).
    ("", "Service"): _Kind(name_is_dns1035_label, _service),
    ("", "Pod"): _Kind(name_is_dns_subdomain, _pod),
    ("", "ConfigMap"): _Kind(name_is_dns_subdomain, _config_map),
    ("", "Secret"): _Kind(name_is_dns_subdomain, _secret),
    ("", "ServiceAccount"): _Kind(name_is_dns_subdomain, _no_rules),
    # Volume and claim names only need to work in a URL path.
    ("", "PersistentVolume"): _Kind(name_is_path_segment, _persistent_volume),
    ("", "PersistentVolumeClaim"): _Kind(name_is_path_segment, _persistent_volume_claim),
    ("", "Endpoints"): _Kind(name_is_dns_subdomain, _endpoints),
    ("", "Event"): _Kind(name_is_dns_subdomain, _no_rules),
    ("", "Node"): _Kind(name_is_dns_subdomain, _node),
    ("", "LimitRange"): _Kind(name_is_dns_subdomain, _limit_range),
    ("", "ResourceQuota"): _Kind(name_is_dns_subdomain, _resource_quota),
    ("", "ReplicationController"): _Kind(name_is_dns_subdomain, _replication_controller),
    ("apps", "Deployment"): _Kind(name_is_dns_subdomain, _deployment),
    ("apps", "ReplicaSet"): _Kind(name_is_dns_subdomain, _replica_set),
    # Pod hostnames are NAME-ORDINAL, so the name must itself be a DNS label.
    ("apps", "StatefulSet"): _Kind(name_is_dns_label, _stateful_set),
    ("apps", "DaemonSet"): _Kind(name_is_dns_subdomain, _daemon_set),
    ("apps", "ControllerRevision"): _Kind(name_is_dns_subdomain, _controller_revision),
    ("batch", "Job"): _Kind(name_is_dns_subdomain, _job),
    ("batch", "CronJob"): _Kind(name_is_dns_subdomain, _cron_job),
    ("networking.k8s.io", "Ingress"): _Kind(name_is_dns_subdomain, _ingress),
    ("networking.k8s.io", "IngressClass"): _Kind(name_is_dns_subdomain, _ingress_class),
    ("networking.k8s.io", "NetworkPolicy"): _Kind(name_is_dns_subdomain, _network_policy),
    # RBAC names carry colons (system:controller:…): any string usable in a URL path.
    (_RBAC, "Role"): _Kind(name_is_path_segment, _role),
    (_RBAC, "ClusterRole"): _Kind(name_is_path_segment, _cluster_role),
    (_RBAC, "RoleBinding"): _Kind(name_is_path_segment, _role_binding),
    (_RBAC, "ClusterRoleBinding"): _Kind(name_is_path_segment, _cluster_role_binding),
    ("policy", "PodDisruptionBudget"): _Kind(name_is_dns_subdomain, _pod_disruption_budget),
    ("autoscaling", "HorizontalPodAutoscaler"): _Kind(
        name_is_dns_subdomain, _horizontal_pod_autoscaler
    ),
    ("storage.k8s.io", "StorageClass"): _Kind(name_is_dns_subdomain, _storage_class),
    ("coordination.k8s.io", "Lease"): _Kind(name_is_dns_subdomain, _lease),
    ("discovery.k8s.io", "EndpointSlice"): _Kind(name_is_dns_subdomain, _endpoint_slice),
    ("scheduling.k8s.io", "PriorityClass"): _Kind(name_is_dns_subdomain, _priority_class),
    # The plural.group rule is validate_crd's; the generic part is the subdomain rule.
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _Kind(name_is_dns_subdomain, _no_rules),
    ("", "PodTemplate"): _Kind(name_is_dns_subdomain, _pod_template),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _Kind(
        name_is_dns_subdomain, _validating_webhook_configuration
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _Kind(
        name_is_dns_subdomain, _mutating_webhook_configuration
    ),
    # The version.group rule is _api_service's; the generic part is the path-segment rule.
    ("apiregistration.k8s.io", "APIService"): _Kind(name_is_path_segment, _api_service),
    ("certificates.k8s.io", "CertificateSigningRequest"): _Kind(
        name_is_path_segment, _certificate_signing_request
    ),
}
_DEFAULT_KIND = _Kind(name_is_dns_subdomain, _no_rules)


@functools.cache
def _cluster_scoped() -> frozenset[tuple[str, str]]:
    from stackwright.localcluster.registry import builtin_types

    return frozenset((t.group, t.kind) for t in builtin_types() if not t.namespaced)


def validate_builtin(
    obj: dict[str, Any], old: dict[str, Any] | None, group: str, kind: str
) -> list[Cause]:
    """The API server's validation of a built-in kind, after defaulting; `old` on updates.

    Metadata first (the update checks, then the create checks, as the strategies order
    them), then the kind's own rules, which include the fields an update may not change.
    """
    rule = _KINDS.get((group, kind), _DEFAULT_KIND)
    causes: list[Cause] = []
    if old is not None:
        causes.extend(_object_meta_update(obj, old))
    namespaced = (group, kind) not in _cluster_scoped()
    causes.extend(
        validate_object_meta(
            obj, name_rule=rule.name_rule, namespaced=namespaced, kube_finalizers=True
        )
    )
    causes.extend(rule.rules(obj, old))
    return causes


# =====================================================================================
# Custom resources: OpenAPI v3 validation (kube-openapi wording), pruning, defaulting
# =====================================================================================

# Composite (anyOf/oneOf/allOf/not) errors carry no field; apiextensions then prints a
# nil field path, and so does the real server: `<nil>: Invalid value: "": …`.
_NIL_PATH = "<nil>"


def _go_number(value: Any) -> str:
    """A JSON number as Go's %v prints a float64."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return number_literal(value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(path: str, expected: str, got: str) -> Cause:
    name = path or "."
    return Cause(
        path or _NIL_PATH,
        "FieldValueTypeInvalid",
        f'Invalid value: "{got}": {name} in body must be of type {expected}: "{got}"',
    )


def _schema_invalid(path: str, value: Any, detail: str) -> Cause:
    return invalid(path or _NIL_PATH, value, f"{path or '.'} in body {detail}")


_FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {}


def _format(name: str) -> Callable[[Callable[[str], bool]], Callable[[str], bool]]:
    def register(check: Callable[[str], bool]) -> Callable[[str], bool]:
        _FORMAT_CHECKS[name] = check
        return check

    return register


@_format("date-time")
def _is_datetime(text: str) -> bool:
    return bool(
        re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text)
    )


_FORMAT_CHECKS["datetime"] = _is_datetime


@_format("date")
def _is_date(text: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])", text))


@_format("email")
def _is_email(text: str) -> bool:
    return bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text))


@_format("hostname")
def _is_hostname(text: str) -> bool:
    return len(text) <= 255 and bool(
        re.fullmatch(
            r"[A-Za-z0-9]([-A-Za-z0-9]{0,62})?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,62})?)*\.?", text
        )
    )


@_format("ipv4")
def _is_ipv4(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 4
    except ValueError:
        return False


@_format("ipv6")
def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


@_format("cidr")
def _is_cidr(text: str) -> bool:
    return "/" in text and not _cidr_causes("", text)


@_format("uuid")
def _is_uuid(text: str) -> bool:
    return bool(
        re.fullmatch(
            r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}", text
        )
    )


@_format("byte")
def _is_byte(text: str) -> bool:
    return base64_error(text) is None


@_format("mac")
def _is_mac(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}", text))


@_format("uri")
def _is_uri(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S*", text))


@_format("duration")
def _is_duration(text: str) -> bool:
    return bool(re.fullmatch(r"(\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w))+", text.replace(" ", "")))


# Schema errors after which the server does not run a CRD's rules (strategy.go's
# hasBlockingErr): the object has not the shape the rules were written for.
_BLOCKING = frozenset(
    {"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", TOO_MANY,
     "FieldValueTypeInvalid"}
)  # fmt: skip


def validate_custom(
    obj: dict[str, Any], schema: Node, old: dict[str, Any] | None = None
) -> list[Cause]:
    """A custom object against its version's `openAPIV3Schema`, as apiextensions words it,
    then its `x-kubernetes-validations` rules (`old`: the stored object, on an update).

    Run after pruning and defaulting, as the server does.
    """
    causes: list[Cause] = []
    _check_schema_value(obj, schema, "", causes)
    if celrules.rule_tree(schema) is None:
        return causes
    if any(cause.reason in _BLOCKING for cause in causes):
        detail = (
            "some validation rules were not checked because the object was invalid; "
            "correct the existing errors to complete validation"
        )
        return [*causes, invalid(_NIL_PATH, "null", detail)]
    return causes + celrules.rule_causes(obj, schema, old)


def check_custom(obj: dict[str, Any], schema: Node) -> str | None:
    """What the API server answers a server-side apply of the custom object `obj` against its
    version's `schema`: None when it would take it, else its message — a field the schema
    does not declare first (typing the patch refuses it), then the 422 of validation.

    For a client that cannot ask a server yet: a preview of objects whose CRD the same run
    creates. Its CEL rules are evaluated (but for transition rules: there is no old
    object); name checks are the server's.
    """
    pruned = prune_custom(obj, schema)
    unknown = pruned_paths(obj, pruned)
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    kind = str(obj.get("kind") or "")
    if unknown:
        errors = [f".{path}: field not declared in schema" for path in unknown]
        joined = errors[0] if len(errors) == 1 else "\n  ".join(["errors:", *errors])
        described = f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}"
        return f"failed to create typed patch object ({described}, Kind={kind}): {joined}"
    default_custom(pruned, schema)
    causes = validate_custom(pruned, schema)
    if not causes:
        return None
    return invalid_object(kind, group, str(meta.get("name", "")), causes).message


def pruned_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """Dotted paths present in `before` and pruned from `after` (`spec.colour`)."""
    dropped: list[str] = []
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            here = f"{path}.{key}" if path else key
            if key not in after:
                dropped.append(here)
            else:
                dropped.extend(pruned_paths(value, after[key], here))
    elif isinstance(before, list) and isinstance(after, list):
        for index, (b, a) in enumerate(zip(before, after, strict=False)):
            dropped.extend(pruned_paths(b, a, f"{path}[{index}]"))
    return dropped


def _check_schema_value(value: Any, node: Node | None, path: str, out: list[Cause]) -> None:
    if not node:
        return
    declared = node.get("type")
    if value is None:
        if not node.get("nullable") and declared:
            out.append(_type_error(path, str(declared), "null"))
        return
    got = _json_type(value)
    if node.get("x-kubernetes-int-or-string"):
        if got not in ("integer", "string"):
            out.append(_type_error(path, "integer,string", got))
            return
    elif declared and not (declared == got or (declared == "number" and got == "integer")):
        out.append(_type_error(path, str(declared), got))
        return
    enum = node.get("enum")
    if isinstance(enum, list) and value not in enum:
        shown = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in enum]
        out.append(not_supported(path or _NIL_PATH, value, shown))
    if isinstance(value, str):
        _check_string(value, node, path, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, node, path, out)
    elif isinstance(value, list):
        _check_array(value, node, path, out)
    elif isinstance(value, dict):
        _check_object(value, node, path, out)
    _check_composites(value, node, path, out)


def _check_string(value: str, node: Node, path: str, out: list[Cause]) -> None:
    length = len(value)
    max_length = node.get("maxLength")
    if isinstance(max_length, int) and length > max_length:
        unit = "byte" if max_length == 1 else "bytes"
        out.append(
            Cause(
                path or _NIL_PATH,
                "FieldValueTooLong",
                f"Too long: may not be more than {max_length} {unit}",
            )
        )
    min_length = node.get("minLength")
    if isinstance(min_length, int) and length < min_length:
        out.append(_schema_invalid(path, value, f"should be at least {min_length} chars long"))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        compiled = _compile_pattern(pattern)
        if compiled is not None and not compiled.search(value):
            out.append(_schema_invalid(path, value, f"should match '{pattern}'"))
    fmt = node.get("format")
    check = _FORMAT_CHECKS.get(fmt) if isinstance(fmt, str) else None
    if check is not None and not check(value):
        out.append(
            Cause(
                path or _NIL_PATH,
                "FieldValueTypeInvalid",
                f"Invalid value: {_show(value)}: {path or '.'} in body must be of type {fmt}: {_show(value)}",
            )
        )


@functools.lru_cache(maxsize=1024)
def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """A schema's `pattern` as Go's regexp reads it (RE2); None when it does not compile."""
    try:
        return re2.compile_re2(pattern)
    except re.error:
        return None


def _check_number(value: float, node: Node, path: str, out: list[Cause]) -> None:
    maximum, minimum = node.get("maximum"), node.get("minimum")
    if isinstance(maximum, (int, float)):
        if node.get("exclusiveMaximum") and value >= maximum:
            out.append(_schema_invalid(path, value, f"should be less than {_go_number(maximum)}"))
        elif value > maximum:
            out.append(
                _schema_invalid(
                    path, value, f"should be less than or equal to {_go_number(maximum)}"
                )
            )
    if isinstance(minimum, (int, float)):
        if node.get("exclusiveMinimum") and value <= minimum:
            out.append(
                _schema_invalid(path, value, f"should be greater than {_go_number(minimum)}")
            )
        elif value < minimum:
            out.append(
                _schema_invalid(
                    path, value, f"should be greater than or equal to {_go_number(minimum)}"
                )
            )
    factor = node.get("multipleOf")
    if isinstance(factor, (int, float)) and factor > 0:
        quotient = Fraction(str(value)) / Fraction(str(factor))
        if quotient.denominator != 1:
            out.append(
                _schema_invalid(path, value, f"should be a multiple of {_go_number(factor)}")
            )


def _check_array(value: list[Any], node: Node, path: str, out: list[Cause]) -> None:
    count = len(value)
    max_items, min_items = node.get("maxItems"), node.get("minItems")
    if isinstance(max_items, int) and count > max_items:
        noun = "item" if max_items == 1 else "items"
        out.append(
            Cause(
                path or _NIL_PATH,
                TOO_MANY,
                f"Too many: {count}: must have at most {max_items} {noun}",
            )
        )
    if isinstance(min_items, int) and count < min_items:
        out.append(_schema_invalid(path, value, f"should have at least {min_items} items"))
    if node.get("uniqueItems") and any(value[i] in value[:i] for i in range(count)):
        out.append(_schema_invalid(path, value, "shouldn't contain duplicates"))
    items = node.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _check_schema_value(item, items, f"{path}[{index}]", out)
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[Any] = []
        for index, item in enumerate(value):
            if item in seen:
                out.append(duplicate(f"{path}[{index}]", item))
            seen.append(item)
    elif list_type == "map":
        keys = list(node.get("x-kubernetes-list-map-keys") or ())
        seen_keys: list[dict[str, Any]] = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            identity = {k: item.get(k) for k in keys if k in item}
            if identity in seen_keys:
                out.append(duplicate(f"{path}[{index}]", identity))
            seen_keys.append(identity)


def _check_object(value: dict[str, Any], node: Node, path: str, out: list[Cause]) -> None:
    count = len(value)
    max_props, min_props = node.get("maxProperties"), node.get("minProperties")
    if isinstance(max_props, int) and count > max_props:
        noun = "item" if max_props == 1 else "items"  # sic: apiextensions reuses TooMany
        out.append(
            Cause(
                path or _NIL_PATH,
                TOO_MANY,
                f"Too many: {count}: must have at most {max_props} {noun}",
            )
        )
    if isinstance(min_props, int) and count < min_props:
        out.append(_schema_invalid(path, value, f"should have at least {min_props} properties"))
    prefix = path + "." if path else ""
    for key in node.get("required") or ():
        if key not in value:
            out.append(required(prefix + key))
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    for key, item in value.items():
        child = props.get(key)
        if child is not None:
            _check_schema_value(item, child, prefix + key, out)
        elif isinstance(extra, Mapping):
            _check_schema_value(item, extra, prefix + key, out)
        elif extra is False and not (path == "" and key in ("apiVersion", "kind", "metadata")):
            out.append(
                invalid(path or _NIL_PATH, "", f"{prefix}{key} in body is a forbidden property")
            )


def _sub_check(value: Any, node: Node, path: str) -> list[Cause]:
    found: list[Cause] = []
    _check_schema_value(value, node, path, found)
    return found


def _fewest(results: list[list[Cause]]) -> list[Cause]:
    """The failures of the branch that came closest, as go-openapi reports them."""
    best = results[0]
    for result in results[1:]:
        if len(result) < len(best):
            best = result
    return best


def _check_composites(value: Any, node: Node, path: str, out: list[Cause]) -> None:
    quoted = json.dumps(path)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and all_of:
        results = [_sub_check(value, sub, path) for sub in all_of]
        failed = [r for r in results if r]
        for result in results:
            out.extend(result)
        if failed:
            suffix = ". None validated" if len(failed) == len(results) else ""
            out.append(
                invalid(_NIL_PATH, "", f"{quoted} must validate all the schemas (allOf){suffix}")
            )
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and any_of:
        results = [_sub_check(value, sub, path) for sub in any_of]
        if all(results):
            out.append(
                invalid(_NIL_PATH, "", f"{quoted} must validate at least one schema (anyOf)")
            )
            out.extend(_fewest(results))
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and one_of:
        results = [_sub_check(value, sub, path) for sub in one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            detail = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            out.append(
                invalid(
                    _NIL_PATH,
                    "",
                    f"{quoted} must validate one and only one schema (oneOf). {detail}",
                )
            )
            if valid == 0:
                out.extend(_fewest(results))
    negated = node.get("not")
    if isinstance(negated, Mapping) and not _sub_check(value, negated, path):
        out.append(invalid(_NIL_PATH, "", f"{quoted} must not validate the schema (not)"))


@functools.cache
def _object_meta_fields() -> frozenset[str]:
    meta = builtin_schemas().definitions.get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", {})
    return frozenset(meta.get("properties", {}))


def prune_custom(obj: dict[str, Any], schema: Node) -> dict[str, Any]:
    """A copy of `obj` with what its structural schema does not specify pruned away.

    apiVersion, kind and metadata survive at the root (metadata keeps its ObjectMeta
    fields only), as they do in `x-kubernetes-embedded-resource` objects; subtrees under
    `x-kubernetes-preserve-unknown-fields` keep unknown fields but are pruned inside the
    properties they do specify.
    """
    result = deep_copy(obj)
    _prune(result, schema, root=True)
    return result if isinstance(result, dict) else {}


def _coerce_meta(value: Any) -> None:
    if isinstance(value, dict):
        known = _object_meta_fields()
        for key in [k for k in value if k not in known]:
            del value[key]


def _prune(value: Any, node: Node | None, *, root: bool = False) -> None:
    if isinstance(value, dict):
        if node is None:
            if not root:
                value.clear()
            return
        preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
        embedded = root or bool(node.get("x-kubernetes-embedded-resource"))
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key in list(value):
            item = value[key]
            if embedded and key in ("apiVersion", "kind") and isinstance(item, str):
                continue
            if embedded and key == "metadata" and isinstance(item, dict):
                _coerce_meta(item)
                continue
            if key in props:
                _prune(item, props[key])
            elif isinstance(extra, Mapping):
                _prune(item, extra)
            elif extra is True:
                _prune(item, None)
            elif not preserve:
                del value[key]
    elif isinstance(value, list) and node is not None:
        items = node.get("items")
        for item in value:
            _prune(item, items if isinstance(items, Mapping) else None)


def default_custom(obj: dict[str, Any], schema: Node) -> None:
    """Structural defaulting, in place: `default` values for absent (or non-nullable null)
    fields of objects that exist, then removal of the remaining non-nullable nulls."""
    _default(obj, schema)
    _drop_nulls(obj, schema)


def _is_non_nullable_null(value: Any, node: Node | None) -> bool:
    return value is None and node is not None and not node.get("nullable")


def _default(value: Any, node: Node | None) -> None:
    if not node:
        return
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for key, prop in props.items():
            if "default" in prop and (key not in value or _is_non_nullable_null(value[key], prop)):
                value[key] = deep_copy(prop["default"])
        extra = node.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                _default(item, props[key])
            elif isinstance(extra, Mapping):
                if _is_non_nullable_null(item, extra) and "default" in extra:
                    value[key] = item = deep_copy(extra["default"])
                _default(item, extra)
    elif isinstance(value, list):
        items = node.get("items")
        if not isinstance(items, Mapping):
            return
        for index, item in enumerate(value):
            if _is_non_nullable_null(item, items) and "default" in items:
                value[index] = item = deep_copy(items["default"])
            _default(item, items)


def _drop_nulls(value: Any, node: Node | None) -> None:
    if not node:
        return
    if isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key in list(value):
            child = (
                props.get(key) if key in props else (extra if isinstance(extra, Mapping) else None)
            )
            if child is None:
                continue
            if value[key] is None and not child.get("nullable") and "default" not in child:
                del value[key]
            else:
                _drop_nulls(value[key], child)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _drop_nulls(item, items)


# =====================================================================================
# CustomResourceDefinitions
# =====================================================================================


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """ValidateCustomResourceDefinition(Update) for apiextensions.k8s.io/v1.

    Metadata rules other than the `<plural>.<group>` name are validate_builtin's.
    """
    spec = _d(crd.get("spec"))
    names = _d(spec.get("names"))
    group = _s(spec.get("group"))
    plural = _s(names.get("plural"))
    causes: list[Cause] = []
    name = _s(_d(crd.get("metadata")).get("name"))
    if name and name != f"{plural}.{group}":
        causes.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        causes.append(required("spec.group"))
    elif dns1123_subdomain(group):
        causes.append(invalid("spec.group", group, ",".join(dns1123_subdomain(group))))
    elif "." not in group:
        causes.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = _s(spec.get("scope"))
    if not scope:
        causes.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = _l(spec.get("versions"))
    storage = 0
    seen: set[str] = set()
    unique = True
    for index, version in enumerate(versions):
        version = _d(version)
        here = f"spec.versions[{index}]"
        version_name = _s(version.get("name"))
        if version.get("storage") is True:
            storage += 1
        if version_name in seen:
            unique = False
        seen.add(version_name)
        errors = dns1035_label(version_name)
        if errors:
            causes.append(invalid(here + ".name", version_name, ",".join(errors)))
        schema = _d(version.get("schema")).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            causes.append(required(here + ".schema.openAPIV3Schema", "schemas are required"))
        else:
            causes.extend(_structural_causes(schema, here + ".schema.openAPIV3Schema"))
        for ci, column in enumerate(_l(version.get("additionalPrinterColumns"))):
            causes.extend(
                _printer_column_causes(_d(column), f"{here}.additionalPrinterColumns[{ci}]")
            )
        scale = _d(_d(version.get("subresources")).get("scale"))
        if scale:
            causes.extend(_scale_causes(scale, here + ".subresources.scale"))
    if not unique:
        causes.append(invalid("spec.versions", versions, "must contain unique version names"))
    if storage != 1:
        causes.append(
            invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    for key in ("plural", "singular", "kind", "listKind"):
        if not _s(names.get(key)):
            causes.append(required(f"spec.names.{key}"))
    for key in ("plural", "singular"):
        value = _s(names.get(key))
        errors = dns1035_label(value)
        if value and errors:
            causes.append(invalid(f"spec.names.{key}", value, ",".join(errors)))
    for key in ("kind", "listKind"):
        value = _s(names.get(key))
        errors = dns1035_label(value.lower())
        if value and errors:
            causes.append(
                invalid(
                    f"spec.names.{key}",
                    value,
                    "may have mixed case, but should otherwise match: " + ",".join(errors),
                )
            )
    for key in ("shortNames", "categories"):
        for index, value in enumerate(_l(names.get(key))):
            errors = dns1035_label(_s(value))
            if errors:
                causes.append(invalid(f"spec.names.{key}[{index}]", value, ",".join(errors)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(
            invalid(
                "spec.names.listKind",
                names.get("listKind"),
                "kind and listKind may not be the same",
            )
        )
    if spec.get("preserveUnknownFields") is True:
        causes.append(
            invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            )
        )
    conversion = _d(spec.get("conversion"))
    strategy = conversion.get("strategy")
    if strategy == "None" and conversion.get("webhook") is not None:
        causes.append(
            forbidden(
                "spec.conversion.webhook", "should not be set when strategy is not set to Webhook"
            )
        )
    elif strategy == "Webhook" and conversion.get("webhook") is None:
        causes.append(
            required("spec.conversion.webhook", "required when strategy is set to Webhook")
        )
    elif strategy is not None and strategy not in ("None", "Webhook"):
        causes.append(not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if old is not None:
        old_spec = _d(old.get("spec"))
        conditions = _l(_d(old.get("status")).get("conditions"))
        established = any(
            _d(c).get("type") == "Established" and _d(c).get("status") == "True" for c in conditions
        )
        if established:
            causes.extend(_immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope"))
            causes.extend(
                _immutable(
                    names.get("kind"), _d(old_spec.get("names")).get("kind"), "spec.names.kind"
                )
            )
        causes.extend(_immutable(spec.get("group"), old_spec.get("group"), "spec.group"))
        causes.extend(
            _immutable(
                names.get("plural"), _d(old_spec.get("names")).get("plural"), "spec.names.plural"
            )
        )
        # ValidateCustomResourceDefinitionStoredVersions: objects may still be stored in
        # a version recorded there, so it stays served until the user migrates them and
        # removes it from status.storedVersions.
        stored = _l(_d(crd.get("status")).get("storedVersions")) or _l(
            _d(old.get("status")).get("storedVersions")
        )
        for index, stored_version in enumerate(stored):
            if stored_version not in seen:
                causes.append(
                    invalid(
                        f"status.storedVersions[{index}]",
                        stored_version,
                        "must appear in spec.versions",
                    )
                )
    return causes


_PRINTER_TYPES = "boolean,date,integer,number,string"
_PRINTER_FORMATS = "byte,date,date-time,double,float,int32,int64,password"


def _printer_column_causes(column: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not _s(column.get("name")):
        causes.append(required(path + ".name"))
    kind = _s(column.get("type"))
    if not kind:
        causes.append(required(path + ".type", f"must be one of {_PRINTER_TYPES}"))
    elif kind not in _PRINTER_TYPES.split(","):
        causes.append(invalid(path + ".type", kind, f"must be one of {_PRINTER_TYPES}"))
    fmt = _s(column.get("format"))
    if fmt and fmt not in _PRINTER_FORMATS.split(","):
        causes.append(invalid(path + ".format", fmt, f"must be one of {_PRINTER_FORMATS}"))
    if not _s(column.get("jsonPath")):
        causes.append(required(path + ".jsonPath"))
    return causes


def _scale_causes(scale: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    spec_path, status_path = _s(scale.get("specReplicasPath")), _s(scale.get("statusReplicasPath"))
    if not spec_path:
        causes.append(required(path + ".specReplicasPath"))
    elif not spec_path.startswith(".spec."):
        causes.append(
            invalid(path + ".specReplicasPath", spec_path, "should be a json path under .spec")
        )
    if not status_path:
        causes.append(required(path + ".statusReplicasPath"))
    elif not status_path.startswith(".status."):
        causes.append(
            invalid(
                path + ".statusReplicasPath", status_path, "should be a json path under .status"
            )
        )
    selector_path = scale.get("labelSelectorPath")
    if isinstance(selector_path, str) and not selector_path.startswith((".spec.", ".status.")):
        causes.append(
            invalid(
                path + ".labelSelectorPath",
                selector_path,
                "should be a json path under either .spec or .status",
            )
        )
    return causes


# Value-validation keywords that may not carry structure (type, defaults, extensions).
_FORBIDDEN_IN_JUNCTORS = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
)


def _structural_causes(schema: Obj, path: str) -> list[Cause]:
    """The structural-schema rules a v1 CRD's schemas must meet, sorted as upstream sorts them."""
    causes: list[Cause] = []
    _structural(schema, path, "root", causes)
    causes.sort(key=lambda c: c.render())
    return causes


def _structural(node: Obj, path: str, level: str, out: list[Cause]) -> None:
    kind = _s(node.get("type"))
    out.extend(celrules.compile_causes(node, path))
    if "$ref" in node:
        out.append(forbidden(path + ".$ref", "$ref is not supported"))
    if node.get("uniqueItems") is True:
        out.append(
            forbidden(
                path + ".uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = node.get("properties")
    extra = node.get("additionalProperties")
    # additionalProperties: true beside properties says nothing, and upstream lets it be.
    if isinstance(props, dict) and props and (extra is False or isinstance(extra, dict)):
        out.append(
            forbidden(
                path + ".additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if kind == "array" and not isinstance(node.get("items"), dict):
        out.append(required(path + ".items", "must be specified"))
    if isinstance(node.get("items"), dict):
        _structural(node["items"], path + ".items", "item", out)
    if isinstance(props, dict):
        for key, child in props.items():
            if isinstance(child, dict):
                _structural(child, f"{path}.properties[{key}]", "field", out)
    if isinstance(extra, dict):
        if level == "root":
            out.append(forbidden(path + ".additionalProperties", "must not be used at the root"))
        _structural(extra, path + ".additionalProperties", "field", out)
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = node.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        out.append(
            invalid(
                path + ".x-kubernetes-preserve-unknown-fields",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        out.append(
            invalid(
                path + ".x-kubernetes-embedded-resource",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    # The two int-or-string spellings upstream exempts: `anyOf: [{type: integer},
    # {type: string}]`, directly or as the first `allOf` entry.
    skip_any_of = _is_int_or_string_any_of(node)
    all_of = _l(node.get("allOf"))
    skip_first_all_of = (
        bool(all_of) and isinstance(all_of[0], dict) and _is_int_or_string_any_of(all_of[0])
    )
    for junctor in ("allOf", "anyOf", "oneOf"):
        if junctor == "anyOf" and skip_any_of:
            continue
        for index, sub in enumerate(_l(node.get(junctor))):
            if isinstance(sub, dict):
                skip = junctor == "allOf" and index == 0 and skip_first_all_of
                _junctor(sub, f"{path}.{junctor}[{index}]", out, skip_any_of=skip)
    if isinstance(node.get("not"), dict):
        _junctor(node["not"], path + ".not", out)
    pattern = node.get("pattern")
    if isinstance(pattern, str) and _compile_pattern(pattern) is None:
        out.append(
            invalid(
                path + ".pattern",
                pattern,
                "must be a valid regular expression, but isn't: error parsing regexp",
            )
        )
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        out.append(
            required(path + ".type", detail) if not kind else invalid(path + ".type", kind, detail)
        )
    elif not kind and not int_or_string and not preserve:
        detail = {
            "root": "must not be empty at the root",
            "item": "must not be empty for specified array items",
            "field": "must not be empty for specified object fields",
        }[level]
        out.append(required(path + ".type", detail))
    if level == "root" and kind and kind != "object":
        out.append(invalid(path + ".type", kind, "must be object at the root"))
    if (level == "root" or embedded) and isinstance(props, dict):
        for key, expected in (("kind", "string"), ("apiVersion", "string"), ("metadata", "object")):
            child = props.get(key)
            if isinstance(child, dict) and child.get("type") != expected:
                out.append(
                    invalid(
                        f"{path}.properties[{key}].type",
                        _s(child.get("type")),
                        f"must be {expected}",
                    )
                )
    if level == "root" and isinstance(props, dict) and isinstance(props.get("metadata"), dict):
        meta = props["metadata"]
        allowed = {"type", "description"}
        inner = meta.get("properties")
        if (set(meta) - allowed - {"properties"}) or (
            isinstance(inner, dict) and not set(inner) <= {"name", "generateName"}
        ):
            out.append(
                forbidden(
                    path + ".properties[metadata]",
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    if embedded and not preserve and not props:
        out.append(
            required(
                path + ".properties",
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            )
        )
    list_type = node.get("x-kubernetes-list-type")
    if list_type is not None:
        if kind != "array":
            out.append(
                invalid(
                    path + ".x-kubernetes-list-type",
                    list_type,
                    "must only be used if type is array",
                )
            )
        elif list_type not in ("atomic", "set", "map"):
            out.append(
                not_supported(path + ".x-kubernetes-list-type", list_type, ["atomic", "set", "map"])
            )
        elif list_type == "map" and not _l(node.get("x-kubernetes-list-map-keys")):
            out.append(
                required(
                    path + ".x-kubernetes-list-map-keys",
                    "must not be empty if x-kubernetes-list-type is map",
                )
            )


def _is_int_or_string_any_of(node: Obj) -> bool:
    any_of = _l(node.get("anyOf"))
    return len(any_of) == 2 and any_of[0] == {"type": "integer"} and any_of[1] == {"type": "string"}


def _junctor(node: Obj, path: str, out: list[Cause], *, skip_any_of: bool = False) -> None:
    for key, detail in _FORBIDDEN_IN_JUNCTORS:
        value = node.get(key)
        if value not in (None, False, "", [], {}):
            out.append(forbidden(f"{path}.{key}", detail))
    props = node.get("properties")
    if isinstance(props, dict):
        if "metadata" in props:
            out.append(
                forbidden(
                    path + ".properties[metadata]", "must not be specified in a nested context"
                )
            )
        for key, child in props.items():
            if isinstance(child, dict):
                _junctor(child, f"{path}.properties[{key}]", out)
    if isinstance(node.get("items"), dict):
        _junctor(node["items"], path + ".items", out)
    for junctor in ("allOf", "anyOf", "oneOf"):
        if junctor == "anyOf" and skip_any_of:
            continue
        for index, sub in enumerate(_l(node.get(junctor))):
            if isinstance(sub, dict):
                _junctor(sub, f"{path}.{junctor}[{index}]", out)
    if isinstance(node.get("not"), dict):
        _junctor(node["not"], path + ".not", out)
