"""The programming model: resources, options, Outputs, configuration and stack outputs.

Each name is imported from its module when first used: `stackwright.sdk.output` (which
the engine's plans and displays use) must not bring in the resource model and
configuration with it.
"""

from typing import TYPE_CHECKING

from stackwright.lazy import lazy_exports

if TYPE_CHECKING:
    from stackwright.sdk import log
    from stackwright.sdk.config import Config
    from stackwright.sdk.context import export, get_project, get_stack, is_dry_run
    from stackwright.sdk.output import UNKNOWN, Input, Inputs, Output
    from stackwright.sdk.resource import (
        Alias,
        ComponentResource,
        CustomResource,
        CustomTimeouts,
        Resource,
        ResourceOptions,
        ResourceTransformArgs,
        ResourceTransformResult,
        register_resource_transform,
    )
    from stackwright.sdk.secret_sources import (
        SecretSource,
        register_secret_source,
        secret_from,
        secret_from_env,
        secret_from_file,
    )
    from stackwright.sdk.stack_reference import StackReference

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
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "Alias": "stackwright.sdk.resource",
            "ComponentResource": "stackwright.sdk.resource",
            "Config": "stackwright.sdk.config",
            "CustomResource": "stackwright.sdk.resource",
            "CustomTimeouts": "stackwright.sdk.resource",
            "Input": "stackwright.sdk.output",
            "Inputs": "stackwright.sdk.output",
            "Output": "stackwright.sdk.output",
            "Resource": "stackwright.sdk.resource",
            "ResourceOptions": "stackwright.sdk.resource",
            "ResourceTransformArgs": "stackwright.sdk.resource",
            "ResourceTransformResult": "stackwright.sdk.resource",
            "SecretSource": "stackwright.sdk.secret_sources",
            "StackReference": "stackwright.sdk.stack_reference",
            "UNKNOWN": "stackwright.sdk.output",
            "export": "stackwright.sdk.context",
            "get_project": "stackwright.sdk.context",
            "get_stack": "stackwright.sdk.context",
            "is_dry_run": "stackwright.sdk.context",
            "log": "stackwright.sdk.log",
            "register_resource_transform": "stackwright.sdk.resource",
            "register_secret_source": "stackwright.sdk.secret_sources",
            "secret_from": "stackwright.sdk.secret_sources",
            "secret_from_env": "stackwright.sdk.secret_sources",
            "secret_from_file": "stackwright.sdk.secret_sources",
        },
    )
