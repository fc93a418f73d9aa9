"""The Kubernetes provider's errors, split by what the caller does next.

    StackwrightError                      (stackwright.errors)
    └── ProviderError                     anything the provider reports
        ├── TransientError                retried with backoff already, still failing: retry later
        │   └── Unreachable               ... the API server never answered in this operation
        │                                 (also stackwright.errors.ClusterUnreachable)
        └── PermanentError                retrying will not help: stop and tell the user
            ├── InvalidObject             the API server (or the provider) rejected the object (400/422)
            │   └── ApplyRejected         ... its apply or dry run, for the object's own fields
            │                             (also stackwright.errors.InputsRejected: bad input)
            ├── ApplyConflict             another field manager owns fields we set (409)
            ├── NotFoundError             the object (or its namespace) does not exist (404)
            │   └── NamespaceMissing      ... the namespace an apply or its dry run names
            │                             (also stackwright.errors.InputsRejected: bad input)
            ├── UnknownKind               the cluster does not serve this apiVersion/kind
            ├── AccessDenied              401 / 403: the credentials cannot do this
            ├── ReadinessFailed           the object will not become ready (cause from its status / pods)
            ├── ReadinessTimeout          the object did not become ready in time
            ├── DeleteTimeout             the object is still there (finalizers) after the timeout
            └── ConfigError               the kubeconfig is unusable (also a UsageError: exit code 2)

Every message is one line for the user: the object, the cause, and how to fix it.
The original exception (an HTTP error, a YAML error, an OSError) is chained.
Must never: carry a bearer token or a client key in a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from stackwright.errors import ClusterUnreachable, InputsRejected, StackwrightError, UsageError

__all__ = [
    "AccessDenied",
    "ApplyConflict",
    "ApplyRejected",
    "Cause",
    "ConfigError",
    "DeleteTimeout",
    "FieldConflict",
    "InvalidObject",
    "NamespaceMissing",
    "NotFoundError",
    "PermanentError",
    "ProviderError",
    "ReadinessFailed",
    "ReadinessTimeout",
    "TransientError",
    "UnknownKind",
    "Unreachable",
]


@dataclass(frozen=True)
class Cause:
    """One field-level problem from a Kubernetes `Status` (`details.causes[]`)."""

    field: str
    reason: str
    message: str


@dataclass(frozen=True)
class FieldConflict:
    """A field another manager owns: `field` as the API server spells it (`.spec.replicas`);
    `subresource` the one it wrote through (`scale`), if any."""

    field: str
    manager: str
    subresource: str = ""


class ProviderError(StackwrightError):
    """Something the Kubernetes provider reports; `status` is the HTTP code when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


class TransientError(ProviderError):
    """The API server or the network failed in a way that may pass (429, 5xx, resets, timeouts).

    The provider has already retried with backoff; the caller may retry the whole step later.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class Unreachable(TransientError, ClusterUnreachable):
    """The API server has not answered once in this operation, and its first contact failed
    on the connection (refused, DNS, TLS handshake, timeout): `reason` says so without the
    object, for a message about the whole run; `sent` as `ClusterUnreachable` has it."""

    def __init__(self, what: str, reason: str, *, sent: bool = True) -> None:
        TransientError.__init__(self, f"{what}: {reason}")
        self.reason = reason
        self.sent = sent


class PermanentError(ProviderError):
    """Retrying the same request will not help."""


class InvalidObject(PermanentError):
    """The object is invalid: the server's message, and its field causes when it gave them."""

    def __init__(
        self, message: str, *, causes: tuple[Cause, ...] = (), status: int | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.causes = causes


class ApplyRejected(InvalidObject, InputsRejected):
    """The API server answered an apply (or its dry run) with 422 Invalid or 400 BadRequest,
    or the 500 server-side apply gives a patch its schema does not fit: the object's own
    fields are wrong (`replicas: "3"`, a ConfigMap key or a name Kubernetes does not allow, a
    field a custom resource's schema lacks), which the program fixes."""

    def beyond_immutable(self, forcing: Collection[str] = ()) -> str | None:
        others = [
            cause
            for cause in self.causes
            if not _against_change(cause) and not any(_related(cause.field, p) for p in forcing)
        ]
        if not self.causes or not others:
            return None
        subject = str(self).partition(" is invalid:")[0]
        said = ", ".join(f"{c.field}: {c.message}" if c.field else c.message for c in others)
        return f"{subject} is invalid: {said}"


#: How Kubernetes words a refusal to change a field once set, besides "field is immutable":
#: a Service's clusterIPs, a RoleBinding's roleRef, a PriorityClass's value, a Pod's spec;
#: a custom resource's rule that compares with `oldSelf`, which only an update is held to.
_AGAINST_CHANGE = (
    "immutable",
    "may not change",
    "cannot change",
    "may not be changed",
    "can not be modified",
    "can not be unset",
    "may not add or remove",
    "oldself",
)


def _related(field: str, path: str) -> bool:
    """Whether a cause's `field` is `path`, inside it, or holds it (a Pod's `spec` refused
    for a change of `spec.containers[0].image`), key by key: the server writes a map's key
    bare in brackets (`spec.routes[a: b]`) where a program's path may quote it."""
    inner, outer = _field_keys(field), _field_keys(path)
    return bool(inner and outer) and all(
        a == b or "*" in (a, b) for a, b in zip(inner, outer, strict=False)
    )


#: A field path's parts: a dotted name, a quoted key in brackets, or anything bare in brackets
#: (an index, `*` for any, or a map key as the server writes it).
_FIELD_PART = re.compile(r'\.?([^.\[\]]+)|\[("(?:[^"\\]|\\.)*")\]|\[([^\]]*)\]')


def _field_keys(path: str) -> list[str]:
    """The keys a field path names, a key holding dots split at them (`data["tls.crt"]`,
    `data[tls.crt]` and `data.tls.crt` alike)."""
    keys: list[str] = []
    for name, quoted, bare in _FIELD_PART.findall(path):
        key = json.loads(quoted) if quoted else name or bare
        keys.extend(key.split("."))
    return keys


def _against_change(cause: Cause) -> bool:
    """Whether a cause refuses a change to a field that cannot change once set (a selector,
    a Job's template, a StatefulSet's spec beyond what may be updated), as Kubernetes says it."""
    text = cause.message.lower()
    return any(words in text for words in _AGAINST_CHANGE) or (
        cause.reason == "FieldValueForbidden" and "updates to" in text and "forbidden" in text
    )


class ApplyConflict(PermanentError):
    """Server-side apply found fields owned by other managers; `force` takes them over."""

    def __init__(
        self, message: str, *, conflicts: tuple[FieldConflict, ...] = (), status: int | None = 409
    ) -> None:
        super().__init__(message, status=status)
        self.conflicts = conflicts


class NotFoundError(PermanentError):
    """The object, or the namespace it would live in, does not exist."""


class NamespaceMissing(NotFoundError, InputsRejected):
    """An apply (or its dry run) names a namespace the cluster does not have, and the
    program does not declare (one it declares is applied first, and a preview does not
    dry-run into it): bad input the program fixes at the resource's line, as a refused
    field is, or the user by creating the namespace."""

    def __init__(self, message: str, *, namespace: str) -> None:
        super().__init__(message, status=404)
        self.missing_namespace = namespace

    def beyond_immutable(self, forcing: Collection[str] = ()) -> str | None:
        # A verdict on the new object whatever forces a replacement: it would not be made.
        return str(self)


class UnknownKind(PermanentError):
    """The cluster serves no such apiVersion/kind (a missing or not yet Established CRD)."""

    def __init__(self, message: str, *, api_version: str, kind: str) -> None:
        super().__init__(message, status=404)
        self.api_version = api_version
        self.kind = kind


class AccessDenied(PermanentError):
    """401 or 403: the credentials were rejected or lack a permission."""


class ReadinessFailed(PermanentError):
    """The object reached a state it will not recover from on its own (or stayed failing)."""


class ReadinessTimeout(PermanentError):
    """The object was still not ready when the timeout ran out; `last_status` is what we saw last."""

    def __init__(self, message: str, *, last_status: str = "") -> None:
        super().__init__(message)
        self.last_status = last_status


class DeleteTimeout(PermanentError):
    """The object was still present when the timeout ran out; `finalizers` are what held it."""

    def __init__(self, message: str, *, finalizers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.finalizers = finalizers


class ConfigError(PermanentError, UsageError):
    """The kubeconfig (file, context, credentials) is unusable; the user fixes a file or a flag."""

    exit_code = 2
