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


def answer(path: str, query: dict[str, str]) -> bytes:
    """The body of a 200 for `path` (`/readyz`, `/readyz/etcd`, …); a 404 for no such check."""
    endpoint, _, check = path.strip("/").partition("/")
    checks = CHECKS[endpoint]
    if check:
        if check not in checks:
            raise status.no_such_path()
        return b"ok"
    if "verbose" not in query:
        return b"ok"
    excluded = query.get("exclude", "")
    lines = [f"[+]{name} excluded: ok" if name == excluded else f"[+]{name} ok" for name in checks]
    if excluded and excluded not in checks:
        lines.append(f'warn: some health checks cannot be excluded: no matches for "{excluded}"')
    return ("\n".join(lines) + f"\n{endpoint} check passed\n").encode()
