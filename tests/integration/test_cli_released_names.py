"""An auto-named resource declared again after the stack let go of its object, through the CLI.

Dropped with `retain_on_delete`, or forgotten by `stackwright state delete`, an auto-named
ConfigMap stays in the cluster; declared again, the resource gets a brand-new object with
a new name (as Pulumi's random suffix gives it), which the preview shows before the `up`;
the old object is left as it is, and the next `destroy` deletes only the new one.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import Project, create, get, live, names
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

CACHE = (
    'k8s.core.v1.ConfigMap("cache", metadata={"namespace": NS}, data={"a": "1"},\n'
    "    opts=sw.ResourceOptions(retain_on_delete={retain}))\n"
)


def declare(p: Project, *, cache: bool = True, retain: bool = False) -> None:
    """The ConfigMap `cache`, auto-named, in the test's namespace, which is not the stack's
    (a `destroy` would take the retained object with it)."""
    p.program(CACHE.replace("{retain}", str(retain)) if cache else "")


def cache_names(p: Project, cluster: LiveCluster) -> set[str]:
    return {n for n in names(cluster, "configmap", p.ns) if n.startswith("cache-")}


def recorded_name(p: Project) -> str:
    return str(p.resources()["cache"]["id"]).rpartition("/")[2]


def declared_again(p: Project, cluster: LiveCluster, first: str) -> str:
    """Declare `cache` again: the preview shows a create under a new name, the `up` makes
    it, and both objects exist; the new name."""
    declare(p)
    preview = p.preview()
    assert preview.changed() == {"cache": "create"}
    (step,) = [e for e in preview.of("step-started") if e["name"] == "cache"]
    (metadata,) = [c["new"] for c in step["changes"] if c["path"] == "metadata"]
    second = metadata["name"]
    assert second != first and second.startswith("cache-")
    assert f'+ metadata.name: "{second}"' in p.sw("preview", "--diff").out  # as a user reads it

    assert p.up().ops() == {"cache": "create"}

    assert cache_names(p, cluster) == {first, second}
    assert recorded_name(p) == second
    return str(second)


def left_alone(p: Project, cluster: LiveCluster, first: str, before: dict[str, Any]) -> None:
    """The object let go of is as it was: same uid, resourceVersion and data."""
    now = live(cluster, "configmap", first, p.ns)["metadata"]
    assert (now["uid"], now["resourceVersion"]) == (
        before["metadata"]["uid"],
        before["metadata"]["resourceVersion"],
    )


def test_declared_again_after_retain_on_delete_it_gets_a_new_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    create(cluster, "Namespace", p.ns)
    declare(p, retain=True)
    p.up()
    first = recorded_name(p)
    declare(p, cache=False)
    assert p.up().ops() == {"cache": "delete"}
    kept = live(cluster, "configmap", first, p.ns)
    assert p.state()["releasedNames"] == {p.urn("kubernetes:core/v1:ConfigMap", "cache"): [first]}

    second = declared_again(p, cluster, first)

    left_alone(p, cluster, first, kept)
    assert p.sw("destroy", "--yes", "--json").ops() == {"cache": "delete"}
    assert get(cluster, "configmap", second, p.ns) is None
    left_alone(p, cluster, first, kept)
    cluster.kubectl("delete", "namespace", p.ns)


def test_declared_again_after_state_delete_it_gets_a_new_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    create(cluster, "Namespace", p.ns)
    declare(p)
    p.up()
    first = recorded_name(p)
    p.sw("state", "delete", "--yes", p.urn("kubernetes:core/v1:ConfigMap", "cache"))
    kept = live(cluster, "configmap", first, p.ns)

    second = declared_again(p, cluster, first)

    left_alone(p, cluster, first, kept)
    assert p.up().changed() == {}  # settled: the next run changes nothing
    assert recorded_name(p) == second
    cluster.kubectl("delete", "namespace", p.ns)
