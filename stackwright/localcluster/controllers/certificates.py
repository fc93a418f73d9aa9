"""The `kubernetes.io/kube-apiserver-client` signer, as kube-controller-manager's csrsigning
controller runs it: an approved request for that signer gets a certificate from the
cluster's client CA in `status.certificate`, or a Failed condition saying why not.

Requests for other signers, and requests not approved, are left alone (certificates.py
says which qualify).
"""

from __future__ import annotations

from collections.abc import Hashable

from stackwright.localcluster import status
from stackwright.localcluster.certificates import CSR_TYPE, sign, wants_signing
from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.credentials import Credentials
from stackwright.localcluster.store import DELETED, Change

MANAGER = "kube-controller-manager"


class CertificateSigningController(Controller):
    name = "csrsigning"

    def __init__(self, cluster: Cluster, credentials: Credentials) -> None:
        super().__init__(cluster)
        self.credentials = credentials

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == CSR_TYPE and change.type != DELETED and wants_signing(change.obj):
            return [change.name]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [
            csr["metadata"]["name"]
            for csr in self.cluster.store.items(CSR_TYPE)
            if wants_signing(csr)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        cluster = self.cluster
        csr = cluster.store.get(CSR_TYPE, "", key)
        if csr is None or not wants_signing(csr):
            return
        now = cluster.clock()
        outcome, value = sign(csr, self.credentials, now)
        written = dict(csr)
        written["status"] = dict(csr.get("status") or {})
        if outcome == "certificate":
            written["status"]["certificate"] = value
        else:
            failed = {
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                "message": value, "lastUpdateTime": timestamp(now),
            }  # fmt: skip
            written["status"]["conditions"] = [*written["status"].get("conditions", []), failed]
        rtype = cluster.type_for("certificates.k8s.io", "v1", "certificatesigningrequests")
        try:
            cluster.update(rtype, "", key, written, WriteOptions(field_manager=MANAGER), "status")
        except status.Conflict:
            self.enqueue(key)
