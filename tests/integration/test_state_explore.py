"""The state store against the real local cluster where the fake cluster cannot stand in.

After `stackwright state move`, the moved object still carries the source stack's marks
until the destination's next `up`; the source stack must neither take it back (its
creates find objects by listing the kind and reading their marks) nor leave it behind.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_cli_lifecycle import get, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

from stackwright.automation.stack import MarksRemain, Workspace
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
    _forgotten_without_the_key(new_project(), cluster)


def test_state_delete_without_the_key_of_a_stack_with_environments_forgets_so_too(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A stack that maps contexts to environments: the check needs the configuration that
    names the cluster too, and no change reaches a cluster it cannot name, so its key not at
    hand is a cluster out of reach as above (it exited 2)."""
    p = new_project()
    p.sw("config", "set", "--path", 'stackwright:environments["prod-ctx"]', "production")
    _forgotten_without_the_key(p, cluster)


def _forgotten_without_the_key(p: Any, cluster: LiveCluster) -> None:
    """Project `p`'s ConfigMap, made, forgotten by `state delete --yes` without the stack's
    key: out of the state, its marks left on it with a warning that says why."""
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


def _forgetter(p: Any, cluster: LiveCluster, tmp_path: Path, secrets: list[str]) -> Path:
    """A kubeconfig, made the stack's, whose service account may read and patch ConfigMaps in
    the project's namespace, and only do `secrets` (verbs) to Secrets."""
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "forgetter", "namespace": p.ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "forgetter"},
        "subjects": [{"kind": "ServiceAccount", "name": "forgetter", "namespace": p.ns}],
    }
    cluster.kubectl("-n", p.ns, "create", "serviceaccount", "forgetter")
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(binding))
    _forgetter_may(p, cluster, secrets)
    token = cluster.kubectl("-n", p.ns, "create", "token", "forgetter").stdout.strip()
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    for entry in config["users"]:
        entry["user"] = {"token": token}
    path = tmp_path / "forgetter"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    (p.root / "Stackwright.dev.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(path)}})
    )
    return path


def _forgetter_may(p: Any, cluster: LiveCluster, secrets: list[str]) -> None:
    """What the forgetter may do: read and patch ConfigMaps, `secrets` (verbs) to Secrets."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "forgetter", "namespace": p.ns},
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "patch"]},
            {"apiGroups": [""], "resources": ["secrets"], "verbs": secrets},
        ],
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(role))


SECRET = "kubernetes:core/v1:Secret"
TWO = """
a = k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})
k8s.core.v1.Secret("s", metadata={"name": "s", "namespace": NS}, string_data={"k": "v"},
                   opts=sw.ResourceOptions(depends_on=[a]))
"""


def _marked(cluster: LiveCluster, kind: str, name: str, ns: str) -> bool:
    labels = get(cluster, kind, name, ns)["metadata"].get("labels") or {}  # type: ignore[index]
    return labels.get("app.kubernetes.io/managed-by") == "stackwright"


def test_state_delete_the_cluster_refuses_in_part_changes_no_object(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """RBAC that lets the stack read Secrets but not patch them: every unmarking patch is
    tried as a dry run first, so the ConfigMap before the Secret keeps its marks too (it lost
    them, forgotten as "nothing in the cluster was changed", and no `up` put them back)."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program(TWO)
    p.up()
    _forgetter(p, cluster, tmp_path, ["get", "list"])

    forgot = p.sw("state", "delete", "--yes", "--target-dependents", p.urn(CM, "a"))
    assert p.state()["resources"] == []
    assert forgot.out == "".join(
        f"Removed {p.urn(type_, name)} from the state of stack dev; nothing in the cluster was "
        "changed.\n"
        for type_, name in ((CM, "a"), (SECRET, "s"))
    )
    (warning,) = forgot.err.splitlines()
    assert warning.startswith(f"warning: cannot take stack dev's marks off {SECRET} {p.ns}/s: ")
    assert 'cannot patch resource "secrets"' in warning
    assert f"kubectl label configmap a -n {p.ns} " in warning
    assert _marked(cluster, "configmap", "a", p.ns) and _marked(cluster, "secret", "s", p.ns)


def test_state_delete_json_says_which_objects_it_unmarked_and_which_it_left_marked(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """--json says what became of each object, not only what was forgotten: taken off
    (`unmarked`), or left marked with the cluster's reason and the commands (`leftMarked`)."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program('k8s.core.v1.ConfigMap("c", metadata={"name": "c", "namespace": NS})\n' + TWO)
    p.up()
    _forgetter(p, cluster, tmp_path, ["get", "list"])
    c, a, secret = p.urn(CM, "c"), p.urn(CM, "a"), p.urn(SECRET, "s")

    done = json.loads(p.sw("state", "delete", "--yes", "--json", c).out)
    assert (done["removed"], done["unmarked"], done["leftMarked"]) == ([c], [c], [])

    done = json.loads(p.sw("state", "delete", "--yes", "--json", "--target-dependents", a).out)
    assert (done["removed"], done["unmarked"]) == ([a, secret], [])
    assert [each["urn"] for each in done["leftMarked"]] == [a, secret]
    objects = (("configmap", "a"), ("secret", "s"))
    for each, (kind, name) in zip(done["leftMarked"], objects, strict=True):
        assert each["why"].startswith(f"cannot take stack dev's marks off {SECRET} {p.ns}/s: ")
        assert 'cannot patch resource "secrets"' in each["why"]
        assert each["unmark"].startswith(f"kubectl label {kind} {name} -n {p.ns} ")
    assert not _marked(cluster, "configmap", "c", p.ns)
    assert _marked(cluster, "configmap", "a", p.ns) and _marked(cluster, "secret", "s", p.ns)


@contextmanager
def _relay(cluster: LiveCluster, after: Callable[[str, str], None]) -> Iterator[str]:
    """A plain-HTTP relay to the cluster that passes every request on as it came (the
    client's own token, so the cluster's RBAC answers), and calls `after(method, path)` once
    each answer is back: a test changes the cluster between two requests of one command."""
    verify = ssl.create_default_context(cafile=str(cluster.ca))
    upstream = httpx.Client(base_url=cluster.server, verify=verify, timeout=30)

    class Relay(BaseHTTPRequestHandler):
        def _pass(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            answer = upstream.request(self.command, self.path, content=body, headers=headers)
            after(self.command, self.path)
            self.send_response(answer.status_code)
            for key in ("Content-Type", "Warning"):
                if key in answer.headers:
                    self.send_header(key, answer.headers[key])
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = _pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        upstream.close()


def test_state_delete_refused_after_marks_came_off_says_so_and_up_marks_them_again(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """The dry runs pass, then the Secret's patch right is revoked once the ConfigMap's real
    patch has landed: the ConfigMap's marks are off, the Secret's on. Nothing is forgotten,
    the command says which object lost its marks, and the next `up` (no program change)
    marks it again; it said "Cancelled: nothing was changed" and no `up` put them back."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program(TWO)
    p.up()
    a, secret = p.urn(CM, "a"), p.urn(SECRET, "s")
    scoped = _forgetter(p, cluster, tmp_path, ["get", "list", "patch"])
    revoked: list[str] = []

    def revoke(method: str, path: str) -> None:
        if method == "PATCH" and "dryRun" not in path and "/configmaps/a" in path and not revoked:
            revoked.append(path)
            _forgetter_may(p, cluster, ["get", "list"])

    with _relay(cluster, revoke) as relay:
        config = yaml.safe_load(scoped.read_text())
        for entry in config["clusters"]:
            entry["cluster"] = {"server": relay}
        scoped.write_text(yaml.safe_dump(config))
        with pytest.raises(MarksRemain) as caught, Workspace.open(p.root, "dev") as ws:
            ws.forget(a, target_dependents=True)
        assert revoked, "the ConfigMap's real patch never came"
        remain = caught.value
        assert (remain.unmarked, list(remain.left_marked)) == ([a], [secret])
        assert str(remain).startswith(f"cannot take stack dev's marks off {SECRET} {p.ns}/s: ")
        assert 'cannot patch resource "secrets"' in str(remain)
        assert str(remain).endswith(
            f"; the marks came off {a} already, which the stack still records: the next "
            "`stackwright up` marks them again"
        )
        assert not _marked(cluster, "configmap", "a", p.ns)
        assert _marked(cluster, "secret", "s", p.ns)
        assert set(p.resources()) == {"a", "s"}

        # The next `up`, no program change, marks it again (it took it for unchanged).
        admin = yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(cluster.kubeconfig)}})
        (p.root / "Stackwright.dev.yaml").write_text(admin)
        assert p.up().ops() == {"a": "update"}
        assert _marked(cluster, "configmap", "a", p.ns)
        assert p.up().ops() == {}

        # With --yes, forgotten anyway: each object said as it is left.
        _forgetter_may(p, cluster, ["get", "list", "patch"])
        revoked.clear()
        (p.root / "Stackwright.dev.yaml").write_text(
            yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(scoped)}})
        )
        forgot = p.sw("state", "delete", "--yes", "--target-dependents", a)
    assert p.state()["resources"] == []
    assert sorted(forgot.out.splitlines()) == [  # in the state's order: a's update moved it last
        f"Removed {a} from the state of stack dev; its object stays in the cluster, without the "
        "stack's marks.",
        f"Removed {secret} from the state of stack dev; nothing in the cluster was changed.",
    ]
    (warning,) = forgot.err.splitlines()
    assert warning.startswith(f"warning: cannot take stack dev's marks off {SECRET} {p.ns}/s: ")
    assert f"`kubectl label secret s -n {p.ns} " in warning
    assert "kubectl label configmap" not in warning


def test_state_delete_anyway_lists_only_objects_that_keep_the_marks(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """Forgotten anyway after a refusal, --json's leftMarked (and the warning's commands)
    name the objects that keep the marks, as the attempt found them: not one deleted by
    hand since (it listed it, with a kubectl command for an object that does not exist)."""
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.program(
        'a = k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n'
        's = k8s.core.v1.Secret("s", metadata={"name": "s", "namespace": NS}, '
        'string_data={"k": "v"},\n'
        "                       opts=sw.ResourceOptions(depends_on=[a]))\n"
        # Recorded after the Secret, whose refused patch ends the attempt: "gone" must not
        # be named left marked for not having been read by then.
        'k8s.core.v1.ConfigMap("gone", metadata={"name": "gone", "namespace": NS},\n'
        "                      opts=sw.ResourceOptions(depends_on=[s]))\n"
    )
    p.up()
    cluster.kubectl("-n", p.ns, "delete", "configmap", "gone")
    _forgetter(p, cluster, tmp_path, ["get", "list"])
    a, gone, secret = p.urn(CM, "a"), p.urn(CM, "gone"), p.urn(SECRET, "s")

    forgot = p.sw("state", "delete", "--yes", "--json", "--target-dependents", a)
    done = json.loads(forgot.out)
    assert set(done["removed"]) == {a, gone, secret}
    assert sorted(each["urn"] for each in done["leftMarked"]) == sorted([a, secret])
    assert "configmap gone" not in forgot.err, forgot.err
