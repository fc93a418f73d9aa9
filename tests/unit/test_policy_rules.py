"""Every built-in rule, violated and passed: through the evaluator, `policy check` on files,
and `policy check` on a Helm chart rendered by real Helm (the same table, policy_cases.py)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from policy_cases import CASES, CLUSTER, CONFIG, OFFLINE, RULES, Case, all_objects, good

from stackwright.cli.main import main
from stackwright.errors import UsageError
from stackwright.policy import Finding, Report, Settings, Subject, evaluate, select_packs

PACKS = select_packs(["kubernetes-best-practices", "pod-security-restricted"])
STACK = "prod"
CHART = Path(__file__).parents[1] / "data" / "charts" / "policy-objects"


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def run(objects: list[dict[str, Any]], case: Case | None = None, cluster: str = CLUSTER) -> Report:
    config = _merged(CONFIG, case.config if case else {})
    subjects = [Subject(obj, cluster=cluster) for obj in objects]
    return evaluate(subjects, PACKS, Settings.from_config(config, "test"), stack=STACK)


def located(finding: Finding) -> str:
    resource = finding.resource
    assert resource is not None
    return resource.namespace or resource.name


def matches(finding: Finding, case: Case) -> bool:
    return (
        finding.policy.id == case.rule
        and finding.resource is not None
        and finding.resource.kind == case.kind
        and located(finding) == case.located()
        and finding.path == case.path
        and case.message in finding.message
        and finding.severity.value == case.severity
    )


def test_every_built_in_rule_has_a_case() -> None:
    assert sorted(p.id for pack in PACKS for p in pack.policies) == RULES
    assert len(RULES) == 29 + 18


def test_the_good_objects_pass_both_packs() -> None:
    report = run(good("shop"))
    assert report.findings == [] and report.checked == 5


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_rule(case: Case) -> None:
    report = run(case.objects(violating=True), case, case.cluster)
    hits = [f for f in report.findings if f.policy.id == case.rule]
    assert any(matches(f, case) for f in hits), (
        f"{case.key}: expected {case.kind} at {case.path!r} saying {case.message!r}; got "
        + repr([(f.resource and f.resource.kind, f.path, f.message) for f in hits])
    )
    assert all(f.level.value == "advisory" and not f.error for f in hits)
    passed = run(case.objects(violating=False), case)
    # The passing variant passes every rule, not just this one (the file runs rely on it);
    # a case about the cluster passes in the production cluster.
    assert [(f.policy.label, f.message) for f in passed.findings] == []


def _findings(document: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    return sorted(
        (f["id"], f["kind"], f["namespace"] or f["name"], f["path"], f["message"], f["severity"])
        for f in document["findings"]
    )


def _expected(objects: list[dict[str, Any]]) -> list[tuple[str, str, str, str, str, str]]:
    report = run(objects)
    return _findings(report.to_dict())


def _check(capsys: pytest.CaptureFixture[str], *args: str, rc: int = 0) -> dict[str, Any]:
    if rc:
        with pytest.raises(SystemExit) as caught:
            main(["policy", "check", *args])
        assert caught.value.code == rc
    else:
        main(["policy", "check", *args])
    out = capsys.readouterr().out
    document: dict[str, Any] = json.loads(out)
    return document


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / f"Stackwright.{STACK}.yaml"
    path.write_text(yaml.safe_dump({"config": CONFIG}))
    return path


def _assert_each_case(document: dict[str, Any], cases: list[Case]) -> None:
    for case in cases:
        assert any(
            f["id"] == case.rule
            and f["kind"] == case.kind
            and (f["namespace"] or f["name"]) == case.located()
            and f["path"] == case.path
            and case.message in f["message"]
            and f["severity"] == case.severity
            for f in document["findings"]
        ), f"{case.key} not reported"


def test_policy_check_on_files(
    tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    violating, passing = tmp_path / "violating", tmp_path / "passing"
    for folder, flag in ((violating, True), (passing, False)):
        folder.mkdir()
        for case in OFFLINE:
            (folder / f"{case.namespace}.yaml").write_text(
                yaml.safe_dump_all(case.objects(flag), sort_keys=False)
            )
    packs = ["--pack", "kubernetes-best-practices", "--pack", "pod-security-restricted"]
    found = _check(capsys, str(violating), *packs, "--config", str(config_file), "--json")
    assert _findings(found) == _expected(all_objects(OFFLINE, True))
    _assert_each_case(found, OFFLINE)
    # Each finding points at its file and at the line its document starts on.
    first = next(f for f in found["findings"] if f["id"] == "SW-K8S-019")
    text = Path(first["source"]).read_text().splitlines()
    assert text[first["line"] - 1] == "apiVersion: apps/v1"
    clean = _check(capsys, str(passing), *packs, "--config", str(config_file), "--json")
    assert clean["findings"] == [] and clean["checked"] == len(all_objects(OFFLINE, False))


def test_policy_check_through_a_helm_chart(
    tmp_path: Path,
    config_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(CHART.parent)  # a finding names its file from there, as the text does
    packs = ["--pack", "kubernetes-best-practices", "--pack", "pod-security-restricted"]
    for flag in (True, False):
        values = tmp_path / f"values-{flag}.yaml"
        values.write_text(yaml.safe_dump({"objects": all_objects(OFFLINE, flag)}))
        found = _check(
            capsys, str(CHART), "-f", str(values), *packs, "--config", str(config_file), "--json"
        )
        assert _findings(found) == _expected(all_objects(OFFLINE, flag))
        if flag:
            _assert_each_case(found, OFFLINE)
            sources = {f["source"] for f in found["findings"]}
            assert sources == {os.path.join(CHART.name, "templates", "objects.yaml")}
        else:
            assert found["findings"] == []


def test_a_realistic_chart_with_values(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The repository's webapp chart as its values render it: `--set` reaches Helm."""
    chart = Path(__file__).parents[1] / "data" / "charts" / "webapp"
    found = _check(capsys, str(chart), "--set", "image.tag=1.29", "--level", "mandatory",
                   "--json", rc=3)  # fmt: skip
    images = {f["message"] for f in found["findings"] if f["id"] == "SW-K8S-012"}
    assert not any("nginx:1.29" in m for m in images)
    assert found["blocked"] is True
    # Released as `helm template` names a release it is not told the name of.
    names = {f["name"] for f in found["findings"] if f["kind"] == "Deployment"}
    assert names == {"release-name-webapp"}, names
    latest = _check(capsys, str(chart), "--set", "image.tag=latest", "--json")
    assert any(
        f["id"] == "SW-K8S-012" and "nginx:latest with the tag latest" in f["message"]
        for f in latest["findings"]
    )
    # --set-string is merged after --set, as Helm merges them.
    texts = _check(capsys, str(chart), "--set", "image.tag=1.29", "--set-string",
                   "image.tag=latest", "--json")  # fmt: skip
    assert texts["findings"] == latest["findings"]


def test_policy_check_on_a_kustomization(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built by the real Kustomize (`kubectl kustomize`): the overlay's namespace and image
    override are what the policies see; each finding names the overlay, from the directory
    the command was started in, or absolutely when it is elsewhere."""
    kustomize = Path(__file__).parents[1] / "data" / "kustomize"
    overlay = kustomize / "overlays" / "production"
    monkeypatch.chdir(kustomize)
    found = _check(capsys, str(overlay), "--json")
    deployments = [f for f in found["findings"] if f["kind"] == "Deployment"]
    assert deployments and all(f["namespace"] == "catalog-production" for f in deployments)
    assert all(f["source"] == os.path.join("overlays", "production") for f in found["findings"])
    monkeypatch.chdir(overlay / "..")
    elsewhere = _check(capsys, str(kustomize / "base"), "--json")
    assert elsewhere["findings"] and all(
        f["source"] == str(kustomize / "base") for f in elsewhere["findings"]
    )
    assert "SW-K8S-012" not in {f["id"] for f in deployments}, "newTag 1.29 pins the image"
    assert "SW-K8S-004" in {f["id"] for f in deployments}


def test_policy_check_on_a_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Stackwright project is run (nothing applied, no cluster): its objects, Helm and YAML
    children included, are checked with the config file's values and stack name."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "app.yaml").write_text(yaml.safe_dump_all(good("shop")))
    (tmp_path / "__main__.py").write_text(
        "import stackwright as sw\n"
        "import stackwright.kubernetes as k8s\n"
        "cfg = sw.Config()\n"
        "cm = k8s.core.v1.ConfigMap('settings', metadata={'namespace': 'shop'})\n"
        "k8s.yaml.ConfigFile('app', file='app.yaml')\n"
        "k8s.apps.v1.Deployment('api', metadata={'namespace': 'shop'}, spec={\n"
        "    'replicas': cfg.get_int('replicas') or 1,\n"
        "    'selector': {'matchLabels': {'app': 'api'}},\n"
        "    'template': {'metadata': {'labels': {'app': 'api'}}, 'spec': {'containers': [\n"
        "        {'name': 'api', 'image': 'nginx:latest',\n"
        "         'env': [{'name': 'API_TOKEN', 'value': cm.metadata['name']}]}]}}})\n"
    )
    config = tmp_path / "Stackwright.prod.yaml"
    config.write_text(yaml.safe_dump({"config": {"shop:replicas": 1, "policy:env": "production"}}))
    # Run from elsewhere: the program's relative paths are from its project, as with `up`.
    found = _check(capsys, str(tmp_path), "--config", str(config), "--json")
    api = {f["id"]: f for f in found["findings"] if f["name"] == "api"}
    assert api["SW-K8S-012"]["urn"] == "urn:sw:prod::shop::kubernetes:apps/v1:Deployment::api"
    assert api["SW-K8S-021"]["message"].endswith(
        "in production stack prod; at least 2 are required"
    )
    assert "SW-K8S-025" not in api, "the token comes from an Output not known yet"
    web = [f for f in found["findings"] if f["name"] == "web"]
    assert web == [], "the YAML children are the good objects, and they pass"
    assert {f["source"] for f in found["findings"]} == {str(tmp_path / "__main__.py")}
    # Each finding points at the line that declared its object.
    assert {f["line"] for f in api.values()} == {6}


def test_policy_check_knows_outputs_the_inputs_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As in Pulumi's preview, an Output of a value the program gave (a Namespace's name) is
    known before anything exists: objects put in that namespace are judged and named in it,
    not in `default`; what only the server will say (an auto-name) stays unknown."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import stackwright.kubernetes as k8s\n"
        "ns = k8s.core.v1.Namespace('ns', metadata={'name': 'shop'})\n"
        "auto = k8s.core.v1.Namespace('auto')\n"
        "def web(name, namespace):\n"
        "    k8s.apps.v1.Deployment(name, metadata={'namespace': namespace}, spec={\n"
        "        'selector': {'matchLabels': {'app': name}},\n"
        "        'template': {'metadata': {'labels': {'app': name}},\n"
        "                     'spec': {'containers': [{'name': 'c', 'image': 'nginx:latest'}]}}})\n"
        "web('given', ns.metadata['name'])\n"
        "web('derived', ns.metadata['name'].apply(lambda n: n + '-2'))\n"
        "web('later', auto.metadata['name'])\n"
    )
    found = _check(capsys, str(tmp_path), "--json")
    latest = {f["name"]: f for f in found["findings"] if f["id"] == "SW-K8S-012"}
    assert {n: f["namespace"] for n, f in latest.items()} == {
        "given": "shop",
        "derived": "shop-2",
        "later": "default",  # not known: the evaluator's default, as before
    }
    assert {f["line"] for f in latest.values()} == {5}, (
        "the line in the user's code that declared them"
    )
    in_default = {f["name"] for f in found["findings"] if f["id"] == "SW-K8S-017"}
    assert in_default == set(), "none is in the default namespace; `later`'s is not known"


def test_policy_check_leaves_an_auto_name_unknown_to_callbacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A resource named by the server (an auto-name) has no known name before it exists, also
    to an apply callback reading its metadata: `m.get('name')` must not find it absent, which
    put the objects in `default` and failed SW-K8S-017 on a namespace not known yet."""
    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import stackwright.kubernetes as k8s\n"
        "auto = k8s.core.v1.Namespace('auto', metadata={'labels': {'team': 'a'}})\n"
        "k8s.core.v1.ConfigMap('later', data={'a': 'b'},\n"
        "    metadata={'namespace': auto.metadata.apply(lambda m: m.get('name'))})\n"
    )
    found = _check(capsys, str(tmp_path), "--json")
    in_default = {f["name"] for f in found["findings"] if f["id"] == "SW-K8S-017"}
    assert in_default == set(), "its namespace is not known: not judged as in `default`"


def test_policy_check_on_a_yaml_program_points_at_its_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A YAML program's findings name the program file and the line of each resource entry,
    as a manifest's do, so SARIF consumers annotate the right line."""
    (tmp_path / "Stackwright.yaml").write_text(
        "name: shop\n"
        "runtime: yaml\n"
        "resources:\n"
        "  settings:\n"
        "    type: kubernetes:core/v1:ConfigMap\n"
        "    properties: {metadata: {namespace: shop}, data: {a: b}}\n"
        "  api:\n"
        "    type: kubernetes:apps/v1:Deployment\n"
        "    properties:\n"
        "      metadata: {namespace: shop}\n"
        "      spec:\n"
        "        selector: {matchLabels: {app: api}}\n"
        "        template:\n"
        "          metadata: {labels: {app: api}}\n"
        "          spec: {containers: [{name: api, image: 'nginx:latest'}]}\n"
    )
    found = _check(capsys, str(tmp_path), "--json")
    api = [f for f in found["findings"] if f["name"] == "api"]
    assert api and {(f["source"], f["line"]) for f in api} == {
        (str(tmp_path / "Stackwright.yaml"), 7)
    }


def test_policy_check_on_a_program_given_a_relative_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "p1"
    project.mkdir()
    (project / "Stackwright.yaml").write_text("name: p1\nruntime: python\n")
    (project / "__main__.py").write_text(
        "import stackwright.kubernetes as k8s\n"
        "k8s.core.v1.Service('web', metadata={'namespace': 'shop'}, spec={'type': 'NodePort',"
        " 'selector': {'app': 'web'}, 'ports': [{'port': 80}]})\n"
    )
    monkeypatch.chdir(tmp_path)
    found = _check(capsys, "p1", "--json")
    assert found["checked"] == 1
    assert {f["id"] for f in found["findings"]} >= {"SW-K8S-023"}
    # Findings point at the program as it was named, like a manifest's: a relative path, which
    # SARIF consumers (GitHub code scanning) resolve against the checkout.
    assert {f["source"] for f in found["findings"]} == {str(Path("p1") / "__main__.py")}


# --- pod-security-restricted against Pod Security admission's own checks ---------------------

PSS = select_packs(["pod-security-restricted"])
POD_C0 = "spec.template.spec.containers[0]"


def _pss(change: Any) -> list[tuple[str, str]]:
    """The SW-PSS findings of good()'s Deployment after `change(pod_spec, container)`."""
    objects = good("shop")
    deployment = objects[2]
    pod = deployment["spec"]["template"]["spec"]
    change(pod, pod["containers"][0])
    report = evaluate([Subject(o) for o in objects], PSS)
    return [(f.policy.id, f.path) for f in report.findings]


def test_pss_a_pod_level_run_as_non_root_false_fails_even_when_every_container_sets_true() -> None:
    # Pod Security admission's runAsNonRoot check: "pod must not set runAsNonRoot=false".
    def change(pod: dict[str, Any], container: dict[str, Any]) -> None:
        pod["securityContext"]["runAsNonRoot"] = False
        container["securityContext"]["runAsNonRoot"] = True

    assert ("SW-PSS-014", "spec.template.spec.securityContext.runAsNonRoot") in _pss(change)


def test_pss_a_windows_pod_is_not_asked_for_linux_only_fields() -> None:
    # Since Kubernetes 1.25 Pod Security admission lets pods with spec.os.name: windows leave
    # out allowPrivilegeEscalation, seccompProfile and capabilities — the API server refuses
    # those fields on Windows pods, so a finding could never be fixed.
    def change(pod: dict[str, Any], container: dict[str, Any]) -> None:
        pod["os"] = {"name": "windows"}
        del pod["securityContext"]["seccompProfile"]
        del pod["securityContext"]["runAsUser"]
        del container["securityContext"]["allowPrivilegeEscalation"]
        del container["securityContext"]["capabilities"]

    assert _pss(change) == []
    # A Linux pod (os.name linux, or no os) without them still fails.
    assert {"SW-PSS-013", "SW-PSS-016", "SW-PSS-017"} <= {
        id for id, _ in _pss(lambda pod, c: change(pod, c) or pod.update(os={"name": "linux"}))
    }


def test_pss_sysctls_follow_the_newest_safe_set() -> None:
    # Kubernetes 1.32 added net.ipv4.tcp_rmem and net.ipv4.tcp_wmem to the safe sysctls.
    def change(pod: dict[str, Any], container: dict[str, Any]) -> None:
        pod["securityContext"]["sysctls"] = [
            {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 16777216"},
            {"name": "net.ipv4.tcp_wmem", "value": "4096 87380 16777216"},
            {"name": "net.core.somaxconn", "value": "1024"},
        ]

    assert _pss(change) == [("SW-PSS-011", "spec.template.spec.securityContext.sysctls[2].name")]


def test_pss_capabilities_are_matched_as_pod_security_admission_matches_them() -> None:
    # Admission compares the names exactly: "CAP_CHOWN" or "net_bind_service" is not one of
    # the allowed capabilities, and drop: [all] does not drop ALL.
    def change(pod: dict[str, Any], container: dict[str, Any]) -> None:
        container["securityContext"]["capabilities"] = {
            "drop": ["all"],
            "add": ["CAP_CHOWN", "net_bind_service"],
        }

    found = _pss(change)
    caps = f"{POD_C0}.securityContext.capabilities"
    assert ("SW-PSS-004", f"{caps}.add[0]") in found
    assert ("SW-PSS-004", f"{caps}.add[1]") in found
    assert ("SW-PSS-017", f"{caps}.drop") in found
    assert ("SW-PSS-017", f"{caps}.add[1]") in found


def test_set_values_are_typed_and_split_as_helm_does() -> None:
    # Helm's --set keeps 1.10, 0123 and yes as text (only integers without a leading zero,
    # true / false / null are typed) and splits on commas: an image tag 1.10 must not become
    # the number 1.1, nor a Git SHA of digits an octal number.
    from stackwright.automation.policy import _set_values

    assert _set_values(
        "--set", ["image.tag=1.10", "sha=0123456", "on=yes", "n=3", "b=true", "z=0"]
    ) == {
        "image": {"tag": "1.10"},
        "sha": "0123456",
        "on": "yes",
        "n": 3,
        "b": True,
        "z": 0,
    }
    assert _set_values("--set", ["a=1,b.c=x", r"list=x\,y", "empty="]) == {
        "a": 1,
        "b": {"c": "x"},
        "list": "x,y",
        "empty": "",
    }
    # A list's items by index and in braces, as a Helm user writes them; each --set in turn
    # into one map, so two flags fill one list.
    assert _set_values(
        "--set", ["extraPorts[0].port=9091", "extraPorts[1].name=admin", "ips={a,b}"]
    ) == {
        "extraPorts": [{"port": 9091}, {"name": "admin"}],
        "ips": ["a", "b"],
    }
    # --set-string keeps every value text, as Helm's does (an all-digit image tag).
    assert _set_values("--set-string", ["image.tag=1234567,debug=true"]) == {
        "image": {"tag": "1234567"},
        "debug": "true",
    }
    # An empty flag (`--set "$EXTRA"` in a CI script, the variable unset) sets nothing, as
    # Helm's; a flag ending in a backslash does not swallow the next one.
    assert _set_values("--set", ["", "a=1", ""]) == {"a": 1}
    assert _set_values("--set", ["path=C:\\", "b=2"]) == {"path": "C:", "b": 2}
    # Nor does one ending in a comma, which Helm allows in a flag alone.
    assert _set_values("--set", ["a=1,", "b=2"]) == {"a": 1, "b": 2}
    assert _set_values("--set", ["a=x\\,", "b=2"]) == {"a": "x,", "b": 2}
    assert _set_values("--set", ["a=x,\\", "b=2"]) == {"a": "x", "b": 2}


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text("ab.[]{}09\\ -,", max_size=6),
            st.sampled_from(["=", ""]),
            # `=` too, after the key's (a password's `,X..Y=Z`, which Helm reads as a key)
            st.text("XYZ{}[].\\ ,=-", max_size=8),
        ).filter(lambda flag: "=" not in flag[2] or (flag[1] and not flag[0].endswith("\\"))),
        min_size=1,
        max_size=3,
    )
)
@example([("", "=", ",X=,X")])  # found once: the second key (X) is the first value's text
def test_a_refused_set_value_is_never_quoted(flags: list[tuple[str, str, str]]) -> None:
    # Whatever Helm refuses, the message names the flag and the key, never a value's text
    # (X, Y, Z here; a key holds none of them): Helm's own message may quote one, as the key
    # it read after a comma inside a value.
    from stackwright.automation.policy import _set_values

    for flag in ("--set", "--set-string"):
        try:
            _set_values(flag, ["".join(parts) for parts in flags])
        except UsageError as exc:
            assert not set("XYZ") & set(str(exc)), str(exc)


def test_pss_an_empty_apparmor_annotation_is_allowed_as_admission_allows_it() -> None:
    objects = good("shop")
    template = objects[2]["spec"]["template"]
    template["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/web": "",
        "container.apparmor.security.beta.kubernetes.io/other": "unconfined",
    }
    report = evaluate([Subject(o) for o in objects], PSS)
    assert [(f.policy.id, f.path) for f in report.findings] == [
        (
            "SW-PSS-007",
            "spec.template.metadata.annotations.container.apparmor.security.beta.kubernetes.io/other",
        )
    ]


def test_allowed_registries_know_docker_hubs_official_images_live_under_library() -> None:
    # `nginx` is docker.io/library/nginx: allowing docker.io/library allows it, and only it.
    settings = Settings.from_config(
        {"policy:policies": {"allowed-registries": {"registries": ["docker.io/library"]}}}, "t"
    )
    best = select_packs(["kubernetes-best-practices"])

    def flagged(image: str) -> bool:
        objects = good("shop")
        objects[2]["spec"]["template"]["spec"]["containers"][0]["image"] = image
        report = evaluate([Subject(o) for o in objects], best, settings)
        return any(f.policy.id == "SW-K8S-013" for f in report.findings)

    assert not flagged("nginx:1.29")
    assert not flagged("docker.io/library/nginx:1.29")
    assert not flagged("docker.io/nginx:1.29")
    assert flagged("bitnami/nginx:1.29")
    assert flagged("ghcr.io/library/nginx:1.29")
