"""Policy packs over Patch resources (`DeploymentPatch`): which rules judge a Patch, each of
them failing a Patch by what it sets, a Patch that sets only what it changes passing both
packs, a team's rules opting in, and the engine's gate and `policy check` of a program."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from policy_cases import CLUSTER, CONFIG

import stackwright.kubernetes as k8s
from stackwright.cli.main import main
from stackwright.engine import operations, policy_gate
from stackwright.engine.events import Event, PolicyChecked
from stackwright.engine.execute import Options
from stackwright.engine.policy_gate import PolicyGate
from stackwright.engine.testing import FakeCluster
from stackwright.errors import PolicyViolation
from stackwright.policy import (
    Level,
    PolicyPack,
    Report,
    Settings,
    StackSubject,
    Subject,
    Violation,
    evaluate,
    policy,
    select_packs,
    stack_policy,
)
from stackwright.sdk.context import Program, running
from stackwright.state import Backend, open_backend

PACKS = select_packs(["kubernetes-best-practices", "pod-security-restricted"])
README = Path(__file__).resolve().parents[2] / "README.md"
POD = "spec.template.spec"
CONTAINER = f"{POD}.containers[0]"

#: The rules that judge a Patch: those failing only what an object sets, and those asking for
#: a field that judge a Patch only by the value it sets (allowPrivilegeEscalation: true).
JUDGE_PATCHES = {
    *(f"SW-K8S-{n:03}" for n in (*range(2, 14), 21, 22, 23, 24, 25, 27, 29)),
    *(f"SW-PSS-{n:03}" for n in range(1, 19)),
}


def deployment_patch(
    container: dict[str, Any] | None = None, pod: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    """What a DeploymentPatch of Deployment shop/web sets: only the fields given."""
    pod_spec = dict(pod or {})
    if container is not None:
        pod_spec["containers"] = [{"name": "web", **container}]
    if pod_spec:
        spec["template"] = {"spec": pod_spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": spec,
    }


def security(**context: Any) -> dict[str, Any]:
    return {"securityContext": context}


def service_patch(type_: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"type": type_}}  # fmt: skip


def old_api() -> dict[str, Any]:
    obj = deployment_patch(replicas=3)
    obj["apiVersion"] = "apps/v1beta1"
    return obj


#: (rule, what a Patch sets that breaks it, the field reported, the cluster it goes to).
VIOLATING: list[tuple[str, dict[str, Any], str, str]] = [
    ("SW-K8S-002", deployment_patch(security(privileged=True)),
     f"{CONTAINER}.securityContext.privileged", CLUSTER),
    ("SW-K8S-003", deployment_patch(security(allowPrivilegeEscalation=True)),
     f"{CONTAINER}.securityContext.allowPrivilegeEscalation", CLUSTER),
    ("SW-K8S-004", deployment_patch(security(runAsNonRoot=False)),
     f"{CONTAINER}.securityContext.runAsNonRoot", CLUSTER),
    ("SW-K8S-005", deployment_patch(security(readOnlyRootFilesystem=False)),
     f"{CONTAINER}.securityContext.readOnlyRootFilesystem", CLUSTER),
    ("SW-K8S-006", deployment_patch(security(capabilities={"drop": ["NET_RAW"]})),
     f"{CONTAINER}.securityContext.capabilities.drop", CLUSTER),
    ("SW-K8S-007", deployment_patch(security(capabilities={"add": ["SYS_ADMIN"]})),
     f"{CONTAINER}.securityContext.capabilities.add[0]", CLUSTER),
    ("SW-K8S-008", deployment_patch(pod={"volumes": [{"name": "n", "hostPath": {"path": "/"}}]}),
     f"{POD}.volumes[0].hostPath", CLUSTER),
    ("SW-K8S-009", deployment_patch(pod={"hostNetwork": True}), f"{POD}.hostNetwork", CLUSTER),
    ("SW-K8S-010", deployment_patch({"ports": [{"containerPort": 80, "hostPort": 80}]}),
     f"{CONTAINER}.ports[0].hostPort", CLUSTER),
    ("SW-K8S-011", deployment_patch(pod=security(seccompProfile={"type": "Unconfined"})),
     f"{POD}.securityContext.seccompProfile.type", CLUSTER),
    ("SW-K8S-012", deployment_patch({"image": "ghcr.io/acme/web:latest"}),
     f"{CONTAINER}.image", CLUSTER),
    ("SW-K8S-013", deployment_patch({"image": "nginx:1.29"}), f"{CONTAINER}.image", CLUSTER),
    ("SW-K8S-021", deployment_patch(replicas=1), "spec.replicas", CLUSTER),
    ("SW-K8S-022", service_patch("LoadBalancer"), "spec.type", CLUSTER),
    ("SW-K8S-023", service_patch("NodePort"), "spec.type", CLUSTER),
    ("SW-K8S-024", deployment_patch(pod={"automountServiceAccountToken": True}),
     f"{POD}.automountServiceAccountToken", CLUSTER),
    ("SW-K8S-025", deployment_patch({"env": [{"name": "DB_PASSWORD", "value": "hunter2"}]}),
     f"{CONTAINER}.env[0].value", CLUSTER),
    ("SW-K8S-027", old_api(), "apiVersion", CLUSTER),
    # A production stack's Patch of an object in a development cluster.
    ("SW-K8S-029", deployment_patch(replicas=3), "", "stackwright-test"),
    ("SW-PSS-001", deployment_patch(security(windowsOptions={"hostProcess": True})),
     f"{CONTAINER}.securityContext.windowsOptions.hostProcess", CLUSTER),
    ("SW-PSS-002", deployment_patch(pod={"hostPID": True}), f"{POD}.hostPID", CLUSTER),
    ("SW-PSS-003", deployment_patch(security(privileged=True)),
     f"{CONTAINER}.securityContext.privileged", CLUSTER),
    ("SW-PSS-004", deployment_patch(security(capabilities={"add": ["SYS_ADMIN"]})),
     f"{CONTAINER}.securityContext.capabilities.add[0]", CLUSTER),
    ("SW-PSS-005", deployment_patch(pod={"volumes": [{"name": "n", "hostPath": {"path": "/"}}]}),
     f"{POD}.volumes[0].hostPath", CLUSTER),
    ("SW-PSS-006", deployment_patch({"ports": [{"containerPort": 80, "hostPort": 80}]}),
     f"{CONTAINER}.ports[0].hostPort", CLUSTER),
    ("SW-PSS-007", deployment_patch(security(appArmorProfile={"type": "Unconfined"})),
     f"{CONTAINER}.securityContext.appArmorProfile.type", CLUSTER),
    ("SW-PSS-008", deployment_patch(security(seLinuxOptions={"user": "root"})),
     f"{CONTAINER}.securityContext.seLinuxOptions.user", CLUSTER),
    ("SW-PSS-009", deployment_patch(security(procMount="Unmasked")),
     f"{CONTAINER}.securityContext.procMount", CLUSTER),
    ("SW-PSS-010", deployment_patch(security(seccompProfile={"type": "Unconfined"})),
     f"{CONTAINER}.securityContext.seccompProfile.type", CLUSTER),
    ("SW-PSS-011", deployment_patch(pod=security(sysctls=[{"name": "kernel.msgmax", "value": "1"}])),
     f"{POD}.securityContext.sysctls[0].name", CLUSTER),
    ("SW-PSS-012", deployment_patch(pod={"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]}),
     f"{POD}.volumes[0].nfs", CLUSTER),
    ("SW-PSS-013", deployment_patch(security(allowPrivilegeEscalation=True)),
     f"{CONTAINER}.securityContext.allowPrivilegeEscalation", CLUSTER),
    ("SW-PSS-014", deployment_patch(pod=security(runAsNonRoot=False)),
     f"{POD}.securityContext.runAsNonRoot", CLUSTER),
    ("SW-PSS-015", deployment_patch(security(runAsUser=0)),
     f"{CONTAINER}.securityContext.runAsUser", CLUSTER),
    ("SW-PSS-016", deployment_patch(pod=security(seccompProfile={"type": "Unconfined"})),
     f"{POD}.securityContext.seccompProfile.type", CLUSTER),
    ("SW-PSS-017", deployment_patch(security(capabilities={"drop": ["NET_RAW"]})),
     f"{CONTAINER}.securityContext.capabilities.drop", CLUSTER),
    ("SW-PSS-018", deployment_patch({"livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}),
     f"{CONTAINER}.livenessProbe.httpGet.host", CLUSTER),
]  # fmt: skip

#: Patches that set only what they change, none of which breaks a rule: each would fail
#: rules as a whole object (no limits, probes, labels, securityContext, controller, ...).
SPARSE = [
    deployment_patch(replicas=3),
    {**deployment_patch(), "metadata": {"name": "web", "namespace": "shop",
                                        "labels": {"tier": "front"}}},
    deployment_patch({"image": "ghcr.io/acme/web:1.2.4"}),
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop",
                                                         "labels": {"tier": "front"}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug", "namespace": "shop",
                                                     "labels": {"tier": "front"}}},
    # No namespace: the stack's default one, `default`.
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tuning"}, "data": {"a": "1"}},
]  # fmt: skip


def run(objects: list[dict[str, Any]], *, patch: bool = True, cluster: str = CLUSTER,
        packs: Any = PACKS) -> Report:  # fmt: skip
    subjects = [Subject(copy.deepcopy(o), cluster=cluster, patch=patch) for o in objects]
    return evaluate(subjects, packs, Settings.from_config(CONFIG, "test"), stack="prod")


def test_each_built_in_rule_declares_whether_it_judges_patches() -> None:
    judging = {rule.id for pack in PACKS for rule in pack.policies if rule.patches}
    assert judging == JUDGE_PATCHES
    assert sorted(judging) == sorted(rule for rule, *_ in VIOLATING), "each has a case below"


def test_the_readme_tables_show_which_rules_judge_patches() -> None:
    rows = [line for line in README.read_text().splitlines() if line.startswith("| SW-")]
    shown = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        shown[cells[0]] = cells[2] if cells[0].startswith("SW-PSS") else cells[3]
    rules = {rule.id: rule.patches for pack in PACKS for rule in pack.policies}
    assert set(shown) == set(rules)
    assert {rule for rule, cell in shown.items() if cell == "yes"} == JUDGE_PATCHES
    assert {cell for rule, cell in shown.items() if rule not in JUDGE_PATCHES} == {"no"}


@pytest.mark.parametrize("rule, obj, path, cluster", VIOLATING, ids=[v[0] for v in VIOLATING])
def test_a_patch_fails_a_rule_by_what_it_sets(
    rule: str, obj: dict[str, Any], path: str, cluster: str
) -> None:
    report = run([obj], cluster=cluster)
    hits = [f for f in report.findings if f.policy.id == rule]
    assert [f.path for f in hits] == [path], [(f.policy.id, f.path) for f in report.findings]
    (hit,) = hits
    assert hit.resource is not None and hit.resource.patch
    assert hit.resource.display.startswith(f"{obj['kind']}Patch ")
    if path:  # a stack-wide finding names the cluster, not the object
        assert f"{obj['kind']}Patch " in hit.message, hit.message
    # Only rules that judge Patches report a Patch.
    assert {f.policy.id for f in report.findings} <= JUDGE_PATCHES


def test_a_patch_that_sets_only_what_it_changes_passes_both_packs() -> None:
    report = run(SPARSE)
    assert [(f.policy.label, f.message) for f in report.findings] == []
    assert report.checked == len(SPARSE)
    # The same fields as whole objects fail the rules that ask for what they leave out,
    # object and stack rules alike: those never see a Patch, and the others judge only
    # what it sets.
    whole = {f.policy.id for f in run(SPARSE, patch=False).findings}
    assert {"SW-K8S-001", "SW-K8S-014", "SW-K8S-016", "SW-K8S-017", "SW-K8S-018",
            "SW-K8S-019", "SW-K8S-026", "SW-K8S-028"} <= whole  # fmt: skip
    assert {"SW-K8S-003", "SW-K8S-004", "SW-K8S-005", "SW-K8S-006", "SW-K8S-011",
            "SW-K8S-021", "SW-K8S-024", "SW-PSS-013", "SW-PSS-014", "SW-PSS-016",
            "SW-PSS-017"} <= whole  # fmt: skip


@pytest.mark.parametrize("pattern", ["DeploymentPatch/shop/web", "DeploymentPatch/web",
                                     "Deployment/shop/web", "*Patch/shop/*"])  # fmt: skip
def test_a_config_exemption_names_a_patch_as_its_finding_does(pattern: str) -> None:
    """The finding says `DeploymentPatch shop/web`: an entry naming it so exempts it (and
    counts it), as one naming the object's kind does."""
    entry = {"policy": "image-tag", "resource": pattern, "owner": "al@example.com",
             "expires": "2099-01-01", "reason": "the vendor ships :latest only"}  # fmt: skip
    settings = Settings.from_config({"policy:exemptions": [entry]}, "test")
    subject = Subject(deployment_patch({"image": "ghcr.io/acme/web:latest"}), patch=True)
    report = evaluate([subject], select_packs(["kubernetes-best-practices"]), settings)
    assert [f.policy.id for f in report.findings] == []
    assert [(e.resource, e.objects) for e in report.exemptions] == [(pattern, 1)]
    # ... and a Patch's name never matches the object of that kind the stack owns.
    whole = Subject(deployment_patch({"image": "ghcr.io/acme/web:latest"}))
    report = evaluate([whole], select_packs(["kubernetes-best-practices"]), settings)
    still = ["SW-K8S-012"] if "Patch" in pattern else []
    assert [f.policy.id for f in report.findings if f.policy.id == "SW-K8S-012"] == still


def test_a_teams_rule_sees_patches_only_when_it_asks_to() -> None:
    seen: dict[str, list[tuple[bool, str]]] = {"object": [], "patch": [], "stack": [],
                                               "stack-patch": []}  # fmt: skip

    @policy("team-label", description="Workloads name their team", kinds=["Deployment"])
    def team_label(subject: Subject) -> Iterator[Violation]:
        seen["object"].append((subject.patch, subject.type))
        if "team" not in subject.labels:
            yield Violation(f"{subject.display} has no team label", "metadata.labels")

    @policy("no-debug-image", description="No debug images", patches=True)
    def no_debug(subject: Subject) -> Iterator[Violation]:
        seen["patch"].append((subject.patch, subject.type))
        for path, container in subject.containers():
            if str(container.get("image", "")).startswith("debug"):
                yield Violation(f"{subject.display} runs a debug image", f"{path}.image")

    def counting(key: str) -> Callable[[StackSubject], None]:
        def check(stack: StackSubject) -> None:
            seen[key].extend((r.patch, r.type) for r in stack.resources)

        return check

    everything = stack_policy("all", description="sees the objects")(counting("stack"))
    with_patches = stack_policy("all-and-patches", description="sees Patches too",
                                patches=True)(counting("stack-patch"))  # fmt: skip
    pack = PolicyPack("acme", [team_label, no_debug, everything, with_patches])
    report = evaluate([Subject(deployment_patch({"image": "debug:1"}), patch=True)], [pack])
    patch = (True, "kubernetes:apps/v1:DeploymentPatch")
    assert seen == {"object": [], "patch": [patch], "stack": [], "stack-patch": [patch]}
    assert [(f.policy.name, f.message, f.path) for f in report.findings] == [
        ("no-debug-image", "DeploymentPatch shop/web runs a debug image", f"{CONTAINER}.image")
    ]


# --- the engine's gate, and `policy check` of a program -------------------------------------


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    try:
        yield store
    finally:
        store.close()


def _existing(fake: FakeCluster) -> None:
    """Deployment shop/web, made by kubectl: the object the Patches change."""
    obj = deployment_patch({"image": "nginx:1.29"}, replicas=1)
    obj["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "web"}}
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
             manager="kubectl")  # fmt: skip
    fake.put(obj, manager="kubectl")


def _up(backend: Backend, fake: FakeCluster, declare: Callable[[], None]) -> list[Event]:
    program = Program(project="shop", stack="dev")
    with running(program):
        declare()
    gate = PolicyGate(tuple(PACKS), Settings.from_config({}, "s"), Level.MANDATORY)
    events: list[Event] = []
    operations.run(backend, project="shop", stack="dev", options=Options("up"), program=program,
                   providers=fake.factory(), listener=events.append, policy=gate)  # fmt: skip
    return events


def test_an_up_of_a_patch_setting_latest_is_blocked_before_any_call(backend: Backend) -> None:
    fake = FakeCluster()
    _existing(fake)
    fake.calls.clear()

    def latest() -> None:
        k8s.apps.v1.DeploymentPatch("web-image", metadata={"name": "web", "namespace": "shop"},
                                    spec=deployment_patch({"image": "nginx:latest"})["spec"])  # fmt: skip

    with pytest.raises(PolicyViolation) as caught:
        _up(backend, fake, latest)
    assert caught.value.exit_code == 3
    line = 1 + next(i for i, text in enumerate(Path(__file__).read_text().splitlines())
                    if 'DeploymentPatch("web-image"' in text)  # fmt: skip
    assert str(caught.value).startswith(
        f"{__file__}:{line}: up blocked by policy: SW-K8S-012 image-tag: container web of "
        "DeploymentPatch shop/web runs image nginx:latest with the tag latest; "
    )
    assert fake.calls == [] and fake.closed == 0, "no provider was even made"
    assert backend.load("shop", "dev").resources == [] and backend.history("shop", "dev") == []


def test_an_up_of_a_patch_of_replicas_and_a_label_passes_both_packs(backend: Backend) -> None:
    fake = FakeCluster()
    _existing(fake)

    def scaled() -> None:
        k8s.apps.v1.DeploymentPatch(
            "web-scale",
            metadata={"name": "web", "namespace": "shop", "labels": {"tier": "front"},
                      # kubectl set the replicas: taken over, as README's example does.
                      "annotations": {"stackwright.io/patch-force": "true"}},
            spec={"replicas": 3},
        )  # fmt: skip

    events = _up(backend, fake, scaled)
    assert not [e for e in events if getattr(e, "error", "")], events
    (checked,) = [e for e in events if isinstance(e, PolicyChecked)]
    assert checked.report.findings == [] and checked.report.checked == 1
    live = fake.find("Deployment", "web")
    assert live is not None and live["spec"]["replicas"] == 3
    assert live["metadata"]["labels"] == {"tier": "front"}


def test_a_patch_whose_annotations_are_not_known_yet_is_still_checked() -> None:
    program = Program(project="shop", stack="dev")
    with running(program):
        cm = k8s.core.v1.ConfigMap("settings", metadata={"namespace": "shop"})
        k8s.apps.v1.DeploymentPatch(
            "web-image",
            metadata={"name": "web", "namespace": "shop",
                      "annotations": cm.metadata.apply(lambda m: {"config": m["name"]})},
            spec=deployment_patch({"image": "nginx:latest"})["spec"],
        )  # fmt: skip
    found = policy_gate.subjects(program, PolicyGate(()))
    assert [(s.kind, s.patch) for s in found] == [("ConfigMap", False), ("Deployment", True)]
    report = evaluate(found, select_packs(["kubernetes-best-practices"]))
    assert "SW-K8S-012" in {f.policy.id for f in report.findings if f.resource is found[1]}


def test_policy_check_of_a_program_judges_its_patches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import stackwright.kubernetes as k8s\n"
        "k8s.apps.v1.DeploymentPatch('web-image', metadata={'name': 'web', 'namespace': 'shop',\n"
        "    'annotations': {'stackwright.io/patch-field-manager': 'team-ops'}},\n"
        "    spec={'template': {'spec': {'containers': [\n"
        "        {'name': 'web', 'image': 'nginx:latest',\n"
        "         'securityContext': {'capabilities': {'add': ['SYS_ADMIN']}}}]}}})\n"
        "k8s.apps.v1.DeploymentPatch('web-scale', metadata={'name': 'web', 'namespace': 'shop'},\n"
        "    spec={'replicas': 3})\n"
    )
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(tmp_path), "--level", "mandatory", "--json"])
    assert caught.value.code == 3
    found = json.loads(capsys.readouterr().out)
    assert found["checked"] == 2
    urn = "urn:sw:check::shop::kubernetes:apps/v1:DeploymentPatch::web-image"
    assert sorted(
        (f["id"], f["urn"], f["patch"], f["path"], f["line"]) for f in found["findings"]
    ) == [
        ("SW-K8S-007", urn, True, f"{CONTAINER}.securityContext.capabilities.add[0]", 2),
        ("SW-K8S-012", urn, True, f"{CONTAINER}.image", 2),
    ]
    assert all(re.match(r"container web of DeploymentPatch shop/web ", f["message"])
               for f in found["findings"])  # fmt: skip
