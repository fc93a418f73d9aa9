"""API errors of the local cluster, answered as Kubernetes `Status` objects.

Every failure a request can meet is an `APIError`: the HTTP layer turns it into a
`Status` body with the code and reason a real kube-apiserver would use, so clients
(kubectl, lightkube, the `kubernetes` package) react to it as they would to a real
server. Field problems travel as `Cause`s, rendered in the API server's wording
("spec.replicas: Invalid value: -1: must be greater than or equal to 0").

    APIError
    ├── (code 400) BadRequest
    ├── (code 401) Unauthorized
    ├── (code 404) NotFound
    ├── (code 405) MethodNotAllowed
    ├── (code 406) NotAcceptable
    ├── (code 409) AlreadyExists / Conflict
    ├── (code 410) Expired (watch too old: reason "Expired", or "Gone")
    ├── (code 413) RequestEntityTooLarge (an admission policy's reason)
    ├── (code 415) UnsupportedMediaType
    ├── (code 422) Invalid
    ├── (code 429) TooManyRequests (an eviction a disruption budget forbids)
    └── (code 500) InternalError
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Cause reasons, as metav1.CauseType spells them.
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
TYPE_INVALID = "FieldValueTypeInvalid"
FIELD_MANAGER_CONFLICT = "FieldManagerConflict"


@dataclass(frozen=True)
class Cause:
    """One field-level problem: `field` is a dotted path such as `spec.template.spec.containers[0].image`."""

    field: str
    reason: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}

    def render(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def _show(value: Any) -> str:
    """A value as the API server quotes it in messages: strings quoted, others as JSON."""
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), default=str)


def required(field: str, detail: str = "") -> Cause:
    return Cause(field, REQUIRED, "Required value" + (f": {detail}" if detail else ""))


def invalid(field: str, value: Any, detail: str) -> Cause:
    return Cause(field, INVALID, f"Invalid value: {_show(value)}: {detail}")


def not_supported(field: str, value: Any, supported: list[str]) -> Cause:
    shown = ", ".join(json.dumps(s) for s in supported)
    return Cause(
        field, NOT_SUPPORTED, f"Unsupported value: {_show(value)}: supported values: {shown}"
    )


def forbidden(field: str, detail: str) -> Cause:
    return Cause(field, FORBIDDEN, f"Forbidden: {detail}")


def duplicate(field: str, value: Any) -> Cause:
    return Cause(field, DUPLICATE, f"Duplicate value: {_show(value)}")


def too_long(field: str, value: Any, limit: int) -> Cause:
    return Cause(field, TOO_LONG, f"Too long: may not be more than {limit} bytes")


def type_invalid(field: str, value: Any, expected: str) -> Cause:
    return Cause(
        field,
        TYPE_INVALID,
        f"Invalid value: {_show(value)}: {field} in body must be of type {expected}",
    )


class APIError(Exception):
    """A request failed; `to_status()` is the body the client receives."""

    code = 500
    reason = "InternalError"

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}
        #: Warnings the refusal is sent with (a `Warn` admission policy's, say).
        self.warnings = warnings or []

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            status["details"] = self.details
        return status


class BadRequest(APIError):
    code, reason = 400, "BadRequest"


class Unauthorized(APIError):
    code, reason = 401, "Unauthorized"


class Forbidden(APIError):
    code, reason = 403, "Forbidden"


class NotFound(APIError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(APIError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(APIError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(APIError):
    code, reason = 409, "AlreadyExists"


class Conflict(APIError):
    code, reason = 409, "Conflict"


class Expired(APIError):
    code, reason = 410, "Expired"


class Gone(APIError):
    code, reason = 410, "Gone"


class RequestEntityTooLarge(APIError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(APIError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(APIError):
    code, reason = 422, "Invalid"


class TooManyRequests(APIError):
    code, reason = 429, "TooManyRequests"


class ServiceUnavailable(APIError):
    code, reason = 503, "ServiceUnavailable"


class InternalError(APIError):
    code, reason = 500, "InternalError"


def qualified(resource: str, group: str) -> str:
    """`deployments.apps`, or just `configmaps` for the core group — as messages name resources."""
    return f"{resource}.{group}" if group else resource


def admission_forbidden(
    resource: str, meta: dict[str, Any], why: str, *, group: str = ""
) -> Forbidden:
    """An admission plugin's refusal (admission.NewForbidden): the object is named by its
    generateName while it has no name yet (`pods "web-6c8f-" is forbidden: …`)."""
    shown = meta.get("name") or meta.get("generateName") or ""
    details = {"name": shown, "kind": resource}
    if group:
        details["group"] = group
    return Forbidden(f'{qualified(resource, group)} "{shown}" is forbidden: {why}', details=details)


def not_found(resource: str, group: str, name: str) -> NotFound:
    return NotFound(
        f'{qualified(resource, group)} "{name}" not found',
        details={"name": name, "group": group, "kind": resource},
    )


def no_such_path() -> NotFound:
    """A path the server does not serve: kube-apiserver's 404 with empty (not absent) details.

    Clients read them: kubectl debug takes a 404 whose details name nothing for "ephemeral
    containers are disabled", and dereferences the details to find out.
    """
    return NotFound("the server could not find the requested resource", details={})


def already_exists(resource: str, group: str, name: str) -> AlreadyExists:
    return AlreadyExists(
        f'{qualified(resource, group)} "{name}" already exists',
        details={"name": name, "group": group, "kind": resource},
    )


def conflict(resource: str, group: str, name: str, why: str) -> Conflict:
    return Conflict(
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        details={"name": name, "group": group, "kind": resource},
    )


def invalid_object(kind: str, group: str, name: str, causes: list[Cause]) -> Invalid:
    """422 naming every field, in the API server's words: `Kind.group "name" is invalid: a, b`."""
    qualified_kind = f"{kind}.{group}" if group else kind
    rendered = [c.render() for c in causes]
    joined = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    return Invalid(
        f'{qualified_kind} "{name}" is invalid: {joined}',
        details={
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [c.to_dict() for c in causes],
        },
    )
