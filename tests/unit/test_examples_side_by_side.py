"""The examples share one local cluster: the README runs them one after another, each
left deployed, so no two may declare a Namespace of the same name (the second `up` is
refused: the first stack manages it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stackwright.engine.program import run_program

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: Examples that put no Namespace of their own on the local cluster, and why.
ELSEWHERE = {
    "platform-app/app": "deploys into the namespace platform-app/platform makes",
    "two-clusters": "deploys to the two clusters its kubeconfigs name",
}


def examples() -> list[Path]:
    return sorted(p.parent for p in EXAMPLES.glob("**/Stackwright.yaml"))


def namespaces(folder: Path) -> list[str]:
    """The fixed names of the Namespaces the example declares, run as its stack `dev` is."""
    project = yaml.safe_load((folder / "Stackwright.yaml").read_text())
    config = yaml.safe_load((folder / "Stackwright.dev.yaml").read_text())["config"] or {}
    default = "__main__.py" if project["runtime"] == "python" else "Stackwright.yaml"
    main = folder / project.get("main", default)
    program = run_program(main, project=project["name"], stack="dev", config=config)
    found = [
        r.props.get("metadata", {}).get("name")
        for r in program.resources
        if "::kubernetes:core/v1:Namespace::" in r.urn
    ]
    return [name for name in found if isinstance(name, str)]


def test_no_two_examples_declare_one_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_TOKEN", "any")  # external-secrets reads it, as its README says
    # platform-app/platform reads the local cluster's kubeconfig for its API server's URL.
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path))
    kubeconfig = tmp_path / "clusters" / "local" / "kubeconfig"
    kubeconfig.parent.mkdir(parents=True)
    kubeconfig.write_text(
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    owners: dict[str, str] = {}
    for folder in examples():
        name = folder.relative_to(EXAMPLES).as_posix()
        if name in ELSEWHERE:
            continue
        for namespace in namespaces(folder):
            assert namespace not in owners, (
                f"{name} and {owners[namespace]} both declare namespace {namespace}"
            )
            owners[namespace] = name
    assert {"webapp", "stateful"} <= set(owners)  # the programs ran and were read
