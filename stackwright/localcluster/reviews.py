"""The create-only review APIs `kubectl auth can-i` and `kubectl auth whoami` ask.

SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview
(authorization.k8s.io), SelfSubjectRulesReview, and SelfSubjectReview
(authentication.k8s.io) are not stored: the server answers each POST with the
request and its `status` filled in. The local cluster has one credential, a cluster
administrator in `system:masters`, and no authorizer beyond that, so every access
is allowed and every rule is `*`.
"""

from __future__ import annotations

import copy
from typing import Any

from stackwright.localcluster import status

USER = "kubernetes-admin"
GROUPS = ["system:masters", "system:authenticated"]

#: (group, version, kind, plural, namespaced) of each review type the server answers.
REVIEW_TYPES: tuple[tuple[str, str, str, str, bool], ...] = (
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False),
    ("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True),
    ("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False),
)


def answer(kind: str, api_version: str, namespace: str, body: Any) -> dict[str, Any]:
    """The review `body` (posted as `kind`) with its status, as the API server returns it."""
    if not isinstance(body, dict):
        raise status.BadRequest(f"the body of a {kind} must be an object")
    review: dict[str, Any] = copy.deepcopy(body)
    review["apiVersion"], review["kind"] = api_version, kind
    meta = review.get("metadata")
    review["metadata"] = meta if isinstance(meta, dict) else {}
    if namespace:
        review["metadata"]["namespace"] = namespace
    if kind == "SelfSubjectReview":
        review["status"] = {"userInfo": {"username": USER, "groups": list(GROUPS)}}
    elif kind == "SelfSubjectRulesReview":
        review["status"] = {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    else:
        review["status"] = {"allowed": True}
    return review
