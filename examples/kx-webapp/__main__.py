"""The web app of equivalent.yaml in kx: settings, a token, a volume, a Deployment, a Service.

The ConfigMap and Secret are named after a hash of their data, so changing the
greeting makes a new ConfigMap, rolls the Deployment and deletes the old one after.
"""

import stackwright as sw
import stackwright.kx as kx

cfg = sw.Config()
settings = kx.ConfigMap("web-settings", data={"GREETING": cfg.get("greeting") or "hello"})
creds = kx.Secret("web-creds", string_data={"API_TOKEN": cfg.get_secret("api_token", "change-me")})
storage = kx.PersistentVolumeClaim("web-data", size="1Gi")

pod = kx.PodBuilder("web", containers=[{
    "image": "nginx:1.29",
    "ports": {"http": 80},
    "env": {"GREETING": settings.as_env_value("GREETING"), "API_TOKEN": creds.as_env_value("API_TOKEN")},
    "volume_mounts": [settings.mount("/etc/web"), storage.mount("/data")],
}])  # fmt: skip
web = kx.Deployment("web", spec=pod.as_deployment_spec(replicas=2))
service = web.create_service(type="LoadBalancer")

sw.export("config_map", settings.object_name)
sw.export("service_ip", service.spec["clusterIP"])
