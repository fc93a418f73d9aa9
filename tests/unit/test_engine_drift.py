"""Drift: the fields Stackwright applied that the live object no longer holds, and who
changed them (engine/drift.py, pure)."""

from __future__ import annotations

import base64

from stackwright.engine.drift import drifted
from stackwright.engine.events import DriftedField


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_secrets_string_data_is_compared_with_its_data_and_names_who_changed_it() -> None:
    recorded = {"apiVersion": "v1", "kind": "Secret", "stringData": {"pw": "old", "user": "u"}}
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "managedFields": [
                {
                    "manager": "stackwright",
                    "fieldsV1": {"f:stringData": {"f:pw": {}, "f:user": {}}},
                },
                {"manager": "kubectl-patch", "fieldsV1": {"f:data": {"f:pw": {}}}},
            ]
        },
        "data": {"pw": _b64("new"), "user": _b64("u")},
    }
    assert drifted(recorded, live) == [DriftedField("stringData.pw", "old", "new", "kubectl-patch")]


def test_another_managers_field_is_named_and_ignored_paths_are_not_drift() -> None:
    recorded = {"kind": "ConfigMap", "data": {"a": "1", "b": "1"}}
    live = {
        "kind": "ConfigMap",
        "metadata": {
            "managedFields": [{"manager": "kubectl-edit", "fieldsV1": {"f:data": {"f:a": {}}}}]
        },
        "data": {"a": "2", "b": "1", "c": "added"},
    }
    assert drifted(recorded, live) == [DriftedField("data.a", "1", "2", "kubectl-edit")]
    assert drifted(recorded, live, ignore=("data.a",)) == []
