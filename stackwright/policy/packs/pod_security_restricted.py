"""The built-in pack `pod-security-restricted`: the Kubernetes Pod Security Standards, restricted.

One policy per control of the restricted profile, including the baseline controls it
contains, named as https://kubernetes.io/docs/concepts/security/pod-security-standards/
names them (IDs `SW-PSS-NNN`). What Pod Security admission would refuse in a namespace
labelled `pod-security.kubernetes.io/enforce: restricted`, found before the apply.

Must never: be stricter or looser than the standard without saying so in the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from stackwright.policy._core import (
    POD_KINDS,
    Check,
    Policy,
    PolicyPack,
    Subject,
    Violation,
    items,
    mapping,
    policy,
)
from stackwright.policy.packs import _pods

NAME = "pod-security-restricted"
_PSS = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"


def _control(
    id: str, control: str, profile: str, description: str, fix: str, *, patches: bool, **refs: str
) -> Callable[[Check], Policy]:
    """The decorator of one control: every rule of this pack is mandatory-worthy (high)."""
    return policy(
        re.sub(r"[^a-z0-9]+", "-", control.lower()).strip("-"),
        id=id,
        description=f"Pod Security Standards, {profile}: {control} — {description}",
        severity="high",
        kinds=POD_KINDS,
        rationale=f"the {profile} Pod Security Standard forbids it ({_PSS})",
        fix=fix,
        references={"Pod Security Standards": f"{profile}: {control}", **refs},
        patches=patches,
    )


def _security_contexts(subject: Subject) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, securityContext) of the pod and of each container."""
    path, spec = subject.pod_spec()
    yield f"{path}.securityContext", mapping(spec.get("securityContext"))
    for path, container in subject.containers():
        yield f"{path}.securityContext", mapping(container.get("securityContext"))


@_control(
    "SW-PSS-001",
    "HostProcess",
    "baseline",
    "no Windows HostProcess containers",
    "remove windowsOptions.hostProcess",
    Kyverno="disallow-host-process",
    patches=True,
)
def host_process(subject: Subject) -> Iterator[Violation]:
    for path, context in _security_contexts(subject):
        if mapping(context.get("windowsOptions")).get("hostProcess") is True:
            yield Violation(
                f"{subject.display} runs a Windows HostProcess container",
                f"{path}.windowsOptions.hostProcess",
            )


@_control(
    "SW-PSS-002",
    "Host Namespaces",
    "baseline",
    "no hostNetwork, hostPID or hostIPC",
    "remove hostNetwork, hostPID and hostIPC",
    Kyverno="disallow-host-namespaces",
    patches=True,
)
def host_namespaces(subject: Subject) -> Iterator[Violation]:
    return _pods.host_namespaces(subject)


@_control(
    "SW-PSS-003",
    "Privileged Containers",
    "baseline",
    "no privileged containers",
    "remove securityContext.privileged",
    Kyverno="disallow-privileged-containers",
    patches=True,
)
def privileged(subject: Subject) -> Iterator[Violation]:
    return _pods.privileged(subject)


#: Capabilities the baseline profile lets a container add.
BASELINE_CAPABILITIES = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
]


@_control(
    "SW-PSS-004",
    "Capabilities (baseline)",
    "baseline",
    "only the default capabilities may be added",
    f"add only {', '.join(BASELINE_CAPABILITIES)}",
    Kyverno="disallow-capabilities",
    patches=True,
)
def capabilities_baseline(subject: Subject) -> Iterator[Violation]:
    return _pods.capabilities_added(subject, allowed=BASELINE_CAPABILITIES)


@_control(
    "SW-PSS-005",
    "HostPath Volumes",
    "baseline",
    "no hostPath volumes",
    "use another volume type",
    Kyverno="disallow-host-path",
    patches=True,
)
def host_path(subject: Subject) -> Iterator[Violation]:
    return _pods.host_path(subject)


@_control(
    "SW-PSS-006",
    "Host Ports",
    "baseline",
    "no host ports",
    "remove ports[].hostPort",
    Kyverno="disallow-host-ports",
    patches=True,
)
def host_ports(subject: Subject) -> Iterator[Violation]:
    return _pods.host_ports(subject)


@_control(
    "SW-PSS-007",
    "AppArmor",
    "baseline",
    "AppArmor profiles are RuntimeDefault or Localhost when set",
    "set appArmorProfile.type to RuntimeDefault (or remove the override)",
    Kyverno="restrict-apparmor-profiles",
    patches=True,
)
def apparmor(subject: Subject) -> Iterator[Violation]:
    for path, context in _security_contexts(subject):
        kind = mapping(context.get("appArmorProfile")).get("type")
        if kind is not None and kind not in ("RuntimeDefault", "Localhost"):
            yield Violation(
                f"{subject.display} sets AppArmor profile {kind}", f"{path}.appArmorProfile.type"
            )
    # The annotations older clusters read, on the pods the object makes (a workload's
    # template too: Pod Security admission judges the pods it creates).
    path, metadata = subject.pod_metadata()
    for key, value in mapping(metadata.get("annotations")).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
            value in ("", "runtime/default") or str(value).startswith("localhost/")
        ):
            yield Violation(
                f"{subject.display} sets AppArmor profile {value} by annotation",
                f"{path}.annotations.{key}",
            )


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HOOKS = ("postStart", "preStop")


@_control(
    "SW-PSS-018",
    "Host Probes / Lifecycle Hooks",
    "baseline",
    "no host in probes and lifecycle hooks (Kubernetes 1.34+)",
    "remove httpGet.host / tcpSocket.host: a probe or hook then reaches the pod's own IP",
    patches=True,
)
def host_probes(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        handlers = [(p, mapping(container.get(p))) for p in _PROBES]
        lifecycle = mapping(container.get("lifecycle"))
        handlers += [(f"lifecycle.{h}", mapping(lifecycle.get(h))) for h in _HOOKS]
        for where, handler in handlers:
            for action in ("httpGet", "tcpSocket"):
                host = mapping(handler.get(action)).get("host")
                if host not in (None, ""):
                    yield Violation(
                        f"container {container.get('name')} of {subject.display} points its "
                        f"{where} at host {host}",
                        f"{path}.{where}.{action}.host",
                    )


_SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")


@_control(
    "SW-PSS-008",
    "SELinux",
    "baseline",
    "no custom SELinux user or role, and only the container types",
    "remove seLinuxOptions.user / role; use type container_t",
    Kyverno="disallow-selinux",
    patches=True,
)
def selinux(subject: Subject) -> Iterator[Violation]:
    for path, context in _security_contexts(subject):
        options = mapping(context.get("seLinuxOptions"))
        if options.get("type", "") not in _SELINUX_TYPES:
            yield Violation(
                f"{subject.display} sets SELinux type {options.get('type')}",
                f"{path}.seLinuxOptions.type",
            )
        for field in ("user", "role"):
            if options.get(field):
                yield Violation(
                    f"{subject.display} sets SELinux {field} {options.get(field)}",
                    f"{path}.seLinuxOptions.{field}",
                )


@_control(
    "SW-PSS-009",
    "/proc Mount Type",
    "baseline",
    "the default /proc mask",
    "remove securityContext.procMount (or set Default)",
    Kyverno="require-default-proc-mount",
    patches=True,
)
def proc_mount(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        mount = mapping(container.get("securityContext")).get("procMount")
        if mount not in (None, "Default"):
            yield Violation(
                f"container {container.get('name')} of {subject.display} sets procMount {mount}",
                f"{path}.securityContext.procMount",
            )


@_control(
    "SW-PSS-010",
    "Seccomp (baseline)",
    "baseline",
    "no Unconfined seccomp profile",
    "set seccompProfile.type: RuntimeDefault",
    Kyverno="restrict-seccomp",
    patches=True,
)
def seccomp_baseline(subject: Subject) -> Iterator[Violation]:
    return _pods.seccomp(subject, ("", "RuntimeDefault", "Localhost"))


#: The "safe" sysctls of the baseline profile (the newest Kubernetes version's set).
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",  # safe since Kubernetes 1.32
        "net.ipv4.tcp_wmem",  # safe since Kubernetes 1.32
    }
)


@_control(
    "SW-PSS-011",
    "Sysctls",
    "baseline",
    "only the safe sysctls",
    f"set only {', '.join(sorted(SAFE_SYSCTLS))}",
    Kyverno="restrict-sysctls",
    patches=True,
)
def sysctls(subject: Subject) -> Iterator[Violation]:
    path, spec = subject.pod_spec()
    for index, sysctl in enumerate(items(mapping(spec.get("securityContext")).get("sysctls"))):
        name = mapping(sysctl).get("name")
        if isinstance(name, str) and name not in SAFE_SYSCTLS:
            yield Violation(
                f"{subject.display} sets the unsafe sysctl {name}",
                f"{path}.securityContext.sysctls[{index}].name",
            )


#: The volume types the restricted profile allows.
RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)


@_control(
    "SW-PSS-012",
    "Volume Types",
    "restricted",
    "only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret",
    "use one of the allowed volume types (a PersistentVolumeClaim for storage)",
    Kyverno="restrict-volume-types",
    patches=True,
)
def volume_types(subject: Subject) -> Iterator[Violation]:
    for path, volume in subject.volumes():
        for source in sorted(set(volume) - {"name"} - RESTRICTED_VOLUMES):
            yield Violation(
                f"volume {volume.get('name')} of {subject.display} is of type {source}",
                f"{path}.{source}",
            )


@_control(
    "SW-PSS-013",
    "Privilege Escalation",
    "restricted",
    "allowPrivilegeEscalation: false",
    "set securityContext.allowPrivilegeEscalation: false on every container",
    Kyverno="disallow-privilege-escalation",
    patches=True,
)
def privilege_escalation(subject: Subject) -> Iterator[Violation]:
    return _pods.privilege_escalation(subject)


@_control(
    "SW-PSS-014",
    "Running as Non-root",
    "restricted",
    "runAsNonRoot: true",
    "set securityContext.runAsNonRoot: true on the pod",
    Kyverno="require-run-as-nonroot",
    patches=True,
)
def run_as_non_root(subject: Subject) -> Iterator[Violation]:
    return _pods.run_as_non_root(subject)


@_control(
    "SW-PSS-015",
    "Running as Non-root user",
    "restricted",
    "runAsUser is not 0",
    "set runAsUser to a non-zero UID (or leave it to the image)",
    Kyverno="require-run-as-non-root-user",
    patches=True,
)
def run_as_non_root_user(subject: Subject) -> Iterator[Violation]:
    return _pods.run_as_user_not_root(subject)


@_control(
    "SW-PSS-016",
    "Seccomp (restricted)",
    "restricted",
    "seccomp RuntimeDefault or Localhost",
    "set spec.securityContext.seccompProfile.type: RuntimeDefault",
    Kyverno="restrict-seccomp-strict",
    patches=True,
)
def seccomp_restricted(subject: Subject) -> Iterator[Violation]:
    return _pods.seccomp(subject, ("RuntimeDefault", "Localhost"))


@_control(
    "SW-PSS-017",
    "Capabilities (restricted)",
    "restricted",
    "drop ALL, add only NET_BIND_SERVICE",
    "set capabilities.drop: [ALL]; add nothing but NET_BIND_SERVICE",
    Kyverno="disallow-capabilities-strict",
    patches=True,
)
def capabilities_restricted(subject: Subject) -> Iterator[Violation]:
    yield from _pods.capabilities_dropped(subject)
    yield from _pods.capabilities_added(subject, allowed=["NET_BIND_SERVICE"])


PACK = PolicyPack(
    NAME,
    [
        host_process,
        host_namespaces,
        privileged,
        capabilities_baseline,
        host_path,
        host_ports,
        host_probes,
        apparmor,
        selinux,
        proc_mount,
        seccomp_baseline,
        sysctls,
        volume_types,
        privilege_escalation,
        run_as_non_root,
        run_as_non_root_user,
        seccomp_restricted,
        capabilities_restricted,
    ],
    description="Kubernetes Pod Security Standards, restricted profile (with the baseline "
    "controls it includes)",
    level="advisory",
)
