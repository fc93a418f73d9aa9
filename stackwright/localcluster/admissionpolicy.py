"""ValidatingAdmissionPolicies and their bindings, evaluated as kube-apiserver's plugin does
(k8s.io/apiserver/pkg/admission/plugin/policy/validating).

A write (CREATE, UPDATE, DELETE; dry runs too) is checked against every binding whose
policy exists: the policy's `matchConstraints` and the binding's `matchResources`
(resource rules with `*`, `excludeResourceRules`, `namespaceSelector`, `objectSelector`;
`matchPolicy: Equivalent` matches as Exact), then the policy's `matchConditions` (all
must hold), then its `validations` with `variables`, `params` (`paramKind` / `paramRef`),
`namespaceObject` and `request` bound. A failed validation of a `Deny` binding refuses
the request in the plugin's words and with the validation's `reason` (Invalid, 422, when
it names none); a `Warn` binding's failure is a warning; `Audit` shows nothing. An
evaluation error denies under `failurePolicy: Fail` and is skipped under `Ignore`.

An expression calling what the CEL interpreter does not implement (`authorizer` among
them) is not evaluated (its validation passes). The admission kinds themselves are never
subject to policies, as upstream exempts them.

`Policies` keeps the compiled policies and their bindings from the store's committed
changes, so no write lists them; a cluster without bindings pays one look-up per write,
and a write is matched only against the policies whose rules name its (apiGroup,
resource), `*` included (`_index`). Must never: do I/O beyond reading the store, or
mutate the objects it checks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stackwright.localcluster import cel, rbac, selectors, status
from stackwright.localcluster.cel_kubernetes import KUBERNETES
from stackwright.localcluster.registry import Registry, ResourceType
from stackwright.localcluster.store import DELETED, Change, Obj, Store

__all__ = ["Policies", "Request", "compile_causes"]

_ADMISSION = "admissionregistration.k8s.io"
POLICY_TYPE = (_ADMISSION, "validatingadmissionpolicies")
BINDING_TYPE = (_ADMISSION, "validatingadmissionpolicybindings")
NAMESPACE_TYPE = ("", "namespaces")
#: The kinds no policy applies to (rules.IsExemptAdmissionConfigurationResource).
_EXEMPT = frozenset(
    {
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    }
)
_VARIABLES = frozenset({"object", "oldObject", "request", "params", "namespaceObject", "variables"})
#: A validation's reason → the response's code (the plugin's reasonToCode).
_REFUSALS: dict[str, type[status.APIError]] = {
    "Forbidden": status.Forbidden,
    "Unauthorized": status.Unauthorized,
    "RequestEntityTooLarge": status.RequestEntityTooLarge,
    "Invalid": status.Invalid,
}
_MAX_MESSAGE = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes
#: Who the local cluster's own controllers write as.
_CONTROLLERS = rbac.User("system:kube-controller-manager", ("system:authenticated",))


@dataclass(frozen=True)
class Request:
    """What admission knows of one write (admission.Attributes)."""

    operation: str  # CREATE / UPDATE / DELETE
    rtype: ResourceType
    subresource: str
    namespace: str  # a Namespace's own name for a Namespace; "" when cluster-scoped
    name: str
    obj: Obj | None  # None on DELETE
    old: Obj | None  # None on CREATE
    user: rbac.User | None
    dry_run: bool

    @property
    def group(self) -> str:
        return self.rtype.group

    @property
    def resource(self) -> str:
        return self.rtype.plural


class _Unevaluable(Exception):
    """An expression (or a variable it reads) this interpreter cannot evaluate."""


@dataclass(frozen=True)
class _Expression:
    text: str
    program: cel.Program | None  # None: not evaluated here (`error` says why, if it is one)
    error: str = ""

    def evaluate(self, bindings: Mapping[str, Any], *, named: bool = True) -> Any:
        """The value; CelError (in the plugin's words, naming the expression unless not
        `named`: a variable's) when it fails; _Unevaluable."""
        if self.error:  # stored before the server refused such policies, or by another
            raise cel.CelError(f"compilation error: {self.error}")
        if self.program is None:
            raise _Unevaluable(self.text)
        try:
            return self.program.evaluate(bindings)
        except cel.CelError as exc:
            if not named:
                raise
            raise cel.CelError(f"expression '{self.text}' resulted in error: {exc}") from None
        except RecursionError:
            raise _Unevaluable(self.text) from None


def _compile(text: Any) -> _Expression:
    source = str(text or "")
    try:
        return _Expression(source, cel.compile_expr(source, _VARIABLES, KUBERNETES))
    except cel.CelSyntaxError as exc:
        return _Expression(source, None, f"compilation failed: ERROR: {exc}")
    except cel.Unsupported:
        return _Expression(source, None)


#: The expressions of a policy's spec, by list: what `compile_causes` checks.
_EXPRESSIONS = (
    ("validations", ("expression", "messageExpression")),
    ("matchConditions", ("expression",)),
    ("variables", ("expression",)),
)


def compile_causes(obj: Obj) -> list[status.Cause]:
    """What the API server refuses in a policy: an expression that does not parse
    (`spec.validations[0].expression: Invalid value: "…": compilation failed: ERROR: …`)."""
    spec = obj.get("spec") or {}
    causes = []
    for key, fields in _EXPRESSIONS:
        for index, item in enumerate(spec.get(key) or ()):
            for name in fields:
                text = item.get(name) if isinstance(item, Mapping) else None
                if isinstance(text, str) and text.strip():
                    error = _compile(text).error
                    if error:
                        causes.append(status.invalid(f"spec.{key}[{index}].{name}", text, error))
    return causes


@dataclass(frozen=True)
class _Validation:
    expression: _Expression
    message: str
    message_expression: _Expression | None
    reason: str


@dataclass(frozen=True)
class _Policy:
    name: str
    fails_closed: bool  # failurePolicy Fail (the default), not Ignore
    match: Mapping[str, Any]
    conditions: tuple[_Expression, ...]
    variables: tuple[tuple[str, _Expression], ...]
    validations: tuple[_Validation, ...]
    param_kind: Mapping[str, Any] | None


def _items(spec: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [i for i in spec.get(key) or () if isinstance(i, Mapping)]


def _policy(obj: Obj) -> _Policy:
    spec = obj.get("spec") or {}
    validations = tuple(
        _Validation(
            _compile(v.get("expression")),
            str(v.get("message") or "").strip(),
            _compile(v["messageExpression"]) if v.get("messageExpression") else None,
            str(v.get("reason") or "Invalid"),
        )
        for v in _items(spec, "validations")
    )
    param_kind = spec.get("paramKind")
    return _Policy(
        name=obj["metadata"]["name"],
        fails_closed=spec.get("failurePolicy") != "Ignore",
        match=spec.get("matchConstraints") or {},
        conditions=tuple(_compile(c.get("expression")) for c in _items(spec, "matchConditions")),
        variables=tuple(
            (str(v.get("name") or ""), _compile(v.get("expression")))
            for v in _items(spec, "variables")
        ),
        validations=validations,
        param_kind=param_kind if isinstance(param_kind, Mapping) else None,
    )


class _Variables(dict[str, Any]):
    """`variables`: each composed on first use (once); its error is the error of every
    expression that reads it, as cel's lazy composition words it."""

    def __init__(self, declared: tuple[tuple[str, _Expression], ...], scope: dict[str, Any]):
        super().__init__((name, None) for name, _ in declared)
        self._declared = dict(declared)
        self._scope = scope
        self._done: dict[str, tuple[Any, BaseException | None]] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._done:
            try:
                value = self._declared[name].evaluate(self._scope, named=False)
                self._done[name] = (value, None)
            except (cel.CelError, _Unevaluable) as exc:
                self._done[name] = (None, exc)
        value, error = self._done[name]
        if isinstance(error, cel.CelError):
            raise cel.CelError(f'composited variable "{name}" fails to evaluate: {error}')
        if error is not None:
            raise _Unevaluable(name)
        return value


@dataclass(frozen=True)
class _Decision:
    """A denial: a failed validation, or an error that fails closed."""

    message: str
    reason: str = "Invalid"


class _ConfigError(Exception):
    """A policy's paramKind or a binding's params cannot be had: an error, which denies
    under failurePolicy Fail."""


class Policies:
    """The cluster's policies and bindings, compiled as they are written."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self._policies: dict[str, _Policy] = {}
        self._bindings: dict[str, Obj] = {}
        #: Each policy that has bindings, with them, in name order: what a write is checked against.
        self._hooks: list[tuple[_Policy, list[Obj]]] = []
        #: (apiGroup, resource) → the indexes in `_hooks` of the policies whose resource
        #: rules can match it, `*` for either kept as such: a write evaluates only those.
        self._index: dict[tuple[str, str], list[int]] = {}
        for policy in store.items(POLICY_TYPE):
            self._policies[policy["metadata"]["name"]] = _policy(policy)
        for binding in store.items(BINDING_TYPE):
            self._bindings[binding["metadata"]["name"]] = binding
        self._rehook()
        store.add_listener(self._on_change)

    @property
    def active(self) -> bool:
        """Whether any binding names a policy that exists: else no write is looked at."""
        return bool(self._hooks)

    def _on_change(self, change: Change) -> None:
        if change.key == POLICY_TYPE:
            if change.type == DELETED:
                self._policies.pop(change.name, None)
            else:
                self._policies[change.name] = _policy(change.obj)
        elif change.key == BINDING_TYPE:
            if change.type == DELETED:
                self._bindings.pop(change.name, None)
            else:
                self._bindings[change.name] = change.obj
        else:
            return
        self._rehook()

    def _rehook(self) -> None:
        bound: dict[str, list[Obj]] = {}
        for name in sorted(self._bindings):
            binding = self._bindings[name]
            policy_name = str((binding.get("spec") or {}).get("policyName") or "")
            bound.setdefault(policy_name, []).append(binding)
        self._hooks = [
            (self._policies[name], bound[name]) for name in sorted(bound) if name in self._policies
        ]
        self._index = {}
        for index, (policy, _) in enumerate(self._hooks):
            for key in _rule_keys(policy.match):
                self._index.setdefault(key, []).append(index)

    def _hooks_for(self, request: Request) -> list[tuple[_Policy, list[Obj]]]:
        """The policies (with their bindings) whose rules can match `request`'s resource,
        in name order (the first denial is the one said)."""
        group, resource = request.group, request.resource
        keys = ((group, resource), (group, "*"), ("*", resource), ("*", "*"))
        found = {index for key in keys for index in self._index.get(key, ())}
        return [self._hooks[index] for index in sorted(found)]

    # --- admission --------------------------------------------------------------------

    def admit(self, request: Request) -> list[str]:
        """The warnings of `Warn` bindings; raises the refusal of the first `Deny` one."""
        if request.resource in _EXEMPT and request.group == _ADMISSION:
            return []
        warnings: list[str] = []
        denied: list[tuple[_Policy, str, _Decision]] = []
        for policy, bindings in self._hooks_for(request):
            if not self._matches(policy.match, request):
                continue
            try:
                param_type = self._param_type(policy)
            except _ConfigError as exc:
                if policy.fails_closed:
                    denied.append((policy, "", _Decision(f"failed to configure policy: {exc}")))
                continue
            for binding in bindings:
                spec = binding.get("spec") or {}
                match = spec.get("matchResources")
                if isinstance(match, Mapping) and not self._matches(match, request):
                    continue
                name = binding["metadata"]["name"]
                try:
                    params = self._params(policy, param_type, spec.get("paramRef"), request)
                except _ConfigError as exc:
                    if policy.fails_closed:
                        message = f"failed to configure binding: {exc}"
                        denied.append((policy, name, _Decision(message)))
                    continue
                actions = spec.get("validationActions") or ()
                for param in params:
                    for decision in self._validate(policy, request, param):
                        if "Deny" in actions:
                            denied.append((policy, name, decision))
                        if "Warn" in actions:
                            warnings.append(
                                f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' "
                                f"with binding '{name}': {decision.message}"
                            )
        if denied:  # sent with the warnings, as the API server sends them
            raise _refusal(request, *denied[0], warnings)
        return warnings

    def _validate(self, policy: _Policy, request: Request, param: Any) -> Iterator[_Decision]:
        """The failed validations (and evaluation errors, under failurePolicy Fail)."""
        scope: dict[str, Any] = {
            "object": _view(request, request.obj),
            "oldObject": _view(request, request.old),
            "request": _request_object(request),
            "params": param,
            "namespaceObject": self._namespace_object(request),
        }
        scope["variables"] = _Variables(policy.variables, scope)
        errors: list[str] = []
        for condition in policy.conditions:
            try:
                holds = condition.evaluate(scope)
            except cel.CelError as exc:
                errors.append(str(exc))
                continue
            except _Unevaluable:
                return  # whether the policy applies cannot be told here
            if holds is False:
                return
        if errors:
            if policy.fails_closed:
                yield _Decision(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
            return
        for validation in policy.validations:
            try:
                holds = validation.expression.evaluate(scope)
            except cel.CelError as exc:
                if policy.fails_closed:
                    yield _Decision(str(exc))
                continue
            except _Unevaluable:
                continue
            if holds is not True:
                yield _Decision(_message(validation, scope), validation.reason)

    # --- matching ---------------------------------------------------------------------

    def _matches(self, match: Mapping[str, Any], request: Request) -> bool:
        """matching.Matcher.Matches: the rules, then the namespace and object selectors.
        Upstream reads the selectors first but says a selector's error only where the rules
        match: the same answer, and a write no rule matches pays no namespace look-up."""
        if any(_rule_matches(r, request) for r in _items(match, "excludeResourceRules")):
            return False
        rules = _items(match, "resourceRules")
        if rules and not any(_rule_matches(r, request) for r in rules):
            return False
        is_namespace = (request.group, request.resource) == NAMESPACE_TYPE
        if request.namespace or is_namespace:
            selector = _selector(match.get("namespaceSelector"))
            if not selector.empty and not selector.matches(self._namespace_labels(request)):
                return False
        selector = _selector(match.get("objectSelector"))
        return selector.empty or any(
            o is not None and selector.matches((o.get("metadata") or {}).get("labels"))
            for o in (request.obj, request.old)
        )

    def _namespace_labels(self, request: Request) -> Any:
        if (
            (request.group, request.resource) == NAMESPACE_TYPE
            and not request.subresource
            and request.obj is not None
        ):
            return (request.obj.get("metadata") or {}).get("labels")
        namespace = self.store.get(NAMESPACE_TYPE, "", request.namespace)
        if namespace is None:
            raise status.not_found("namespaces", "", request.namespace)
        return namespace["metadata"].get("labels")

    def _namespace_object(self, request: Request) -> Any:
        if (request.group, request.resource) == NAMESPACE_TYPE or not request.namespace:
            return None
        namespace = self.store.get(NAMESPACE_TYPE, "", request.namespace)
        if namespace is None:
            return None
        meta = {k: v for k, v in namespace["metadata"].items() if k != "managedFields"}
        return {
            "metadata": meta,
            "spec": namespace.get("spec") or {},
            "status": namespace.get("status") or {},
        }

    # --- params -----------------------------------------------------------------------

    def _param_type(self, policy: _Policy) -> Any:
        kind = policy.param_kind
        if kind is None:
            return None
        api_version, name = str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")
        rtype = self.registry.by_api_version(api_version, name)
        if rtype is None:
            group, _, version = api_version.rpartition("/")
            raise _ConfigError(
                f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={name}'"
            )
        return rtype

    def _params(self, policy: _Policy, rtype: Any, ref: Any, request: Request) -> list[Any]:
        """generic.CollectParams: [None] when the policy or binding takes no params."""
        if rtype is None or not isinstance(ref, Mapping):
            return [None]
        namespace = ""
        if rtype.namespaced:
            namespace = str(ref.get("namespace") or request.namespace)
            if not namespace:
                raise _ConfigError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        elif ref.get("namespace"):
            raise _ConfigError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        if ref.get("name"):
            found = self.store.get(rtype.key, namespace, str(ref["name"]))
            params = [found] if found is not None else []
        elif ref.get("selector") is not None:
            try:
                selector = selectors.label_selector_from_dict(ref["selector"])
            except status.APIError as exc:
                raise _ConfigError(exc.message) from None
            params = [
                o
                for o in self.store.items(rtype.key, namespace or None)
                if selector.matches(o["metadata"].get("labels"))
            ]
        else:
            raise _ConfigError("one of name or selector must be provided")
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise _ConfigError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return [{**p, "apiVersion": rtype.api_version} for p in params]


def _selector(raw: Any) -> selectors.LabelSelector:
    """A match's selector; absent is `{}` (everything), as the API defaults it."""
    try:
        return selectors.label_selector_from_dict(raw if isinstance(raw, Mapping) else {})
    except status.APIError:
        return selectors.NOTHING


def _named(items: Any, wanted: str) -> bool:
    return any(item in ("*", wanted) for item in items or ())


def _rule_keys(match: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (apiGroup, resource) pairs, either possibly `*`, that `match`'s resource rules
    name (a subresource's resource); ("*", "*") when it has none, which matches every one.
    Its exclusions and selectors only narrow it: `_matches` applies them."""
    rules = _items(match, "resourceRules")
    if not rules:
        return {("*", "*")}
    return {
        (str(group), str(resource).partition("/")[0])
        for rule in rules
        for group in rule.get("apiGroups") or ()
        for resource in rule.get("resources") or ()
    }


def _rule_matches(rule: Mapping[str, Any], request: Request) -> bool:
    """rules.Matcher.Matches, and the rule's resourceNames."""
    scope = rule.get("scope") or "*"
    cluster_scoped = (request.group, request.resource) == NAMESPACE_TYPE or not request.namespace
    if (scope == "Namespaced" and cluster_scoped) or (scope == "Cluster" and not cluster_scoped):
        return False
    if not (
        _named(rule.get("operations"), request.operation)
        and _named(rule.get("apiGroups"), request.group)
        and _named(rule.get("apiVersions"), request.rtype.version)
    ):
        return False
    for resource in rule.get("resources") or ():
        main, _, sub = str(resource).partition("/")
        if main in ("*", request.resource) and sub in ("*", request.subresource):
            break
    else:
        return False
    names = rule.get("resourceNames") or ()
    return not names or request.name in names


def _view(request: Request, obj: Obj | None) -> Any:
    """The object as the request's kind shows it: a Scale for the scale subresource."""
    if obj is None or request.subresource != "scale":
        return obj
    from stackwright.localcluster.scale import scale_of  # scale imports the cluster

    return scale_of(request.rtype, obj)


def _request_object(request: Request) -> dict[str, Any]:
    """The AdmissionRequest the expressions see as `request` (Go's JSON: empty fields out)."""
    if request.subresource == "scale":
        kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    else:
        kind = {
            "group": request.group,
            "version": request.rtype.version,
            "kind": request.rtype.kind,
        }
    resource = {
        "group": request.group,
        "version": request.rtype.version,
        "resource": request.resource,
    }
    user = request.user or _CONTROLLERS
    out: dict[str, Any] = {
        "uid": "",
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "operation": request.operation,
        "userInfo": user.info(),
        "dryRun": request.dry_run,
        "options": None,
    }
    if request.subresource:
        out["subResource"] = out["requestSubResource"] = request.subresource
    if request.name:
        out["name"] = request.name
    if request.namespace:
        out["namespace"] = request.namespace
    return out


def _message(validation: _Validation, scope: Mapping[str, Any]) -> str:
    """messageExpression's line, else `message`, else `failed expression: <expression>`."""
    if validation.message_expression is not None:
        try:
            said = validation.message_expression.evaluate(scope)
        except (cel.CelError, _Unevaluable):
            said = None
        if isinstance(said, str):
            said = said.strip()
            if said and "\n" not in said and len(said.encode()) <= _MAX_MESSAGE:
                return said
    return validation.message or f"failed expression: {validation.expression.text.strip()}"


def _refusal(
    request: Request, policy: _Policy, binding: str, decision: _Decision, warnings: list[str]
) -> status.APIError:
    """admission.NewForbidden, with the decision's reason and code, and one cause."""
    if binding:
        said = (
            f"ValidatingAdmissionPolicy '{policy.name}' with binding '{binding}' "
            f"denied request: {decision.message}"
        )
    else:
        said = f"ValidatingAdmissionPolicy '{policy.name}' denied request: {decision.message}"
    meta = (request.obj or {}).get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or request.name or "Unknown"
    refusal = _REFUSALS.get(decision.reason, status.Invalid)
    return refusal(
        f'{status.qualified(request.resource, request.group)} "{name}" is forbidden: {said}',
        details={
            "name": name,
            "group": request.group,
            "kind": request.resource,
            "causes": [{"message": said}],
        },
        warnings=warnings,
    )
