"""Who a request is and what it may do: kube-apiserver's RBAC authorizer, for the local cluster.

A request's user is the cluster administrator (`kubernetes-admin` in `system:masters`,
allowed everything without evaluating a rule, as the API server's privileged-group
authorizer allows it), a service account (`system:serviceaccount:NS:NAME`) or the user a
client certificate names (CN, groups O; `system:masters` among them is privileged too),
possibly impersonating another user. Every other request is checked as the RBAC authorizer
checks it (plugin/pkg/auth/authorizer/rbac): the request's attributes (verb, API group,
resource, subresource, name, namespace; or a non-resource path) against the rules of the
Roles and ClusterRoles bound to the user, its groups or its service account by
RoleBindings (in the request's namespace) and ClusterRoleBindings. A refusal is the
API server's 403 `Status`, word for word.

Also here, as upstream: escalation prevention for writes of roles and bindings (a user
may grant only what it holds, unless it may `escalate` / `bind`), impersonation
(`Impersonate-User` / `-Group` / `-Uid`, each needing `impersonate`), the rules a user
has in a namespace (SelfSubjectRulesReview), ClusterRole aggregation, and the bootstrap
policy every new cluster gets.

Must never: evaluate a rule for the administrator's own requests (they are the hot path),
or allow anything no rule grants.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.selectors import label_selector_from_dict

RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
ROLES = (RBAC_GROUP, "roles")
CLUSTER_ROLES = (RBAC_GROUP, "clusterroles")
ROLE_BINDINGS = (RBAC_GROUP, "rolebindings")
CLUSTER_ROLE_BINDINGS = (RBAC_GROUP, "clusterrolebindings")
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
#: The annotation that lets the API server reconcile a bootstrap role or binding at start.
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"

Obj = dict[str, Any]
Rule = Mapping[str, Any]


@dataclass(frozen=True)
class User:
    """An authenticated (or impersonated) user, as the API server's user.Info."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def privileged(self) -> bool:
        return MASTERS in self.groups

    def info(self) -> dict[str, Any]:
        """The `userInfo` of a SelfSubjectReview (Go's JSON: empty fields left out)."""
        info: dict[str, Any] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        info["groups"] = list(self.groups)
        if self.extra:
            info["extra"] = {k: list(v) for k, v in self.extra.items()}
        return info


ADMIN = User("kubernetes-admin", (MASTERS, AUTHENTICATED))


def service_account_user(namespace: str, name: str, uid: str = "") -> User:
    """A service account's user, with the groups its token authenticates it in."""
    return User(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        uid,
    )


def certificate_user(peer: Mapping[str, Any] | None) -> User | None:
    """The user a verified client certificate names (`ssl.SSLSocket.getpeercert()`), as
    kube-apiserver's x509 authenticator reads it: the subject's common name, its
    organizations as groups, and `system:authenticated`. None without a certificate."""
    if not peer:
        return None
    name, groups = "", []
    for rdn in peer.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:  # upstream refuses a certificate without a common name
        return None
    return User(name, (*groups, AUTHENTICATED))


# --- request attributes ---------------------------------------------------------


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do, as the API server's RequestInfo and authorizer.Attributes."""

    user: User
    verb: str
    resource_request: bool = True
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""


_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
#: Subresources of a namespace that are not a resource inside it (`namespaces/N/status`).
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def request_attributes(user: User, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of a request, as the API server's RequestInfoFactory parses its path."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 3 or parts[0] not in ("api", "apis") or (parts[0] == "apis" and len(parts) < 4):
        return Attributes(user, method.lower(), resource_request=False, path=path)
    group, rest = ("", parts[1:]) if parts[0] == "api" else (parts[1], parts[2:])
    version, rest = rest[0], rest[1:]
    verb = _METHOD_VERBS.get(method, "")
    if rest[0] == "watch" and verb == "get":
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
        selector = query.get("fieldSelector", "")
        if selector.startswith("metadata.name=") and "," not in selector:
            name = selector.removeprefix("metadata.name=")
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user, verb, True, path, group, version, resource, subresource, name, namespace
    )


# --- rules ----------------------------------------------------------------------


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    """Whether one PolicyRule allows the request (upstream RuleAllows)."""
    verbs = rule.get("verbs") or ()
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.resource_request:
        return any(_url_covers(url, attrs.path) for url in rule.get("nonResourceURLs") or ())
    groups = rule.get("apiGroups") or ()
    if "*" not in groups and attrs.api_group not in groups:
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not any(
        r in ("*", combined) or (attrs.subresource and r == f"*/{attrs.subresource}")
        for r in rule.get("resources") or ()
    ):
        return False
    names = rule.get("resourceNames") or ()
    return not names or attrs.name in names


def _url_covers(owner: str, path: str) -> bool:
    return owner in ("*", path) or (owner.endswith("*") and path.startswith(owner[:-1]))


@dataclass(frozen=True)
class Grant:
    """Rules one binding gives a user, and the binding's description for `reason`."""

    source: str
    rules: tuple[Rule, ...]


def _applies(subject: Mapping[str, Any], user: User, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return bool(user.name == name)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user.name == f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"
    return False


def _describe(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def grants(store: Any, user: User, namespace: str) -> Iterator[Grant | str]:
    """The rules bound to `user` at the cluster scope and in `namespace`, binding by binding.

    Yields a `Grant` per binding that applies, or an error (a missing role) as a string,
    in the order the RBAC authorizer visits them: ClusterRoleBindings, then RoleBindings.
    """
    scopes: list[tuple[str, list[Obj]]] = [("", store.items(CLUSTER_ROLE_BINDINGS))]
    if namespace:
        scopes.append((namespace, store.items(ROLE_BINDINGS, namespace)))
    for scope, bindings in scopes:
        for binding in bindings:
            subject = next(
                (s for s in binding.get("subjects") or () if _applies(s, user, scope)), None
            )
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            role = _role(store, ref, scope)
            name = binding["metadata"]["name"]
            if role is None:
                kind = str(ref.get("kind", "")).lower()
                yield f'{kind}.{RBAC_GROUP} "{ref.get("name", "")}" not found'
                continue
            what = f'RoleBinding "{name}/{scope}"' if scope else f'ClusterRoleBinding "{name}"'
            source = (
                f'{what} of {ref.get("kind")} "{ref.get("name")}" to {_describe(subject, scope)}'
            )
            yield Grant(source, tuple(role.get("rules") or ()))


def _role(store: Any, ref: Mapping[str, Any], namespace: str) -> Obj | None:
    """The role a roleRef names: a Role in the binding's namespace, or a ClusterRole."""
    found: Obj | None
    if ref.get("kind") == "Role":
        found = store.get(ROLES, namespace, ref.get("name", "")) if namespace else None
    else:
        found = store.get(CLUSTER_ROLES, "", ref.get("name", ""))
    return found


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


def authorize(store: Any, attrs: Attributes) -> Decision:
    """Allow, with the binding that allowed it, or not, with any errors met on the way."""
    if attrs.user.privileged:
        return Decision(True)
    errors = []
    for grant in grants(store, attrs.user, attrs.namespace):
        if isinstance(grant, str):
            errors.append(grant)
        elif any(rule_allows(attrs, rule) for rule in grant.rules):
            return Decision(True, f"RBAC: allowed by {grant.source}")
    return Decision(False, f"RBAC: {_aggregate(errors)}" if errors else "")


def _aggregate(errors: list[str]) -> str:
    # As utilerrors.NewAggregate prints: one error alone, several in brackets.
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


def forbidden(attrs: Attributes, reason: str = "") -> status.Forbidden:
    """The API server's 403 (responsewriters.Forbidden, then apierrors.NewForbidden)."""
    user = attrs.user.name
    if not attrs.resource_request:
        message = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
        where = (
            f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        )
        message = (
            f'User "{user}" cannot {attrs.verb} resource "{resource}" '
            f'in API group "{attrs.api_group}" {where}'
        )
    if reason:
        message = f"{message}: {reason}"
    return forbidden_status(attrs.resource, attrs.api_group, attrs.name, message)


def forbidden_status(resource: str, group: str, name: str, cause: str) -> status.Forbidden:
    """apierrors.NewForbidden: `<resource> "<name>" is forbidden: <cause>`."""
    if not resource:
        return status.Forbidden(f"forbidden: {cause}", details={})
    what = status.qualified(resource, group)
    details: dict[str, Any] = {"kind": resource}
    if group:
        details["group"] = group
    if name:
        details["name"] = name
        return status.Forbidden(f'{what} "{name}" is forbidden: {cause}', details=details)
    return status.Forbidden(f"{what} is forbidden: {cause}", details=details)


def check(store: Any, attrs: Attributes) -> None:
    """Raise the 403 a real API server answers unless the request is allowed."""
    decision = authorize(store, attrs)
    if not decision.allowed:
        raise forbidden(attrs, decision.reason)


#: Every permission there is: what the privileged group holds, as rules.
FULL_AUTHORITY: tuple[Rule, ...] = (
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
)


def rules_for(store: Any, user: User, namespace: str) -> tuple[list[Rule], list[str]]:
    """Every rule that applies to `user` in `namespace`, and the errors met resolving them."""
    rules: list[Rule] = list(FULL_AUTHORITY) if user.privileged else []
    errors: list[str] = []
    for grant in grants(store, user, namespace):
        if isinstance(grant, str):
            errors.append(grant)
        else:
            rules.extend(grant.rules)
    return rules, errors


# --- impersonation ----------------------------------------------------------------


def impersonate(store: Any, requester: User, headers: Mapping[str, list[str]]) -> User:
    """The user `requester` acts as through Impersonate-* headers (the impersonation filter).

    Each impersonated user, group and uid needs `impersonate` on `users` / `serviceaccounts`,
    `groups` or `uids`; a service account gets its groups, every non-anonymous user
    `system:authenticated`. `headers` holds each header's values (the group one repeats).
    """
    name = (headers.get("impersonate-user") or [""])[0]
    groups = headers.get("impersonate-group") or []
    uid = (headers.get("impersonate-uid") or [""])[0]
    extra = {
        key.removeprefix("impersonate-extra-"): tuple(values)
        for key, values in headers.items()
        if key.startswith("impersonate-extra-")
    }
    if not name:
        raise status.BadRequest(
            "requested impersonation of groups, uid or extra without impersonating a user"
        )
    wanted: list[Attributes] = []
    all_groups = list(groups)
    if name.startswith(SERVICE_ACCOUNT_PREFIX) and name.count(":") == 3:
        namespace, account = name.removeprefix(SERVICE_ACCOUNT_PREFIX).split(":")
        wanted.append(_impersonating(requester, "serviceaccounts", account, namespace))
        all_groups = list(service_account_user(namespace, account).groups[:2]) + all_groups
    else:
        wanted.append(_impersonating(requester, "users", name))
    wanted += [_impersonating(requester, "groups", g) for g in groups]
    if uid:
        wanted.append(_impersonating(requester, "uids", uid, group=AUTHENTICATION))
    wanted += [
        _impersonating(requester, "userextras", value, group=AUTHENTICATION, subresource=key)
        for key, values in extra.items()
        for value in values
    ]
    for attrs in wanted:
        check(store, attrs)
    if name != "system:anonymous" and not {AUTHENTICATED, UNAUTHENTICATED} & set(all_groups):
        all_groups.append(AUTHENTICATED)
    return User(name, tuple(all_groups), uid, extra)


def _impersonating(
    requester: User,
    resource: str,
    name: str,
    namespace: str = "",
    *,
    group: str = "",
    subresource: str = "",
) -> Attributes:
    return Attributes(
        requester, "impersonate", True, "", group, "", resource, subresource, name, namespace
    )


# --- escalation prevention ----------------------------------------------------------


def guard_write(store: Any, user: User, group: str, plural: str, obj: Obj) -> None:
    """Refuse a role or binding `user` may not write (upstream's policy-based RBAC storage).

    A role may hold only rules its writer holds (in its namespace, for a Role) unless
    the writer may `escalate` it; a binding may bind only a role whose rules the writer
    holds unless it may `bind` that role. An aggregated ClusterRole needs every permission.
    """
    if user.privileged or group != RBAC_GROUP:
        return
    meta = obj.get("metadata") or {}
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    if plural in ("roles", "clusterroles"):
        namespace = namespace if plural == "roles" else ""
        if authorize(store, _rbac_attrs(user, "escalate", plural, name, namespace)).allowed:
            return
        rules: Iterable[Rule] = obj.get("rules") or ()
        if plural == "clusterroles" and obj.get("aggregationRule"):
            rules = FULL_AUTHORITY
        _confirm_no_escalation(store, user, namespace, list(rules), plural, name)
    elif plural in ("rolebindings", "clusterrolebindings"):
        namespace = namespace if plural == "rolebindings" else ""
        ref = obj.get("roleRef") or {}
        ref_plural = "roles" if ref.get("kind") == "Role" else "clusterroles"
        bind = _rbac_attrs(user, "bind", ref_plural, ref.get("name", ""), namespace)
        if authorize(store, bind).allowed:
            return
        role = _role(store, ref, namespace)
        if role is None:
            kind = str(ref.get("kind", "")).lower()
            cause = f'{kind}.{RBAC_GROUP} "{ref.get("name", "")}" not found'
            raise forbidden_status(plural, RBAC_GROUP, name, cause)
        _confirm_no_escalation(store, user, namespace, role.get("rules") or [], plural, name)


def _rbac_attrs(user: User, verb: str, plural: str, name: str, namespace: str) -> Attributes:
    return Attributes(user, verb, True, "", RBAC_GROUP, "v1", plural, "", name, namespace)


def _confirm_no_escalation(
    store: Any, user: User, namespace: str, rules: list[Rule], plural: str, name: str
) -> None:
    owned, errors = rules_for(store, user, namespace)
    missing = [atom for atom in _atoms(rules) if not any(_covers(o, atom) for o in owned)]
    if not missing:
        return
    groups = " ".join(f'"{g}"' for g in user.groups)
    cause = (
        f'user "{user.name}" (groups=[{groups}]) is attempting to grant RBAC permissions '
        "not currently held:\n" + "\n".join(sorted({_compact(r) for r in _merge_verbs(missing)}))
    )
    if errors:
        cause += f"; resolution errors: [{', '.join(errors)}]"
    raise forbidden_status(plural, RBAC_GROUP, name, cause)


def _atoms(rules: Iterable[Rule]) -> Iterator[Rule]:
    """Each rule broken into one verb on one resource (or URL), as upstream's Covers does."""
    for rule in rules:
        verbs = rule.get("verbs") or ()
        for group in rule.get("apiGroups") or ():
            for resource in rule.get("resources") or ():
                for verb in verbs:
                    names = rule.get("resourceNames") or ()
                    for n in names or (None,):
                        atom: dict[str, Any] = {
                            "apiGroups": [group], "resources": [resource], "verbs": [verb]
                        }  # fmt: skip
                        if n is not None:
                            atom["resourceNames"] = [n]
                        yield atom
        for url in rule.get("nonResourceURLs") or ():
            for verb in verbs:
                yield {"nonResourceURLs": [url], "verbs": [verb]}


def _covers(owner: Rule, atom: Rule) -> bool:
    """Upstream's ruleCovers, for one atomic rule."""

    def holds(key: str) -> bool:
        have = owner.get(key) or ()
        return "*" in have or all(v in have for v in atom.get(key) or ())

    if not (holds("verbs") and holds("apiGroups")):
        return False
    have = owner.get("resources") or ()
    for resource in atom.get("resources") or ():
        sub = resource.partition("/")[2]
        if not ("*" in have or resource in have or (sub and f"*/{sub}" in have)):
            return False
    urls = owner.get("nonResourceURLs") or ()
    if not all(any(_url_covers(o, u) for o in urls) for u in atom.get("nonResourceURLs") or ()):
        return False
    names = owner.get("resourceNames") or ()
    wanted = atom.get("resourceNames") or ()
    return not names or (bool(wanted) and all(n in names for n in wanted))


def _merge_verbs(atoms: list[Rule]) -> list[Rule]:
    """Upstream's CompactRules: atoms differing only in their verb, as one rule."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for atom in atoms:
        key = tuple(tuple(atom.get(k) or ()) for k in _COMPACT_KEYS if k != "verbs")
        rule = merged.setdefault(key, {**atom, "verbs": []})
        rule["verbs"] += [v for v in atom["verbs"] if v not in rule["verbs"]]
    return list(merged.values())


_COMPACT_KEYS = ("apiGroups", "resources", "nonResourceURLs", "resourceNames", "verbs")


def _compact(rule: Rule) -> str:
    """rbacv1helpers.CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`."""
    labels = {"apiGroups": "APIGroups", "resources": "Resources",
              "nonResourceURLs": "NonResourceURLs", "resourceNames": "ResourceNames",
              "verbs": "Verbs"}  # fmt: skip
    parts = [
        f"{labels[k]}:[{' '.join(_go_quote(v) for v in rule[k])}]"
        for k in _COMPACT_KEYS
        if rule.get(k)
    ]
    return "{" + ", ".join(parts) + "}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- aggregation ------------------------------------------------------------------


def aggregated_rules(store: Any, role: Obj) -> list[Rule]:
    """The rules an aggregated ClusterRole holds: those of every ClusterRole its selectors
    match (itself aside), by name, each rule once (the clusterrole-aggregation controller)."""
    selectors = [
        label_selector_from_dict(s)
        for s in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ()
    ]
    rules: list[Rule] = []
    for other in store.items(CLUSTER_ROLES):
        if other["metadata"]["name"] == role["metadata"]["name"]:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(selector.matches(labels) for selector in selectors):
            rules += [r for r in other.get("rules") or () if r not in rules]
    return rules


# --- bootstrap policy -----------------------------------------------------------------

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_READ_WRITE = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
_AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def _rule(verbs: list[str], groups: list[str], resources: str) -> Rule:
    return {"verbs": verbs, "apiGroups": groups, "resources": resources.split()}


def _urls(verbs: list[str], urls: str) -> Rule:
    return {"verbs": verbs, "nonResourceURLs": urls.split()}


#: A subset of upstream's bootstrappolicy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
#: name → (labels beyond the bootstrapping one, aggregated-from label or "", rules).
BOOTSTRAP_CLUSTER_ROLES: dict[str, tuple[dict[str, str], str, list[Rule]]] = {
    "cluster-admin": ({}, "", list(FULL_AUTHORITY)),
    "admin": ({}, "admin", []),
    "edit": ({f"{_AGGREGATE_TO}admin": "true"}, "edit", []),
    "view": ({f"{_AGGREGATE_TO}edit": "true"}, "view", []),
    "system:aggregate-to-admin": ({f"{_AGGREGATE_TO}admin": "true"}, "", [
        _rule(_READ_WRITE, [RBAC_GROUP], "rolebindings roles"),
        _rule(["create"], ["authorization.k8s.io"], "localsubjectaccessreviews"),
    ]),
    "system:aggregate-to-edit": ({f"{_AGGREGATE_TO}edit": "true"}, "", [
        _rule(_READ, [""], "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy"),
        _rule(["impersonate"], [""], "serviceaccounts"),
        _rule(_WRITE, [""], "pods pods/attach pods/exec pods/portforward pods/proxy"),
        _rule(["create"], [""], "pods/eviction"),
        _rule(_WRITE, [""], "configmaps events persistentvolumeclaims replicationcontrollers "
              "replicationcontrollers/scale secrets serviceaccounts services services/proxy"),
        _rule(["create"], [""], "serviceaccounts/token"),
        _rule(_WRITE, ["apps"], "daemonsets deployments deployments/rollback deployments/scale "
              "replicasets replicasets/scale statefulsets statefulsets/scale"),
        _rule(_WRITE, ["autoscaling"], "horizontalpodautoscalers"),
        _rule(_WRITE, ["batch"], "cronjobs jobs"),
        _rule(_WRITE, ["policy"], "poddisruptionbudgets"),
        _rule(_WRITE, ["networking.k8s.io"], "ingresses networkpolicies"),
        _rule(_READ_WRITE, ["coordination.k8s.io"], "leases"),
    ]),
    "system:aggregate-to-view": ({f"{_AGGREGATE_TO}view": "true"}, "", [
        _rule(_READ, [""], "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status "
              "pods replicationcontrollers replicationcontrollers/scale serviceaccounts services "
              "services/status"),
        _rule(_READ, [""], "bindings events limitranges namespaces/status pods/log pods/status "
              "replicationcontrollers/status resourcequotas resourcequotas/status"),
        _rule(_READ, [""], "namespaces"),
        _rule(_READ, ["discovery.k8s.io"], "endpointslices"),
        _rule(_READ, ["apps"], "controllerrevisions daemonsets daemonsets/status deployments "
              "deployments/scale deployments/status replicasets replicasets/scale "
              "replicasets/status statefulsets statefulsets/scale statefulsets/status"),
        _rule(_READ, ["autoscaling"], "horizontalpodautoscalers horizontalpodautoscalers/status"),
        _rule(_READ, ["batch"], "cronjobs cronjobs/status jobs jobs/status"),
        _rule(_READ, ["policy"], "poddisruptionbudgets poddisruptionbudgets/status"),
        _rule(_READ, ["networking.k8s.io"], "ingresses ingresses/status networkpolicies"),
    ]),
    "system:discovery": ({}, "", [
        _urls(["get"], "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz "
              "/version /version/"),
    ]),
    "system:basic-user": ({}, "", [
        _rule(["create"], ["authentication.k8s.io"], "selfsubjectreviews"),
        _rule(["create"], ["authorization.k8s.io"], "selfsubjectaccessreviews selfsubjectrulesreviews"),
    ]),
    "system:public-info-viewer": ({}, "", [
        _urls(["get"], "/healthz /livez /readyz /version /version/"),
    ]),
}  # fmt: skip
#: ClusterRoleBinding (named as its ClusterRole) → the groups it binds.
BOOTSTRAP_BINDINGS: dict[str, tuple[str, ...]] = {
    "cluster-admin": (MASTERS,),
    "system:discovery": (AUTHENTICATED,),
    "system:basic-user": (AUTHENTICATED,),
    "system:public-info-viewer": (AUTHENTICATED, UNAUTHENTICATED),
}


def _bootstrap_meta(name: str, labels: Mapping[str, str] = {}) -> Obj:
    return {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **labels},
        "annotations": {AUTOUPDATE: "true"},
    }


def bootstrap_objects() -> Iterator[tuple[str, Obj]]:
    """(plural, object) of each bootstrap ClusterRole and ClusterRoleBinding."""
    for name, (labels, aggregate, rules) in BOOTSTRAP_CLUSTER_ROLES.items():
        role: Obj = {
            "apiVersion": f"{RBAC_GROUP}/v1",
            "kind": "ClusterRole",
            "metadata": _bootstrap_meta(name, labels),
            "rules": copy.deepcopy(rules),
        }
        if aggregate:
            selector = {"matchLabels": {f"{_AGGREGATE_TO}{aggregate}": "true"}}
            role["aggregationRule"] = {"clusterRoleSelectors": [selector]}
        yield "clusterroles", role
    for name, groups in BOOTSTRAP_BINDINGS.items():
        yield (
            "clusterrolebindings",
            {
                "apiVersion": f"{RBAC_GROUP}/v1",
                "kind": "ClusterRoleBinding",
                "metadata": _bootstrap_meta(name),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
                "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
            },
        )
