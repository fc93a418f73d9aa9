"""Reading objects without managing them: `Kind.get(name, id)` / `ResourceOptions(id=...)`.

Lifecycle scenarios against the fake cluster, as in test_engine_lifecycle: a read is a
step of every preview and up that GETs the object and makes it the resource's outputs;
it writes nothing to the cluster, and leaving the program (or a destroy) only drops its
record — Pulumi's read and discard.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_stack import PROJECT, STACK, Declare, Stack, program, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine import operations
from stackwright.engine.events import Drift, StepDone, StepSkipped
from stackwright.engine.execute import Options
from stackwright.engine.policy_gate import PolicyGate, subjects
from stackwright.engine.testing import Call, FakeCluster
from stackwright.errors import UsageError
from stackwright.model import Op
from stackwright.sdk.context import Program, export, running
from stackwright.sdk.resource import ResourceOptions
from stackwright.state import open_backend

SVC = "kubernetes:core/v1:Service"
CM = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"

DNS = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "dns"}},
    "spec": {"clusterIP": "10.96.0.10", "ports": [{"name": "dns", "port": 53}]},
}


def with_dns(fake: FakeCluster) -> None:
    fake.put(DNS, manager="kube-addon-manager")


def resolver(dns_id: str = "kube-system/kube-dns", *, also: Declare | None = None) -> Declare:
    """A read Service, a ConfigMap made from its clusterIP, and an export of it."""

    def declare(p: Program) -> None:
        dns = k8s.core.v1.Service.get("dns", dns_id)
        k8s.core.v1.ConfigMap(
            "resolver", metadata={"name": "resolver"}, data={"ip": dns.spec["clusterIP"]}
        )
        export("dns_ip", dns.spec["clusterIP"])
        if also is not None:
            also(p)

    return declare


def unrelated(p: Program) -> None:
    k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"a": "1"})


def calls_about(fake: FakeCluster, name: str) -> list[str]:
    return [c.method for c in fake.calls if c.name == name]


def test_a_read_in_preview_and_up_gives_dependents_the_live_object_and_writes_nothing(
    stack: Stack,
) -> None:
    with_dns(stack.fake)
    before = stack.fake.find("Service", "kube-dns", "kube-system")

    preview = stack.preview(resolver())

    assert preview.ok and preview.counts == {"read": 1, "create": 1}
    assert stack.started() == [("read", "dns"), ("create", "resolver")]
    # Read in a preview too (it changes nothing), so the dependent's dry run has the value.
    (previewed,) = [a.body for a in stack.fake.applied if a.body["kind"] == "ConfigMap"]
    assert previewed["data"] == {"ip": "10.96.0.10"}
    assert preview.outputs == {"dns_ip": "10.96.0.10"}
    assert stack.fake.writes() == [] and stack.state().resources == []

    stack.fake.calls.clear()
    summary = stack.up(resolver())

    assert summary.ok and summary.counts == {"read": 1, "create": 1}
    assert summary.outputs == {"dns_ip": "10.96.0.10"}
    assert stack.fake.find("ConfigMap", "resolver")["data"] == {"ip": "10.96.0.10"}  # type: ignore[index]
    # The read object: one GET, no write of any kind (no apply, marks or ApplySet).
    assert calls_about(stack.fake, "kube-dns") == ["read"]
    assert stack.fake.writes() == [
        Call("ensure_applyset", "ApplySet", "default"),
        Call("apply", "ConfigMap", "resolver"),
    ]
    assert stack.fake.find("Service", "kube-dns", "kube-system") == before
    recorded = stack.recorded(urn(SVC, "dns"))
    assert recorded.external and recorded.id == "kube-system/kube-dns"
    assert recorded.outputs == before
    assert recorded.inputs == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system"},
    }
    assert stack.recorded(urn(CM, "resolver")).dependencies == (urn(SVC, "dns"),)

    # Read again on every up; unchanged, it journals nothing.
    version = stack.state().version
    stack.fake.calls.clear()
    again = stack.up(resolver())
    assert again.ok and again.counts == {"read": 1, "same": 1}
    assert stack.fake.writes() == [] and stack.state().version == version


def test_a_read_sees_the_object_as_it_is_now_and_dependents_follow(stack: Stack) -> None:
    with_dns(stack.fake)
    stack.up(resolver())
    stack.fake.edit("Service", "kube-dns", {"spec.clusterIP": "10.96.0.53"})
    stack.fake.calls.clear()

    summary = stack.up(resolver())

    assert summary.counts == {"read": 1, "update": 1}
    assert summary.outputs == {"dns_ip": "10.96.0.53"}
    assert stack.recorded(urn(SVC, "dns")).outputs["spec"]["clusterIP"] == "10.96.0.53"
    assert calls_about(stack.fake, "kube-dns") == ["read"]


def test_an_id_without_a_namespace_reads_from_the_providers_default_namespace(
    stack: Stack,
) -> None:
    stack.fake.put({**DNS, "metadata": {"name": "kube-dns"}})

    summary = stack.up(resolver("kube-dns"))

    assert summary.ok and summary.outputs == {"dns_ip": "10.96.0.10"}
    assert stack.recorded(urn(SVC, "dns")).id == "default/kube-dns"


def test_a_missing_object_fails_its_read_in_one_line_and_its_dependents_are_not_run(
    stack: Stack,
) -> None:
    for run in (stack.preview, stack.up):
        summary = run(resolver("kube-system/nope", also=unrelated))

        assert not summary.ok
        assert summary.failures == [
            f"{SVC} dns: Service kube-system/nope does not exist: a read (id='kube-system/nope') "
            "only reads an existing object; create it first, or declare it with its fields in "
            "place of `.get(…)` / id= to have this stack manage it"
        ]
        assert summary.not_done == [f"{CM} resolver: {SVC} dns failed or was not done"]
        (failed,) = [e for e in stack.of(StepDone) if not e.ok]
        assert failed.step.op is Op.READ and failed.step.urn == urn(SVC, "dns")
        assert [e.step.urn for e in stack.of(StepSkipped)] == [urn(CM, "resolver")]
    # Independent work went on; nothing about the read was written or recorded.
    assert stack.fake.find("ConfigMap", "other") is not None
    assert stack.fake.find("ConfigMap", "resolver") is None
    assert [r.urn for r in stack.state().resources] == [urn(CM, "other")]


def test_dropping_a_read_or_destroying_forgets_it_and_never_deletes_the_object(
    stack: Stack,
) -> None:
    with_dns(stack.fake)
    stack.up(resolver(also=unrelated))
    stack.fake.calls.clear()

    preview = stack.preview(unrelated)
    assert preview.counts == {"discard": 1, "delete": 1, "same": 1}
    dropped = stack.up(unrelated)

    assert dropped.ok and dropped.counts == {"discard": 1, "delete": 1, "same": 1}
    assert stack.fake.calls_to("delete") == [Call("delete", "ConfigMap", "resolver")]
    assert calls_about(stack.fake, "kube-dns") == []
    assert stack.fake.find("Service", "kube-dns", "kube-system") is not None
    assert stack.state().resource(urn(SVC, "dns")) is None

    stack.up(resolver(also=unrelated))
    stack.fake.calls.clear()
    destroyed = stack.destroy()

    assert destroyed.ok and destroyed.counts == {"discard": 1, "delete": 2}
    assert sorted(c.name for c in stack.fake.calls_to("delete")) == ["other", "resolver"]
    assert calls_about(stack.fake, "kube-dns") == []
    # No ApplySet bookkeeping where only a read was (kube-system).
    assert all(c.name == "default" for c in stack.fake.calls_to("remove_applyset"))
    assert stack.fake.find("Service", "kube-dns", "kube-system") is not None
    assert stack.state().resources == []


def test_refresh_rereads_a_read_object_and_reports_no_drift(stack: Stack) -> None:
    with_dns(stack.fake)
    stack.up(resolver())
    stack.fake.edit("Service", "kube-dns", {"metadata.labels.k8s-app": "coredns"})
    stack.fake.calls.clear()

    summary = stack.refresh()

    assert summary.ok and summary.counts == {"in-sync": 2}
    assert stack.of(Drift) == []
    assert stack.fake.writes() == []
    labels = stack.recorded(urn(SVC, "dns")).outputs["metadata"]["labels"]
    assert labels == {"k8s-app": "coredns"}


def test_a_read_object_may_also_be_managed_by_this_stack_and_the_state_exports(
    stack: Stack, tmp_path: Path
) -> None:
    def declare(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        seen = k8s.core.v1.ConfigMap.get(
            "seen", "default/settings", ResourceOptions(depends_on=[settings])
        )
        export("seen", seen.data["a"])

    summary = stack.up(declare)

    assert summary.ok and summary.counts == {"create": 1, "read": 1}
    assert summary.outputs == {"seen": "1"}
    document = stack.backend.export(PROJECT, STACK)
    (read,) = [r for r in document["resources"] if r["urn"] == urn(CM, "seen")]
    assert read["external"] is True and read["id"] == "default/settings"
    # Two records of one object are refused on import, but not when one of them is a read.
    other = open_backend("file://" + str(tmp_path / "other.db"))
    try:
        other.create_stack(PROJECT, STACK)
        other.import_(PROJECT, STACK, document)
        assert other.load(PROJECT, STACK).resource(urn(CM, "seen")).external  # type: ignore[union-attr]
        # A state written before reads existed has no flag: it loads as managed.
        for resource in document["resources"]:
            resource.pop("external", None)
        document["resources"] = [r for r in document["resources"] if r["urn"] != urn(CM, "seen")]
        other.import_(PROJECT, STACK, document)
        assert not other.load(PROJECT, STACK).resource(urn(CM, "settings")).external  # type: ignore[union-attr]
    finally:
        other.close()
    # Dropping the read leaves the managed object alone (no "held by" bookkeeping either).
    stack.fake.calls.clear()

    def managed_only(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})

    assert stack.up(managed_only).counts == {"discard": 1, "same": 1}
    assert stack.fake.writes() == []


def test_a_read_secret_is_secret(stack: Stack) -> None:
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db-credentials", "namespace": "default"},
            "data": {"password": "aHVudGVyMg=="},
        },
        manager="operator",
    )

    def declare(p: Program) -> None:
        creds = k8s.core.v1.Secret.get("creds", "db-credentials")
        export("password", creds.data["password"])

    summary = stack.up(declare)

    assert summary.ok and summary.outputs == {"password": "[secret]"}
    assert "data" in stack.recorded(urn(SECRET, "creds")).secret_paths


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_a_read_secrets_values_are_secret_wherever_else_the_object_holds_them(
    stack: Stack,
) -> None:
    # `kubectl apply -f` of a Secret with stringData leaves the plain value in its
    # last-applied annotation: a managed Secret's values (its inputs) are searched for
    # there, and a read one's (its live data) must be too.
    applied = '{"stringData":{"password":"hunter2"}}'
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "db-credentials",
                "namespace": "default",
                "annotations": {LAST_APPLIED: applied},
            },
            "data": {"password": "aHVudGVyMg=="},
        },
        manager="kubectl-client-side-apply",
    )

    def declare(p: Program) -> None:
        creds = k8s.core.v1.Secret.get("creds", "db-credentials")
        export("applied", creds.metadata["annotations"][LAST_APPLIED])

    summary = stack.up(declare)

    assert summary.ok and summary.outputs == {"applied": "[secret]"}
    assert (
        f"metadata.annotations.{LAST_APPLIED}" in stack.recorded(urn(SECRET, "creds")).secret_paths
    )


def test_a_read_goes_through_its_explicit_provider(stack: Stack) -> None:
    other = FakeCluster(name="other")
    with_dns(other)
    stack.factory = stack.fake.factory({"other": other})

    def declare(p: Program) -> None:
        cluster = k8s.Provider("other", context="other")
        dns = k8s.core.v1.Service.get(
            "dns", "kube-system/kube-dns", ResourceOptions(provider=cluster)
        )
        export("dns_ip", dns.spec["clusterIP"])

    summary = stack.up(declare)

    assert summary.ok and summary.outputs == {"dns_ip": "10.96.0.10"}
    assert Call("read", "Service", "kube-dns") in other.calls
    assert calls_about(stack.fake, "kube-dns") == []
    assert stack.recorded(urn(SVC, "dns")).provider == urn(
        "stackwright:providers:kubernetes", "other"
    )


def test_a_read_that_becomes_managed_is_created_and_refused_over_the_object_it_read(
    stack: Stack,
) -> None:
    def read(p: Program) -> None:
        k8s.core.v1.ConfigMap.get("cfg", "made-by-hand")

    def managed(p: Program) -> None:
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "made-by-hand"}, data={"a": "2"})

    stack.fake.put(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made-by-hand"}},
        manager="kubectl",
    )
    assert stack.up(read).ok

    summary = stack.up(managed)

    # Not an update of someone else's object: a create, which finds it in the way.
    assert stack.started() == [("create", "cfg")]
    assert (
        not summary.ok and "already exists (it is not this stack's: made outside it, or forgotten by `state delete`)" in summary.failures[0]
    )
    assert stack.fake.calls_to("apply") == []
    assert stack.recorded(urn(CM, "cfg")).external  # the record it had stays


def test_a_managed_resource_cannot_turn_into_a_read_of_itself(stack: Stack) -> None:
    def managed(p: Program) -> None:
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg"}, data={"a": "1"})

    def read(p: Program) -> None:
        k8s.core.v1.ConfigMap.get("cfg", "cfg")

    stack.up(managed)
    stack.fake.calls.clear()

    summary = stack.up(read)

    assert not summary.ok
    (failure,) = summary.failures
    assert failure.startswith(f"{CM} cfg: this stack manages it, so it cannot become a read of cfg")
    assert f"stackwright state delete '{urn(CM, 'cfg')}'" in failure
    assert stack.fake.writes() == []
    assert not stack.recorded(urn(CM, "cfg")).external


def test_policy_checks_what_the_program_declares_not_the_objects_it_reads() -> None:
    declared = program(resolver())

    assert [s.urn for s in subjects(declared, PolicyGate(packs=()))] == [urn(CM, "resolver")]


def test_replace_of_a_read_is_refused_in_one_line(stack: Stack) -> None:
    with_dns(stack.fake)
    with pytest.raises(UsageError, match=r"it is a read \(id=\) of someone else's object"):
        stack.up(resolver(), replace=frozenset({urn(SVC, "dns")}))
    assert stack.fake.calls == []


def test_a_cluster_scoped_kind_is_read_by_its_name_alone(stack: Stack) -> None:
    def declare(p: Program) -> None:
        system = k8s.core.v1.Namespace.get("system", "kube-system")
        k8s.core.v1.Namespace.get("wrong", "default/kube-system")
        export("uid", system.metadata["uid"])

    summary = stack.up(declare)

    assert summary.failures == [
        "kubernetes:core/v1:Namespace wrong: Namespace is cluster-scoped: read it with "
        "id='kube-system', not 'default/kube-system'"
    ]
    (failed,) = [e for e in stack.of(StepDone) if not e.ok]
    assert failed.step.op is Op.READ
    assert stack.recorded(urn("kubernetes:core/v1:Namespace", "system")).id == "kube-system"
    assert stack.fake.writes() == []


def test_another_stack_reading_an_object_is_not_taken_for_its_manager(stack: Stack) -> None:
    def managed(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})

    assert stack.up(managed).ok
    # Stack prod of the project reads the object stack dev manages (its outputs carry
    # dev's marks).
    stack.backend.create_stack(PROJECT, "prod")
    reader = Program(project=PROJECT, stack="prod")
    with running(reader):
        k8s.core.v1.ConfigMap.get("settings", "default/settings")
    read = operations.run(
        stack.backend,
        project=PROJECT,
        stack="prod",
        options=Options("up"),
        program=reader,
        providers=stack.fake.factory(),
        listener=lambda event: None,
    )
    assert read.ok and read.counts == {"read": 1}
    # Dev forgets its record (`state delete`) and declares the object again: it is still
    # marked as dev's resource, and prod's read of it is no claim on it.
    stack.backend.delete_resource(PROJECT, STACK, urn(CM, "settings"))

    again = stack.up(managed)

    assert again.ok, again.failures
    assert again.counts == {"create": 1}
