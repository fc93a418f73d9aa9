""".Release.Namespace of a `k8s.helm.Chart` given no namespace: the namespace its objects
land in, as the provider decides it (Helm's CLI takes the kubeconfig context's)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.wiring import default_namespace
from stackwright.errors import UsageError
from stackwright.kubernetes.helm import Chart
from stackwright.sdk.context import Program, running
from stackwright.sdk.resource import ComponentResource, ResourceOptions


@pytest.fixture
def chart() -> Path:
    """A chart whose one ConfigMap (`<release>-where`) records the release's namespace."""
    return Path(__file__).resolve().parents[1] / "data" / "charts" / "release-namespace"


def program(
    config: Mapping[str, Any] | None = None,
    provider_namespace: Any = None,
) -> Any:
    return running(
        Program(
            project="shop",
            stack="dev",
            config=dict(config or {}),
            provider_namespace=provider_namespace,
        )
    )


def rendered(chart: Chart) -> Any:
    (cm,) = chart.resources.values()
    return cm.props["data"]["namespace"]


def test_a_plain_provider_namespace_is_the_release_namespace(chart: Path) -> None:
    with program():
        provider = k8s.Provider("east", context="east", namespace="east-apps")
        made = Chart("c", chart=chart, opts=ResourceOptions(provider=provider))
        assert rendered(made) == "east-apps"
        # The objects keep no namespace of their own: the provider fills the same one, and
        # their names (URNs) stay those of a chart given none.
        assert list(made.resources) == ["ConfigMap:c-where"]
        # Inherited from a parent, as children inherit the provider.
        parent = ComponentResource("acme:App", "app", opts=ResourceOptions(provider=provider))
        assert rendered(Chart("d", chart=chart, opts=ResourceOptions(parent=parent))) == (
            "east-apps"
        )
        # The chart's own namespace wins.
        given = Chart("e", chart=chart, namespace="mine", opts=ResourceOptions(provider=provider))
        assert rendered(given) == "mine"


def test_a_provider_a_transform_gives_the_chart_is_the_release_namespace(chart: Path) -> None:
    """The chart renders with its options as transforms leave them, as its objects are
    placed: a provider given by the stack's transform or a parent's sets the namespace."""
    with program():
        provider = k8s.Provider("east", context="east", namespace="east-apps")

        def through_east(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult:
            return sw.ResourceTransformResult(args.props, replace(args.opts, provider=provider))

        parent = ComponentResource(
            "acme:App", "app", opts=ResourceOptions(transforms=[through_east])
        )
        assert rendered(Chart("c", chart=chart, opts=ResourceOptions(parent=parent))) == "east-apps"
        sw.register_resource_transform(through_east)
        assert rendered(Chart("d", chart=chart)) == "east-apps"


def test_the_default_provider_takes_the_stacks_configuration(chart: Path) -> None:
    with program({"kubernetes:namespace": "configured"}):
        assert rendered(Chart("c", chart=chart)) == "configured"
    with program():
        assert rendered(Chart("c", chart=chart)) == "default"


def test_the_front_end_tells_where_a_provider_puts_objects(chart: Path) -> None:
    asked: list[Any] = []

    def where(settings: Mapping[str, Any] | None) -> str | None:
        asked.append(settings)
        return "from-kubeconfig" if settings is None else f"ctx-{settings['context']}"

    with program({"kubernetes:namespace": "ignored-when-told"}, where):
        assert rendered(Chart("c", chart=chart)) == "from-kubeconfig"
        provider = k8s.Provider("west", context="west")
        assert rendered(
            Chart("d", chart=chart, resource_prefix="d", opts=ResourceOptions(provider=provider))
        ) == ("ctx-west")
    assert asked == [None, {"context": "west"}]


def test_a_provider_namespace_known_only_after_apply_is_one_clear_line(chart: Path) -> None:
    with program():
        ns = k8s.core.v1.Namespace("apps")
        provider = k8s.Provider("p", namespace=ns.metadata["name"])
        with pytest.raises(UsageError) as caught:
            Chart("c", chart=chart, opts=ResourceOptions(provider=provider))
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(f"{__file__}:") and ": Helm chart 'c' (" in message
        assert "the namespace of its provider 'p' is not known until 'apps' is applied" in message
        assert "give it namespace= as a plain value" in message
        # The chart's own namespace needs none of the provider's.
        given = Chart("d", chart=chart, namespace="x", opts=ResourceOptions(provider=provider))
        assert rendered(given) == "x"


def test_a_kubeconfig_known_only_after_apply_renders_default(chart: Path) -> None:
    with program(provider_namespace=lambda settings: pytest.fail("nothing to read")):
        cm = k8s.core.v1.ConfigMap("kc", data={"config": "x"})
        provider = k8s.Provider("p", kubeconfig=cm.data["config"])
        assert rendered(Chart("c", chart=chart, opts=ResourceOptions(provider=provider))) == (
            "default"
        )


def test_default_namespace_is_the_providers_rule(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    cluster = {"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [cluster],
                "users": [{"name": "u", "user": {}}],
                "contexts": [
                    {"name": "a", "context": {"cluster": "c", "user": "u", "namespace": "team"}},
                    {"name": "b", "context": {"cluster": "c", "user": "u"}},
                ],
                "current-context": "a",
            }
        )
    )
    assert default_namespace({"kubeconfig": str(kubeconfig)}) == "team"
    assert default_namespace({"kubeconfig": str(kubeconfig), "context": "b"}) == "default"
    assert default_namespace({"kubeconfig": str(kubeconfig), "namespace": "own"}) == "own"
    assert default_namespace({"kubeconfig": str(tmp_path / "missing")}) is None


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    yield


def test_a_namespace_given_as_an_output_is_one_clear_line(chart: Path) -> None:
    """Pulumi's Chart takes `namespace=ns.metadata.name`; here Helm renders while the
    program runs, so the line says to write it out instead of a TypeError about truth."""
    with program():
        ns = k8s.core.v1.Namespace("ns", metadata={"name": "apps"})
        with pytest.raises(UsageError, match=r"Helm chart 'c' .*namespace must be a plain"):
            Chart("c", chart=chart, namespace=ns.metadata["name"])  # type: ignore[arg-type]
