"""The Kubernetes provider's public surface: small, sorted, importable, and what the engine calls."""

from __future__ import annotations

import inspect

import stackwright.providers.kubernetes as kubernetes
from stackwright.errors import InputsRejected, StackwrightError, UsageError
from stackwright.providers.kubernetes import errors

EXPECTED = [
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


def test_all_is_sorted_complete_and_importable() -> None:
    assert kubernetes.__all__ == EXPECTED
    assert kubernetes.__all__ == sorted(kubernetes.__all__)
    for name in kubernetes.__all__:
        assert getattr(kubernetes, name) is not None


def test_error_tree_splits_retry_from_stop() -> None:
    assert issubclass(errors.ProviderError, StackwrightError)
    assert issubclass(errors.TransientError, errors.ProviderError)
    for stop in (
        errors.InvalidObject,
        errors.ApplyConflict,
        errors.NotFoundError,
        errors.UnknownKind,
        errors.AccessDenied,
        errors.ReadinessFailed,
        errors.ReadinessTimeout,
        errors.DeleteTimeout,
        errors.ConfigError,
    ):
        assert issubclass(stop, errors.PermanentError)
        assert not issubclass(stop, errors.TransientError)
    assert issubclass(errors.ConfigError, UsageError) and errors.ConfigError.exit_code == 2
    assert errors.ReadinessFailed.exit_code == 1
    assert issubclass(errors.NamespaceMissing, errors.NotFoundError)
    assert issubclass(errors.NamespaceMissing, InputsRejected)


def test_engine_facing_signatures() -> None:
    provider = kubernetes.KubernetesProvider
    init = inspect.signature(provider.__init__).parameters
    assert list(init)[1:4] == ["kubeconfig", "context", "namespace"]
    assert init["field_manager"].default == "stackwright"
    assert init["timeout"].default == 600
    for method in (
        "resource_info",
        "namespaced",
        "preview",
        "apply",
        "read",
        "list",
        "delete",
        "await_ready",
        "close",
    ):
        assert inspect.iscoroutinefunction(getattr(provider, method)), method
    delete = inspect.signature(provider.delete).parameters
    assert (delete["wait"].default, delete["timeout"].default, delete["propagation"].default) == (
        True,
        None,
        "Background",
    )
    assert inspect.signature(provider.apply).parameters["force"].default is False
    assert set(inspect.signature(provider.await_ready).parameters) == {
        "self",
        "obj",
        "timeout",
        "on_status",
        "fed_later",
    }
    assert isinstance(provider.default_namespace, property)
