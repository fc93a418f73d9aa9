"""The keys a built-in kind's nested objects may have, read from the generated TypedDicts
(`stackwright.kubernetes.inputs`), so that a misspelt key deep inside a `spec` can be named
where it is written, without a cluster.

    kind_nested("apps", "v1", "Deployment")["spec"]
        → Nested("one", "apps_v1", "DeploymentSpecDict")
    object_keys("apps_v1", "DeploymentSpecDict")["template"]
        → Nested("one", "core_v1", "PodTemplateSpecDict")

A field whose keys are free (labels, annotations, data, resources.limits: a `Mapping[str, …]`
of plain values, or `Any`) nests nothing checkable and maps to None. Each table is computed on
first use, once per kind and per TypedDict.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from stackwright.kubernetes.base import _camel, builtin_module

_INPUTS = "stackwright.kubernetes.inputs"
#: A TypedDict named in an annotation: `DeploymentSpecDict`, `core_v1.PodSpecDict` (another
#: inputs module) or `apps_v1_inputs.DeploymentSpecDict` (as a kind's module imports it).
_TYPED_DICT = re.compile(r"(?:(\w+?)(?:_inputs)?\.)?(\w+Dict)")


@dataclass(frozen=True)
class Nested:
    """A field holding `container` of the TypedDict `name` of the inputs module `module`:
    one object, a list of them, or a map of free keys to them."""

    container: Literal["one", "list", "map"]
    module: str
    name: str

    @property
    def shown(self) -> str:
        """The definition's own name (`Container` for `ContainerDict`)."""
        return self.name.removesuffix("Dict")


def _nested(annotation: str, module: str, aliases: Mapping[str, object]) -> Nested | None:
    """What `annotation` (written in the inputs module `module`, or in a kind's module whose
    globals are `aliases`) nests: None for a plain value or a map of free keys to plain values."""
    text = annotation.removeprefix("Required[")
    container: Literal["one", "list", "map"] = "one"
    if text.startswith("Sequence["):
        text, container = text.removeprefix("Sequence["), "list"
    elif text.startswith("Mapping[str, "):
        text, container = text.removeprefix("Mapping[str, "), "map"
    first = text.split(" | ", 1)[0].rstrip("]")
    alias = aliases.get(first)  # a kind's module names its fields' types `<Name>Arg`
    if isinstance(alias, str):
        first = alias.split(" | ", 1)[0]
    match = _TYPED_DICT.fullmatch(first)
    if match is None or not (match.group(1) or module):
        return None
    return Nested(container, match.group(1) or module, match.group(2))


@functools.cache
def object_keys(module: str, name: str) -> Mapping[str, Nested | None]:
    """The keys of the TypedDict `name` of the inputs module `module`, each with what it
    nests."""
    cls = getattr(importlib.import_module(f"{_INPUTS}.{module}"), name)
    return {
        key: _nested(getattr(hint, "__forward_arg__", str(hint)), module, {})
        for key, hint in cls.__annotations__.items()
    }


@functools.cache
def kind_nested(group: str, version: str, kind: str) -> Mapping[str, Nested | None]:
    """A built-in kind's top-level fields (camelCase) with what each nests; empty for a kind
    that is not built in."""
    module = builtin_module(group, version)
    if module is None or kind not in module.__all__:
        return {}
    hints = getattr(module, kind).__init__.__annotations__
    skipped = {"resource_name", "opts", "return"}
    return {
        _camel(name): _nested(hint, "", vars(module))
        for name, hint in hints.items()
        if name not in skipped
    }


__all__ = ["Nested", "kind_nested", "object_keys"]
