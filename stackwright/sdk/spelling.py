"""How the program's language spells a resource option, for every message that names one:
a Python program writes `ResourceOptions(retain_on_delete=True)`, a YAML program
`options: {retainOnDelete: true}`. The YAML program loader reads options by the same table,
so a message (the engine's, or the SDK's check of a resource's options) and the loader can
never disagree. Pure: no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

#: YAML option → ResourceOptions field (Pulumi YAML's names).
YAML_OPTIONS: Mapping[str, str] = {
    "dependsOn": "depends_on",
    "parent": "parent",
    "provider": "provider",
    "protect": "protect",
    "ignoreChanges": "ignore_changes",
    "replaceOnChanges": "replace_on_changes",
    "deleteBeforeReplace": "delete_before_replace",
    "retainOnDelete": "retain_on_delete",
    "customTimeouts": "custom_timeouts",
    "aliases": "aliases",
    "import": "import_",
    "additionalSecretOutputs": "additional_secret_outputs",
    "deletedWith": "deleted_with",
}

#: ResourceOptions fields a YAML program has no option for, and what it does instead (the
#: loader says so to a program that writes one under `options:`).
PYTHON_ONLY_OPTIONS: Mapping[str, str] = {
    "force": "a YAML program takes over conflicting fields with `stackwright up --force-conflicts`",
    "transforms": "a YAML program writes the properties and options it wants as they are",
    "providers": "a YAML program names its one provider with `provider`",
}

#: ResourceOptions field → how a YAML program writes it; a read's `id`, no option there, is
#: its own `get: {id: …}`.
_YAML_NAMES = {field: key for key, field in YAML_OPTIONS.items()} | {"id": "get.id"}


@dataclass(frozen=True)
class Spelling:
    """A program language's way of writing options (`yaml`: a YAML program's `options:`)."""

    yaml: bool = False

    def name(self, option: str) -> str:
        """`option`, a ResourceOptions field maybe with a setting after a dot
        (`custom_timeouts.delete`), as the program writes it (`customTimeouts.delete`). An
        option the language has not (`has`: a YAML program's `force`) keeps the one name it
        has, Python's: a message about it names it so rather than failing."""
        field, dot, setting = option.partition(".")
        return (_YAML_NAMES.get(field, field) if self.yaml else field) + dot + setting

    def has(self, option: str) -> bool:
        """Whether the program's language has `option` (a YAML program has no `force`)."""
        return not self.yaml or option.partition(".")[0] in _YAML_NAMES

    def read(self, object_id: str) -> str:
        """That the resource reads the existing object `object_id`, as the program says it."""
        return f"get: {{id: {object_id}}}" if self.yaml else f"id={object_id!r}"

    def value(self, value: object) -> str:
        """`value` as a literal of the program's language (lists with double-quoted items)."""
        if isinstance(value, bool):
            return str(value).lower() if self.yaml else str(value)
        if isinstance(value, (list, tuple)):
            return f"[{', '.join(json.dumps(item) for item in value)}]"
        if isinstance(value, str):
            return value if self.yaml else repr(value)
        return str(value)

    def setting(self, option: str, value: object) -> str:
        """`option` set to `value`: what goes into `ResourceOptions(...)`, or a YAML
        resource's `options:` mapping."""
        if self.yaml:
            return f"options: {{{self.name(option)}: {self.value(value)}}}"
        return f"{option}={self.value(value)}"

    def options(self, option: str, value: object) -> str:
        """The whole options value that sets `option` to `value`."""
        return (
            self.setting(option, value)
            if self.yaml
            else f"ResourceOptions({self.setting(option, value)})"
        )


PYTHON = Spelling()
YAML = Spelling(yaml=True)


def spelling_of(runtime: str | None) -> Spelling:
    """How a program of `runtime` (Stackwright.yaml's; None without a program) spells options."""
    return YAML if runtime == "yaml" else PYTHON
