"""The programming model: resources, options, Outputs, configuration and stack outputs."""

from stackwright.sdk.config import Config
from stackwright.sdk.context import export, get_project, get_stack
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
    "register_resource_transform",
    "register_secret_source",
    "secret_from",
    "secret_from_env",
    "secret_from_file",
]
