"""The command as its own process on a CI agent whose locale is not UTF-8 (an old
`LANG=en_US.ISO-8859-1`, a Windows runner's cp1252; here PYTHONIOENCODING=ascii): output
holds `→`, `—` and `…`, which such a stdout cannot encode."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import new_project

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name


def test_a_diff_and_json_lines_on_an_ascii_stdout_are_escaped_not_a_traceback(
    new_project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = new_project(process=True)
    p.program('k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"})')
    p.up()
    p.program('k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "café ☕"})')
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")

    diff = p.sw("preview", "--diff")

    assert "Traceback" not in diff.err, diff.err
    assert '    ~ data.a: "1" \\u2192 "caf\\u00e9 \\u2615"\n' in diff.out

    # Escaped as JSON escapes them: each line is JSON still, holding the same characters.
    preview = p.sw("preview", "--json")
    assert "Traceback" not in preview.err, preview.err
    (started,) = [e for e in preview.events if e["event"] == "step-started"]
    assert started["changes"] == [
        {"path": "data.a", "kind": "update", "old": "1", "new": "café ☕"}
    ]
