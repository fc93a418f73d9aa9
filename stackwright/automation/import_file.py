"""The file `stackwright import --file` reads: which live objects to adopt, under what names.

Either Pulumi's import file (JSON, `{"resources": [{"type", "name", "id"}, …]}`, as
`pulumi import --file` reads it) or Kubernetes manifests (multi-document YAML or JSON, a
`kind: List` as `kubectl get -o yaml` writes it), each object naming the live one by its
apiVersion, kind, namespace and name. Reading the file never talks to a cluster; bad input
is one UsageError naming the file and the entry or document.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from stackwright.automation.adopted import ImportEntry
from stackwright.errors import UsageError, not_utf8
from stackwright.kubernetes import yaml as manifests
from stackwright.kubernetes.base import type_token

#: Keys of a Pulumi import entry that mean nothing here: the provider plugin's version and
#: where to download it (Stackwright has no plugins), and `nameTable`, which only names the
#: parents and providers that entries refer to.
_IGNORED = frozenset({"version", "pluginDownloadUrl", "pluginDownloadURL"})
#: Keys refused when set, each with why: ignoring one would adopt something else than asked.
_REFUSED = {
    "parent": "the objects are adopted at the top of the stack (no parent); remove it",
    "provider": "the objects are read with the stack's default provider (its cluster); "
    "remove it, or import from a stack whose default cluster is that provider's",
    "component": "a component resource has no object to adopt; leave it out",
    "remote": "a component resource has no object to adopt; leave it out",
    "properties": "the printed code declares what the object's owners declared; remove it",
}
_KNOWN = frozenset({"type", "name", "id", "logicalName", *_IGNORED, *_REFUSED})


def read_import_file(path: Path) -> list[ImportEntry]:
    """The objects `path` asks to adopt, in its order; a file that asks for none is refused."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(str(path), exc) from exc
    except OSError as exc:
        raise UsageError(f"cannot read import file {path}: {exc.strerror or exc}") from exc
    try:  # JSON first: YAML refuses the tabs a JSON file may be indented with
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict) and "resources" in document and "kind" not in document:
        entries = _pulumi_entries(document, str(path))
    else:
        entries = _manifest_entries(manifests.parse(text, str(path)), text, str(path))
    if not entries:
        raise UsageError(
            f"{path} names no object to import: give Pulumi's import file "
            '({"resources": [{"type": …, "name": …, "id": …}]}) or Kubernetes manifests'
        )
    return entries


def _pulumi_entries(document: dict[str, Any], source: str) -> list[ImportEntry]:
    resources = document["resources"]
    if not isinstance(resources, list):
        raise UsageError(f"{source}: `resources` must be a list of {{type, name, id}} entries")
    entries = []
    for index, item in enumerate(resources, 1):
        where = f"{source} entry {index}"
        if not isinstance(item, dict):
            raise UsageError(f"{where} is not an object: write {{type, name, id}}")
        unknown = sorted(set(item) - _KNOWN)
        if unknown:
            raise UsageError(
                f"{where}: unknown key {unknown[0]!r}: an entry has type, name, id and "
                "optionally logicalName"
            )
        refused = [key for key in _REFUSED if item.get(key)]
        if refused:
            raise UsageError(f"{where}: {refused[0]!r} is not supported: {_REFUSED[refused[0]]}")
        fields = {key: item.get(key) for key in ("type", "name", "id")}
        missing = [key for key, value in fields.items() if not isinstance(value, str) or not value]
        if missing:
            raise UsageError(
                f"{where} has no {', '.join(missing)}: each entry needs type "
                '(e.g. "kubernetes:apps/v1:Deployment"), name and id ("NAMESPACE/NAME")'
            )
        # Pulumi's `name` keys the entry (in nameTable); `logicalName`, when given, is the
        # name in the program.
        name = item.get("logicalName") or fields["name"]
        entries.append(ImportEntry(str(fields["type"]), str(name), str(fields["id"]), where))
    return entries


def _manifest_entries(
    documents: list[manifests.Document], text: str, source: str
) -> list[ImportEntry]:
    found: list[tuple[str, str, str, str | None, str]] = []  # (apiVersion, kind, name, ns, where)
    items: Counter[int] = Counter()
    listed = {doc.index for doc in documents if _is_list(doc.obj)}
    for doc in manifests.expand(documents):
        items[doc.index] += 1
        api_version, kind, name, namespace = manifests.check_object(doc, text)
        where = f"{source} document {doc.index + 1}"
        if doc.index in listed:
            where += f" item {items[doc.index]}"
        found.append((api_version, kind, name, namespace, where))
    # A logical name is the object's name; where two objects share it, with its kind, and
    # where two of one kind share it too (in other namespaces), with its namespace.
    by_name = Counter(name for _, _, name, _, _ in found)
    by_kind = Counter((kind.lower(), name) for _, kind, name, _, _ in found)
    entries = []
    for api_version, kind, name, namespace, where in found:
        logical = name
        if by_name[name] > 1:
            logical = f"{name}-{kind.lower()}"
            if by_kind[(kind.lower(), name)] > 1 and namespace:
                logical = f"{namespace}-{logical}"
        object_id = f"{namespace}/{name}" if namespace else name
        entries.append(ImportEntry(type_token(api_version, kind), logical, object_id, where))
    return entries


def _is_list(obj: Any) -> bool:
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list)


__all__ = ["read_import_file"]
