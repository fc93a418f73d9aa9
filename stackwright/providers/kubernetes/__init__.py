"""Stackwright's Kubernetes provider: server-side apply, readiness, reads and deletes.

The engine uses `KubernetesProvider`; the ApplySet helpers mark what a stack owns;
the errors say whether to retry or stop. Submodules:

    kubeconfig.py   finding the cluster and credentials as kubectl does
    auth.py         tokens, token files, exec plugins
    http.py         the lean HTTP/1.1 transport (and the httpx one)
    client.py       retries, backoff, error mapping
    discovery.py    apiVersion/kind -> URL paths, cached
    readiness.py    per-kind readiness rules (pure)
    informers.py    shared list+watch caches
    waiting.py      await_ready and waiting for deletion
    applyset.py     KEP-3659 ApplySets and DESIGN's managed labels
    jsonpath.py     the JSONPath subset of stackwright.io/wait-for
    errors.py       the error tree
"""

from stackwright.providers.kubernetes.applyset import (
    ApplySet,
    ManagedMetadata,
    applyset_id,
    managed_labels,
    stamp,
)
from stackwright.providers.kubernetes.client import RetryPolicy
from stackwright.providers.kubernetes.discovery import ResourceInfo, ServedKinds
from stackwright.providers.kubernetes.errors import (
    AccessDenied,
    ApplyConflict,
    Cause,
    ConfigError,
    DeleteTimeout,
    FieldConflict,
    InvalidObject,
    NotFoundError,
    PermanentError,
    ProviderError,
    ReadinessFailed,
    ReadinessTimeout,
    TransientError,
    UnknownKind,
)
from stackwright.providers.kubernetes.kubeconfig import ClusterConfig, load_config
from stackwright.providers.kubernetes.provider import KubernetesProvider
from stackwright.providers.kubernetes.readiness import Readiness, Related, State

__all__ = [
    "AccessDenied",
    "ApplyConflict",
    "ApplySet",
    "Cause",
    "ClusterConfig",
    "ConfigError",
    "DeleteTimeout",
    "FieldConflict",
    "InvalidObject",
    "KubernetesProvider",
    "ManagedMetadata",
    "NotFoundError",
    "PermanentError",
    "ProviderError",
    "Readiness",
    "ReadinessFailed",
    "ReadinessTimeout",
    "Related",
    "ResourceInfo",
    "RetryPolicy",
    "ServedKinds",
    "State",
    "TransientError",
    "UnknownKind",
    "applyset_id",
    "load_config",
    "managed_labels",
    "stamp",
]
