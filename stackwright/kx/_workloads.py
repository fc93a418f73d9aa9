"""`Deployment`: a Deployment as a component, and the Service in front of it in one call.

Must never: guess a Service's selector from anything but the Deployment's own
`spec.selector.matchLabels`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stackwright.errors import UsageError, located
from stackwright.kubernetes.apps.v1 import Deployment as _Deployment
from stackwright.kubernetes.core.v1 import Service as _Service
from stackwright.kx._pod import PodBuilder
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ComponentResource, CustomResource, ResourceOptions

if TYPE_CHECKING:
    from stackwright.kubernetes.inputs.apps_v1 import DeploymentSpecDict
    from stackwright.kubernetes.inputs.core_v1 import ServicePortDict
    from stackwright.kubernetes.inputs.meta_v1 import ObjectMetaDict


class Deployment(ComponentResource):
    """`Deployment("web", spec=pod.as_deployment_spec(replicas=2))`, then `.create_service()`."""

    def __init__(
        self,
        name: str,
        spec: DeploymentSpecDict | PodBuilder,
        *,
        metadata: ObjectMetaDict | None = None,
        opts: ResourceOptions | None = None,
    ) -> None:
        super().__init__("kx:apps:Deployment", name, None, opts)
        if isinstance(spec, PodBuilder):
            spec = spec.as_deployment_spec()
        self.spec_given: dict[str, Any] = dict(spec)
        self._metadata = metadata or {}
        self.deployment: CustomResource = _Deployment(
            name,
            metadata=metadata or None,
            spec=spec,
            opts=ResourceOptions(parent=self),
        )
        self.service: CustomResource | None = None
        self.register_outputs({"name": self.deployment.output("metadata", "name")})

    @property
    def metadata(self) -> Output[Any]:
        return self.deployment.output("metadata")

    @property
    def status(self) -> Output[Any]:
        return self.deployment.output("status")

    def _selector(self) -> Any:
        selector = self.spec_given.get("selector")
        labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
        if not labels:
            raise UsageError(
                located(
                    self.declared_at,
                    f"kx.Deployment {self.resource_name!r}: create_service needs "
                    "spec.selector.matchLabels (PodBuilder.as_deployment_spec sets it)",
                )
            )
        return labels

    def _container_ports(self) -> dict[str, Any]:
        template = self.spec_given.get("template") or {}
        containers = (template.get("spec") or {}).get("containers") or []
        return {
            p["name"]: p["containerPort"]
            for c in containers
            for p in c.get("ports") or ()
            if isinstance(p, Mapping) and "name" in p and "containerPort" in p
        }

    def create_service(
        self,
        type: str = "ClusterIP",
        ports: Mapping[str, Any] | Sequence[ServicePortDict] | None = None,
        *,
        name: str | None = None,
    ) -> CustomResource:
        """A Service selecting this Deployment's pods, a port per named container port.

        `ports` maps a port name to the Service's port (`{"http": 80}`), targeting the
        container port of that name; by default every named container port is exposed
        on its own number.
        """
        if ports is None:
            named = self._container_ports()
            if not named:
                raise UsageError(
                    located(
                        self.declared_at,
                        f"kx.Deployment {self.resource_name!r}: no named "
                        "container ports to expose; name them (ports={'http': 80}) or pass ports=",
                    )
                )
            ports = named
        entries: list[ServicePortDict] = (
            [{"name": n, "port": p, "targetPort": n, "protocol": "TCP"} for n, p in ports.items()]
            if isinstance(ports, Mapping)
            else list(ports)
        )
        namespace = self._metadata.get("namespace")
        metadata: ObjectMetaDict = {} if namespace is None else {"namespace": namespace}
        self.service = _Service(
            name or self.resource_name,
            metadata=metadata or None,
            spec={"type": type, "selector": dict(self._selector()), "ports": entries},
            opts=ResourceOptions(parent=self),
        )
        return self.service
