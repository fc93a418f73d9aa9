"""The JSONPath dialect Kubernetes uses for printer columns and `kubectl wait --for=jsonpath`.

Supported, as k8s.io/client-go/util/jsonpath reads it inside one `{...}` action:
`.field`, `..field` (recursive descent), `.*` and `[*]`, `[n]` (negative counts from the
end), `[start:end:step]`, unions `[0,2]` / `['a','b']`, quoted keys `['key.with.dots']`
(a quoted key is one key, dots and all), and filters
`[?(@.type=="Ready")]` with `==`, `!=`, `<`, `>`, `<=`, `>=` or a bare path (exists).
The braces and a leading `$` are optional, and a bare `status.phase` reads as
`.status.phase`, as kubectl's relaxed form does. Templates with text, `range` and
`end` are not supported.

Evaluation is lenient, like a printer column with missing keys allowed: a missing
field, an index out of range or a comparison between different types yields no match
rather than an error. Only a malformed expression raises (`ValueError`, naming the
position). Nothing here does I/O or mutates the document it reads.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = ["JSONPath", "evaluate", "format_value", "parse"]


# --------------------------------------------------------------------------------------
# The parsed form: a path is a tuple of steps, each mapping a list of nodes to a list.


@dataclass(frozen=True)
class _Field:
    name: str  # "" selects the node itself, as `{.}` does

    def apply(self, nodes: list[Any]) -> list[Any]:
        if not self.name:
            return list(nodes)
        return [n[self.name] for n in nodes if isinstance(n, Mapping) and self.name in n]


@dataclass(frozen=True)
class _Wildcard:
    def apply(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n in nodes:
            if isinstance(n, Mapping):
                out.extend(n.values())
            elif isinstance(n, list):
                out.extend(n)
        return out


@dataclass(frozen=True)
class _Recursive:
    """`..`: the node and every map or list below it, depth first."""

    def apply(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n in nodes:
            out.extend(_containers(n))
        return out


def _containers(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        yield node
        for child in node.values():
            yield from _containers(child)
    elif isinstance(node, list):
        yield node
        for child in node:
            yield from _containers(child)


@dataclass(frozen=True)
class _Slice:
    start: int | None
    end: int | None
    step: int | None
    single: bool  # `[n]` rather than `[a:b]`: one element or none

    def apply(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n in nodes:
            if not isinstance(n, list):
                continue
            if self.single:
                index = self.start if self.start is not None else 0
                if -len(n) <= index < len(n):
                    out.append(n[index])
            else:
                out.extend(n[self.start : self.end : self.step])
        return out


@dataclass(frozen=True)
class _Union:
    choices: tuple[_Field | _Slice | _Wildcard, ...]

    def apply(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n in nodes:
            for choice in self.choices:
                out.extend(choice.apply([n]))
        return out


@dataclass(frozen=True)
class _Literal:
    value: Any


@dataclass(frozen=True)
class _Filter:
    left: JSONPath
    operator: str | None  # None: keep items where `left` finds anything
    right: JSONPath | _Literal | None

    def apply(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n in nodes:
            if isinstance(n, list):
                out.extend(item for item in n if self._keeps(item))
        return out

    def _keeps(self, item: Any) -> bool:
        lefts = self.left.find(item)
        if self.operator is None:
            return bool(lefts)
        if isinstance(self.right, _Literal):
            rights = [self.right.value]
        else:
            assert self.right is not None
            rights = self.right.find(item)
        # Go compares exactly one value with one value and errs otherwise.
        if len(lefts) != 1 or len(rights) != 1:
            return False
        return _compare(lefts[0], self.operator, rights[0])


_Step = _Field | _Wildcard | _Recursive | _Slice | _Union | _Filter


def _compare(left: Any, op: str, right: Any) -> bool:
    """text/template's eq/ne/lt/le/gt/ge: values of different kinds never compare."""
    if isinstance(left, bool) or isinstance(right, bool):
        if not (isinstance(left, bool) and isinstance(right, bool)) or op not in ("==", "!="):
            return False
    elif isinstance(left, int | float) and isinstance(right, int | float):
        pass
    elif not (isinstance(left, str) and isinstance(right, str)):
        return False
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


@dataclass(frozen=True)
class JSONPath:
    """A parsed expression; `find(document)` lists every match, in document order."""

    expression: str
    steps: tuple[_Step, ...]

    def find(self, document: Any) -> list[Any]:
        nodes = [document]
        for step in self.steps:
            nodes = step.apply(nodes)
        return nodes


# --------------------------------------------------------------------------------------
# Parsing

_TERMINATORS = frozenset(".[]}) \t\r\n")
_FILTER_RE = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)
_SLICE_RE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_OPERATORS = frozenset({"==", "!=", "<", "<=", ">", ">="})


class _Parser:
    def __init__(self, expression: str, text: str, offset: int) -> None:
        self.expression = expression
        self.text = text
        self.offset = offset  # where `text` starts within `expression`, for messages
        self.pos = 0

    def fail(self, detail: str, at: int | None = None) -> ValueError:
        where = self.offset + (self.pos if at is None else at)
        return ValueError(f"invalid JSONPath {self.expression!r}: {detail} at position {where}")

    def parse(self) -> tuple[_Step, ...]:
        text = self.text
        steps: list[_Step] = []
        if text[:1] in ("$", "@"):
            self.pos = 1
        elif text[:1] not in (".", "["):
            # kubectl's relaxed form: `status.phase` means `.status.phase`.
            steps.append(self.field())
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == ".":
                if text.startswith("..", self.pos):
                    self.pos += 2
                    steps.append(_Recursive())
                    if self.pos < len(text) and text[self.pos] == "[":
                        continue
                else:
                    self.pos += 1
                if self.pos < len(text) and text[self.pos] == "*":
                    self.pos += 1
                    steps.append(_Wildcard())
                else:
                    steps.append(self.field())
            elif ch == "[":
                steps.append(self.bracket())
            else:
                raise self.fail(f"unexpected {ch!r}")
        return tuple(steps)

    def field(self) -> _Field:
        name: list[str] = []
        text = self.text
        while self.pos < len(text) and text[self.pos] not in _TERMINATORS:
            if text[self.pos] == "\\" and self.pos + 1 < len(text):
                self.pos += 1  # `\.` keeps a dot inside a name
            name.append(text[self.pos])
            self.pos += 1
        return _Field("".join(name))

    def bracket(self) -> _Step:
        start = self.pos
        if self.text.startswith("[?(", self.pos):
            return self.filter()
        end = self._closing(start + 1, "]", opened_at=start)
        inner = self.text[start + 1 : end].strip()
        self.pos = end + 1
        if inner == "*":
            return _Wildcard()
        parts = _split_outside_quotes(inner, ",")
        choices = [self.choice(part.strip(), start + 1) for part in parts]
        if len(choices) == 1:
            return choices[0]
        return _Union(tuple(choices))

    def choice(self, part: str, at: int) -> _Field | _Slice | _Wildcard:
        if part == "*":
            return _Wildcard()
        if part[:1] in ("'", '"'):
            value, rest = _read_quoted(part)
            if value is None or rest.strip():
                raise self.fail(f"malformed quoted key {part!r}", at)
            return _Field(value)
        match = _SLICE_RE.match(part)
        if not part or match is None:
            raise self.fail(f"invalid array index {part!r}", at)
        first, second, third = match.groups()

        def number(text: str | None) -> int | None:
            text = (text or "").lstrip(":")
            return int(text) if text else None

        if second is None:
            return _Slice(number(first), None, None, single=True)
        step = number(third)
        if step is not None and step <= 0:
            raise self.fail("step must be > 0", at)
        return _Slice(number(first), number(second), step, single=False)

    def filter(self) -> _Filter:
        start = self.pos
        body_start = start + 3
        close = self._closing(body_start, ")", opened_at=start)
        if not self.text.startswith("]", close + 1):
            raise self.fail("unclosed filter, expected ')]'", close)
        body = self.text[body_start:close]
        self.pos = close + 2
        match = _FILTER_RE.match(body)
        if match is None:
            return _Filter(self.sub_path(body.strip(), body_start), None, None)
        left, op, right = (g.strip() for g in match.groups())
        if op not in _OPERATORS:
            raise self.fail(f"unrecognized filter operator {op!r}", body_start)
        return _Filter(self.sub_path(left, body_start), op, self.operand(right, body_start))

    def sub_path(self, text: str, at: int) -> JSONPath:
        if not text:
            raise self.fail("empty path in filter", at)
        steps = _Parser(self.expression, text, self.offset + at).parse()
        return JSONPath(text, steps)

    def operand(self, text: str, at: int) -> JSONPath | _Literal:
        if text[:1] in ("'", '"'):
            value, rest = _read_quoted(text)
            if value is None or rest.strip():
                raise self.fail(f"malformed string {text!r}", at)
            return _Literal(value)
        if text in ("true", "false"):
            return _Literal(text == "true")
        if re.fullmatch(r"-?\d+", text):
            return _Literal(int(text))
        if re.fullmatch(r"-?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?|-?\d+[eE][-+]?\d+", text):
            return _Literal(float(text))
        return self.sub_path(text, at)

    def _closing(self, begin: int, closer: str, *, opened_at: int) -> int:
        """Index of the `closer` ending the bracket or filter opened before `begin`."""
        quote: str | None = None
        depth = 0
        i = begin
        text = self.text
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in ("'", '"'):
                quote = ch
            elif ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    if ch != closer:
                        raise self.fail(f"expected {closer!r}, found {ch!r}", i)
                    return i
                depth -= 1
            i += 1
        raise self.fail(f"unterminated {'filter' if closer == ')' else 'bracket'}", opened_at)


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif quote and ch == "\\":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in ("'", '"'):
            quote = ch
        elif ch == separator:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


_QUOTED_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _read_quoted(text: str) -> tuple[str | None, str]:
    """The string a leading quoted literal spells, and what follows it."""
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_QUOTED_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == quote:
            return "".join(out), text[i + 1 :]
        out.append(ch)
        i += 1
    return None, ""


@functools.lru_cache(maxsize=512)
def parse(expression: str) -> JSONPath:
    """Parse once (cached); raises ValueError saying what is wrong and where."""
    text = expression.strip()
    offset = len(expression) - len(expression.lstrip())
    if text.startswith("{"):
        if not text.endswith("}") or text.count("{") != 1:
            raise ValueError(
                f"invalid JSONPath {expression!r}: expected a single {{...}} expression"
            )
        inner = text[1:-1]
        offset += 1 + len(inner) - len(inner.lstrip())
        text = inner.strip()
    if not text:
        raise ValueError(f"invalid JSONPath {expression!r}: empty expression")
    steps = _Parser(expression, text, offset).parse()
    return JSONPath(expression, steps)


def evaluate(expression: str | JSONPath, document: Any) -> list[Any]:
    """Every value `expression` selects in `document` (an empty list when none)."""
    path = expression if isinstance(expression, JSONPath) else parse(expression)
    return path.find(document)


# --------------------------------------------------------------------------------------
# Printing a match as text, as the jsonpath printer does: maps and lists as compact JSON,
# anything else as Go's fmt.Fprint writes it.


def format_value(value: Any) -> str:
    """A value as `kubectl get -o jsonpath` prints it.

    Strings as they are, `true`/`false`, `3`, `1.5`, `1e+06` (Go's `%v`), `<nil>` for
    an explicit null, and maps and lists as compact JSON with sorted keys.
    """
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    return _go_json(value)


def _go_json(value: Any) -> str:
    """encoding/json.Marshal: sorted keys, no spaces, HTML characters escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, Mapping):
        items = (f"{_go_json_string(str(k))}:{_go_json(value[k])}" for k in sorted(value, key=str))
        return "{" + ",".join(items) + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join(_go_json(v) for v in value) + "]"
    return _go_json_string(str(value))


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _go_json_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ch < " " or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_json_float(value: float) -> str:
    # encoding/json writes floats like ES6: plain digits unless the exponent is
    # below -6 or at least 21, then e-notation with the exponent's zero padding removed.
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    exp = math.floor(math.log10(abs(value)))
    if exp < -6 or exp >= 21:
        mantissa, _, power = repr(value).partition("e")
        if not power:
            mantissa, _, power = f"{value:e}".partition("e")
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa.removesuffix('.0')}e{int(power):+d}"
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _go_float(value: float) -> str:
    """fmt's %v for a float64 (%g, shortest): e-notation from 1e+06 and below 1e-04."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # position of the decimal point
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"
