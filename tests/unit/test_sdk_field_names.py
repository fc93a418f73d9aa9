"""The live fields of built-in kinds as the generated table lists them: each kind's `status`,
apart from the fields a YAML program's properties are checked against."""

from __future__ import annotations

import pytest

import stackwright.kubernetes as k8s
from stackwright.kubernetes import fields, nested
from stackwright.kubernetes.groups import MODULES


def test_statuses_are_listed_apart_from_what_programs_set() -> None:
    """Each kind with a `status` lists what it holds in `STATUSES`, never in `KINDS` (against
    which a YAML program's properties are checked); every definition a status reaches is
    listed, those only a status holds in `STATUS_OBJECTS`, which `object_keys` never reads."""
    for group, versions in fields.KINDS.items():
        for version, kinds in versions.items():
            module = getattr(getattr(k8s, MODULES[group]), version)
            for kind in kinds:
                has_status = isinstance(vars(getattr(module, kind)).get("status"), property)
                listed = fields.STATUSES.get(group, {}).get(version, {}).get(kind)
                assert (listed is not None) == has_status, kind
                assert "status" not in (nested.kind_fields(group, version, kind) or {})
                live = nested.live_fields(group, version, kind) or {}
                assert ("status" in live) == has_status, kind
    seen: set[str] = set()
    todo = [
        held
        for versions in fields.STATUSES.values()
        for kinds in versions.values()
        for listed in kinds.values()
        for held in nested._keys(listed, "").values()
        if held is not None
    ]
    while todo:
        held = todo.pop()
        if held.definition in seen:
            continue
        seen.add(held.definition)
        todo += [n for n in nested.live_keys(held.definition).values() if n is not None]
    status_only = {
        f"{module}.{name}" for module, names in fields.STATUS_OBJECTS.items() for name in names
    }
    listed_for_programs = {
        f"{module}.{name}" for module, names in fields.OBJECTS.items() for name in names
    }
    assert status_only <= seen and not status_only & listed_for_programs
    assert "core_v1.ServiceStatus" in seen and "apps_v1.DeploymentStatus" in status_only
    with pytest.raises(KeyError):
        nested.object_keys("apps_v1.DeploymentStatus")
