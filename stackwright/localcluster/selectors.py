"""Label and field selectors, parsed and matched exactly as kube-apiserver does.

Three inputs, one meaning each:
- `parse_label_selector` reads the query-string form (`app=web,tier!=db,env in (a,b),!legacy`)
  with the grammar, validation and error wording of k8s.io/apimachinery/pkg/labels;
- `label_selector_from_dict` reads a metav1.LabelSelector object (`matchLabels` and
  `matchExpressions`), where a missing selector matches nothing and an empty one
  matches everything;
- `parse_field_selector` reads `metadata.name=x,status.phase!=Running` as
  k8s.io/apimachinery/pkg/fields does, and `check_field_selector` rejects the field
  names a kind does not support with the API server's own message.

Parse failures raise `status.BadRequest` carrying the message a real server would send,
so a client sees the same text from the local cluster as from a real one. This module
is pure: it never does I/O, never reads a clock, and never accepts a selector the real
server would reject (nor rejects one it would accept).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stackwright.localcluster.status import BadRequest
from stackwright.localcluster.validation import label_value, qualified_name

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "check_field_selector",
    "field_value",
    "label_selector_from_dict",
    "parse_field_selector",
    "parse_label_selector",
    "validate_label_key",
    "validate_label_value",
]

# --------------------------------------------------------------------------------------
# Operators, spelled as k8s.io/apimachinery/pkg/selection spells them (these strings
# appear in error messages, so they are not ours to choose).
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Keys and values are checked by apimachinery's util/validation rules, which the
# validation module implements once for labels, annotations and names alike.
validate_label_key = qualified_name
validate_label_value = label_value


# --------------------------------------------------------------------------------------
# Go formatting helpers: the messages quote values with Go's %q and join errors as an
# errors.Aggregate does.

_GO_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
    "\r": "\\r", "\t": "\\t", "\v": "\\v", '"': '\\"', "\\": "\\\\",
}  # fmt: skip


def _go_quote(value: str) -> str:
    """`value` as Go's strconv.Quote writes it."""
    out = ['"']
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch == " " or (ch.isprintable() and unicodedata.category(ch)[0] in "LMNPS"):
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _invalid(path: str, value: str, detail: str) -> str:
    """A field.Invalid error rendered as text (`path: Invalid value: "v": detail`)."""
    return f"{path}: Invalid value: {_go_quote(value)}: {detail}"


def _aggregate(messages: list[str]) -> str:
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _parses_as_int64(value: str) -> bool:
    # strconv.ParseInt(v, 10, 64): an optional sign and decimal digits, nothing else
    # (Python's int() would also take underscores and surrounding spaces).
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        return False
    return _INT64_MIN <= int(value) <= _INT64_MAX


# --------------------------------------------------------------------------------------
# Label selectors


@dataclass(frozen=True)
class Requirement:
    """One term of a label selector: `key`, an operator and its values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        present = self.key in labels
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return present and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return not present or labels[self.key] not in self.values
        if op == EXISTS:
            return present
        if op == DOES_NOT_EXIST:
            return not present
        if op in (GREATER_THAN, LESS_THAN):
            # A label that is not an integer never satisfies an inequality.
            if not present or not _parses_as_int64(labels[self.key]):
                return False
            if len(self.values) != 1 or not _parses_as_int64(self.values[0]):
                return False
            have, want = int(labels[self.key]), int(self.values[0])
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        prefix = "!" if self.operator == DOES_NOT_EXIST else ""
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return prefix + self.key
        symbol = {
            EQUALS: "=", DOUBLE_EQUALS: "==", NOT_EQUALS: "!=", IN: " in ",
            NOT_IN: " notin ", GREATER_THAN: ">", LESS_THAN: "<",
        }[self.operator]  # fmt: skip
        shown = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            shown = f"({shown})"
        return f"{self.key}{symbol}{shown}"


@dataclass(frozen=True)
class LabelSelector:
    """An AND of requirements; `NOTHING` is the selector that matches no object at all.

    `empty` is true only for the selector that does not restrict anything (the empty
    query string or an empty metav1.LabelSelector), as labels.Selector.Empty() is.
    """

    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False

    @property
    def empty(self) -> bool:
        return not self.matches_nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.matches_nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value `key` must have for a match, when the selector pins one."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(matches_nothing=True)


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """labels.NewRequirement: validate and build, or raise with the aggregated errors.

    Field paths are those of a requirement built without a path (`key`, `values[0][k]`).
    """
    errs: list[str] = []
    key_problems = validate_label_key(key)
    if key_problems:
        errs.append(_invalid("key", key, "; ".join(key_problems)))
    values_path = "values"
    shown = "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"
    if op in (IN, NOT_IN):
        if not values:
            errs.append(
                f"{values_path}: Invalid value: {shown}: for 'in', 'notin' operators, values set can't be empty"
            )
    elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errs.append(
                f"{values_path}: Invalid value: {shown}: exact-match compatibility requires one single value"
            )
    elif op in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(
                f"{values_path}: Invalid value: {shown}: values set must be empty for exists and does not exist"
            )
    elif op in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(
                f"{values_path}: Invalid value: {shown}: for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(values):
            if not _parses_as_int64(v):
                errs.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        supported = ", ".join(_go_quote(o) for o in _VALID_OPERATORS)
        errs.append(f"operator: Unsupported value: {_go_quote(op)}: supported values: {supported}")
    for i, v in enumerate(values):
        problems = validate_label_value(v)
        if problems:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", v, "; ".join(problems)))
    if errs:
        raise _SelectorSyntaxError(_aggregate(errs))
    return Requirement(key, op, tuple(values))


class _SelectorSyntaxError(Exception):
    """Internal: carries the Go error text up to the public entry points."""


# Tokens of the labels lexer (selector.go's Token constants).
_EOS, _CLOSE_PAR, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _IDENT, _IN, _LT, _NEQ, _NOT_IN, _OPEN_PAR = (
    range(1, 14)
)
_STRING_TO_TOKEN = {
    ")": _CLOSE_PAR, ",": _COMMA, "!": _NOT, "==": _DOUBLE_EQ, "=": _EQ, ">": _GT,
    "in": _IN, "<": _LT, "!=": _NEQ, "notin": _NOT_IN, "(": _OPEN_PAR,
}  # fmt: skip
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[int, str]]:
    """Tokenise as selector.go's Lexer does, quirks included (a NUL ends the input)."""
    pos = 0
    tokens: list[tuple[int, str]] = []

    def read() -> str:
        nonlocal pos
        if pos < len(text):
            pos += 1
            return text[pos - 1]
        return "\0"

    while True:
        ch = read()
        while ch in _WHITESPACE:
            ch = read()
        if ch == "\0":
            tokens.append((_EOS, ""))
            return tokens
        pos -= 1
        if ch in _SPECIAL:
            # Longest run of special symbols that is still a token ("!=" but not "!=(").
            buffer, last = "", (0, "")
            while True:
                ch = read()
                if ch == "\0":
                    break
                if ch not in _SPECIAL:
                    pos -= 1
                    break
                buffer += ch
                if buffer in _STRING_TO_TOKEN:
                    last = (_STRING_TO_TOKEN[buffer], buffer)
                elif last[0]:
                    pos -= 1
                    break
            tokens.append(last)
        else:
            buffer = ""
            while True:
                ch = read()
                if ch == "\0":
                    break
                if ch in _SPECIAL or ch in _WHITESPACE:
                    pos -= 1
                    break
                buffer += ch
            tokens.append((_STRING_TO_TOKEN.get(buffer, _IDENT), buffer))


class _LabelParser:
    """selector.go's Parser: recursive descent over the scanned tokens."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def _token(self, index: int, values: bool) -> tuple[int, str]:
        tok, lit = self.items[index]
        # "in" and "notin" are ordinary identifiers where a key or value is expected.
        if values and tok in (_IN, _NOT_IN):
            tok = _IDENT
        return tok, lit

    def lookahead(self, values: bool = True) -> tuple[int, str]:
        return self._token(self.position, values)

    def consume(self, values: bool = True) -> tuple[int, str]:
        self.position += 1
        return self._token(self.position - 1, values)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_IDENT, _NOT):
                try:
                    requirements.append(self.parse_requirement())
                except _SelectorSyntaxError as err:
                    raise _SelectorSyntaxError(f"unable to parse requirement: {err}") from None
                tok, lit = self.consume()
                if tok == _EOS:
                    return requirements
                if tok == _COMMA:
                    tok2, lit2 = self.lookahead()
                    if tok2 not in (_IDENT, _NOT):
                        raise _SelectorSyntaxError(
                            f"found '{lit2}', expected: identifier after ','"
                        )
                else:
                    raise _SelectorSyntaxError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return requirements
            else:
                raise _SelectorSyntaxError(
                    f"found '{lit}', expected: !, identifier, or 'end of string'"
                )

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return _new_requirement(key, operator, [])
        operator = self.parse_operator()
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return _new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        tok, literal = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok != _IDENT:
            raise _SelectorSyntaxError(f"found '{literal}', expected: identifier")
        problems = validate_label_key(literal)
        if problems:
            # The parser validates with a nil field path, which Go prints as "<nil>".
            raise _SelectorSyntaxError(_invalid("<nil>", literal, "; ".join(problems)))
        tok, _ = self.lookahead()
        if tok in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def parse_operator(self) -> str:
        tok, lit = self.consume(values=False)
        ops = {
            _IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN,
            _LT: LESS_THAN, _NOT_IN: NOT_IN, _NEQ: NOT_EQUALS,
        }  # fmt: skip
        if tok not in ops:
            raise _SelectorSyntaxError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return ops[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN_PAR:
            raise _SelectorSyntaxError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_IDENT, _COMMA):
            values = self.parse_identifiers_list()
            tok, _ = self.consume()
            if tok != _CLOSE_PAR:  # pragma: no cover - the list stops only before ')'
                raise _SelectorSyntaxError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE_PAR:  # "()" is the set holding the empty string
            self.consume()
            return {""}
        raise _SelectorSyntaxError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _IDENT:
                values.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE_PAR:
                    return values
                raise _SelectorSyntaxError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                # Empty members: "(,a)", "(a,)" and "(a,,b)" all hold "".
                if not values:
                    values.add("")
                tok2, _ = self.lookahead()
                if tok2 == _CLOSE_PAR:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    self.consume()
                    values.add("")
                continue
            raise _SelectorSyntaxError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead()
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _IDENT:
            return {lit}
        raise _SelectorSyntaxError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """Parse the `labelSelector` query parameter; raises BadRequest as the server would.

    Requirements come back sorted by key and set values sorted and de-duplicated, so
    `str()` of the result is the canonical form the API server prints.
    """
    try:
        requirements = _LabelParser(text).parse()
    except _SelectorSyntaxError as err:
        raise BadRequest(str(err)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


_EXPRESSION_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector object as a selector (metav1.LabelSelectorAsSelector).

    None (a missing selector) matches nothing; `{}` (no matchLabels and no
    matchExpressions) matches everything. Invalid keys, values or operators raise
    BadRequest with the apimachinery message; callers validating a stored object
    should report those as field errors of their own instead.
    """
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    try:
        for key, value in match_labels.items():
            requirements.append(_new_requirement(str(key), EQUALS, [str(value)]))
        for expression in expressions:
            operator = str(expression.get("operator", ""))
            if operator not in _EXPRESSION_OPERATORS:
                raise _SelectorSyntaxError(
                    f"{_go_quote(operator)} is not a valid label selector operator"
                )
            values = [str(v) for v in expression.get("values") or []]
            requirements.append(
                _new_requirement(
                    str(expression.get("key", "")), _EXPRESSION_OPERATORS[operator], values
                )
            )
    except _SelectorSyntaxError as err:
        raise BadRequest(str(err)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


# --------------------------------------------------------------------------------------
# Field selectors


@dataclass(frozen=True)
class FieldRequirement:
    """`field=value` (operator "=") or `field!=value` (operator "!=")."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        # A field the object does not carry reads as "" (fields.Set.Get).
        have = fields.get(self.field, "")
        return have == self.value if self.operator == "=" else have != self.value

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{_escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """An AND of field requirements, in the order the server sorts them."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether a whole object (with `kind` and `apiVersion`) satisfies every term."""
        return all(r.matches({r.field: field_value(obj, r.field)}) for r in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """The value `field` must equal for a match, if a term pins it (for indexes)."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped, keeping the escapes (fields.splitTerms)."""
    if not text:
        return []
    terms, start, in_slash = [], 0, False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape_field_value(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out, in_slash = [], False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, which prints its code point ("61" for "=").
            raise BadRequest(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise BadRequest("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse the `fieldSelector` query parameter as fields.ParseSelector does.

    Only `=`, `==` and `!=` exist; `==` is kept as `=`. A value escapes `\\`, `,` and
    `=` with a backslash. Which field names a kind supports is `check_field_selector`'s
    business, as it is a separate step in the API server.
    """
    requirements = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        for i in range(len(part)):
            # "!=" and "==" are tried before "=" so that "a==b" does not read as a = "=b".
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op) :]
                break
        else:
            raise BadRequest(f"invalid selector: '{text}'; can't understand '{part}'")
        requirements.append(
            FieldRequirement(lhs, "!=" if op == "!=" else "=", _unescape_field_value(rhs))
        )
    return FieldSelector(tuple(requirements))


# Which field labels each built-in kind accepts, and the message for any other: the
# field label conversion functions registered in the API server's scheme. Kinds not
# listed fall back to DefaultMetaV1FieldSelectorConversion (name and namespace only).
_META = ("metadata.name", "metadata.namespace")
_NOT_SUPPORTED = "field label not supported: {label}"
_BUILTIN_FIELDS: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("", "Pod"): (
        frozenset({
            *_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
            "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
            "status.podIPs", "status.nominatedNodeName",
            "spec.host",  # old clients' name for spec.nodeName, still accepted
        }),
        _NOT_SUPPORTED,
    ),
    # Node and Namespace are cluster-scoped and, unlike the default, refuse metadata.namespace.
    ("", "Node"): (frozenset({"metadata.name", "spec.unschedulable"}), _NOT_SUPPORTED),
    ("", "Namespace"): (frozenset({"metadata.name", "status.phase"}), _NOT_SUPPORTED),
    ("", "ReplicationController"): (frozenset({*_META, "status.replicas"}), _NOT_SUPPORTED),
    ("", "Secret"): (frozenset({*_META, "type"}), _NOT_SUPPORTED),
    ("", "Service"): (frozenset({*_META, "spec.clusterIP", "spec.type"}), _NOT_SUPPORTED),
    ("", "Event"): (
        frozenset({
            *_META, "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
            "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
            "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
        }),
        _NOT_SUPPORTED,
    ),
    ("batch", "Job"): (
        frozenset({*_META, "status.successful"}),
        'field label "{label}" not supported for batchv1.Job',
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): (
        frozenset({"metadata.name", "spec.signerName"}),
        _NOT_SUPPORTED,
    ),
    # apps/v1 ReplicaSet is deliberately absent: the real server registers no conversion
    # for it, so `status.replicas` is refused there with the default message
    # (kubernetes/kubernetes#135136) even though its storage would match on it.
}  # fmt: skip

#: What kinds without a conversion function of their own answer (runtime.Scheme's default).
_DEFAULT_CONVERSION_MESSAGE = (
    '"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'
)


def check_field_selector(
    selector: FieldSelector,
    group: str,
    kind: str,
    *,
    selectable_fields: Collection[str] | None = None,
    namespaced: bool = True,
) -> None:
    """Raise BadRequest, in the API server's words, for a field the kind cannot select on.

    `selectable_fields=None` means a built-in kind: it accepts `metadata.name`,
    `metadata.namespace` and the fields its registry declares. A collection (even an
    empty one) means a custom kind: it accepts `metadata.name`, `metadata.namespace`
    only when `namespaced`, and the CRD version's `selectableFields` given as paths
    without the leading dot (`spec.color`).
    """
    for requirement in selector.requirements:
        label = requirement.field
        if selectable_fields is not None:
            allowed = {"metadata.name", *selectable_fields}
            if namespaced:
                allowed.add("metadata.namespace")
            if label not in allowed:
                raise BadRequest(_NOT_SUPPORTED.format(label=label))
            continue
        rule = _BUILTIN_FIELDS.get((group, kind))
        if rule is None:
            if label not in _META:
                raise BadRequest(_DEFAULT_CONVERSION_MESSAGE.format(label=label))
        elif label not in rule[0]:
            raise BadRequest(rule[1].format(label=label))


# --------------------------------------------------------------------------------------
# Field values: what each selectable field reads from an object (the registries'
# ToSelectableFields functions), as strings.


def _walk(obj: Any, path: Iterable[str]) -> Any:
    for part in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _as_field_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return ""


def _pod_ip(obj: Mapping[str, Any]) -> str:
    ips = _walk(obj, ("status", "podIPs"))
    if isinstance(ips, list) and ips and isinstance(ips[0], Mapping):
        return str(ips[0].get("ip") or "")
    # An object stored before podIPs was filled in: v1 conversion derives it from podIP.
    return _as_field_string(_walk(obj, ("status", "podIP")))


def _event_source(obj: Mapping[str, Any]) -> str:
    component = _walk(obj, ("source", "component"))
    return str(component or obj.get("reportingComponent") or "")


def _int_or_zero(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


_SPECIAL_FIELDS: dict[tuple[str, str, str], Callable[[Mapping[str, Any]], str]] = {
    ("", "Pod", "spec.host"): lambda o: _as_field_string(_walk(o, ("spec", "nodeName"))),
    ("", "Pod", "spec.hostNetwork"): lambda o: (
        "true" if _walk(o, ("spec", "hostNetwork")) is True else "false"
    ),
    ("", "Pod", "status.podIP"): _pod_ip,
    # Accepted by the conversion but absent from the pod's field set, so always "".
    ("", "Pod", "status.podIPs"): lambda o: "",
    ("", "Event", "source"): _event_source,
    ("", "Node", "spec.unschedulable"): lambda o: (
        "true" if _walk(o, ("spec", "unschedulable")) is True else "false"
    ),
    ("", "ReplicationController", "status.replicas"): lambda o: _int_or_zero(
        _walk(o, ("status", "replicas"))
    ),
    ("apps", "ReplicaSet", "status.replicas"): lambda o: _int_or_zero(
        _walk(o, ("status", "replicas"))
    ),
    # The label says "successful"; the field it reads is status.succeeded.
    ("batch", "Job", "status.successful"): lambda o: _int_or_zero(
        _walk(o, ("status", "succeeded"))
    ),
}


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The string a field selector compares for `field` of `obj` ("" when absent)."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    special = _SPECIAL_FIELDS.get((group, str(obj.get("kind") or ""), field))
    if special is not None:
        return special(obj)
    return _as_field_string(_walk(obj, field.split(".")))
