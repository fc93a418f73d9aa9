"""`PodBuilder`: a pod spec from a few plain lines, and the workload specs around it.

Containers are dicts in Kubernetes' spelling with three shorthands: `env` as a
plain dict (values: strings, numbers, Outputs, or `cm.as_env_value(key)`), `ports`
by name (`{"http": 80}`), and `volume_mounts` as `Mount`s (`pvc.mount("/data")`),
whose volumes are added to the pod once each. The workload specs derive the
selector and the pod labels from the name (`app: <name>`).

Must never: declare a resource — a builder only returns plain spec dicts (typed as the
kinds' TypedDicts, so that a program passing them on type-checks; what the containers
hold is the program's and the server checks it).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stackwright.errors import UsageError, located
from stackwright.kx._volumes import Mount
from stackwright.sdk.output import Output
from stackwright.sdk.resource import _declared_at

if TYPE_CHECKING:
    from stackwright.kubernetes.inputs.apps_v1 import DeploymentSpecDict, StatefulSetSpecDict
    from stackwright.kubernetes.inputs.batch_v1 import JobSpecDict
    from stackwright.kubernetes.inputs.core_v1 import PodSpecDict, PodTemplateSpecDict


def env_entries(env: Mapping[str, Any] | Sequence[Any]) -> list[Any]:
    """`{"NAME": value}` as Kubernetes `env` entries; a list is taken as entries already."""
    if not isinstance(env, Mapping):
        return list(env)
    entries: list[Any] = []
    for name, value in env.items():
        if isinstance(value, Mapping) and ("valueFrom" in value or "value" in value):
            entries.append({"name": name, **value})
        elif isinstance(value, (Output, str)):
            entries.append({"name": name, "value": value})
        elif isinstance(value, (bool, int, float)):
            entries.append(
                {
                    "name": name,
                    "value": str(value).lower() if isinstance(value, bool) else str(value),
                }
            )
        else:
            raise UsageError(
                f"env {name!r}: a value must be a string, a number, an Output or "
                f"`configmap.as_env_value(key)` (got {type(value).__name__})"
            )
    return entries


def port_entries(ports: Mapping[str, Any] | Sequence[Any]) -> list[Any]:
    """`{"http": 80}` as `containerPort` entries named `http`; a list of numbers or entries as is."""
    if isinstance(ports, Mapping):
        return [
            {"name": name, "containerPort": port, "protocol": "TCP"}
            if not isinstance(port, Mapping)
            else {"name": name, **port}
            for name, port in ports.items()
        ]
    return [{"containerPort": p} if isinstance(p, int) else p for p in ports]


class PodBuilder:
    """A pod: `PodBuilder("web", containers=[{"image": "nginx", "ports": {"http": 80}}])`."""

    def __init__(
        self,
        name: str,
        containers: Sequence[Mapping[str, Any]],
        *,
        volumes: Sequence[Mapping[str, Any]] = (),
        labels: Mapping[str, Any] | None = None,
        pod_spec: Mapping[str, Any] | None = None,
    ) -> None:
        if not containers:
            raise UsageError(f"PodBuilder {name!r} needs at least one container")
        self.name = name
        self.labels: dict[str, Any] = dict(labels) if labels is not None else {"app": name}
        self._volumes: dict[str, Any] = {}
        for volume in volumes:
            self._add_volume(volume)
        self.containers = [self._container(i, c) for i, c in enumerate(containers)]
        self.pod_spec_extra = dict(pod_spec or {})

    def _add_volume(self, volume: Mapping[str, Any]) -> None:
        name = volume["name"]
        known = self._volumes.get(name)
        if known is not None and known is not volume and dict(known) != dict(volume):
            raise UsageError(f"PodBuilder {self.name!r}: two different volumes named {name!r}")
        self._volumes[name] = volume

    def _container(self, index: int, given: Mapping[str, Any]) -> dict[str, Any]:
        container = dict(given)
        if "image" not in container:
            close = difflib.get_close_matches("image", [str(key) for key in container], n=1)
            hint = f" (it has {close[0]!r}: did you mean 'image'?)" if close else ""
            raise UsageError(
                located(
                    _declared_at(),
                    f"PodBuilder {self.name!r}: container {index} has no image{hint}",
                )
            )
        container.setdefault("name", self.name if index == 0 else f"{self.name}-{index}")
        if "env" in container:
            container["env"] = env_entries(container["env"])
        if "ports" in container:
            container["ports"] = port_entries(container["ports"])
        mounts = [*container.pop("volume_mounts", ()), *container.pop("volumeMounts", ())]
        if mounts:
            entries = []
            for mount in mounts:
                if isinstance(mount, Mount):
                    self._add_volume(mount.volume)
                    entries.append(mount.as_volume_mount())
                else:
                    entries.append(dict(mount))
            container["volumeMounts"] = entries
        return container

    @property
    def ports(self) -> dict[str, Any]:
        """The named container ports of all containers: `{"http": 80}`."""
        return {
            p["name"]: p["containerPort"]
            for c in self.containers
            for p in c.get("ports", ())
            if isinstance(p, Mapping) and "name" in p and "containerPort" in p
        }

    def as_pod_spec(self) -> PodSpecDict:
        return cast("PodSpecDict", self._pod_spec())

    def _pod_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [dict(c) for c in self.containers]}
        if self._volumes:
            spec["volumes"] = list(self._volumes.values())
        spec.update(self.pod_spec_extra)
        return spec

    def as_pod_template(self) -> PodTemplateSpecDict:
        return cast("PodTemplateSpecDict", self._pod_template())

    def _pod_template(self) -> dict[str, Any]:
        return {"metadata": {"labels": dict(self.labels)}, "spec": self._pod_spec()}

    def as_deployment_spec(
        self, replicas: int | Output[Any] = 1, **extra: Any
    ) -> DeploymentSpecDict:
        """A Deployment's spec; `extra` adds fields in Kubernetes' spelling (e.g. `strategy`)."""
        return cast("DeploymentSpecDict", self._deployment_spec(replicas, extra))

    def _deployment_spec(
        self, replicas: int | Output[Any], extra: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {
            "replicas": replicas,
            "selector": {"matchLabels": dict(self.labels)},
            "template": self._pod_template(),
            **extra,
        }

    def as_stateful_set_spec(
        self, service_name: str | Output[Any], replicas: int | Output[Any] = 1, **extra: Any
    ) -> StatefulSetSpecDict:
        """A StatefulSet's spec, its pods named through the headless Service `service_name`."""
        spec = {"serviceName": service_name, **self._deployment_spec(replicas, extra)}
        return cast("StatefulSetSpecDict", spec)

    def as_job_spec(
        self, backoff_limit: int | None = None, restart_policy: str = "Never", **extra: Any
    ) -> JobSpecDict:
        """A Job's spec; the server picks the selector, as Kubernetes requires by default."""
        template = self._pod_template()
        template["spec"].setdefault("restartPolicy", restart_policy)
        spec: dict[str, Any] = {"template": template}
        if backoff_limit is not None:
            spec["backoffLimit"] = backoff_limit
        spec.update(extra)
        return cast("JobSpecDict", spec)
