"""Stackwright: infrastructure as code for Kubernetes, in Python.

A program imports this package as `sw` for the programming model and
`stackwright.kubernetes` as `k8s` for the resource classes:

    import stackwright as sw
    import stackwright.kubernetes as k8s

    cm = k8s.core.v1.ConfigMap("settings", data={"mode": "prod"})
    sw.export("name", cm.metadata["name"])
"""

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
    "register_resource_transform",
    "register_secret_source",
    "secret_from",
    "secret_from_env",
    "secret_from_file",
]
