"""Stackwright: infrastructure as code for Kubernetes, in Python.

A program imports this package as `sw` for the programming model and
`stackwright.kubernetes` as `k8s` for the resource classes:

    import stackwright as sw
    import stackwright.kubernetes as k8s

    cm = k8s.core.v1.ConfigMap("settings", data={"mode": "prod"})
    sw.export("name", cm.metadata["name"])

The names are the SDK's (`stackwright.sdk`), imported on first use: every command of the
CLI imports this package, and most (`--version`, `stack ls`, `config get`) run no program,
so they should not pay for the programming model (~70 ms: asyncio, the resource model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackwright.lazy import lazy_exports

if TYPE_CHECKING:
    from stackwright.sdk import (
        UNKNOWN,
        Alias,
        ComponentResource,
        Config,
        CustomResource,
        CustomTimeouts,
        Input,
        Inputs,
        Output,
        Resource,
        ResourceOptions,
        ResourceTransformArgs,
        ResourceTransformResult,
        SecretSource,
        StackReference,
        export,
        get_project,
        get_stack,
        is_dry_run,
        log,
        register_resource_transform,
        register_secret_source,
        secret_from,
        secret_from_env,
        secret_from_file,
    )

__all__ = [
    "UNKNOWN",
    "Alias",
    "ComponentResource",
    "Config",
    "CustomResource",
    "CustomTimeouts",
    "Input",
    "Inputs",
    "Output",
    "Resource",
    "ResourceOptions",
    "ResourceTransformArgs",
    "ResourceTransformResult",
    "SecretSource",
    "StackReference",
    "export",
    "get_project",
    "get_stack",
    "is_dry_run",
    "log",
    "register_resource_transform",
    "register_secret_source",
    "secret_from",
    "secret_from_env",
    "secret_from_file",
]


if not TYPE_CHECKING:  # mypy sees the imports above, and reports a misspelt name
    __getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "stackwright.sdk"))
