"""A database password kept in a vault, delivered by the External Secrets Operator.

Teams that run the External Secrets Operator (ESO) declare *where* a secret lives
(an `ExternalSecret` naming a `SecretStore` and a remote key) instead of a
`Secret` holding the value: the operator in the cluster fetches the value and
writes the Secret itself, so the value never passes through Stackwright, its
program, its configuration or its state. This example also declares the two CRDs
(trimmed to what it uses) so that it runs on a cluster without ESO, such as the
local one; on a cluster where ESO is installed, drop `crds()`.

The vault's token is the one secret Stackwright handles: read at deploy time from
the environment with `sw.secret_from_env`, it goes into the Secret the
SecretStore authenticates with, is encrypted in the state and shown as [secret].
"""

import stackwright as sw
import stackwright.kubernetes as k8s

GROUP = "external-secrets.io"
cfg = sw.Config()


def crd(kind: str, plural: str) -> k8s.apiextensions.v1.CustomResourceDefinition:
    return k8s.apiextensions.v1.CustomResourceDefinition(
        plural,
        metadata={"name": f"{plural}.{GROUP}"},
        spec={
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    )


def crds() -> None:
    crd("SecretStore", "secretstores")
    crd("ExternalSecret", "externalsecrets")


crds()
ns = k8s.core.v1.Namespace("payments", metadata={"name": "payments"})
namespace = ns.metadata["name"]

token = k8s.core.v1.Secret(
    "vault-token",
    metadata={"name": "vault-token", "namespace": namespace},
    string_data={"token": sw.secret_from_env("VAULT_TOKEN")},
)
store = k8s.apiextensions.CustomResource(
    "vault",
    api_version=f"{GROUP}/v1beta1",
    kind="SecretStore",
    metadata={"name": "vault", "namespace": namespace},
    spec={
        "provider": {
            "vault": {
                "server": cfg.get("vault_server") or "https://vault.example.com",
                "path": "secret",
                "version": "v2",
                "auth": {"tokenSecretRef": {"name": token.metadata["name"], "key": "token"}},
            }
        }
    },
)
password = k8s.apiextensions.CustomResource(
    "db-password",
    api_version=f"{GROUP}/v1beta1",
    kind="ExternalSecret",
    metadata={"name": "db-password", "namespace": namespace},
    spec={
        "refreshInterval": "1h",
        "secretStoreRef": {"name": store.metadata["name"], "kind": "SecretStore"},
        "target": {"name": "db-password", "creationPolicy": "Owner"},
        "data": [
            {
                "secretKey": "password",
                "remoteRef": {"key": "payments/db", "property": "password"},
            }
        ],
    },
)

sw.export("external_secret", password.metadata["name"])
sw.export("target_secret", "db-password")
