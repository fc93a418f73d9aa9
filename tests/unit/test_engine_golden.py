"""Golden text for the engine's plans and ordering, and for how the CLI prints them.

A program of ten resources that exercises every ordering rule (namespace first,
CRD before its custom objects, configuration and RBAC before workloads) runs
against the fake cluster with `parallel=1`, so the event order is deterministic;
the lines are compared with literal text (kapp prints its change graph the same
way). Update a golden deliberately: read the new text and check each line is
right before pasting it in.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any

from engine_stack import Declare, Stack
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.cli.render import make_renderer
from stackwright.engine.events import (
    Event,
    Listener,
    StepDone,
    StepProgress,
    StepStarted,
    Summary,
)
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output

CRD_SPEC = {
    "group": "example.com",
    "scope": "Namespaced",
    "names": {"kind": "Cache", "plural": "caches", "singular": "cache"},
    "versions": [
        {
            "name": "v1",
            "served": True,
            "storage": True,
            "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }
    ],
}


def shop(
    *,
    replicas: int = 2,
    image: str = "nginx:1.29",
    mode: str = "fast",
    settings: dict[str, str] | None = None,
    password: str = "hunter2",
    role_ref: tuple[str, str] = ("Role", "web"),
    service: bool = True,
    extra: bool = False,
) -> Declare:
    """The shop's resources, declared in an order the rules must correct: the workload
    first, its namespace and the CRD last."""

    def declare(p: Program) -> None:
        meta = {"name": "web", "namespace": "shop"}
        k8s.apps.v1.Deployment(
            "web",
            metadata=meta,
            spec={
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "serviceAccountName": "web",
                        "containers": [{"name": "web", "image": image}],
                    },
                },
            },
        )
        if service:
            k8s.core.v1.Service(
                "web", metadata=meta, spec={"selector": {"app": "web"}, "ports": [{"port": 80}]}
            )
        k8s.apiextensions.CustomResource(
            "cache",
            api_version="example.com/v1",
            kind="Cache",
            metadata={"name": "cache", "namespace": "shop"},
            spec={"size": "1Gi"},
        )
        k8s.rbac.v1.RoleBinding(
            "web",
            metadata=meta,
            role_ref={
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": role_ref[0],
                "name": role_ref[1],
            },
            subjects=[{"kind": "ServiceAccount", "name": "web", "namespace": "shop"}],
        )
        k8s.rbac.v1.Role(
            "web",
            metadata=meta,
            rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        )
        k8s.core.v1.ServiceAccount("web", metadata=meta)
        k8s.core.v1.Secret(
            "db",
            metadata={"name": "db", "namespace": "shop"},
            string_data={"password": Output.secret(password)},
        )
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"name": "settings", "namespace": "shop"},
            data=settings if settings is not None else {"mode": mode},
        )
        k8s.apiextensions.v1.CustomResourceDefinition(
            "caches", metadata={"name": "caches.example.com"}, spec=CRD_SPEC
        )
        k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        if extra:
            k8s.core.v1.ConfigMap(
                "extra", metadata={"name": "extra", "namespace": "shop"}, data={"a": "1"}
            )

    return declare


def planned(lines: list[str]) -> Listener:
    def listen(event: Event) -> None:
        if isinstance(event, StepStarted):
            lines.append(f"{event.step.op.value} {event.step.urn}")

    return listen


def short(urn: str) -> str:
    """`Deployment web` for a URN."""
    type_, _, name = urn.rpartition("::")
    return f"{type_.rpartition(':')[2]} {name}"


def steps(lines: list[str]) -> Listener:
    def listen(event: Event) -> None:
        if isinstance(event, StepStarted):
            lines.append(f"start {event.step.op.value} {short(event.step.urn)}")
        elif isinstance(event, StepDone):
            lines.append(f"done  {event.step.op.value} {short(event.step.urn)}")

    return listen


def golden(text: str) -> str:
    return text.strip("\n")


# --- ordering -------------------------------------------------------------------------------


def test_preview_of_a_new_stack_plans_in_the_order_the_cluster_needs(stack: Stack) -> None:
    lines: list[str] = []

    summary = stack.run("up", shop(), planned(lines), dry_run=True, parallel=1)

    assert summary.ok and summary.counts == {"create": 10}
    assert "\n".join(lines) == golden("""
create urn:sw:dev::shop::kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::caches
create urn:sw:dev::shop::kubernetes:core/v1:Namespace::shop
create urn:sw:dev::shop::kubernetes:example.com/v1:Cache::cache
create urn:sw:dev::shop::kubernetes:core/v1:Service::web
create urn:sw:dev::shop::kubernetes:rbac.authorization.k8s.io/v1:RoleBinding::web
create urn:sw:dev::shop::kubernetes:rbac.authorization.k8s.io/v1:Role::web
create urn:sw:dev::shop::kubernetes:core/v1:ServiceAccount::web
create urn:sw:dev::shop::kubernetes:core/v1:Secret::db
create urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::settings
create urn:sw:dev::shop::kubernetes:apps/v1:Deployment::web
""")
    # Everything lives in a namespace (or is of a kind) this run only creates: the
    # server cannot dry-run any of it, and nothing is written.
    assert stack.fake.writes() == []
    assert [c.name for c in stack.fake.calls_to("preview")] == ["caches.example.com", "shop"]


def test_up_waits_for_each_dependency_before_starting_a_step(stack: Stack) -> None:
    lines: list[str] = []

    summary = stack.run("up", shop(), steps(lines), parallel=1)

    assert summary.ok
    # The CRD and the namespace first; the workload only once its service account and
    # RBAC are done (not the ConfigMap and Secret, which its pods do not refer to: it may
    # start before they are done); the Service does not wait for the workload. Steps
    # ready together start in the same order every run (whatever the hash seed).
    assert "\n".join(lines) == golden("""
start create CustomResourceDefinition caches
start create Namespace shop
done  create CustomResourceDefinition caches
done  create Namespace shop
start create Service web
start create RoleBinding web
start create Role web
start create ServiceAccount web
start create Secret db
start create ConfigMap settings
start create Cache cache
done  create RoleBinding web
done  create Service web
done  create Role web
done  create ServiceAccount web
done  create Secret db
start create Deployment web
done  create ConfigMap settings
done  create Cache cache
done  create Deployment web
""")
    assert [c.name for c in stack.fake.calls_to("apply")] == [
        "caches.example.com", "shop", "web", "web", "web", "web", "db", "settings", "cache", "web",
    ]  # fmt: skip


def test_destroy_deletes_dependents_before_what_they_need(stack: Stack) -> None:
    stack.run("up", shop(), lambda event: None, parallel=1)
    lines: list[str] = []

    summary = stack.run("destroy", None, steps(lines), parallel=1)

    assert summary.ok and summary.counts == {"delete": 10}
    # Leaves first (the Service, the custom object, the workload, and the Secret and
    # ConfigMap its pods do not name); the CRD once its objects are gone; what the workload
    # needed (its ServiceAccount, the RBAC) once it is gone; the namespace last.
    # Deletes run concurrently, so which of two independent steps the event loop
    # reports first is not part of the contract: the waves and the waits are.
    first_done = next(i for i, line in enumerate(lines) if line.startswith("done"))
    assert sorted(lines[:first_done]) == [
        "start delete Cache cache",
        "start delete ConfigMap settings",
        "start delete Deployment web",
        "start delete Secret db",
        "start delete Service web",
    ]
    position = {line: i for i, line in enumerate(lines)}
    waits = {
        "CustomResourceDefinition caches": ["Cache cache"],
        "RoleBinding web": ["Deployment web"],
        "Role web": ["Deployment web"],
        "ServiceAccount web": ["Deployment web"],
        "Namespace shop": [
            "Service web",
            "Cache cache",
            "Deployment web",
            "RoleBinding web",
            "Role web",
            "ServiceAccount web",
            "Secret db",
            "ConfigMap settings",
        ],
    }
    for later, firsts in waits.items():
        for first in firsts:
            assert position[f"done  delete {first}"] < position[f"start delete {later}"], (
                later,
                first,
            )
    assert lines[-2:] == ["start delete Namespace shop", "done  delete Namespace shop"]
    assert len(lines) == 20


# --- what the CLI prints ----------------------------------------------------------------------


def rendered(stack: Stack, kind: str, declare: Declare, **options: Any) -> str:
    """The plain renderer's text for a run; durations zeroed (the only thing a clock decides)."""
    out = io.StringIO()
    renderer = make_renderer(kind, json_lines=False, show_diff=True, stream=out, live=False)

    def listen(event: Event) -> None:
        if isinstance(event, StepDone | Summary):
            event = dataclasses.replace(event, elapsed=0.0)
        if isinstance(event, StepProgress):
            return  # see test_a_progress_line_names_the_resource_once
        renderer(event)

    stack.run("up", declare, listen, **{"parallel": 1, **options})
    renderer.close()
    return out.getvalue()


V2 = shop(
    replicas=3,
    image="nginx:1.30",
    settings={"mode": "slow", "level": "debug"},
    password="swordfish",
    role_ref=("ClusterRole", "view"),
    service=False,
    extra=True,
)


def test_the_preview_of_an_update_prints_each_field_change(stack: Stack) -> None:
    stack.run("up", shop(), lambda event: None, parallel=1)
    stack.fake.calls.clear()

    text = rendered(stack, "preview", V2, dry_run=True)

    assert (
        text
        == golden("""
+- replace  kubernetes:rbac.authorization.k8s.io/v1:RoleBinding  web (roleRef: a RoleBinding's roleRef is immutable)
    ~ roleRef.kind: "Role" → "ClusterRole"
    ~ roleRef.name: "web" → "view"
~ update  kubernetes:core/v1:Secret  db
    ~ stringData.password: [secret] → [secret]
~ update  kubernetes:core/v1:ConfigMap  settings
    ~ data.mode: "fast" → "slow"
    + data.level: "debug"
+ create  kubernetes:core/v1:ConfigMap  extra
    + apiVersion: "v1"
    + kind: "ConfigMap"
    + metadata: {"name":"extra","namespace":"shop"}
    + data: {"a":"1"}
~ update  kubernetes:apps/v1:Deployment  web
    ~ spec.replicas: 2 → 3
    ~ spec.template.spec.containers[0].image: "nginx:1.29" → "nginx:1.30"
- delete  kubernetes:core/v1:Service  web
    - apiVersion: "v1"
    - kind: "Service"
    - metadata: {"name":"web","namespace":"shop"}
    - spec: {"selector":{"app":"web"},"ports":[{"port":80}]}

Resources:
    + 1 to create
    ~ 3 to update
    +- 1 to replace
    - 1 to delete
    5 unchanged
Duration: 0.0s
""")
        + "\n"
    )
    assert "swordfish" not in text and "hunter2" not in text
    assert stack.fake.writes() == []


def test_the_up_of_an_update_prints_each_step_as_it_ends(stack: Stack) -> None:
    stack.run("up", shop(), lambda event: None, parallel=1)

    text = rendered(stack, "up", V2)

    assert (
        text
        == golden("""
+- replace  kubernetes:rbac.authorization.k8s.io/v1:RoleBinding  web (roleRef: a RoleBinding's roleRef is immutable)
    ~ roleRef.kind: "Role" → "ClusterRole"
    ~ roleRef.name: "web" → "view"
~ update  kubernetes:core/v1:Secret  db
    ~ stringData.password: [secret] → [secret]
~ update  kubernetes:core/v1:ConfigMap  settings
    ~ data.mode: "fast" → "slow"
    + data.level: "debug"
+ create  kubernetes:core/v1:ConfigMap  extra
    + apiVersion: "v1"
    + kind: "ConfigMap"
    + metadata: {"name":"extra","namespace":"shop"}
    + data: {"a":"1"}
  updated  db (0.00s)
  updated  settings (0.00s)
  replaced  web (0.00s)
  created  extra (0.00s)
~ update  kubernetes:apps/v1:Deployment  web
    ~ spec.replicas: 2 → 3
    ~ spec.template.spec.containers[0].image: "nginx:1.29" → "nginx:1.30"
  updated  kubernetes:apps/v1:Deployment  web (0.00s)
- delete  kubernetes:core/v1:Service  web
    - apiVersion: "v1"
    - kind: "Service"
    - metadata: {"name":"web","namespace":"shop"}
    - spec: {"selector":{"app":"web"},"ports":[{"port":80}]}
  deleted  kubernetes:core/v1:Service  web (0.00s)

Resources:
    + 1 created
    ~ 3 updated
    +- 1 replaced
    - 1 deleted
    5 unchanged
Duration: 0.0s
""")
        + "\n"
    )
    # The RoleBinding keeps its name, so the old one goes before the new one is made.
    rolebinding = [
        (c.method, c.name)
        for c in stack.fake.calls_to("apply", "delete")
        if c.kind == "RoleBinding"
    ]
    assert rolebinding[-2:] == [("delete", "web"), ("apply", "web")]


def test_a_progress_line_names_the_resource_once(stack: Stack) -> None:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=out, live=False)

    stack.run("up", shop(), renderer, parallel=1)

    assert "  settings: ready\n" in out.getvalue()
    assert "settings: settings:" not in out.getvalue()


def test_the_preview_of_an_auto_named_replacement_shows_its_new_name(stack: Stack) -> None:
    def app(label: str) -> Declare:
        def declare(p: Program) -> None:
            k8s.apps.v1.Deployment(
                "web",
                spec={
                    "selector": {"matchLabels": {"app": label}},
                    "template": {
                        "metadata": {"labels": {"app": label}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                    },
                },
            )

        return declare

    stack.run("up", app("web"), lambda event: None)
    (before,) = stack.fake.names("Deployment")

    text = rendered(stack, "preview", app("shop"), dry_run=True)

    assert before == "default/web-eb15a585"
    assert (
        text
        == golden("""
+- replace  kubernetes:apps/v1:Deployment  web (spec.selector: a Deployment's selector is immutable)
    ~ metadata.name: "web-eb15a585" → "web-f11f3d19"
    ~ spec.selector.matchLabels.app: "web" → "shop"
    ~ spec.template.metadata.labels.app: "web" → "shop"

Resources:
    +- 1 to replace
Duration: 0.0s
""")
        + "\n"
    )
    stack.run("up", app("shop"), lambda event: None)
    assert stack.fake.names("Deployment") == ["default/web-f11f3d19"]
