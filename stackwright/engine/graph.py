"""The dependency graph of a program's resources, and the order rules Kubernetes implies.

Edges come from three places: Outputs used as inputs and `depends_on` (what the
program says), a child on its parent (so a component's URN prefix exists first),
and Kubernetes' own rules (what the cluster needs even when the program does not
say it), listed in `RULES` with the reason for each. What the program says wins:
a rule never adds an edge against the program's own (direct or transitive)
dependencies. A cycle is reported with its path. Deletes walk the same graph
backwards.

Planning-time only: no I/O here.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stackwright.errors import UsageError

Obj = Mapping[str, Any]


class DependencyCycle(UsageError):
    """The resources depend on each other in a loop; `cycle` is the path, first == last."""

    def __init__(self, message: str, cycle: list[str]) -> None:
        super().__init__(message)
        self.cycle = cycle


@dataclass(frozen=True)
class Node:
    urn: str
    obj: Obj  # the desired object, or {} for components / unknown inputs
    explicit: frozenset[str]  # URNs this node depends on by Outputs, depends_on or parent
    #: A Patch of `obj`: it waits by Kubernetes' rules as the object would, but nothing waits
    #: for it by them (the object it changes exists already; a NamespacePatch is not the
    #: Namespace its objects need, and one that fails must not skip them).
    patch: bool = False


def _kind(obj: Obj) -> str:
    return str(obj.get("kind", ""))


def _metadata(obj: Obj, key: str) -> str:
    meta = obj.get("metadata")
    value = meta.get(key) if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) else ""


def _group(obj: Obj) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def group_and_kind(obj: Obj) -> tuple[str, str]:
    """(API group, kind) of an object: what a CustomResourceDefinition serves it by."""
    return _group(obj), _kind(obj)


def defined_kind(crd: Obj) -> tuple[str, str] | None:
    """(group, kind) of the objects a CustomResourceDefinition defines; None for any other
    object, or a CRD without `spec.group` and `spec.names.kind`."""
    spec = crd.get("spec")
    names = spec.get("names") if isinstance(spec, Mapping) else None
    if _kind(crd) != "CustomResourceDefinition" or not isinstance(spec, Mapping):
        return None
    if not isinstance(names, Mapping) or not spec.get("group") or not names.get("kind"):
        return None
    return (str(spec["group"]), str(names["kind"]))


# --- the rules ---------------------------------------------------------------------------
#
# A rule says: objects of the `then` kinds wait for objects of the `first` kinds that
# `match` pairs them with. A match computes a key from the first object and the keys of
# the waiting one (none, one, or several: the names a pod template refers to); a pair
# matches when the first object's key is among the waiting one's (None matches nothing),
# so the graph indexes first objects by key and stays linear in the number of objects
# (plus the edges the rules imply).

_WORKLOADS = frozenset(
    {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob",
     "ReplicationController"}
)  # fmt: skip
_WEBHOOK_CONFIGURATIONS = frozenset(
    {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}
)

Key = Callable[[Obj], Hashable | None]
Keys = Callable[[Obj], Iterable[Hashable]]


def _one(key: Key) -> Keys:
    def keys(obj: Obj) -> tuple[Hashable, ...]:
        found = key(obj)
        return () if found is None else (found,)

    return keys


def _map(value: Any) -> Obj:
    return value if isinstance(value, Mapping) else {}


def _pod_template(obj: Obj) -> Obj:
    """What a workload's Pods are made from: a Pod itself, a template, a CronJob's job's."""
    kind = _kind(obj)
    if kind == "Pod":
        return obj
    spec = _map(obj.get("spec"))
    if kind == "CronJob":
        spec = _map(_map(spec.get("jobTemplate")).get("spec"))
    return _map(spec.get("template"))


def _pod_spec(obj: Obj) -> Obj:
    """The pod spec a workload runs (a Pod's own, a template's, a CronJob's job's)."""
    return _map(_pod_template(obj).get("spec"))


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _sources(volume: Mapping[str, Any]) -> Any:
    projected = volume.get("projected")
    return projected.get("sources") if isinstance(projected, Mapping) else None


#: Where a pod spec's parts name objects: (the key holding the reference, the kind it
#: names, the key of the name in it). Volumes, projected sources, envFrom and env's
#: valueFrom each hold at most one of these.
_VOLUME_REFS = (
    ("configMap", "ConfigMap", "name"),
    ("secret", "Secret", "secretName"),
    ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName"),
)
_PROJECTED_REFS = (("configMap", "ConfigMap", "name"), ("secret", "Secret", "name"))
_ENV_FROM_REFS = (("configMapRef", "ConfigMap", "name"), ("secretRef", "Secret", "name"))
_VALUE_FROM_REFS = (("configMapKeyRef", "ConfigMap", "name"), ("secretKeyRef", "Secret", "name"))


def _named(items: Any, refs: tuple[tuple[str, str, str], ...], found: set[tuple[str, str]]) -> None:
    """Add (kind, name) of what each of `items` names through one of `refs`."""
    for item in _dicts(items):
        for key, kind, name_key in refs:
            ref = item.get(key)
            if isinstance(ref, Mapping):
                name = ref.get(name_key)
                if isinstance(name, str) and name:
                    found.add((kind, name))


def _referenced(then: Obj) -> set[Hashable]:
    """(namespace, kind, name) of each ConfigMap, Secret, ServiceAccount and claim a
    workload's pods refer to by name: volumes (projected ones too), env and envFrom, the
    service account and image pull secrets."""
    spec = _pod_spec(then)
    found: set[tuple[str, str]] = set()
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if isinstance(account, str) and account:
        found.add(("ServiceAccount", account))
    pulls = _dicts(spec.get("imagePullSecrets"))
    found.update(("Secret", s["name"]) for s in pulls if isinstance(s.get("name"), str))
    volumes = _dicts(spec.get("volumes"))
    _named(volumes, _VOLUME_REFS, found)
    for volume in volumes:
        if "projected" in volume:
            _named(_sources(volume), _PROJECTED_REFS, found)
    namespace = _metadata(then, "namespace")
    return {(namespace, kind, name) for kind, name in found if name} | environment_references(then)


def environment_references(workload: Obj) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of each ConfigMap and Secret a workload's containers read
    into their environment (envFrom, env's valueFrom): read once, as each container starts."""
    return set(environment_reads(workload))


def environment_reads(workload: Obj) -> dict[tuple[str, str, str], frozenset[str] | None]:
    """`environment_references`, each with the keys of its data the containers read (env's
    `valueFrom`), or None for all of it (`envFrom`)."""
    spec = _pod_spec(workload)
    reads: dict[tuple[str, str], set[str] | None] = {}
    for container in [*_dicts(spec.get("containers")), *_dicts(spec.get("initContainers"))]:
        whole: set[tuple[str, str]] = set()
        _named(container.get("envFrom"), _ENV_FROM_REFS, whole)
        reads.update(dict.fromkeys(whole))
        for env in _dicts(container.get("env")):
            value_from = env.get("valueFrom")
            for field, kind, _ in _VALUE_FROM_REFS:
                ref = value_from.get(field) if isinstance(value_from, Mapping) else None
                if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
                    continue
                name, key = ref["name"], ref.get("key")
                if not name:
                    continue
                read = reads.setdefault((kind, name), set())
                if read is not None and isinstance(key, str):
                    read.add(key)
                else:  # all of it, or a key not known: any change may be the one read
                    reads[kind, name] = None
    namespace = _metadata(workload, "namespace")
    return {
        (namespace, kind, name): None if read is None else frozenset(read)
        for (kind, name), read in reads.items()
    }


def _token_account(then: Obj) -> tuple[str, str] | None:
    """(namespace, name) of the account a service account token Secret is for."""
    if then.get("type") != "kubernetes.io/service-account-token":
        return None
    meta = then.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    name = annotations.get(_ACCOUNT_NAME) if isinstance(annotations, Mapping) else None
    return (_metadata(then, "namespace"), name) if isinstance(name, str) and name else None


_ACCOUNT_NAME = "kubernetes.io/service-account.name"


def _pod_classes(then: Obj) -> tuple[tuple[str, str], ...]:
    """(kind, name) of the PriorityClass and RuntimeClass a workload's pods name."""
    spec = _pod_spec(then)
    named = (("PriorityClass", "priorityClassName"), ("RuntimeClass", "runtimeClassName"))
    return tuple(
        (kind, spec[key]) for kind, key in named if isinstance(spec.get(key), str) and spec[key]
    )


def _service_keys(ref: Any) -> tuple[tuple[str, str], ...]:
    """The keys of the Service a webhook's or an APIService's `service` names: its namespace
    and name, and its name alone, as a Service declared without a namespace (the provider's
    default one, not known here) may be the one: waiting for it too only orders."""
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str) or not ref["name"]:
        return ()
    namespace = ref.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        return (("", ref["name"]),)
    return ((namespace, ref["name"]), ("", ref["name"]))


def _services_called(then: Obj) -> set[tuple[str, str]]:
    """Keys (`_service_keys`) of the Services an object sends requests to: each webhook of a
    webhook configuration, an APIService's, a CRD's conversion webhook's."""
    spec = _map(then.get("spec"))
    kind = _kind(then)
    if kind in _WEBHOOK_CONFIGURATIONS:
        refs = [_map(w.get("clientConfig")).get("service") for w in _dicts(then.get("webhooks"))]
    elif kind == "APIService":
        refs = [spec.get("service")]
    else:  # a CustomResourceDefinition
        webhook = _map(_map(spec.get("conversion")).get("webhook"))
        refs = [_map(webhook.get("clientConfig")).get("service")]
    return {key for ref in refs for key in _service_keys(ref)}


def _served_version(first: Obj) -> tuple[str, str] | None:
    """(group, version) an APIService has an aggregated server serve; None for a local one
    (no `service`: the API server's own group)."""
    spec = _map(first.get("spec"))
    if _kind(first) != "APIService" or not isinstance(spec.get("service"), Mapping):
        return None
    return (str(spec.get("group", "")), str(spec.get("version", "")))


def _group_version(then: Obj) -> tuple[str, str]:
    group, _, version = str(then.get("apiVersion", "")).rpartition("/")
    return group, version


#: match name → (key of a first object, keys of a waiting object)
MATCHES: dict[str, tuple[Key, Keys]] = {
    # The Namespace named by the object's metadata.namespace.
    "its-namespace": (
        lambda first: _metadata(first, "name") or None,
        _one(lambda then: _metadata(then, "namespace") or None),
    ),
    # The CRD whose spec.group and spec.names.kind are the object's group and kind.
    "its-definition": (defined_kind, _one(group_and_kind)),
    # What the workload's pods name ("" being the provider's default namespace).
    "its-pods-refer-to": (
        lambda first: (_metadata(first, "namespace"), _kind(first), _metadata(first, "name")),
        _referenced,
    ),
    # The ServiceAccount a token Secret's kubernetes.io/service-account.name annotation names.
    "its-account": (
        lambda first: (_metadata(first, "namespace"), _metadata(first, "name")),
        _one(_token_account),
    ),
    # The PriorityClass and RuntimeClass the workload's pods name (both cluster-wide).
    "its-pods-run-as": (lambda first: (_kind(first), _metadata(first, "name")), _pod_classes),
    # The Service a webhook, an APIService or a conversion webhook calls.
    "the-service-it-calls": (
        lambda first: (_metadata(first, "namespace"), _metadata(first, "name")),
        _services_called,
    ),
    # The APIService whose aggregated server serves the object's group and version.
    "its-api-service": (_served_version, _one(_group_version)),
    # Anything in the same namespace ("" being the provider's default one).
    "same-namespace": (
        lambda first: _metadata(first, "namespace"),
        _one(lambda then: _metadata(then, "namespace")),
    ),
    # Anything, wherever it is.
    "any": (lambda first: True, _one(lambda then: True)),
}


@dataclass(frozen=True)
class Rule:
    name: str
    first: frozenset[str]  # kinds that go first
    then: frozenset[str] | None  # kinds that wait; None: any kind
    match: str  # a key of MATCHES
    reason: str
    #: The first object holds the waiting ones: deleting it deletes them (a namespace its
    #: objects, a CRD its custom objects). Only these rules join resources when a run
    #: selects some (`--target`, `--exclude`); the others only order them. Nor does a
    #: program's edge the other way round override one: the waiting object cannot exist
    #: without the first, so that is a cycle. `held` says how, of the first object `{dep}`.
    holds: bool = False
    held: str = ""


#: Ordered for the reader; every rule applies.
RULES: tuple[Rule, ...] = (
    Rule(
        "namespace-first",
        frozenset({"Namespace"}),
        None,
        "its-namespace",
        "objects cannot be created in a namespace that does not exist yet",
        holds=True,
        held="is inside the Namespace {dep}",
    ),
    Rule(
        "crd-before-custom-objects",
        frozenset({"CustomResourceDefinition"}),
        None,
        "its-definition",
        "a custom kind is served only once its CRD is Established",
        holds=True,
        held="is of the kind the CustomResourceDefinition {dep} defines",
    ),
    Rule(
        "config-before-workloads",
        frozenset({"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"}),
        _WORKLOADS,
        "its-pods-refer-to",
        "pods that mount a ConfigMap/Secret/PVC or run as a ServiceAccount fail or stall "
        "when it is missing",
    ),
    Rule(
        "account-before-its-token-secrets",
        frozenset({"ServiceAccount"}),
        frozenset({"Secret"}),
        "its-account",
        "the token controller deletes a service account token Secret whose account does not "
        "exist yet, instead of filling it",
    ),
    Rule(
        "rbac-before-workloads",
        frozenset({"Role", "RoleBinding"}),
        _WORKLOADS,
        "same-namespace",
        "a workload whose permissions are missing crash-loops until they appear",
    ),
    Rule(
        "cluster-rbac-before-workloads",
        frozenset({"ClusterRole", "ClusterRoleBinding"}),
        _WORKLOADS,
        "any",
        "a workload whose permissions are missing crash-loops until they appear",
    ),
    Rule(
        "pod-classes-before-workloads",
        frozenset({"PriorityClass", "RuntimeClass"}),
        _WORKLOADS,
        "its-pods-run-as",
        "pods naming a PriorityClass or RuntimeClass that does not exist are refused at "
        "admission, and their controller tries again only after growing delays",
    ),
    Rule(
        "limits-before-workloads",
        frozenset({"LimitRange", "ResourceQuota"}),
        _WORKLOADS,
        "same-namespace",
        "a LimitRange's defaults and a ResourceQuota's bounds apply only to pods created "
        "after them",
    ),
    Rule(
        "services-before-their-webhooks",
        frozenset({"Service"}),
        _WEBHOOK_CONFIGURATIONS | {"APIService", "CustomResourceDefinition"},
        "the-service-it-calls",
        "a webhook whose Service has no ready endpoint fails every request it intercepts "
        "(the stack's own later objects too), and an APIService or a CRD's conversion "
        "without theirs serves nothing",
    ),
    Rule(
        "apiservice-before-its-objects",
        frozenset({"APIService"}),
        None,
        "its-api-service",
        "an aggregated API's kinds are served only once its APIService is Available",
    ),
    Rule(
        "storageclass-before-claims",
        frozenset({"StorageClass"}),
        frozenset({"PersistentVolumeClaim"}),
        "any",
        "a claim naming a class that does not exist stays Pending",
    ),
    Rule(
        "ingressclass-before-ingresses",
        frozenset({"IngressClass"}),
        frozenset({"Ingress"}),
        "any",
        "an Ingress naming a class that does not exist fails its readiness (after a grace, "
        "in which it looks again once)",
    ),
)


def rule_between(first: Obj, then: Obj) -> Rule | None:
    """The first rule that makes `then` wait for `first`, if any."""
    for rule in RULES:
        if _kind(first) in rule.first and (rule.then is None or _kind(then) in rule.then):
            first_key, then_keys = MATCHES[rule.match]
            key = first_key(first)
            if key is not None and key in set(then_keys(then)):
                return rule
    return None


def implicit_edges(nodes: Iterable[Node], rules: tuple[Rule, ...] = RULES) -> dict[str, set[str]]:
    """For each URN, the URNs Kubernetes' rules (`rules`) say must come first."""
    return _implicit_and_held(nodes, rules)[0]


def _implicit_and_held(
    nodes: Iterable[Node], rules: tuple[Rule, ...] = RULES
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """`implicit_edges`, and for each URN those of them that rules which hold objects give
    (`Rule.holds`): one pass over the objects for both, which a graph of the program needs."""
    # Each object's kind read once, not once per rule.
    objs = [(n.urn, n.obj, _kind(n.obj), n.patch) for n in nodes if n.obj]
    # rule → key → URNs of the first objects with that key
    index: list[dict[Hashable, list[str]]] = []
    for rule in rules:
        first_key = MATCHES[rule.match][0]
        by_key: dict[Hashable, list[str]] = {}
        for urn, obj, kind, patch in objs:
            if kind in rule.first and not patch:
                key = first_key(obj)
                if key is not None:
                    by_key.setdefault(key, []).append(urn)
        index.append(by_key)
    needs: dict[str, set[str]] = {}
    holders: dict[str, set[str]] = {}
    for urn, obj, kind, _ in objs:
        found = needs.setdefault(urn, set())
        held = holders.setdefault(urn, set())
        for rule, by_key in zip(rules, index, strict=True):
            if not by_key or (rule.then is not None and kind not in rule.then):
                continue
            for key in MATCHES[rule.match][1](obj):
                first = by_key.get(key, ())
                found.update(first)
                if rule.holds:
                    held.update(first)
        found.discard(urn)
        held.discard(urn)
    return needs, holders


# --- the graph ----------------------------------------------------------------------------


class Graph:
    """Resources and their dependencies; topological order and cycle reports.

    `needs[urn]` are the URNs that must be done before `urn`, `dependents[urn]` the
    URNs that wait for it, and `order` all URNs in an order that respects `needs`,
    otherwise following declaration order. A program's (`program`): an edge it declares
    against a rule that holds (a Namespace on an object inside it) is a cycle, as the
    object cannot exist first; a recorded stack's gives way to it instead, so that what
    the stack holds can always be deleted.
    """

    def __init__(self, nodes: Iterable[Node], *, program: bool = False) -> None:
        self.nodes = {n.urn: n for n in nodes}
        explicit = {
            urn: {d for d in node.explicit if d in self.nodes and d != urn}
            for urn, node in self.nodes.items()
        }
        self.needs: dict[str, set[str]] = {urn: set(deps) for urn, deps in explicit.items()}
        explicit_ancestors = _Ancestors(explicit)
        implicit, holding = _implicit_and_held(self.nodes.values())
        #: What selection follows: the program's edges and the rules that hold objects.
        self._held: dict[str, set[str]] = {urn: set(deps) for urn, deps in explicit.items()}
        for urn, deps in implicit.items():
            # A rule never overrides what the program said the other way round; one that
            # holds the object is no order to give way (`program`): the object needs it.
            held = holding.get(urn, set())
            kept = {d for d in deps if (program and d in held) or urn not in explicit_ancestors(d)}
            self.needs[urn] |= kept
            self._held[urn] |= kept & held
        self.dependents: dict[str, set[str]] = {urn: set() for urn in self.nodes}
        self._holders: dict[str, set[str]] = {urn: set() for urn in self.nodes}
        for urn, deps in self.needs.items():
            for dep in deps:
                self.dependents[dep].add(urn)
        for urn, deps in self._held.items():
            for dep in deps:
                self._holders[dep].add(urn)
        self.order = self._topological()

    def _topological(self) -> list[str]:
        position = {urn: i for i, urn in enumerate(self.nodes)}
        remaining = {urn: len(deps) for urn, deps in self.needs.items()}
        ready = [position[u] for u, n in remaining.items() if n == 0]
        heapq.heapify(ready)
        declared = list(self.nodes)
        order: list[str] = []
        while ready:
            urn = declared[heapq.heappop(ready)]
            order.append(urn)
            for dependent in self.dependents[urn]:
                remaining[dependent] -= 1
                if remaining[dependent] == 0:
                    heapq.heappush(ready, position[dependent])
        if len(order) != len(self.nodes):
            done = set(order)
            cycle = self._cycle([u for u in declared if u not in done], position)
            raise DependencyCycle(
                f"dependency cycle: {' -> '.join(cycle)}{self._explain(cycle)}", cycle
            )
        return order

    def _cycle(self, stuck: list[str], position: Mapping[str, int]) -> list[str]:
        """One cycle among the resources that never became ready, as a path (each needs the next)."""
        stuck_set = set(stuck)
        current = stuck[0]
        path = [current]
        seen = {current: 0}
        while True:
            # Every stuck resource waits for another stuck one, so this walk must loop.
            current = min(
                (d for d in self.needs[current] if d in stuck_set), key=position.__getitem__
            )
            if current in seen:
                return [*path[seen[current] :], current]
            seen[current] = len(path)
            path.append(current)

    def _explain(self, cycle: list[str]) -> str:
        """Which links of a cycle Kubernetes' rules added (the rest the program declared)."""
        notes = [
            self._link(urn, dep)
            for urn, dep in itertools.pairwise(cycle)
            if dep not in self.nodes[urn].explicit
        ]
        return f" ({'; '.join(notes)})" if notes else ""

    def _link(self, urn: str, dep: str) -> str:
        rule = rule_between(self.nodes[dep].obj, self.nodes[urn].obj)
        if rule is not None and rule.held:
            held = rule.held.format(dep=dep)
            return f"{urn} {held}, so it cannot exist before it (the rule {rule.name})"
        return f"{urn} waits for {dep} by the rule {self.why(urn, dep)}"

    def why(self, urn: str, dep: str) -> str:
        """Why `urn` waits for `dep`: "declared" (Output, depends_on or parent) or a rule's name."""
        if dep in self.nodes[urn].explicit:
            return "declared"
        rule = rule_between(self.nodes[dep].obj, self.nodes[urn].obj)
        return rule.name if rule is not None else ""

    def waits_for(self, urn: str, selected: set[str], made: Container[str]) -> set[str]:
        """What `urn` waits for in a run that changes only `selected`: a rule that only
        orders joins it to no resource left out and not made yet (which that run never
        makes), as selection does not follow such rules either."""
        return {d for d in self.needs[urn] if d in selected or d in self._held[urn] or d in made}

    def upstream(self, urns: Iterable[str]) -> set[str]:
        """The URNs given and everything they depend on (for --target): by the program's
        edges, and the namespace / CRD that holds them — not the rules that only order."""
        return self._closure(urns, self._held)

    def downstream(self, urns: Iterable[str]) -> set[str]:
        """The URNs given and everything that depends on them, by the same edges (for a
        targeted destroy: a namespace takes the objects in it, a ConfigMap no workload)."""
        return self._closure(urns, self._holders)

    def _closure(self, urns: Iterable[str], edges: Mapping[str, set[str]]) -> set[str]:
        found: set[str] = set()
        stack = list(urns)
        while stack:
            urn = stack.pop()
            if urn in found or urn not in self.nodes:
                continue
            found.add(urn)
            stack.extend(edges[urn])
        return found


class _Ancestors:
    """What a URN depends on, directly or not, through the program's own edges (memoised)."""

    _NONE: frozenset[str] = frozenset()

    def __init__(self, needs: Mapping[str, set[str]]) -> None:
        self._needs = needs
        self._known: dict[str, frozenset[str]] = {}

    def __call__(self, urn: str) -> frozenset[str]:
        known = self._known.get(urn)
        if known is not None:
            return known
        # Iterative depth-first walk, so long chains do not hit the recursion limit;
        # a cycle among explicit edges is reported later by the topological sort.
        stack = [urn]
        visiting: set[str] = set()
        while stack:
            top = stack[-1]
            if top in self._known:
                stack.pop()
                continue
            pending = [d for d in self._needs[top] if d not in self._known and d not in visiting]
            if top not in visiting and pending:
                visiting.add(top)
                stack.extend(pending)
                continue
            stack.pop()
            deps = self._needs[top]
            if not deps:
                self._known[top] = self._NONE
            else:
                found = set(deps)
                for d in deps:
                    found |= self._known.get(d, self._NONE)
                self._known[top] = frozenset(found)
        return self._known[urn]


def services_fed_later(graph: Graph) -> dict[str, str]:
    """Each Service whose selected Pods come from a resource that waits for it — through an
    Output (a Deployment's env holding the Service's name or clusterIP), `depends_on` or
    Kubernetes' rules: its URN → that resource's URN. Its endpoints cannot come before that
    resource is made, so waiting for them first would wait until the timeout (Pulumi users
    meet this as pulumi-kubernetes #1648; its advice is `skipAwait`)."""
    fed: dict[str, str] = {}
    for urn, service in _selecting_services(graph):
        seen: set[str] = set()
        waiting = list(graph.dependents.get(urn, ()))
        while waiting and urn not in fed:
            dependent = waiting.pop()
            if dependent in seen:
                continue
            seen.add(dependent)
            if _selects(service, graph.nodes[dependent].obj):
                fed[urn] = dependent
            waiting.extend(graph.dependents.get(dependent, ()))
    return fed


def service_feeders(graph: Graph) -> dict[str, tuple[str, ...]]:
    """Each Service with a selector → the program's workloads whose Pods it selects (none:
    not listed), in the graph's order. When each of them failed or was not done, no
    endpoint is coming from the run: its wait for them can end."""
    workloads = [
        (urn, node.obj)
        for urn, node in graph.nodes.items()
        if _kind(node.obj) in _WORKLOADS and not node.patch
    ]
    feeders: dict[str, tuple[str, ...]] = {}
    for urn, service in _selecting_services(graph):
        found = tuple(made for made, obj in workloads if _selects(service, obj))
        if found:
            feeders[urn] = found
    return feeders


def _selecting_services(graph: Graph) -> Iterator[tuple[str, Obj]]:
    """(URN, object) of each Service of the graph that selects Pods by a selector."""
    for urn, node in graph.nodes.items():
        obj = node.obj
        if group_and_kind(obj) == ("", "Service") and _map(obj.get("spec")).get("selector"):
            yield urn, obj


def _selects(service: Obj, made: Obj) -> bool:
    """Whether a Service selects the Pods a workload makes (its namespace's, its labels)."""
    selector = _map(_map(service.get("spec")).get("selector"))
    labels = _map(_map(_pod_template(made).get("metadata")).get("labels"))
    return (
        _kind(made) in _WORKLOADS
        and _metadata(made, "namespace") == _metadata(service, "namespace")
        and all(labels.get(k) == v for k, v in selector.items())
    )
