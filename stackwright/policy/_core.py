"""What a policy is: the decorators, the subject a policy sees, and the violations it reports.

A resource policy is a function of one `Subject` (a Kubernetes object with its
URN, stack, tags and the policy's configuration); a stack policy is a function of
one `StackSubject` (every object at once). Either returns (or yields) `Violation`s,
or nothing when the subject passes. A Patch resource (`DeploymentPatch`) is a subject
too, with `patch` set: only the policies declared with `patches=True` see it, since it
holds some fields of an object the stack does not own, never the whole object.

Must never: do I/O, or import anything of Stackwright but `model` and `errors`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from stackwright.errors import UsageError
from stackwright.model import UNKNOWN, parse_urn
from stackwright.policy._levels import Level, Severity


def is_unknown(value: Any) -> bool:
    """Whether a value is not known yet (an Output a preview cannot resolve)."""
    return value is UNKNOWN


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a known mapping, else an empty one (for walking objects safely)."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """`value` when it is a known list, else an empty one."""
    return value if isinstance(value, list) else []


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """`spec.containers[0].image` → ["spec", "containers", 0, "image"]."""
    return [int(index) if index else key for key, index in _PATH_PART.findall(path)]


def touches_unknown(obj: Any, path: str) -> bool:
    """Whether the value at `path`, or any value on the way to it, is not known yet.

    An empty path (a violation about the object as a whole) runs through no value: an
    unknown value somewhere inside the object does not touch it."""
    value = obj
    if is_unknown(value):
        return True
    if not path:
        return False
    for part in parse_path(path):
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else None
        else:
            value = value.get(part) if isinstance(value, Mapping) else None
        if is_unknown(value):
            return True
        if value is None:
            return False
    return _holds_unknown(value)


def _holds_unknown(value: Any) -> bool:
    if is_unknown(value):
        return True
    if isinstance(value, Mapping):
        return any(_holds_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(v) for v in value)
    return False


#: Where each pod-running kind keeps its pod spec: policies on pods check these
#: kinds through their templates, and report paths into the template.
POD_SPEC_PATHS: dict[str, str] = {
    "Pod": "spec",
    "Deployment": "spec.template.spec",
    "StatefulSet": "spec.template.spec",
    "DaemonSet": "spec.template.spec",
    "ReplicaSet": "spec.template.spec",
    "ReplicationController": "spec.template.spec",
    "Job": "spec.template.spec",
    "CronJob": "spec.jobTemplate.spec.template.spec",
}
POD_KINDS = frozenset(POD_SPEC_PATHS)
#: Workloads that keep pods running (a Job's pods finish: no probes, no replicas).
LONG_RUNNING_KINDS = frozenset(
    {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController"}
)


class Subject:
    """One Kubernetes object as a policy sees it.

    `object` is the object as it will be sent (values not known yet are
    `is_unknown`); `config` is the calling policy's configuration for this stack
    (the evaluator sets it before each call). `source` and `line` say where the
    object was read from when it came from a file; `cluster` names the cluster
    (kubeconfig context) it is going to, when known. `evaluate` sets `stack`, `tags`
    and (for a namespaced kind that names none) `namespace` before any policy runs.
    `patch`: the subject is a Patch resource — `object` holds only the fields it sets
    of an existing object (`kind` is that object's), so a field it leaves out is not
    missing, only someone else's.
    """

    __slots__ = (
        "api_version",
        "cluster",
        "config",
        "kind",
        "line",
        "name",
        "namespace",
        "object",
        "patch",
        "source",
        "stack",
        "tags",
        "type",
        "urn",
    )

    def __init__(
        self,
        obj: Mapping[str, Any],
        *,
        urn: str = "",
        type: str = "",
        stack: str = "",
        tags: Mapping[str, str] | None = None,
        source: str = "",
        line: int = 0,
        cluster: str = "",
        patch: bool = False,
    ) -> None:
        self.object: Mapping[str, Any] = obj
        self.patch = patch
        self.kind = _text(obj.get("kind"))
        self.api_version = _text(obj.get("apiVersion"))
        metadata = mapping(obj.get("metadata"))
        # An auto-named object has no name until the engine gives it one: messages use the
        # logical name of its URN instead.
        self.name = _text(metadata.get("name")) or (_logical_name(urn) if urn else "")
        self.namespace = _text(metadata.get("namespace"))
        self.type = type or _type_token(self.api_version, self.kind, patch)
        self.urn = urn
        self.stack = stack
        self.tags: Mapping[str, str] = dict(tags or {})
        self.source = source
        self.line = line
        self.cluster = cluster
        self.config: Mapping[str, Any] = {}

    @property
    def metadata(self) -> Mapping[str, Any]:
        return mapping(self.object.get("metadata"))

    @property
    def labels(self) -> Mapping[str, Any]:
        return mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return mapping(self.metadata.get("annotations"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return mapping(self.object.get("spec"))

    @property
    def display(self) -> str:
        """How reports name the object: `Deployment shop/web`; a Patch of it as the Patch
        resource it is, `DeploymentPatch shop/web`."""
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.shown_kind} {where}{self.name or '(unnamed)'}"

    @property
    def shown_kind(self) -> str:
        """The kind reports name it by: its object's, `DeploymentPatch` for a Patch of one."""
        return f"{self.kind}{_PATCH}" if self.patch else self.kind

    def left_to_owner(self, value: Any) -> bool:
        """Whether `value`, read from this subject, is a field a Patch leaves out: the
        object's owner sets it, so a rule asking for it judges only what the Patch sets."""
        return self.patch and value is None

    def get(self, path: str, default: Any = None) -> Any:
        """The value at a dotted path (`spec.template.spec`), or `default` when absent."""
        value: Any = self.object
        for part in parse_path(path):
            if isinstance(part, int):
                value = value[part] if isinstance(value, list) and part < len(value) else None
            else:
                value = value.get(part) if isinstance(value, Mapping) else None
            if value is None:
                return default
        return value

    def pod_spec(self) -> tuple[str, Mapping[str, Any]]:
        """(path, pod spec) of a Pod or of the pod template of a workload; ("", {}) for
        other kinds."""
        path = POD_SPEC_PATHS.get(self.kind)
        if path is None:
            return "", {}
        return path, mapping(self.get(path))

    def pod_metadata(self) -> tuple[str, Mapping[str, Any]]:
        """(path, metadata) the object's pods get: a Pod's own, a workload's pod template's;
        ("", {}) for other kinds."""
        if self.kind == "Pod":
            return "metadata", self.metadata
        path = POD_SPEC_PATHS.get(self.kind)
        if path is None:
            return "", {}
        meta = f"{path.rsplit('.spec', 1)[0]}.metadata"
        return meta, mapping(self.get(meta))

    def pod_template_labels(self) -> Mapping[str, Any]:
        """The labels the object's pods get (a Pod's own labels)."""
        return mapping(self.pod_metadata()[1].get("labels"))

    def containers(self, *, init: bool = True) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(path, container) of each container of the pod spec; init and ephemeral ones too
        unless `init=False`."""
        path, spec = self.pod_spec()
        groups = (
            ("containers", "initContainers", "ephemeralContainers") if init else ("containers",)
        )
        for group in groups:
            for index, container in enumerate(items(spec.get(group))):
                if isinstance(container, Mapping):
                    yield f"{path}.{group}[{index}]", container

    def volumes(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(path, volume) of each volume of the pod spec."""
        path, spec = self.pod_spec()
        for index, volume in enumerate(items(spec.get("volumes"))):
            if isinstance(volume, Mapping):
                yield f"{path}.volumes[{index}]", volume


def _logical_name(urn: str) -> str:
    try:
        return parse_urn(urn).name
    except ValueError:
        return ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


#: What a Patch resource's kind is called after its object's (`DeploymentPatch`), as in
#: Pulumi and the type tokens of `stackwright.kubernetes`.
_PATCH = "Patch"


def _type_token(api_version: str, kind: str, patch: bool = False) -> str:
    group, _, version = api_version.rpartition("/")
    suffix = _PATCH if patch else ""
    return f"kubernetes:{group or 'core'}/{version}:{kind}{suffix}" if kind else ""


@dataclass
class StackSubject:
    """Every object of a stack (or of the files checked) at once, for stack policies."""

    stack: str
    tags: Mapping[str, str]
    resources: list[Subject]
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Violation:
    """What a policy reports: a message, the offending field (dotted path into the object),
    and for stack policies the resource it is about (None: the stack as a whole)."""

    message: str
    path: str = ""
    resource: Subject | None = None


Check = Callable[[Subject], "Iterable[Violation] | Violation | None"]
StackCheck = Callable[[StackSubject], "Iterable[Violation] | Violation | None"]


@dataclass(frozen=True)
class Policy:
    """A rule, with what reports and documentation show about it."""

    name: str
    description: str
    check: Callable[[Any], Iterable[Violation] | Violation | None]
    severity: Severity = Severity.MEDIUM
    level: Level | None = None  # None: the pack's level
    kinds: frozenset[str] = frozenset()  # empty: every kind
    id: str = ""
    rationale: str = ""
    fix: str = ""
    #: Equivalent checks elsewhere: {"Kyverno": "disallow-latest-tag", "Checkov": "CKV_K8S_14"}.
    references: Mapping[str, str] = field(default_factory=dict)
    #: Default configuration, overridden per stack.
    config: Mapping[str, Any] = field(default_factory=dict)
    stack: bool = False  # a stack policy (sees every resource at once)
    #: Whether it judges Patch resources too: true of a rule that fails only on what an
    #: object sets (privileged: true, an image :latest), which a Patch's fields are enough
    #: to judge; false of one that asks for a field to be there (limits, probes, labels),
    #: which a Patch leaving it to the object's owner would fail for nothing. A stack
    #: policy with it sees the Patches among `resources`.
    patches: bool = False

    @property
    def label(self) -> str:
        """`SW-K8S-001 no-naked-pods`, or the name alone."""
        return f"{self.id} {self.name}" if self.id else self.name

    def names(self) -> frozenset[str]:
        return frozenset(n for n in (self.name, self.id) if n)


def policy(
    name: str,
    *,
    description: str,
    severity: str = "medium",
    level: str | None = None,
    kinds: Iterable[str] = (),
    id: str = "",
    rationale: str = "",
    fix: str = "",
    references: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    patches: bool = False,
) -> Callable[[Check], Policy]:
    """Make a resource policy of a function `(subject) -> violations`.

    `level` defaults to the pack's; `kinds` limits the objects it sees (empty: all);
    `config` is its default configuration, which each stack can override. `patches=True`
    lets it judge Patch resources too (`subject.patch`: a field left out is not missing)."""
    where = f"policy {name}"

    def wrap(check: Check) -> Policy:
        return Policy(
            name=name,
            description=description,
            check=check,
            severity=Severity.parse(severity, where),
            level=Level.parse(level, where) if level is not None else None,
            kinds=frozenset(kinds),
            id=id,
            rationale=rationale,
            fix=fix,
            references=dict(references or {}),
            config=dict(config or {}),
            patches=patches,
        )

    return wrap


def stack_policy(
    name: str,
    *,
    description: str,
    severity: str = "medium",
    level: str | None = None,
    id: str = "",
    rationale: str = "",
    fix: str = "",
    references: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    patches: bool = False,
) -> Callable[[StackCheck], Policy]:
    """Make a stack policy of a function `(stack subject) -> violations`; a violation
    names the resource it is about with `Violation(..., resource=subject)`. With
    `patches=True` the Patch resources are among `resources` too."""
    declared = policy(
        name,
        description=description,
        severity=severity,
        level=level,
        id=id,
        rationale=rationale,
        fix=fix,
        references=references,
        config=config,
        patches=patches,
    )

    def wrap(check: StackCheck) -> Policy:
        return replace(declared(cast(Check, check)), stack=True)

    return wrap


@dataclass(frozen=True)
class PolicyPack:
    """A named set of policies with a default enforcement level."""

    name: str
    policies: tuple[Policy, ...]
    description: str = ""
    level: Level = Level.ADVISORY

    def __init__(
        self,
        name: str,
        policies: Iterable[Policy],
        *,
        description: str = "",
        level: str | Level = "advisory",
    ) -> None:
        chosen = tuple(policies)
        seen: set[str] = set()
        for rule in chosen:
            if not isinstance(rule, Policy):
                raise UsageError(
                    f"policy pack {name}: {rule!r} is not a policy; decorate it with "
                    "@policy(...) or @stack_policy(...)"
                )
            clash = rule.names() & seen
            if clash:
                raise UsageError(f"policy pack {name}: two policies are named {sorted(clash)[0]}")
            seen |= rule.names()
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "policies", chosen)
        object.__setattr__(self, "description", description)
        object.__setattr__(
            self,
            "level",
            level if isinstance(level, Level) else Level.parse(level, f"policy pack {name}"),
        )
