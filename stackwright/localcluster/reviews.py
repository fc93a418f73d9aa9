"""The create-only review APIs `kubectl auth can-i` and `kubectl auth whoami` ask.

SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview
(authorization.k8s.io), SelfSubjectRulesReview, and SelfSubjectReview
(authentication.k8s.io) are not stored: the server answers each POST with the
request and its `status` filled in, truthfully, by the same authorizer that guards
requests (`rbac`). The asker is the request's user (after impersonation, so
`kubectl auth can-i --as …` answers for the impersonated user); a SubjectAccessReview
names its subject in `spec.user` / `groups`. The administrator (`system:masters`) is
allowed everything without a reason, as the API server's privileged-group authorizer
answers; an RBAC answer says which binding allowed it.

Must never: store a review, or answer for anyone but the user the review is about.
"""

from __future__ import annotations

import copy
from typing import Any

from stackwright.localcluster import rbac, status

#: (group, version, kind, plural, namespaced) of each review type the server answers.
REVIEW_TYPES: tuple[tuple[str, str, str, str, bool], ...] = (
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False),
    ("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True),
    ("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False),
)


def answer(
    store: Any, user: rbac.User, kind: str, api_version: str, namespace: str, body: Any
) -> dict[str, Any]:
    """The review `body` (posted as `kind` by `user`) with its status, as the API server returns it."""
    if not isinstance(body, dict):
        raise status.BadRequest(f"the body of a {kind} must be an object")
    review: dict[str, Any] = copy.deepcopy(body)
    review["apiVersion"], review["kind"] = api_version, kind
    meta = review.get("metadata")
    review["metadata"] = meta if isinstance(meta, dict) else {}
    if namespace:
        review["metadata"]["namespace"] = namespace
    spec = review.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if kind == "SelfSubjectReview":
        review["status"] = {"userInfo": user.info()}
    elif kind == "SelfSubjectRulesReview":
        review["status"] = _rules(store, user, str(spec.get("namespace") or ""))
    else:
        if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
            user = _subject(kind, spec)
        review["status"] = _access(store, user, kind, namespace, spec)
    return review


def _subject(kind: str, spec: dict[str, Any]) -> rbac.User:
    name, groups = spec.get("user") or "", spec.get("groups") or []
    extra = spec.get("extra") or {}
    # As the API server's decoder refuses them (400), not as characters or a 500.
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise status.BadRequest(f"{kind}: spec.groups must be a list of strings")
    if not isinstance(extra, dict) or not all(
        isinstance(v, list) and all(isinstance(i, str) for i in v) for v in extra.values()
    ):
        raise status.BadRequest(f"{kind}: spec.extra must map each key to a list of strings")
    if not name and not groups:
        raise _invalid(kind, "spec.user", "at least one of user or group must be specified")
    extras = {str(k): tuple(v) for k, v in extra.items()}
    return rbac.User(str(name), tuple(groups), str(spec.get("uid") or ""), extras)


def _access(
    store: Any, user: rbac.User, kind: str, namespace: str, spec: dict[str, Any]
) -> dict[str, Any]:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(resource, dict) == isinstance(non_resource, dict):
        detail = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        raise _invalid(kind, "spec.resourceAttributes", detail)
    if isinstance(non_resource, dict):
        attrs = rbac.Attributes(
            user, str(non_resource.get("verb") or ""), False, str(non_resource.get("path") or "")
        )
    else:
        assert isinstance(resource, dict)
        asked = str(resource.get("namespace") or "")
        if kind == "LocalSubjectAccessReview":
            if asked and asked != namespace:
                detail = f"must match metadata.namespace: {namespace}"
                raise _invalid(kind, "spec.resourceAttributes.namespace", detail)
            resource["namespace"] = asked = namespace
        attrs = rbac.Attributes(
            user,
            str(resource.get("verb") or ""),
            True,
            "",
            str(resource.get("group") or ""),
            str(resource.get("version") or ""),
            str(resource.get("resource") or ""),
            str(resource.get("subresource") or ""),
            str(resource.get("name") or ""),
            asked,
        )
    decision = rbac.authorize(store, attrs)
    answered: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        answered["reason"] = decision.reason
    return answered


def _rules(store: Any, user: rbac.User, namespace: str) -> dict[str, Any]:
    rules, errors = rbac.rules_for(store, user, namespace)
    resource_rules, non_resource_rules = [], []
    for rule in rules:
        if rule.get("resources"):
            resource_rules.append({
                k: list(rule.get(k) or ())
                for k in ("verbs", "apiGroups", "resources", "resourceNames")
                if rule.get(k) or k == "verbs"
            })  # fmt: skip
        if rule.get("nonResourceURLs"):
            non_resource_rules.append(
                {
                    "verbs": list(rule.get("verbs") or ()),
                    "nonResourceURLs": list(rule["nonResourceURLs"]),
                }
            )
    answered: dict[str, Any] = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": bool(errors),
    }
    if errors:
        answered["evaluationError"] = ", ".join(errors)
    return answered


def _invalid(kind: str, path: str, detail: str) -> status.Invalid:
    cause = status.Cause(path, status.INVALID, f"Invalid value: {detail}")
    return status.invalid_object(kind, "authorization.k8s.io", "", [cause])
