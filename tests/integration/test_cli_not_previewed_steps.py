"""What preview and up show of a step they do not take: one whose dependency the cluster
refused (its server-side dry run, its apply) is marked as not previewed / skipped, its
planned operation and the failed dependency named, and counted so in the summary; a change
that would replace a protected resource shows that resource's replacement, refused."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import PRELUDE_LINES
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

PROGRAM = """
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
cfg = k8s.core.v1.ConfigMap("cfg", metadata={{"namespace": NS}}, data={data})
web = k8s.apps.v1.Deployment("web", metadata={{"namespace": NS}}, spec=app_spec("web", replicas={replicas}),
                             opts=sw.ResourceOptions(depends_on=[cfg]))
"""
GOOD, REFUSED = '{"a": "1"}', '{"bad key!": "1"}'  # a key Kubernetes does not allow: a 422
CFG = "kubernetes:core/v1:ConfigMap cfg"


def test_a_step_whose_dependency_was_refused_is_not_previewed_and_says_why(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(PROGRAM.format(data=GOOD, replicas=1))
    p.up()
    urn = p.urn("kubernetes:apps/v1:Deployment", "web")
    reason = f"{CFG} failed or was not done"
    for replicas, op in ((2, "update"), (1, "same")):  # its plan, made without the failed one
        p.program(PROGRAM.format(data=REFUSED, replicas=replicas))
        for command in ("preview", "up"):
            done = p.sw(command, "--json", *(("--yes",) if command == "up" else ()), rc=2)
            # Never shown as a step that runs: no start, no end, one event that skips it.
            assert [e for e in done.events if e.get("urn") == urn] == [
                {
                    "event": "step-skipped",
                    "op": op,
                    "urn": urn,
                    "type": "kubernetes:apps/v1:Deployment",
                    "name": "web",
                    "provider": "",  # the stack's default
                    "reason": reason,
                    "dependency": p.urn("kubernetes:core/v1:ConfigMap", "cfg"),
                }
            ]
            counts = done.summary["counts"]
            assert counts == {"same": 1, "skipped": 1}, counts
            assert done.summary["notDone"] == [f"kubernetes:apps/v1:Deployment web: {reason}"]

    text = p.sw("preview", rc=2).out
    assert f"  not previewed  same  kubernetes:apps/v1:Deployment  web ({reason})\n" in text
    p.program(PROGRAM.format(data=REFUSED, replicas=3))
    text = p.sw("preview", rc=2).out
    lines = text.splitlines()
    assert f"  not previewed  ~ update  kubernetes:apps/v1:Deployment  web ({reason})" in lines
    assert not [line for line in lines if line.startswith("~ update  kubernetes:apps/v1")]
    at = lines.index("Resources:")
    assert lines[at + 1 : at + 4] == ["    1 unchanged", "    1 not previewed", "    ! 1 failed"]
    text = p.sw("up", "--yes", rc=2).out
    assert f"  skipped  ~ update  kubernetes:apps/v1:Deployment  web ({reason})\n" in text
    assert "    1 skipped\n" in text
    # Nothing ran: the Deployment is as the first up left it.
    assert p.resources()["web"]["inputs"]["spec"]["replicas"] == 1


PROTECTED = """
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
k8s.core.v1.ConfigMap("keep", metadata={{"namespace": NS}}, data={{"mode": {mode!r}}},
                      opts=sw.ResourceOptions(protect=True, replace_on_changes=["data"]))
k8s.core.v1.ConfigMap("other", metadata={{"namespace": NS}}, data={{"mode": {mode!r}}})
"""


def test_a_refused_protected_replacement_shows_its_step_and_up_changes_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The preview shows the refused replacement as its failed step; `up` refuses the whole
    run before any change (exit 2), in the same words, as it refuses a protected delete:
    failing that step alone let the rest go on (a Service's selector changed with its
    protected Deployment's selected no Pod, and `up` waited for endpoints)."""
    p = new_project()
    p.program(PROTECTED.format(mode="fast"))
    p.up()
    p.program(PROTECTED.format(mode="slow"))
    urn = p.urn("kubernetes:core/v1:ConfigMap", "keep")
    at = f"__main__.py:{PRELUDE_LINES + 3}: kubernetes:core/v1:ConfigMap keep: "
    why = "data: replace_on_changes lists it"
    refusal = f"resource {urn} cannot be replaced because it is protected ({why}):"
    done = p.sw("preview", "--json", rc=2)
    started, ended = [e for e in done.events if e.get("urn") == urn]
    assert (started["event"], started["op"]) == ("step-started", "replace")
    assert started["replaceReasons"] == [why]
    assert "data.mode" in [c["path"] for c in started["changes"]]
    assert (ended["event"], ended["op"], ended["ok"]) == ("step-done", "replace", False)
    assert ended["error"].startswith(at + refusal), ended["error"]
    assert done.summary["failures"] == [ended["error"]]
    assert "replace" not in done.summary["counts"]  # refused: nothing to count as done
    assert done.summary["exitCode"] == 2
    assert not done.of("diagnostic")  # said by its step, not a stray message

    lines = p.sw("preview", rc=2).out.splitlines()
    assert lines[0] == f"+- replace  kubernetes:core/v1:ConfigMap  keep ({why})"
    assert lines[1].startswith(f"! failed  {at}{refusal}"), lines[1]

    refused = p.sw("up", "--yes", "--json", rc=2)
    (error,) = refused.of("error")
    assert error["message"] == f"up refused: {ended['error']}; nothing was changed"
    assert not refused.of("step-started")
    assert refused.err == f"error: {error['message']}\n"
    # Nothing else changed either: `other`, which the program changes too, is as it was.
    assert {k: r["inputs"]["data"] for k, r in p.resources().items() if k != "ns"} == {
        "keep": {"mode": "fast"},
        "other": {"mode": "fast"},
    }
    live = cluster.kubectl("get", "configmap", "-n", p.ns, "-o", "jsonpath={.items[*].data.mode}")
    assert live.stdout.split() == ["fast", "fast"]
