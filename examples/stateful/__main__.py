"""A stateful app: a headless Service, a StatefulSet with a volume claim per replica,
and a shared PersistentVolumeClaim, all in their own namespace.

The local cluster ships a default StorageClass; claims bind to volumes it makes.
"""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
replicas = cfg.get_int("replicas") or 3
labels = {"app": "db"}

ns = k8s.core.v1.Namespace("stateful", metadata={"name": "stateful"})
namespace = ns.metadata["name"]

shared = k8s.core.v1.PersistentVolumeClaim(
    "backups",
    metadata={"name": "backups", "namespace": namespace},
    spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
)

headless = k8s.core.v1.Service(
    "db",
    metadata={"name": "db", "namespace": namespace},
    spec={"clusterIP": "None", "selector": labels, "ports": [{"name": "pg", "port": 5432}]},
)

db = k8s.apps.v1.StatefulSet(
    "db",
    metadata={"name": "db", "namespace": namespace},
    spec={
        "serviceName": headless.metadata["name"],
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "postgres",
                        "image": "postgres:17",
                        "ports": [{"containerPort": 5432, "name": "pg"}],
                        "volumeMounts": [
                            {"name": "data", "mountPath": "/var/lib/postgresql/data"},
                            {"name": "backups", "mountPath": "/backups"},
                        ],
                    }
                ],
                "volumes": [{"name": "backups", "persistentVolumeClaim": {"claimName": shared.metadata["name"]}}],
            },
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ],
    },
)

sw.export("ready_replicas", db.status["readyReplicas"])
sw.export("backups_volume", shared.spec["volumeName"])
