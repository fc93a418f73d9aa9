"""A provider whose target changes — another API server behind the same context, another
namespace, the stack's default cluster switched — never loses track of its objects.

Each test runs the real CLI against two real local clusters: objects are replaced into
the new target and deleted from the former one, or the run is refused with one line
before any change when the former target cannot be reached any more.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cli_lifecycle import (  # the CLI-running helpers of the lifecycle tests
    LiveCluster,
    Project,
    another_cluster,
    assert_members,
    get,
    live,
    new_project,
    one_line,
    warnings,
)

from stackwright.localcluster.lifecycle import ClusterInfo

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

CONTEXT = "target"


@pytest.fixture(scope="module")
def other(cluster: LiveCluster) -> Iterator[ClusterInfo]:
    with another_cluster("other-target") as info:
        yield info


def kubeconfig_of(kubeconfig: Path, context: str = CONTEXT) -> dict[str, Any]:
    """A local cluster's kubeconfig with its context (and cluster, user) renamed `context`."""
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["name"] = config["users"][0]["name"] = context
    config["contexts"][0] = {
        "name": context,
        "context": {**config["contexts"][0]["context"], "cluster": context, "user": context},
    }
    config["current-context"] = context
    return config


def both(first: Path, second: Path) -> dict[str, Any]:
    """One kubeconfig with the contexts `first` and `second`, the current one `first`."""
    one, two = kubeconfig_of(first, "first"), kubeconfig_of(second, "second")
    for key in ("clusters", "users", "contexts"):
        one[key] += two[key]
    return one


def on_other(info: ClusterInfo, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(info.kubeconfig)}
    return subprocess.run(
        ["kubectl", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def other_get(info: ClusterInfo, kind: str, name: str, ns: str) -> dict[str, Any] | None:
    done = on_other(info, "get", kind, name, "-n", ns, "-o", "json", "--ignore-not-found")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def two_objects(p: Project, provider: str) -> None:
    """A namespace and a ConfigMap in it, through `provider` (a Python expression)."""
    p.program(
        f"""
        region = {provider}
        ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}},
                                   opts=sw.ResourceOptions(provider=region))
        k8s.core.v1.ConfigMap("cm", metadata={{"name": "cm", "namespace": NS}}, data={{"a": "1"}},
                              opts=sw.ResourceOptions(provider=region, depends_on=[ns]))
        """
    )


def created_there(p: Project, cluster: LiveCluster, other: ClusterInfo, *args: str) -> None:
    """Once forgotten: `up` creates the objects in `other`; `cluster` keeps its copies, and
    the stack's ApplySet parent that still finds them."""
    assert p.up(*args).changed() == {"ns": "create", "cm": "create"}
    assert other_get(other, "configmap", "cm", p.ns) is not None
    assert get(cluster, "configmap", "cm", p.ns) is not None
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is not None


def destroyed_there(p: Project, cluster: LiveCluster, other: ClusterInfo) -> None:
    """`destroy` deletes the objects in `other`; `cluster` keeps its copies, no longer the
    stack's (removed here by hand)."""
    p.sw("destroy", "--yes")
    assert other_get(other, "configmap", "cm", p.ns) is None
    assert get(cluster, "configmap", "cm", p.ns) is not None
    cluster.kubectl("delete", "namespace", p.ns)


# --- case 1: the same context, another API server ----------------------------------------------


def test_inline_kubeconfig_naming_another_server_replaces_the_objects_there(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo
) -> None:
    p = new_project()
    first = yaml.safe_dump(kubeconfig_of(cluster.kubeconfig))
    two_objects(p, f'k8s.Provider("region", kubeconfig={first!r})')
    assert p.up().summary["counts"] == {"create": 3}
    assert get(cluster, "configmap", "cm", p.ns) is not None

    # New credentials for the same server (another token line): nothing moves.
    rotated = kubeconfig_of(cluster.kubeconfig)
    rotated["users"][0]["user"]["token"] = cluster.token + " "
    same = yaml.safe_dump(rotated)
    two_objects(p, f'k8s.Provider("region", kubeconfig={same!r})')
    assert p.up().changed() == {"region": "update"}

    second = yaml.safe_dump(kubeconfig_of(other.kubeconfig))
    two_objects(p, f'k8s.Provider("region", kubeconfig={second!r})')
    assert p.preview().changed() == {"region": "update", "ns": "replace", "cm": "replace"}
    up = p.up()
    assert up.changed() == {"region": "update", "ns": "replace", "cm": "replace"}
    assert get(cluster, "configmap", "cm", p.ns) is None
    assert get(cluster, "namespace", p.ns) is None
    assert other_get(other, "configmap", "cm", p.ns) is not None
    assert p.preview().changed() == {}
    p.sw("destroy", "--yes")
    assert other_get(other, "configmap", "cm", p.ns) is None


def test_objects_replaced_on_another_cluster_leave_no_applyset_parent_on_the_former(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo
) -> None:
    # The namespace outlives the stack on both clusters (as `default` would): only the
    # stack's parent in it is left for the run to remove.
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    assert on_other(other, "create", "namespace", p.ns).returncode == 0
    first = yaml.safe_dump(kubeconfig_of(cluster.kubeconfig))
    second = yaml.safe_dump(kubeconfig_of(other.kubeconfig))

    def declare(kubeconfig: str) -> None:
        # "here" (the stack's default provider, on `cluster`) stays; "cm" follows "region".
        p.program(
            f"""
            region = k8s.Provider("region", kubeconfig={kubeconfig!r})
            k8s.core.v1.ConfigMap("here", metadata={{"name": "here", "namespace": NS}})
            k8s.core.v1.ConfigMap("cm", metadata={{"name": "cm", "namespace": NS}},
                                  opts=sw.ResourceOptions(provider=region))
            """
        )

    def move(kubeconfig: str) -> None:
        """Replace "cm" on the cluster `kubeconfig` reaches, with no warning."""
        declare(kubeconfig)
        up = p.up()
        assert up.changed() == {"region": "update", "cm": "replace"}
        assert [e for e in up.of("diagnostic") if e.get("severity") == "warning"] == []

    declare(first)
    assert p.up().summary["counts"] == {"create": 3}
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is not None

    # Off `cluster`: "here" is still a member of the stack's set there, whose parent stays.
    move(second)
    assert get(cluster, "configmap", "cm", p.ns) is None
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is not None
    assert other_get(other, "configmap", p.applyset_parent, p.ns) is not None

    # Off `other`: nothing of the stack is left there, nor is its parent.
    move(first)
    assert other_get(other, "configmap", "cm", p.ns) is None
    assert other_get(other, "configmap", p.applyset_parent, p.ns) is None
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is not None

    p.sw("destroy", "--yes")
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is None
    cluster.kubectl("delete", "namespace", p.ns)
    assert on_other(other, "delete", "namespace", p.ns).returncode == 0


def kube_system_uid(kubeconfig: Path) -> str:
    """The cluster's identity, as the state records it."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run(
        ["kubectl", "get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def retargeted(p: Project, cluster: LiveCluster, other: ClusterInfo, provider: str) -> None:
    """`preview --retarget` says what it forgets and changes nothing; `up --retarget` then
    forgets the objects (left on `cluster`) and creates them in `other`."""
    before = p.state()
    shown = p.preview("--retarget")
    assert shown.changed() == {"ns": "create", "cm": "create"}
    notices = [e["message"] for e in shown.of("diagnostic") if e.get("severity") == "warning"]
    assert any(
        f"provider {provider} now reaches {other.server}" in n
        and "left on that cluster, not deleted" in n
        for n in notices
    ), notices
    assert p.state() == before
    assert other_get(other, "namespace", p.ns, "default") is None
    created_there(p, cluster, other, "--retarget")


def test_kubeconfig_file_now_naming_another_server_is_refused(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    p = new_project()
    path = tmp_path / "kubeconfig.yaml"
    path.write_text(yaml.safe_dump(kubeconfig_of(cluster.kubeconfig)))
    two_objects(p, f'k8s.Provider("region", kubeconfig={str(path)!r})')
    assert p.up().summary["counts"] == {"create": 3}
    assert p.resources()["region"]["outputs"] == {
        "cluster": cluster.server,
        "clusterId": kube_system_uid(cluster.kubeconfig),
        "context": CONTEXT,
    }

    path.write_text(yaml.safe_dump(kubeconfig_of(other.kubeconfig)))
    before = p.state()
    for args in (("preview",), ("up", "--yes"), ("refresh", "--yes"), ("destroy", "--yes")):
        message = one_line(p.sw(*args, rc=2))
        assert f"{args[0]} refused: provider region now reaches" in message, message
        assert str(path) in message and "--retarget" in message, message
        assert cluster.server in message and other.server in message, message
    assert p.state() == before
    assert other_get(other, "namespace", p.ns, "default") is None
    assert get(cluster, "configmap", "cm", p.ns) is not None

    # The ways out the message names: the former kubeconfig back (nothing changes then) …
    path.write_text(yaml.safe_dump(kubeconfig_of(cluster.kubeconfig)))
    assert p.preview().changed() == {}
    # … or --retarget, which forgets what the state records on the former cluster (left
    # there) and records the new one: the objects are created there.
    path.write_text(yaml.safe_dump(kubeconfig_of(other.kubeconfig)))
    retargeted(p, cluster, other, "region")
    assert p.resources()["region"]["outputs"]["clusterId"] == kube_system_uid(other.kubeconfig)
    assert p.preview().changed() == {}
    destroyed_there(p, cluster, other)


# --- case 2: the stack's default provider switched to another cluster ----------------------


def use_context(path: Path, context: str) -> None:
    """`kubectl config use-context`, as a user switching clusters would."""
    subprocess.run(["kubectl", "--kubeconfig", str(path), "config", "use-context", context],
                   check=True, capture_output=True)  # fmt: skip


def test_default_cluster_switched_is_refused_before_any_change(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    path = tmp_path / "kubeconfig.yaml"
    config = both(cluster.kubeconfig, other.kubeconfig)
    path.write_text(yaml.safe_dump(config))
    p = new_project({"kubernetes:kubeconfig": str(path)})
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS}, data={"a": "1"})
        """
    )
    assert p.up().summary["counts"] == {"create": 2}
    assert p.state()["defaultCluster"] == {
        "uid": kube_system_uid(cluster.kubeconfig),
        "server": cluster.server,
        "context": "first",
    }

    use_context(path, "second")
    before = p.state()
    runs = (("preview", "--json"), ("up", "--yes", "--json"), ("refresh", "--yes"),
            ("destroy", "--yes"), ("up", "--refresh", "--yes"),
            ("import", "kubernetes:core/v1:Namespace", "adopted", "default", "--yes"))  # fmt: skip
    for args in runs:
        message = one_line(p.sw(*args, rc=2))
        assert "provider default now reaches the cluster at" in message, message
        assert f"{other.server} (context 'second')" in message, message
        assert f"{cluster.server} (context 'first')" in message, message
        assert "`kubectl config use-context first`" in message, message
        assert "`stackwright up --retarget`" in message, message
    assert p.state() == before
    assert other_get(other, "namespace", p.ns, "default") is None
    assert get(cluster, "configmap", "cm", p.ns) is not None

    # The way back: the former context. Then nothing changes.
    use_context(path, "first")
    assert p.preview().changed() == {}

    # The stack's config naming the other context is the same switch.
    p.sw("config", "set", "kubernetes:context", "second")
    assert other.server in one_line(p.preview(rc=2))
    # Moving on deliberately: --retarget, shown first, then done.
    retargeted(p, cluster, other, "default")
    assert p.state()["defaultCluster"]["context"] == "second"
    assert p.preview().changed() == {}
    destroyed_there(p, cluster, other)


def test_state_delete_through_a_switched_context_leaves_the_other_clusters_object_alone(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    """`state delete` takes the stack's marks off the object it forgets, read through the
    stack's default provider: with the context switched, it took them off the object of
    that name on the other cluster (the same app deployed there, marked alike), and left
    its own object marked. It is refused there as every run is; with --yes, forgotten
    anyway, as when the cluster cannot be reached, and no object changed."""
    path = tmp_path / "kubeconfig.yaml"
    path.write_text(yaml.safe_dump(both(cluster.kubeconfig, other.kubeconfig)))
    p = new_project({"kubernetes:kubeconfig": str(path)})
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS}, data={"a": "1"})
        """
    )
    p.up()
    ours = live(cluster, "configmap", "cm", p.ns)
    copy = {"apiVersion": "v1", "kind": "ConfigMap", "data": ours["data"], "metadata": {
        "name": "cm", "namespace": p.ns, "labels": ours["metadata"]["labels"],
        "annotations": ours["metadata"]["annotations"]}}  # fmt: skip
    on_other(other, "create", "namespace", p.ns)
    made = subprocess.run(
        ["kubectl", "--kubeconfig", str(other.kubeconfig), "create", "-f", "-"],
        input=json.dumps(copy), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr

    use_context(path, "second")
    urn = p.urn("kubernetes:core/v1:ConfigMap", "cm")
    done = p.sw("state", "delete", urn, "--yes", "--json")
    (event,) = [json.loads(line) for line in done.out.splitlines()]
    assert event["removed"] == [urn] and event["unmarked"] == []
    (left,) = event["leftMarked"]
    assert "provider default now reaches the cluster at" in left["why"], left
    theirs = other_get(other, "configmap", "cm", p.ns)
    assert theirs is not None
    assert theirs["metadata"]["annotations"] == ours["metadata"]["annotations"]
    assert theirs["metadata"]["labels"] == ours["metadata"]["labels"]
    kept = live(cluster, "configmap", "cm", p.ns)["metadata"]
    assert kept["labels"] == ours["metadata"]["labels"]
    on_other(other, "delete", "namespace", p.ns)
    use_context(path, "first")
    p.sw("destroy", "--yes")
    cluster.kubectl("delete", "namespace", p.ns, "--ignore-not-found")


def test_an_export_carries_the_cluster_and_an_older_state_records_it(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    """`stack export` / `stack import` carry the cluster the default provider talked to, so
    an imported stack still refuses another; a version-1 export (an older Stackwright's,
    without it) imports, is checked as before (its objects read), and records it."""
    path = tmp_path / "kubeconfig.yaml"
    path.write_text(yaml.safe_dump(both(cluster.kubeconfig, other.kubeconfig)))
    p = new_project({"kubernetes:kubeconfig": str(path)})
    p.program('k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": "default"})\n')
    assert p.up().summary["counts"] == {"create": 1}
    exported = json.loads(p.sw("stack", "export").out)
    assert exported["version"] == 2 and exported["defaultCluster"]["context"] == "first"

    use_context(path, "second")
    document = tmp_path / "state.json"
    document.write_text(json.dumps(exported))
    p.sw("stack", "import", "--file", str(document))
    assert "provider default now reaches" in one_line(p.preview(rc=2))

    older = {k: v for k, v in exported.items() if k != "defaultCluster"} | {"version": 1}
    document.write_text(json.dumps(older))
    p.sw("stack", "import", "--file", str(document))
    assert "defaultCluster" not in p.state()
    assert "holds none of the 1 object(s)" in one_line(p.preview(rc=2))
    use_context(path, "first")
    assert p.up().changed() == {}
    assert p.state()["defaultCluster"]["uid"] == kube_system_uid(cluster.kubeconfig)
    p.sw("destroy", "--yes")


# --- case 3: the provider's namespace changes ------------------------------------------------


def test_provider_namespace_change_replaces_objects_into_the_new_namespace(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()

    def declare(namespace: str) -> None:
        p.program(
            f"""
            k8s.core.v1.Namespace("a", metadata={{"name": NS + "-a"}})
            k8s.core.v1.Namespace("b", metadata={{"name": NS + "-b"}})
            region = k8s.Provider("region", kubeconfig={str(cluster.kubeconfig)!r},
                                  namespace=NS + {namespace!r})
            k8s.core.v1.ConfigMap("cm", metadata={{"name": "cm"}}, data={{"a": "1"}},
                                  opts=sw.ResourceOptions(provider=region))
            k8s.core.v1.ConfigMap("auto", data={{"a": "1"}},
                                  opts=sw.ResourceOptions(provider=region))
            """
        )

    declare("-a")
    assert p.up().summary["counts"] == {"create": 5}
    auto = p.resources()["auto"]["id"]
    assert p.resources()["cm"]["id"] == f"{p.ns}-a/cm" and auto.startswith(f"{p.ns}-a/")

    declare("-b")
    previewed = p.preview()
    assert previewed.changed() == {"region": "update", "cm": "replace", "auto": "replace"}
    (replaced,) = [e for e in previewed.events if e.get("name") == "auto" and "replaceReasons" in e]
    # The namespaces, not the auto-name, which the replacement draws anew.
    assert replaced["replaceReasons"] == [f"its provider's namespace changed ({p.ns}-a → {p.ns}-b)"]
    up = p.up()
    assert up.summary["counts"] == {"same": 2, "update": 1, "replace": 2, "delete-replaced": 2}
    assert up.ops() == {"region": "update", "cm": "delete-replaced", "auto": "delete-replaced"}
    state = p.resources()
    assert state["cm"]["id"] == f"{p.ns}-b/cm" and state["auto"]["id"].startswith(f"{p.ns}-b/")
    assert get(cluster, "configmap", "cm", f"{p.ns}-a") is None
    assert get(cluster, "configmap", auto.partition("/")[2], f"{p.ns}-a") is None
    assert get(cluster, "configmap", "cm", f"{p.ns}-b") is not None
    assert p.preview().changed() == {}
    p.sw("destroy", "--yes")
    assert get(cluster, "configmap", "cm", f"{p.ns}-b") is None


# --- case 4: an exec credential plugin that is not installed --------------------------------


@pytest.mark.parametrize("provider", ["default", "explicit"])
def test_exec_plugin_not_installed_is_bad_input(
    new_project: Any, cluster: LiveCluster, tmp_path: Path, provider: str
) -> None:
    config = kubeconfig_of(cluster.kubeconfig)
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "no-such-auth-plugin",
            "interactionMode": "Never",
        }
    }
    path = tmp_path / "exec.yaml"
    path.write_text(yaml.safe_dump(config))
    if provider == "default":
        p = new_project({"kubernetes:kubeconfig": str(path)})
        p.program('k8s.core.v1.ConfigMap("cm", metadata={"namespace": NS})\n')
    else:
        p = new_project()
        p.program(
            f"""
            region = k8s.Provider("region", kubeconfig={str(path)!r})
            k8s.core.v1.ConfigMap("cm", metadata={{"namespace": NS}},
                                  opts=sw.ResourceOptions(provider=region))
            """
        )
    for command in (p.preview, p.up):
        message = one_line(command(rc=2))
        assert "no-such-auth-plugin" in message and repr(CONTEXT) in message, message
        assert "PATH" in message, message
    assert p.history() == [] and p.state()["resources"] == []


# --- case 5: two providers reaching one cluster ------------------------------------------------

CM = "kubernetes:core/v1:ConfigMap"


def one_cluster_twice(p: Project, cluster: LiveCluster, *body: str) -> None:
    """`body` declared after "region", an explicit provider for the cluster the stack's
    default provider reaches (its kubeconfig and context), and the namespace "ns"."""
    context = yaml.safe_load(cluster.kubeconfig.read_text())["current-context"]
    declared = f"""
    region = k8s.Provider("region", kubeconfig={str(cluster.kubeconfig)!r}, context={context!r})
    ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
    """
    p.program("".join(textwrap.dedent(part) for part in (declared, *body)))


def configmap(name: str, same: str, provider: str = "", after: str = "ns") -> str:
    """ConfigMap `name`, named `same` (a Python expression), through `provider` (the stack's
    default one if ""), after `after`; its data says whose it is."""
    through = f"provider={provider}, " if provider else ""
    return f"""
    {name} = k8s.core.v1.ConfigMap(
        {name!r}, metadata={{"name": {same}, "namespace": NS}}, data={{"mine": {name!r}}},
        opts=sw.ResourceOptions({through}depends_on=[{after}]))
    """


HERE = configmap("here", '"same"')
LATER = 'sw.Output.from_input("same")'  # an Output: left to the run, as one known once applied


def still_here(p: Project, cluster: LiveCluster, uid: str | None = None) -> str:
    """ns/same is "here"'s object as "here" applied it (`uid`: the same object); its uid."""
    made = live(cluster, "configmap", "same", p.ns)
    assert made["data"] == {"mine": "here"}, made["data"]
    assert made["metadata"]["annotations"]["stackwright.io/urn"] == p.urn(CM, "here")
    assert uid in (None, made["metadata"]["uid"])
    return str(made["metadata"]["uid"])


def there_refused(p: Project, cluster: LiveCluster, verb: str, uid: str | None = None) -> str:
    """`up` fails "there"'s step alone, as the object "here"'s step `verb`, before it
    applies: ns/same is still "here"'s (`still_here`), "there" is not recorded."""
    (failure,) = p.up(rc=1).summary["failures"]
    # Where each was declared (from the project folder, where the run starts): "there"'s
    # line leads, "here"'s follows its name.
    assert re.fullmatch(
        rf"__main__\.py:\d+: {CM} there: ConfigMap {p.ns}/same is the object {CM} here "
        rf"{verb} \(__main__\.py:\d+\): each would overwrite the other's fields; give one "
        r"of them another metadata\.name",
        failure,
    ), failure
    assert "there" not in p.resources()
    return still_here(p, cluster, uid)


def test_plain_names_of_one_object_through_two_providers_of_one_cluster_are_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The stack's default provider and an explicit one for the same cluster, each with a
    resource naming ns/same in plain text: each would apply over the other's fields (and a
    delete of one would take the other's object), so it is refused before any change, as
    two resources through one provider are."""
    p = new_project()
    one_cluster_twice(p, cluster, HERE, configmap("there", '"same"', "region"))
    for run in (p.preview, p.up):
        message = one_line(run(rc=2))
        assert f"ConfigMap there names the same ConfigMap {p.ns}/same as {CM} here" in message, (
            message
        )
        assert message.endswith("nothing was changed"), message
    assert p.state()["resources"] == [] and get(cluster, "namespace", p.ns) is None

    # "here" applied first: "there" added later is refused the same way, "here"'s object kept.
    one_cluster_twice(p, cluster, HERE)
    p.up()
    uid = still_here(p, cluster)
    one_cluster_twice(p, cluster, HERE, configmap("there", '"same"', "region"))
    assert "ConfigMap there names the same ConfigMap" in one_line(p.up(rc=2))
    still_here(p, cluster, uid)
    assert "there" not in p.resources()
    p.sw("destroy", "--yes")


def test_output_names_of_one_object_through_two_providers_of_one_cluster_are_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The same, "there"'s name known only once applied (an Output): its step is refused
    before it applies, whether "here" creates the object in the run or keeps it."""
    p = new_project()
    one_cluster_twice(p, cluster, HERE, configmap("there", LATER, "region", after="here"))
    uid = there_refused(p, cluster, "creates too")

    # "here" kept, its step after "there"'s: "there" is refused before it applies.
    one_cluster_twice(
        p, cluster, configmap("there", LATER, "region"), configmap("here", '"same"', after="there")
    )
    there_refused(p, cluster, "holds", uid)
    p.sw("destroy", "--yes")


def test_a_resource_moved_to_another_provider_of_its_cluster_keeps_its_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Resource "here" moves from the stack's default provider to "region", which reaches
    the same cluster, while "there", through the default provider, names its object: it is
    refused, in plain text before the run, by an Output at its step (before "here"'s)."""
    p = new_project()
    one_cluster_twice(p, cluster, HERE)
    p.up()
    uid = still_here(p, cluster)
    moved = configmap("here", '"same"', "region", after="there")

    one_cluster_twice(p, cluster, configmap("there", '"same"'), moved)
    assert "ConfigMap here names the same ConfigMap" in one_line(p.up(rc=2))
    still_here(p, cluster, uid)

    one_cluster_twice(p, cluster, configmap("there", LATER), moved)
    there_refused(p, cluster, "holds", uid)
    p.sw("destroy", "--yes")


def test_an_object_moved_to_another_provider_of_its_cluster_stays_in_its_applyset(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Resource "here" moves from the stack's default provider to "region", the same cluster: its
    object stays a member of the namespace's one ApplySet, whose parent is not removed (the
    up warned that it could not be, telling to take the object out of the set)."""
    p = new_project()
    one_cluster_twice(p, cluster, HERE)
    p.up()
    uid = still_here(p, cluster)
    one_cluster_twice(p, cluster, configmap("here", '"same"', "region"))
    up = p.up()
    assert warnings(up) == [], warnings(up)
    still_here(p, cluster, uid)
    assert_members(cluster, p.applyset_parent, p.ns, "same")
    p.sw("destroy", "--yes")
