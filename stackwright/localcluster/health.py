"""kube-apiserver's health endpoints: /healthz, /livez and /readyz.

Each is a list of named checks: the bare path answers `ok`, `?verbose` lists every check
(`[+]etcd ok`, `[+]etcd excluded: ok` for one named by `?exclude=`) and ends with `readyz
check passed`, and `/readyz/NAME` answers one check. The local cluster's checks pass
while it serves; the names are upstream's, so scripts probing `/readyz/etcd` find them.
"""

from __future__ import annotations

from stackwright.localcluster import status

#: The checks every endpoint has (kube-apiserver's healthz checks and post-start hooks).
_COMMON = (
    "ping",
    "log",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
)
#: Readiness adds the storage's readiness, the informers' sync and the shutdown signal.
CHECKS = {
    "healthz": _COMMON,
    "livez": _COMMON,
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *_COMMON[3:], "shutdown"),
}


def answer(path: str, verbose: bool, excluded: list[str]) -> bytes:
    """The body of a 200 for `path` (`/readyz`, `/readyz/etcd`, …); a 404 for no such check.

    `excluded` are the checks `?exclude=` names (it may repeat)."""
    endpoint, _, check = path.strip("/").partition("/")
    checks = CHECKS[endpoint]
    if check:
        if check not in checks:
            raise status.no_such_path()
        return b"ok"
    if not verbose:
        return b"ok"
    lines = [f"[+]{name} excluded: ok" if name in excluded else f"[+]{name} ok" for name in checks]
    unmatched = sorted(set(excluded) - set(checks) - {""})
    if unmatched:  # upstream's healthz.go lists them sorted, each quoted, comma-separated
        names = ",".join(f'"{name}"' for name in unmatched)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}")
    return ("\n".join(lines) + f"\n{endpoint} check passed\n").encode()
