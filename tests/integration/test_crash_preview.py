"""A preview right after a kill -9 of `up` plans what the next `up` does.

The killed `up` leaves creates pending whose objects may be in the cluster. The next `up`
settles them by reading the cluster and shows those objects as updated (waited for again);
a preview planned against the journal as the crash left it and showed them as creates.
Now the preview settles them in memory, reading only, and both agree step for step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crash_run import LiveCluster, Project, live_objects, started

pytestmark = pytest.mark.integration

COUNT = 300
#: Seconds after the first create starts that each killed `up` is killed, until one leaves
#: a create that reached the cluster unconfirmed (the case under test). The kill's timing is
#: the machine's: on a quiet one the first try is enough; on a busy one nothing may have
#: reached the cluster 30 ms in, so later tries wait longer.
KILL_DELAYS = (0.03, 0.06, 0.1, 0.15, 0.25, 0.4)


def program(prefix: str) -> str:
    return f"""
import stackwright.kubernetes as k8s

for i in range({COUNT}):
    k8s.core.v1.ConfigMap(f"cm-{{i}}", metadata={{"name": f"{prefix}-cm-{{i}}"}}, data={{"i": str(i)}})
"""


def steps(events: list[dict[str, Any]]) -> dict[str, str]:
    """URN → op of each step started."""
    return {e["urn"]: e["op"] for e in events if e["event"] == "step-started"}


def test_a_preview_after_a_killed_up_plans_what_the_next_up_does(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    for attempt, delay in enumerate(KILL_DELAYS):
        name = f"killed{attempt}"
        project = Project(tmp_path / name, cluster, name=name, stack="dev", program=program(name))
        project.sw("stack", "init", "dev")
        killed = project.up(0, kill_after=60.0, kill_on=((started("create"),), delay))
        if not killed.killed:
            continue  # it finished first: nothing to settle
        made = {urn for *_, urn, _ in live_objects(cluster, f"urn:sw:dev::{name}::")}
        done = {e["urn"] for e in killed.events if e["event"] == "step-done"}
        if made - done:
            break
    else:
        pytest.fail(
            f"in {len(KILL_DELAYS)} killed ups no interrupted create had reached the cluster"
        )
    state_before = project.sw("stack", "export").stdout

    preview = project.sw("preview", "--json")
    events = [json.loads(line) for line in preview.stdout.splitlines() if line.strip()]

    assert project.sw("stack", "export").stdout == state_before  # nothing recorded
    assert any(
        e["event"] == "diagnostic" and "interrupted operation are pending" in e["message"]
        for e in events
    )
    planned = steps(events)
    assert not [urn for urn in made if planned[urn] == "create"]
    up = project.up(0)
    assert up.returncode == 0, up.failure()
    assert steps(up.events) == planned
    assert len(planned) == COUNT
