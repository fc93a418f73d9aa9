"""The schemas of the CustomResourceDefinitions a preview creates or changes, for checking
their objects: the server cannot dry-run an object of a kind it does not serve yet (or
serves with the schema about to change), so the preview checks it against the
`openAPIV3Schema` the program declares, in the API server's words.

The check is the local cluster's own (`localcluster.validation.check_custom`, pure: no
I/O), imported on first use so that a program without a CRD pays nothing for it.

Must never: call a cluster, or refuse an object the declared schema does not cover (a
version the CRD does not list, a CRD without a schema): the run reports those as it would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackwright.errors import StackwrightError


class DeclaredSchemas:
    """(group, kind) → the versions' schemas of a CRD this preview creates or changes."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}

    def declare(self, group: str, kind: str, spec: Mapping[str, Any]) -> None:
        """Record the schemas of the CRD whose `spec` serves `kind` in `group`."""
        versions = spec.get("versions")
        schemas: dict[str, Mapping[str, Any]] = {}
        for version in versions if isinstance(versions, list) else ():
            if not isinstance(version, Mapping) or not version.get("served", True):
                continue
            schema = version.get("schema")
            root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
            if isinstance(root, Mapping):
                schemas[str(version.get("name", ""))] = root
        self._schemas[group, kind] = schemas

    def refusal(self, obj: Mapping[str, Any]) -> str | None:
        """What the API server would answer an apply of `obj` once its CRD is as declared:
        None when it would take it (or when no declared schema covers it)."""
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        root = self._schemas.get((group, str(obj.get("kind", ""))), {}).get(version)
        if root is None:
            return None
        from stackwright.localcluster.validation import check_custom

        return check_custom(dict(obj), root)


class SchemaRefused(StackwrightError):
    """An object the schema its CRD declares refuses: the server's message."""
