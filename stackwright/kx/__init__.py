"""High-level Kubernetes components that remove boilerplate, in the spirit of Pulumi's kubernetesx.

    import stackwright.kx as kx

    settings = kx.ConfigMap("settings", data={"GREETING": "hello"})
    pod = kx.PodBuilder("web", containers=[{
        "image": "nginx:1.29",
        "ports": {"http": 80},
        "env": {"GREETING": settings.as_env_value("GREETING")},
        "volume_mounts": [settings.mount("/etc/web")],
    }])
    web = kx.Deployment("web", spec=pod.as_deployment_spec(replicas=2))
    web.create_service(type="LoadBalancer")

Each component is a `ComponentResource` whose children are ordinary Kubernetes
resources, so previews show it as one node. Must never: reach past the
programming model (`stackwright.sdk`, `stackwright.kubernetes`) into the engine.
"""

from stackwright.kx._pod import PodBuilder
from stackwright.kx._random import RandomPassword
from stackwright.kx._volumes import ConfigMap, Mount, PersistentVolumeClaim, Secret
from stackwright.kx._workloads import Deployment

__all__ = [
    "ConfigMap",
    "Deployment",
    "Mount",
    "PersistentVolumeClaim",
    "PodBuilder",
    "RandomPassword",
    "Secret",
]
