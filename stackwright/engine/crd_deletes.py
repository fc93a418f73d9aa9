"""What deleting a CustomResourceDefinition takes with it, said before it happens.

The API server deletes every object of a CRD's kind, in every namespace, with the CRD:
objects other stacks, other tools or people made too (Helm refuses to delete CRDs for
this reason). A run that deletes (or replaces) a CRD lists its kind once, with a limit,
and says how many objects exist and how many are not this stack's. It never blocks the
run (the user asked for the delete), and a list that fails (RBAC, a kind not served)
makes the count unknown, not the run fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackwright.engine.events import Diagnostic, plural
from stackwright.engine.graph import defined_kind
from stackwright.engine.ports import Provider
from stackwright.engine.records import mark_of, metadata_of
from stackwright.model import ResourceState, parse_urn

#: How many objects the one LIST asks for: enough to count and name them, bounded.
LIST_LIMIT = 500

#: How many of the objects that are not the stack's the warning names.
NAMED = 3


def served_version(crd: Mapping[str, Any]) -> str | None:
    """The apiVersion to list a CRD's kind with: its storage version if served, else its
    first served one; None when it serves none."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or () if isinstance(v, Mapping)]
    served = [v for v in versions if v.get("served")]
    if not served:
        return None
    chosen = next((v for v in served if v.get("storage")), served[0])
    return f"{spec.get('group')}/{chosen.get('name')}"


async def census(provider: Provider, crd: ResourceState) -> Diagnostic | None:
    """The warning for the CRD `crd`'s delete (None when it is no CRD): how many objects
    of its kind the cluster holds, in how many namespaces, and which are not the stack's."""
    defined = defined_kind(crd.inputs)
    if not crd.custom or defined is None:
        return None
    kind = defined[1]
    name = metadata_of(crd.inputs).get("name") or crd.id
    head = f"deleting CRD {name} deletes every {kind} in the cluster"
    api_version = served_version(crd.outputs or crd.inputs) or served_version(crd.inputs)
    try:
        if api_version is None:
            raise ValueError("the CRD serves no version")
        items, more = await provider.list_page(api_version, kind, limit=LIST_LIMIT)
    except Exception as exc:  # RBAC 403, a kind not served: the count is unknown, no failure
        return Diagnostic(
            crd.urn, f"{head}; how many exist is unknown: listing them failed: {exc}", "warning"
        )
    return _counted(crd.urn, head, items, more)


def _counted(urn: str, head: str, items: list[dict[str, Any]], more: int | None) -> Diagnostic:
    owner = parse_urn(urn)
    theirs: list[str] = []
    namespaces: set[str] = set()
    for item in items:
        meta = metadata_of(item)
        namespace = str(meta.get("namespace") or "")
        if namespace:
            namespaces.add(namespace)
        try:
            mark = parse_urn(mark_of(item))
            own = (mark.project, mark.stack) == (owner.project, owner.stack)
        except ValueError:
            own = False
        if not own:
            theirs.append(f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name")))
    if not items:
        return Diagnostic(urn, f"{head}: there are none now", "info")
    count = len(items) + more if more is not None else 0
    total = plural(count, "object") if more is not None else f"more than {len(items)} objects"
    where = f" in {plural(len(namespaces), 'namespace')}" if namespaces else ""
    mine = "all this stack's" if not theirs else f"{len(theirs)} of them not this stack's"
    named = ", ".join(theirs[:NAMED]) + (", …" if len(theirs) > NAMED else "")
    whose = f"{mine} ({named})" if theirs else mine
    if more == 0:
        text = f"{total}{where}, {whose}"
    else:  # one LIST, bounded: what the first page says, and the count the server gave
        text = f"{total}; the first {len(items)} listed are{where}, {whose}"
    return Diagnostic(urn, f"{head}: {text}", "warning" if theirs else "info")
