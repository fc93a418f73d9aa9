"""Checks of pods that both built-in packs make, written once.

Each takes a Subject of a pod-running kind and yields Violations whose paths point
into the pod spec (a workload's template). A container's security settings fall back
to the pod's where Kubernetes does (runAsNonRoot, runAsUser, seccompProfile). On a
Patch (`subject.patch`) a check that asks for a field judges only a value the Patch
sets (`allowPrivilegeEscalation: true`), never one it leaves to the object's owner.

Must never: raise on a value that is not known yet (walk with `mapping` / `items`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stackwright.policy._core import Subject, Violation, items, mapping


def _security(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(container.get("securityContext"))


def _pod_security(subject: Subject) -> tuple[str, Mapping[str, Any]]:
    path, spec = subject.pod_spec()
    return f"{path}.securityContext", mapping(spec.get("securityContext"))


def _windows(subject: Subject) -> bool:
    """Whether the pods are Windows pods (spec.os.name), on which the API server refuses
    the Linux-only fields (allowPrivilegeEscalation, seccompProfile, capabilities, …) and
    Pod Security admission does not ask for them (since Kubernetes 1.25)."""
    return mapping(subject.pod_spec()[1].get("os")).get("name") == "windows"


def privileged(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        if _security(container).get("privileged") is True:
            yield Violation(
                f"container {container.get('name')} of {subject.display} runs privileged",
                f"{path}.securityContext.privileged",
            )


def privilege_escalation(subject: Subject) -> Iterator[Violation]:
    if _windows(subject):
        return
    for path, container in subject.containers():
        allowed = _security(container).get("allowPrivilegeEscalation")
        if allowed is not False and not subject.left_to_owner(allowed):
            yield Violation(
                f"container {container.get('name')} of {subject.display} may escalate privileges "
                "(allowPrivilegeEscalation is not false)",
                f"{path}.securityContext.allowPrivilegeEscalation",
            )


def run_as_non_root(subject: Subject) -> Iterator[Violation]:
    pod_path, pod = _pod_security(subject)
    if pod.get("runAsNonRoot") is False:
        # Pod Security admission refuses an explicit false on the pod even when every
        # container sets true (its containers only override what the pod says).
        yield Violation(
            f"the pods of {subject.display} set runAsNonRoot: false",
            f"{pod_path}.runAsNonRoot",
        )
    for path, container in subject.containers():
        own = _security(container).get("runAsNonRoot")
        if own is True or (own is None and pod.get("runAsNonRoot") is True):
            continue
        if subject.left_to_owner(own):
            continue  # the pod's own false (the Patch's) is reported above
        at = (
            f"{path}.securityContext.runAsNonRoot"
            if own is not None
            else f"{pod_path}.runAsNonRoot"
        )
        yield Violation(
            f"container {container.get('name')} of {subject.display} may run as root "
            "(runAsNonRoot is not true)",
            at,
        )


def run_as_user_not_root(subject: Subject) -> Iterator[Violation]:
    pod_path, pod = _pod_security(subject)
    if pod.get("runAsUser") == 0:
        yield Violation(
            f"the pods of {subject.display} run as user 0 (root)", f"{pod_path}.runAsUser"
        )
    for path, container in subject.containers():
        if _security(container).get("runAsUser") == 0:
            yield Violation(
                f"container {container.get('name')} of {subject.display} runs as user 0 (root)",
                f"{path}.securityContext.runAsUser",
            )


def host_namespaces(subject: Subject) -> Iterator[Violation]:
    path, spec = subject.pod_spec()
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field) is True:
            yield Violation(
                f"the pods of {subject.display} share the node's namespaces ({field}: true)",
                f"{path}.{field}",
            )


def host_path(subject: Subject) -> Iterator[Violation]:
    for path, volume in subject.volumes():
        if volume.get("hostPath") is not None:
            yield Violation(
                f"volume {volume.get('name')} of {subject.display} mounts a path of "
                "the node (hostPath)",
                f"{path}.hostPath",
            )


def host_ports(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        for index, port in enumerate(items(container.get("ports"))):
            host_port = mapping(port).get("hostPort")
            if host_port not in (None, 0):
                yield Violation(
                    f"container {container.get('name')} of {subject.display} binds host port "
                    f"{host_port}",
                    f"{path}.ports[{index}].hostPort",
                )


def seccomp(subject: Subject, allowed: Iterable[str]) -> Iterator[Violation]:
    """Every container's effective seccomp profile type is one of `allowed` (an empty
    string standing for "not set")."""
    if _windows(subject):
        return
    allowed = tuple(allowed)
    pod_path, pod = _pod_security(subject)
    pod_type = mapping(pod.get("seccompProfile")).get("type", "")
    if pod_type and pod_type not in allowed:
        yield Violation(
            f"the pods of {subject.display} use seccomp profile {pod_type}",
            f"{pod_path}.seccompProfile.type",
        )
    for path, container in subject.containers():
        own = mapping(_security(container).get("seccompProfile")).get("type", "")
        if own:
            if own not in allowed:
                yield Violation(
                    f"container {container.get('name')} of {subject.display} uses seccomp "
                    f"profile {own}",
                    f"{path}.securityContext.seccompProfile.type",
                )
        elif not pod_type and "" not in allowed and not subject.patch:
            yield Violation(
                f"container {container.get('name')} of {subject.display} has no seccomp profile "
                "(neither the pod nor the container sets one)",
                f"{pod_path}.seccompProfile.type",
            )


def capabilities_dropped(subject: Subject) -> Iterator[Violation]:
    if _windows(subject):
        return
    for path, container in subject.containers():
        drop = mapping(_security(container).get("capabilities")).get("drop")
        # An atomic list under server-side apply: the one a Patch sets is the object's.
        if "ALL" not in items(drop) and not subject.left_to_owner(drop):
            yield Violation(
                f"container {container.get('name')} of {subject.display} does not drop ALL "
                "capabilities",
                f"{path}.securityContext.capabilities.drop",
            )


def capabilities_added(
    subject: Subject, *, forbidden: Iterable[str] = (), allowed: Iterable[str] | None = None
) -> Iterator[Violation]:
    """Added capabilities that are `forbidden` (in any spelling: sys_admin, CAP_SYS_ADMIN),
    or not `allowed` when an allow-list is given (spelt exactly so, as Pod Security
    admission compares them)."""
    forbidden = {c.upper().removeprefix("CAP_") for c in forbidden}
    allow = None if allowed is None else set(allowed)
    for path, container in subject.containers():
        added = items(mapping(_security(container).get("capabilities")).get("add"))
        for index, capability in enumerate(added):
            if not isinstance(capability, str):
                continue
            bare = capability.upper().removeprefix("CAP_")
            if bare in forbidden or (allow is not None and capability not in allow):
                yield Violation(
                    f"container {container.get('name')} of {subject.display} adds capability "
                    f"{capability}",
                    f"{path}.securityContext.capabilities.add[{index}]",
                )
