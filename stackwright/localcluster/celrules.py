"""A CRD's `x-kubernetes-validations` rules, evaluated as apiextensions-apiserver does.

Each rule runs at the schema node that declares it, `self` bound to that node's value
(skipped where the value is absent or null), `oldSelf` to the stored object's value there
on an update; a rule naming `oldSelf` (a transition rule) runs only when that old value
exists. A failing rule is a `Cause` in the API server's words (1.33: the value shown is
the node's type, `spec: Invalid value: "object": <message>`), at the rule's `fieldPath`,
with its `reason`; `messageExpression` gives the message when it evaluates to a
non-empty line. Unchanged values do not fail a rule that does not name `oldSelf`
(validation ratcheting, on by default since 1.30).

The rules of a schema are compiled once (`rule_tree`, cached by the schema's identity);
a schema without rules costs one cache look-up. A rule that does not parse is the CRD's
error (`compile_causes`, as the server refuses the CRD); a rule calling a function this
interpreter does not implement is not evaluated (a real server may judge it). With
`optionalOldSelf`, `oldSelf` is an optional (`optional.none()` on a create) and the
transition rule runs on creates too. Must
never: do I/O, or mutate the objects it checks.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stackwright.localcluster import cel
from stackwright.localcluster.cel_kubernetes import KUBERNETES
from stackwright.localcluster.schema import Node
from stackwright.localcluster.status import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    Cause,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = ["RuleTree", "compile_causes", "rule_causes", "rule_tree"]

# Root-level field errors have a nil path, which the API server prints as `<nil>`.
NIL_PATH = "<nil>"
_REASONS = [DUPLICATE, FORBIDDEN, INVALID, REQUIRED]
_VARIABLES = frozenset({"self", "oldSelf"})
_RULE_FIELDS = ("rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf")


@dataclass(frozen=True)
class Rule:
    """One compiled rule; `program` None when this interpreter cannot evaluate it."""

    text: str
    program: cel.Program | None
    message: str  # the `message`, or `failed rule: <rule>`
    described: str  # the message, else the rule: how evaluation errors name it
    message_expression: cel.Program | None
    reason: str
    field_path: str
    optional_old_self: bool = False  # oldSelf an optional: the rule runs on creates too

    @property
    def transition(self) -> bool:
        return self.program is not None and "oldSelf" in self.program.variables


@dataclass
class RuleTree:
    """The rule-bearing part of a schema: a node with rules, or with rules below it."""

    schema: Node
    rules: tuple[Rule, ...] = ()
    properties: dict[str, RuleTree] = field(default_factory=dict)
    additional: RuleTree | None = None
    items: RuleTree | None = None
    all_of: tuple[RuleTree, ...] = ()
    converts: bool = False  # whether a value here needs converting to CEL's types


def _compile_rule(raw: Mapping[str, Any]) -> Rule | None:
    text = str(raw.get("rule") or "").strip()
    if not text:
        return None
    message = str(raw.get("message") or "").strip()
    try:
        program: cel.Program | None = cel.compile_expr(text, _VARIABLES, KUBERNETES)
    except (cel.CelSyntaxError, cel.Unsupported):
        program = None  # the CRD was refused for a syntax error: unsupported here
    expression = None
    if raw.get("messageExpression"):
        try:
            expression = cel.compile_expr(str(raw["messageExpression"]), _VARIABLES, KUBERNETES)
        except (cel.CelSyntaxError, cel.Unsupported):
            expression = None
    path = str(raw.get("fieldPath") or "")
    return Rule(
        text=text,
        program=program,
        message=message or f"failed rule: {text}",
        described=message or text,
        message_expression=expression,
        reason=str(raw.get("reason") or INVALID),
        field_path=re.sub(r"\['([^']*)'\]", r".\1", path).lstrip("."),
        optional_old_self=raw.get("optionalOldSelf") is True,
    )


def _build(node: Node | None) -> RuleTree | None:
    if not isinstance(node, Mapping):
        return None
    rules = tuple(
        r
        for r in (
            _compile_rule(raw)
            for raw in node.get("x-kubernetes-validations") or ()
            if isinstance(raw, Mapping)
        )
        if r is not None
    )
    props = {
        key: tree
        for key, child in (node.get("properties") or {}).items()
        if (tree := _build(child)) is not None
    }
    extra = node.get("additionalProperties")
    additional = _build(extra) if isinstance(extra, Mapping) else None
    items = _build(node.get("items"))
    all_of = tuple(t for sub in node.get("allOf") or () if (t := _build(sub)) is not None)
    if not (rules or props or additional or items or all_of):
        return None
    return RuleTree(node, rules, props, additional, items, all_of, _converts(node))


def _converts(node: Node | None) -> bool:
    """Whether a value of `node` (or below it) reads differently to CEL than as JSON: a
    `number` (always a double), a date-time, duration or base64 `byte` string."""
    if not isinstance(node, Mapping):
        return False
    if node.get("type") == "number":
        return True
    if node.get("type") == "string" and node.get("format") in ("date-time", "duration", "byte"):
        return True
    extra = node.get("additionalProperties")
    return (
        any(_converts(child) for child in (node.get("properties") or {}).values())
        or _converts(node.get("items"))
        or (isinstance(extra, Mapping) and _converts(extra))
    )


_TREES: dict[int, tuple[Node, RuleTree | None]] = {}


def rule_tree(schema: Node) -> RuleTree | None:
    """The compiled rules of `schema`, None when it declares none; computed once a schema."""
    cached = _TREES.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    tree = _build(schema)
    if len(_TREES) >= 256:
        _TREES.pop(next(iter(_TREES)))
    _TREES[id(schema)] = (schema, tree)
    return tree


def to_cel(value: Any, node: Node | None) -> Any:
    """`value` as CEL sees it through its schema: numbers of a `number` are doubles, of an
    `integer` ints; `date-time`, `duration` and `byte` strings are timestamps, durations
    and bytes (a string that does not read as one stays a string)."""
    if not isinstance(node, Mapping):
        return value
    kind = node.get("type")
    if isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        return {
            k: to_cel(v, props.get(k) or (extra if isinstance(extra, Mapping) else None))
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = node.get("items")
        return [to_cel(v, items) for v in value]
    if isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, int):
        return float(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "string" and isinstance(value, str):
        return _formatted(value, node.get("format"))
    return value


def _formatted(value: str, fmt: Any) -> Any:
    try:
        if fmt == "date-time":
            return cel.parse_timestamp(value)
        if fmt == "duration":
            return cel.parse_duration(value)
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
    except (cel.CelError, binascii.Error):
        return value
    return value


def rule_causes(obj: Any, schema: Node, old: Any = None) -> list[Cause]:
    """The causes the rules of `schema` find in `obj` (`old`: the stored object, on an
    update); [] at once when the schema has no rules."""
    tree = rule_tree(schema)
    if tree is None:
        return []
    out: list[Cause] = []
    _walk(tree, obj, old, "", old is not None and obj == old, out)
    return out


def _walk(
    tree: RuleTree, value: Any, old: Any, path: str, unchanged: bool, out: list[Cause]
) -> None:
    """`unchanged`: whether the nearest value correlated with an old one is as it was (the
    errors of rules not naming oldSelf are then ratcheted away)."""
    if value is None:
        return
    if tree.rules:
        _evaluate(tree, value, old, path, unchanged, out)
    for sub in tree.all_of:
        _walk(sub, value, old, path, False, out)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        prefix = path + "." if path else ""
        for key, item in value.items():
            child = tree.properties.get(key)
            here = prefix + key
            if child is None and tree.additional is not None:
                child, here = tree.additional, f"{path}[{key}]"
            if child is not None:
                was = old_map.get(key)
                _walk(child, item, was, here, was is not None and was == item, out)
    elif isinstance(value, list) and tree.items is not None:
        keys = tree.schema.get("x-kubernetes-list-map-keys") or ()
        correlated = tree.schema.get("x-kubernetes-list-type") == "map" and isinstance(old, list)
        olds = {_identity(o, keys): o for o in old if isinstance(o, dict)} if correlated else {}
        for index, item in enumerate(value):
            was = olds.get(_identity(item, keys)) if correlated and isinstance(item, dict) else None
            still = (was is not None and was == item) if correlated else unchanged
            _walk(tree.items, item, was, f"{path}[{index}]", still, out)


def _identity(item: Mapping[str, Any], keys: Any) -> str:
    return json.dumps([item.get(k) for k in keys], sort_keys=True)


def _evaluate(
    tree: RuleTree, value: Any, old: Any, path: str, unchanged: bool, out: list[Cause]
) -> None:
    kind = str(tree.schema.get("type") or "")
    here = path or NIL_PATH
    bindings = {"self": to_cel(value, tree.schema) if tree.converts else value}
    if old is not None:
        bindings["oldSelf"] = to_cel(old, tree.schema) if tree.converts else old
    for rule in tree.rules:
        if rule.program is None:
            continue
        if rule.optional_old_self and rule.transition:
            given = bindings.get("oldSelf")
            bound = {**bindings, "oldSelf": cel.Optional(old is not None, given)}
        elif rule.transition and old is None:
            continue
        else:
            bound = bindings
        try:
            result = rule.program.evaluate(bound)
        except cel.CelError as exc:
            if str(exc).startswith(cel.NO_OVERLOAD):
                detail = (
                    f"'{exc}': call arguments did not match a supported operator, function or "
                    f"macro signature for rule: {rule.described}"
                )
            else:
                detail = f"{exc} evaluating rule: {rule.described}"
            out.append(invalid(here, kind, detail))
            continue
        except RecursionError:
            continue
        if result is True or (unchanged and not rule.transition):
            continue
        at = (
            here
            if not rule.field_path
            else (f"{path}.{rule.field_path}" if path else rule.field_path)
        )
        out.append(_failure(rule, at, kind, _message(rule, bound)))


def _message(rule: Rule, bindings: dict[str, Any]) -> str:
    if rule.message_expression is None:
        return rule.message
    try:
        said = rule.message_expression.evaluate(bindings)
    except (cel.CelError, RecursionError):
        return rule.message
    if not isinstance(said, str) or not said.strip() or "\n" in said.strip():
        return rule.message
    return said.strip()


def _failure(rule: Rule, path: str, kind: str, message: str) -> Cause:
    if rule.reason == FORBIDDEN:
        return forbidden(path, message)
    if rule.reason == REQUIRED:
        return required(path, message)
    if rule.reason == DUPLICATE:
        return duplicate(path, kind)
    return invalid(path, kind, message)


def compile_causes(node: Node, path: str) -> list[Cause]:
    """What the API server refuses in the rules `node` (a CRD schema node at `path`)
    declares: a rule or messageExpression that does not parse, an unknown reason."""
    causes: list[Cause] = []
    for index, raw in enumerate(node.get("x-kubernetes-validations") or ()):
        if not isinstance(raw, Mapping):
            continue
        here = f"{path}.x-kubernetes-validations[{index}]"
        # Go prints the ValidationRule struct (%#v); shown as JSON, in its field order.
        shown = {k: raw[k] for k in _RULE_FIELDS if k in raw}
        text = str(raw.get("rule") or "")
        if not text.strip():
            causes.append(required(here + ".rule", "rule is not specified"))
        else:
            error = _syntax_error(text)
            if error:
                causes.append(invalid(here + ".rule", shown, f"compilation failed: ERROR: {error}"))
        expression = raw.get("messageExpression")
        if isinstance(expression, str) and expression.strip():
            error = _syntax_error(expression)
            if error:
                causes.append(
                    invalid(
                        here + ".messageExpression",
                        shown,
                        f"messageExpression compilation failed: ERROR: {error}",
                    )
                )
        reason = raw.get("reason")
        if reason is not None and reason not in _REASONS:
            causes.append(not_supported(here + ".reason", reason, _REASONS))
    return causes


def _syntax_error(text: str) -> str:
    try:
        cel.compile_expr(text, _VARIABLES, KUBERNETES)
    except cel.CelSyntaxError as exc:
        return str(exc)
    except cel.Unsupported:
        return ""
    return ""
