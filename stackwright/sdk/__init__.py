"""The programming model: resources, options, Outputs, configuration and stack outputs."""

from stackwright.sdk.config import Config
from stackwright.sdk.context import export
from stackwright.sdk.output import UNKNOWN, Output
from stackwright.sdk.resource import (
    ComponentResource,
    CustomResource,
    CustomTimeouts,
    Resource,
    ResourceOptions,
)

__all__ = [
    "UNKNOWN",
    "ComponentResource",
    "Config",
    "CustomResource",
    "CustomTimeouts",
    "Output",
    "Resource",
    "ResourceOptions",
    "export",
]
