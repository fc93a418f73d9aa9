"""The provider factory tells the provider how the program forces an apply, for a conflict's advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.engine.wiring import (
    KubernetesCluster,
    cluster_context,
    default_namespace,
    kubernetes_providers,
)
from stackwright.sdk.spelling import PYTHON, YAML, Spelling

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://k8s.test"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(("spelling", "option"), [(PYTHON, "force"), (YAML, None)])
def test_the_force_option_follows_the_programs_language(
    tmp_path: Path, spelling: Spelling, option: str | None
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(KUBECONFIG)
    made = kubernetes_providers(spelling=spelling)({"kubeconfig": str(kubeconfig)})
    assert isinstance(made, KubernetesCluster)
    assert made.provider.api.force_option == option


def test_a_yaml_program_has_no_force_option() -> None:
    assert PYTHON.has("force") and YAML.has("custom_timeouts.delete")
    assert not YAML.has("force")


def test_the_providers_name_the_setting_their_timeout_came_from(tmp_path: Path) -> None:
    """For the message of a wait that runs out: the stack's `kubernetes:timeout` for the
    default provider, a provider resource's own `timeout`, nothing for the default."""
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(KUBECONFIG)
    stack = {"kubeconfig": str(kubeconfig), "timeout": 5}
    factory = kubernetes_providers(stack)
    made = [factory(None), factory({"kubeconfig": str(kubeconfig), "timeout": 5})]
    made.append(kubernetes_providers({"kubeconfig": str(kubeconfig)})(None))
    assert all(isinstance(m, KubernetesCluster) for m in made)
    assert [m.provider.timeout_setting for m in made] == [  # type: ignore[attr-defined]
        "the stack's kubernetes:timeout setting",
        "its provider's timeout",
        "",
    ]


def test_a_relative_kubeconfig_path_is_the_programs_folders_wherever_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`config set kubernetes:kubeconfig kc.yaml` (or `Provider(kubeconfig="kc.yaml")`), then
    a command run from a subfolder of the project: "kubeconfig file kc.yaml does not exist"."""
    (tmp_path / "kc.yaml").write_text(KUBECONFIG)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    factory = kubernetes_providers({"kubeconfig": "kc.yaml"}, root=tmp_path)
    for made in (factory(None), factory({"kubeconfig": "kc.yaml"})):
        assert isinstance(made, KubernetesCluster)
        assert made.provider.config.server == "https://k8s.test"
    inline = kubernetes_providers(root=tmp_path)({"kubeconfig": KUBECONFIG})
    assert isinstance(inline, KubernetesCluster)
    # Read without connecting, before the run (environments, default namespaces), alike.
    assert cluster_context({"kubeconfig": "kc.yaml"}, root=tmp_path) == "x"
    assert default_namespace({"kubeconfig": "kc.yaml"}, tmp_path) == "default"
