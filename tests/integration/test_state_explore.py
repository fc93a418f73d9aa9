"""The state store against the real local cluster where the fake cluster cannot stand in.

After `stackwright state move`, the moved object still carries the source stack's marks
until the destination's next `up`; the source stack must neither take it back (its
creates find objects by listing the kind and reading their marks) nor leave it behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cli_lifecycle import get, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

from stackwright.localcluster import lifecycle

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)
CM = "kubernetes:core/v1:ConfigMap"


def _with_prod(p: Any, cluster: LiveCluster) -> Any:
    """Project `p` with a second stack, prod, on the same cluster; dev selected."""
    cluster.kubectl("create", "namespace", p.ns)
    (p.root / "Stackwright.prod.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(cluster.kubeconfig)}})
    )
    p.sw("stack", "init", "prod")
    p.sw("stack", "select", "dev")
    return p


def test_a_moved_object_stays_with_the_stack_it_moved_to(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = _with_prod(new_project(), cluster)
    p.program('k8s.core.v1.ConfigMap("b", metadata={"namespace": NS}, data={"n": "b"})\n')
    p.up()
    (row,) = p.state()["resources"]
    name = row["id"].rpartition("/")[2]
    dev_urn, prod_urn = p.urn(CM, "b"), p.urn(CM, "b").replace("urn:sw:dev::", "urn:sw:prod::")

    p.sw("state", "move", "--yes", dev_urn, "--dest", "prod")

    # dev's program still declares it: its name (derived from dev's URN) is taken by an
    # object marked as dev's own, which prod now records.
    refused = p.up(rc=1)
    assert f"ConfigMap {p.ns}/{name} already exists: stack prod records it" in refused.out
    assert p.state()["resources"] == []
    assert get(cluster, "configmap", name, p.ns) is not None

    p.up("--stack", "prod")
    marks = get(cluster, "configmap", name, p.ns)["metadata"]["annotations"]  # type: ignore[index]
    assert marks["stackwright.io/urn"] == prod_urn and marks["stackwright.io/stack"] == "prod"

    p.sw("destroy", "--yes")  # dev: nothing of its own to delete
    assert get(cluster, "configmap", name, p.ns) is not None
    p.sw("destroy", "--yes", "--stack", "prod")
    assert get(cluster, "configmap", name, p.ns) is None
    assert one_line(p.sw("state", "delete", "--yes", dev_urn, rc=2)).startswith(
        "error: no resource"
    )


MARKS = ("app.kubernetes.io/managed-by", "applyset.kubernetes.io/part-of")
MARK_ANNOTATIONS = ("stackwright.io/stack", "stackwright.io/urn")


def test_state_delete_leaves_the_object_without_the_stacks_marks(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`state delete` is Pulumi's "forget it, leave it running": the object stays, but no
    longer carries the stack's marks, so no later run, tool or ApplySet counts it the
    stack's (left marked, `up` took it back when the program declared it again, kubectl
    listed it in the stack's ApplySet and `destroy` could not remove the set's parent)."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    keep = 'k8s.core.v1.ConfigMap("b", metadata={"name": "b", "namespace": NS}, data={"n": "b"})\n'
    p.program(
        'k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS}, data={"n": "a"})\n'
        + keep
    )
    p.up()
    urn = p.urn(CM, "a")
    uid = get(cluster, "configmap", "a", p.ns)["metadata"]["uid"]  # type: ignore[index]

    forgot = p.sw("state", "delete", "--yes", urn)
    assert forgot.out == (
        f"Removed {urn} from the state of stack dev; its object stays in the cluster, without "
        "the stack's marks.\n"
    )
    cm = get(cluster, "configmap", "a", p.ns)
    assert cm is not None and cm["metadata"]["uid"] == uid and cm["data"] == {"n": "a"}
    meta = cm["metadata"]
    assert not set(MARKS) & set(meta.get("labels") or {})
    assert not set(MARK_ANNOTATIONS) & set(meta.get("annotations") or {})
    # Taken off by the stack's field manager: no manager claims the marks any more.
    claimed = json.dumps(meta.get("managedFields"))
    assert not any(mark in claimed for mark in (*MARKS, *MARK_ANNOTATIONS)), claimed
    members = cluster.kubectl(
        "get", "configmaps", "-n", p.ns, "-l", "applyset.kubernetes.io/part-of", "-o", "name"
    ).stdout.split()
    assert members == ["configmap/b"]

    # The program that no longer declares it leaves it alone.
    p.program(keep)
    assert p.up().ops() == {}
    assert get(cluster, "configmap", "a", p.ns)["metadata"]["uid"] == uid  # type: ignore[index]
    # A program that declares it again finds an object that is not the stack's.
    p.program(
        'k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS}, data={"n": "a"})\n'
        + keep
    )
    assert f"ConfigMap {p.ns}/a already exists" in p.up(rc=None).out
    p.program(keep)
    # It can be imported again, by this stack, as any object that is no stack's.
    p.sw("import", "--yes", CM, "again", f"{p.ns}/a")
    assert p.resources()["again"]["id"] == f"{p.ns}/a"
    marks = get(cluster, "configmap", "a", p.ns)["metadata"]["annotations"]  # type: ignore[index]
    assert marks["stackwright.io/urn"] == p.urn(CM, "again")
    p.sw("state", "delete", "--yes", "--force", p.urn(CM, "again"))
    # destroy deletes what the stack records and removes its ApplySet parent: no member is left.
    destroyed = p.sw("destroy", "--yes")
    assert "could not remove the ApplySet parent" not in destroyed.err + destroyed.out
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is None
    assert get(cluster, "configmap", "b", p.ns) is None
    assert get(cluster, "configmap", "a", p.ns)["metadata"]["uid"] == uid  # type: ignore[index]


def test_state_delete_with_the_cluster_unreachable_says_the_marks_remain(
    new_project: Any, cluster: LiveCluster, tmp_path: Any
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program('k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n')
    p.up()
    urn = p.urn(CM, "a")
    # The stack's cluster is gone (a port nothing listens on).
    dead = yaml.safe_load(cluster.kubeconfig.read_text())
    dead["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:9"
    (tmp_path / "dead").write_text(yaml.safe_dump(dead))
    (p.root / "Stackwright.dev.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(tmp_path / "dead")}})
    )
    forgot = p.sw("state", "delete", "--yes", urn)
    assert p.state()["resources"] == []
    assert forgot.out == (
        f"Removed {urn} from the state of stack dev; nothing in the cluster was changed.\n"
    )
    (warning,) = forgot.err.splitlines()
    assert warning.startswith(f"warning: cannot take stack dev's marks off {CM} {p.ns}/a: ")
    command = (
        f"kubectl label configmap a -n {p.ns} applyset.kubernetes.io/part-of- "
        f"app.kubernetes.io/managed-by- && kubectl annotate configmap a -n {p.ns} "
        "stackwright.io/stack- stackwright.io/urn-"
    )
    assert warning.endswith(f"`{command}` takes them off")
    labels = get(cluster, "configmap", "a", p.ns)["metadata"]["labels"]  # type: ignore[index]
    assert labels["app.kubernetes.io/managed-by"] == "stackwright", "the cluster was not reached"


def test_state_delete_leaves_an_object_made_again_by_another_tool_as_it_is(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A stale record's object, deleted and made again since by another tool (Helm, with its
    own `managed-by` label), is not the stack's: `state delete` takes nothing off it (Helm's
    next upgrade refuses an object without its label); one that is gone is no object left."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program(
        'k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n'
        'k8s.core.v1.ConfigMap("b", metadata={"name": "b", "namespace": NS})\n'
    )
    p.up()
    for name in ("a", "b"):
        assert cluster.kubectl("delete", "configmap", name, "-n", p.ns).returncode == 0
    assert cluster.kubectl("create", "configmap", "a", "-n", p.ns).returncode == 0
    helm = {"app.kubernetes.io/managed-by": "Helm"}
    cluster.kubectl("label", "configmap", "a", "-n", p.ns, "app.kubernetes.io/managed-by=Helm")

    forgot = p.sw("state", "delete", "--yes", p.urn(CM, "a"))
    assert forgot.out == (
        f"Removed {p.urn(CM, 'a')} from the state of stack dev; nothing in the cluster was "
        "changed.\n"
    )
    assert get(cluster, "configmap", "a", p.ns)["metadata"]["labels"] == helm  # type: ignore[index]
    gone = p.sw("state", "delete", "--yes", p.urn(CM, "b"))
    assert gone.out.endswith("; nothing in the cluster was changed.\n"), gone.out
    assert p.state()["resources"] == []


def test_state_delete_after_a_state_move_takes_the_marks_the_move_left(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A moved object keeps the source stack's marks until the destination's next `up`; a
    `state delete` there before it takes those off (no resource holds that mark any more)."""
    p = _with_prod(new_project(), cluster)
    p.program('k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n')
    p.up()
    prod_urn = p.urn(CM, "a").replace("urn:sw:dev::", "urn:sw:prod::")
    p.sw("state", "move", "--yes", p.urn(CM, "a"), "--dest", "prod")

    forgot = p.sw("state", "delete", "--yes", prod_urn, "--stack", "prod")
    assert forgot.out.endswith("its object stays in the cluster, without the stack's marks.\n")
    meta = get(cluster, "configmap", "a", p.ns)["metadata"]  # type: ignore[index]
    assert not set(MARKS) & set(meta.get("labels") or {})
    assert not set(MARK_ANNOTATIONS) & set(meta.get("annotations") or {})


def test_state_delete_without_the_stacks_secrets_key_forgets_as_with_no_cluster(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Forgetting needs no key (a CI job without the passphrase); the stack's configuration,
    which names its cluster, may: a key not at hand is a cluster out of reach, asked about
    (`--yes`: forgotten, the kubectl commands given), not the command's end."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program('k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n')
    p.sw("config", "set", "--secret", "token", "s3cret")
    p.up()
    key = Path(os.environ["STACKWRIGHT_HOME"]) / "keys" / f"{p.name}.dev.key"
    aside = key.with_suffix(".aside")
    key.rename(aside)
    try:
        forgot = p.sw("state", "delete", "--yes", p.urn(CM, "a"))
    finally:
        aside.rename(key)
    assert p.state()["resources"] == []
    assert forgot.out.endswith("; nothing in the cluster was changed.\n"), forgot.out
    (warning,) = forgot.err.splitlines()
    assert warning.startswith(f"warning: cannot take stack dev's marks off {CM} {p.ns}/a: ")
    assert f"the secrets key file {key} does not exist" in warning
    labels = get(cluster, "configmap", "a", p.ns)["metadata"]["labels"]  # type: ignore[index]
    assert labels["app.kubernetes.io/managed-by"] == "stackwright"


def test_state_delete_that_starts_the_stopped_local_cluster_says_so(new_project: Any) -> None:
    """The stack's local cluster, stopped, holds its objects: `state delete` starts it to take
    the marks off, and says so as `up` does (it keeps running after the command)."""
    p = new_project({"kubernetes:cluster": "forgetting"})
    try:
        p.program('k8s.core.v1.ConfigMap("a", metadata={"name": "a"})\n')
        p.up()
        lifecycle.stop("forgetting")
        forgot = p.sw("state", "delete", "--yes", p.urn(CM, "a"))
        assert forgot.out.endswith("its object stays in the cluster, without the stack's marks.\n")
        (note,) = forgot.err.splitlines()
        assert note.startswith("note: started the local cluster forgetting at https://"), note
        assert note.endswith(
            "it keeps running after this command (`stackwright cluster stop --name forgetting` "
            "stops it)"
        )
    finally:
        lifecycle.delete("forgetting")
