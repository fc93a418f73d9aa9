"""The provider factory tells the provider how the program forces an apply, for a conflict's advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.engine.wiring import KubernetesCluster, kubernetes_providers
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
