"""A small interpreter of CEL (the Common Expression Language), for the rules CRDs declare.

Covers the CEL that `x-kubernetes-validations` rules commonly use: literals, operators
with CEL's precedence and its commutative `&&` / `||` (a false operand wins over an
error), member access and indexing (`no such key`), `has()`, the macros `all`, `exists`,
`exists_one`, `map`, `filter`, `size`, type conversions, `duration` / `timestamp`,
string methods (`matches` is RE2 run by Python's `re`), the Kubernetes strings, lists
and regex libraries, and optionals (`a.?b`, `m[?k]`, `optional.of`, `hasValue`, `orValue`). Values are plain JSON values (int, float, str, bool, None, list, dict),
plus `UInt`, bytes, `timedelta` / `datetime` and `CelType`.

`compile_expr` parses once (a `CelSyntaxError` for text that is not CEL) into closures;
a call of a function this interpreter does not know raises `Unsupported` there, so the
caller can leave the rule to a real server. Evaluation raises `CelError` with cel-go's
words (`no such key: x`, `division by zero`, `no such overload`). Must never: do I/O,
or import anything outside the standard library.
"""

from __future__ import annotations

import datetime
import functools
import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from stackwright.localcluster import re2

__all__ = [
    "CelError",
    "CelSyntaxError",
    "CelType",
    "Library",
    "Optional",
    "Program",
    "UInt",
    "Unsupported",
    "compile_expr",
    "equal",
    "parse_duration",
    "parse_timestamp",
    "to_string",
]

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
UINT_MAX = 2**64 - 1


class CelError(Exception):
    """An evaluation error (cel-go's words): the rule neither holds nor fails."""


class CelSyntaxError(ValueError):
    """Text that is not a CEL expression: `<input>:line:col: Syntax error: what`."""


class Unsupported(ValueError):
    """A function (or construct) this interpreter does not implement."""


class UInt(int):
    """A CEL `uint` (`1u`)."""

    __slots__ = ()


@dataclass(frozen=True)
class CelType:
    """A type as a value: what `type(x)` returns, and `int`, `string`, … name."""

    name: str


@dataclass(frozen=True)
class Optional:
    """CEL's optional value (`a.?b`, `optional.of(x)`): `present` False for
    `optional.none()`."""

    cel_type: ClassVar[str] = "optional_type"
    present: bool
    value: Any = None


NONE = Optional(False)
_ABSENT = object()  # an optional map entry without a value: left out of the map
NO_OVERLOAD = "no such overload"
Env = dict[str, Any]
Eval = Callable[[Env], Any]

# ------------------------------------------------------------------ lexer

_RESERVED = frozenset(
    {"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
     "loop", "package", "namespace", "return", "var", "void", "while"}
)  # fmt: skip
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:'''|\"\"\"|'|"))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|[-+*/%!<>?:.,\[\](){}])
    """,
    re.VERBOSE,
)
_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}  # fmt: skip


@dataclass(frozen=True)
class _Tok:
    kind: str  # num, str, bytes, ident, op, eof
    text: str
    value: Any
    at: int


class _Source:
    def __init__(self, text: str) -> None:
        self.text = text

    def error(self, at: int, what: str) -> CelSyntaxError:
        line = self.text.count("\n", 0, at) + 1
        col = at - (self.text.rfind("\n", 0, at) + 1)
        return CelSyntaxError(f"<input>:{line}:{col + 1}: Syntax error: {what}")


def _lex(src: _Source) -> list[_Tok]:
    text, pos, out = src.text, 0, []
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise src.error(pos, f"token recognition error at: '{text[pos]}'")
        kind = match.lastgroup or ""
        if kind == "ws":
            pos = match.end()
            continue
        if kind == "str":
            tok, pos = _lex_string(src, pos, match.group())
            out.append(tok)
            continue
        word = match.group()
        if kind == "num":
            out.append(_Tok("num", word, _number(src, pos, word), pos))
        else:
            out.append(_Tok(kind, word, None, pos))
        pos = match.end()
    out.append(_Tok("eof", "<EOF>", None, len(text)))
    return out


def _number(src: _Source, at: int, word: str) -> Any:
    unsigned = word[-1] in "uU"
    body = word[:-1] if unsigned else word
    if body[:2] in ("0x", "0X"):
        value: Any = int(body, 16)
    elif re.fullmatch(r"\d+", body):
        value = int(body)
    elif unsigned:
        raise src.error(at, f"invalid uint literal: {word}")
    else:
        return float(body)
    if unsigned:
        if value > UINT_MAX:
            raise src.error(at, f"invalid uint literal: {word}")
        return UInt(value)
    if value > INT_MAX + 1:  # INT_MAX + 1 only as the operand of a unary minus
        raise src.error(at, f"invalid int literal: {word}")
    return value


def _lex_string(src: _Source, start: int, opening: str) -> tuple[_Tok, int]:
    prefix = opening.rstrip("'\"").lower()
    quote = opening[len(prefix) :]
    raw, is_bytes = "r" in prefix, "b" in prefix
    text, pos = src.text, start + len(opening)
    pieces: list[bytes] = []  # UTF-8, but an escape in a bytes literal is one byte
    while True:
        if pos >= len(text) or (len(quote) == 1 and text[pos] == "\n"):
            raise src.error(start, "unterminated string literal")
        if text.startswith(quote, pos):
            pos += len(quote)
            break
        if text[pos] == "\\" and not raw:
            decoded, pos = _escape(src, pos, is_bytes)
            pieces.append(
                bytes([ord(decoded)]) if is_bytes else decoded.encode("utf-8", "surrogatepass")
            )
            continue
        pieces.append(text[pos].encode("utf-8", "surrogatepass"))
        pos += 1
    body = b"".join(pieces)
    if is_bytes:
        return _Tok("bytes", text[start:pos], body, start), pos
    return _Tok("str", text[start:pos], body.decode("utf-8", "surrogatepass"), start), pos


def _escape(src: _Source, pos: int, is_bytes: bool) -> tuple[str, int]:
    text = src.text
    if pos + 1 >= len(text):
        raise src.error(pos, "unterminated escape sequence")
    kind = text[pos + 1]
    if kind in _ESCAPES:
        return _ESCAPES[kind], pos + 2
    widths = {"x": 2, "X": 2, "u": 4, "U": 8}
    if kind in widths and not (is_bytes and kind in "uU"):
        digits = text[pos + 2 : pos + 2 + widths[kind]]
        if len(digits) != widths[kind] or not re.fullmatch(r"[0-9a-fA-F]+", digits):
            raise src.error(pos, f"invalid escape sequence: \\{kind}{digits}")
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise src.error(pos, f"invalid unicode code point: \\{kind}{digits}")
        return chr(code), pos + 2 + widths[kind]
    digits = text[pos + 1 : pos + 4]
    if re.fullmatch(r"[0-3][0-7][0-7]", digits):
        return chr(int(digits, 8)), pos + 4
    raise src.error(pos, f"invalid escape sequence: \\{kind}")


# ------------------------------------------------------------------ parser: tokens → AST

# The AST is tuples: ("lit", v), ("ident", name), ("select", operand, field),
# ("has", operand, field), ("index", operand, index), ("call", name, target|None, args),
# ("list", items), ("map", [(k, v)]), ("unary", op, operand), ("binary", op, l, r),
# ("cond", c, t, f), ("macro", name, target, var, args), ("unsupported", what),
# ("optselect", operand, field), ("optindex", operand, index).
Node = tuple[Any, ...]

_BINARY = {
    "||": 1, "&&": 2,
    "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "in": 3,
    "+": 4, "-": 4,
    "*": 5, "/": 5, "%": 5,
}  # fmt: skip
_MACROS = {"all": (2,), "exists": (2,), "exists_one": (2,), "map": (2, 3), "filter": (2,)}


class _Parser:
    def __init__(self, src: _Source) -> None:
        self.src = src
        self.toks = _lex(src)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.tok
        return tok.kind in ("op", "ident") and tok.text == text

    def expect(self, text: str) -> None:
        if not self.at(text):
            raise self.src.error(
                self.tok.at, f"mismatched input '{self.tok.text}' expecting '{text}'"
            )
        self.i += 1

    def parse(self) -> Node:
        node = self.expr()
        if self.tok.kind != "eof":
            raise self.src.error(self.tok.at, f"extraneous input '{self.tok.text}' expecting <EOF>")
        return node

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > 250:
            raise self.src.error(self.tok.at, "expression recursion limit exceeded")
        cond = self.binary(1)
        if self.at("?"):
            self.take()
            yes = self.binary(1)
            self.expect(":")
            no = self.expr()
            cond = ("cond", cond, yes, no)
        self.depth -= 1
        return cond

    def binary(self, level: int) -> Node:
        left = self.unary()
        return self.climb(left, level)

    def climb(self, left: Node, level: int) -> Node:
        while True:
            tok = self.tok
            prec = _BINARY.get(tok.text) if tok.kind in ("op", "ident") else None
            if prec is None or prec < level:
                return left
            self.take()
            right = self.unary()
            while True:
                nxt = self.tok
                nprec = _BINARY.get(nxt.text) if nxt.kind in ("op", "ident") else None
                if nprec is None or nprec <= prec:
                    break
                right = self.climb(right, nprec)
            left = ("binary", tok.text, left, right)

    def unary(self) -> Node:
        if self.at("!") or self.at("-"):
            op = self.take().text
            count = 1
            while self.at(op):
                self.take()
                count += 1
            operand = self.member()
            literal = operand[0] == "lit" and type(operand[1]) in (int, float)
            if op == "-" and literal and -operand[1] >= INT_MIN and -operand[1] <= INT_MAX:
                count -= 1
                operand = ("lit", -operand[1])
            elif operand[0] == "lit" and type(operand[1]) is int and operand[1] > INT_MAX:
                raise self.src.error(self.tok.at, "invalid int literal")
            for _ in range(count):
                operand = ("unary", op, operand)
            return operand
        node = self.member()
        if node[0] == "lit" and type(node[1]) is int and node[1] > INT_MAX:
            raise self.src.error(self.tok.at, f"invalid int literal: {node[1]}")
        return node

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.at("."):
                self.take()
                name = self.ident()
                if self.at("("):
                    args = self.args(")")
                    node = self.call(name, node, args)
                elif self.at("{") and _qualified(node):
                    return self.message()
                else:
                    node = ("select", node, name)
            elif self.at("["):
                self.take()
                index = self.expr()
                self.expect("]")
                node = ("index", node, index)
            elif self.at(".?"):  # `a.?b`: an optional, of a.b when it exists
                self.take()
                node = ("optselect", node, self.ident())
            elif self.at("[?"):
                self.take()
                index = self.expr()
                self.expect("]")
                node = ("optindex", node, index)
            else:
                return node

    def message(self) -> Node:
        """`Type{field: value, …}`: parsed, not evaluated here."""
        self.take()
        while not self.at("}"):
            self.ident()
            self.expect(":")
            self.expr()
            if not self.at(","):
                break
            self.take()
        self.expect("}")
        return ("unsupported", "message construction")

    def ident(self) -> str:
        tok = self.take()
        if tok.kind != "ident":
            raise self.src.error(tok.at, f"mismatched input '{tok.text}' expecting IDENTIFIER")
        return tok.text

    def args(self, close: str) -> list[Node]:
        self.take()  # the opening bracket
        items: list[Node] = []
        while not self.at(close):
            items.append(self.expr())
            if not self.at(","):
                break
            self.take()
        self.expect(close)
        return items

    def call(self, name: str, target: Node | None, args: list[Node]) -> Node:
        if target is None and name == "has":
            if len(args) != 1 or args[0][0] != "select":
                raise self.src.error(self.tok.at, "invalid argument to has() macro")
            return ("has", args[0][1], args[0][2])
        if target is not None and name in _MACROS and len(args) in _MACROS[name]:
            var = args[0]
            if var[0] != "ident":
                raise self.src.error(self.tok.at, "argument must be a simple name")
            return ("macro", name, target, var[1], args[1:])
        return ("call", name, target, args)

    def primary(self) -> Node:
        tok = self.tok
        if tok.kind in ("num", "str", "bytes"):
            self.take()
            return ("lit", tok.value)
        if tok.kind == "ident":
            self.take()
            # As cel-go's parser: reserved words may name a field (`self.namespace`), not a
            # variable or function.
            if tok.text in _RESERVED or tok.text == "in":
                raise self.src.error(tok.at, f"reserved identifier: {tok.text}")
            if tok.text in ("true", "false"):
                return ("lit", tok.text == "true")
            if tok.text == "null":
                return ("lit", None)
            if self.at("("):
                return self.call(tok.text, None, self.args(")"))
            if self.at("{"):
                return self.message()
            return ("ident", tok.text)
        if self.at("."):
            self.take()
            return self.primary()
        if self.at("("):
            self.take()
            node = self.expr()
            self.expect(")")
            return node
        if self.at("[") or self.at("[?"):
            return self.list_literal()
        if self.at("{"):
            self.take()
            entries: list[tuple[Node, Node]] = []
            optional: list[bool] = []
            while not self.at("}"):
                optional.append(self.at("?"))
                if optional[-1]:
                    self.take()
                key = self.expr()
                self.expect(":")
                entries.append((key, self.expr()))
                if not self.at(","):
                    break
                self.take()
            self.expect("}")
            return ("optmap", entries, optional) if any(optional) else ("map", entries)
        shown = tok.text
        raise self.src.error(tok.at, f"mismatched input '{shown}' expecting an expression")

    def list_literal(self) -> Node:
        """`[a, ?b]`: an element marked `?` is an optional, kept only when it has a value."""
        optional = [self.take().text == "[?"]
        items: list[Node] = []
        while True:
            if not optional[-1] and self.at("?"):
                self.take()
                optional[-1] = True
            if self.at("]") and not optional[-1]:
                break
            items.append(self.expr())
            if not self.at(","):
                break
            self.take()
            optional.append(False)
        self.expect("]")
        flags = optional[: len(items)]
        return ("optlist", items, flags) if any(flags) else ("list", items)


def _qualified(node: Node) -> bool:
    """Whether `node` is a dotted name (`google.protobuf`), as a message type is spelled."""
    while node[0] == "select":
        node = node[1]
    return bool(node[0] == "ident")


# ------------------------------------------------------------------ values


def kind_of(value: Any) -> str:
    """The CEL type name of a value."""
    if value is None:
        return "null_type"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, UInt):
        return "uint"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, datetime.timedelta):
        return "google.protobuf.Duration"
    if isinstance(value, datetime.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(value, CelType):
        return "type"
    named = getattr(type(value), "cel_type", None)  # a library's type (Library)
    if isinstance(named, str):
        return named
    raise CelError(f"unsupported value: {value!r}")


_NUMERIC = frozenset({"int", "uint", "double"})
_TYPE_NAMES = {
    "int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
    "bytes": "bytes", "list": "list", "map": "map", "null_type": "null_type", "type": "type",
    "google.protobuf.Duration": "google.protobuf.Duration",
    "google.protobuf.Timestamp": "google.protobuf.Timestamp",
}  # fmt: skip


def equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers compare by value across int/uint/double, other
    different types are unequal, lists and maps compare element by element."""
    ka, kb = kind_of(a), kind_of(b)
    if ka in _NUMERIC and kb in _NUMERIC:
        return bool(a == b)
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        if len(a) != len(b):
            return False
        return all(k in b and equal(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _compare(a: Any, b: Any) -> int:
    ka, kb = kind_of(a), kind_of(b)
    comparable = ka == kb and ka in (
        "string", "bytes", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp",
    )  # fmt: skip
    if not comparable and not (ka in _NUMERIC and kb in _NUMERIC):
        raise CelError(NO_OVERLOAD)
    return int(a > b) - int(a < b)


def _int(value: int) -> int:
    if not INT_MIN <= value <= INT_MAX:
        raise CelError("integer overflow")
    return value


def _uint(value: int) -> UInt:
    if not 0 <= value <= UINT_MAX:
        raise CelError("unsigned integer overflow")
    return UInt(value)


def _same_kind(a: Any, b: Any) -> str:
    ka = kind_of(a)
    if ka != kind_of(b):
        raise CelError(NO_OVERLOAD)
    return ka


def _add(a: Any, b: Any) -> Any:
    ka, kb = kind_of(a), kind_of(b)
    if ka == "google.protobuf.Timestamp" and kb == "google.protobuf.Duration":
        return a + b
    if ka == "google.protobuf.Duration" and kb == "google.protobuf.Timestamp":
        return b + a
    kind = _same_kind(a, b)
    if kind == "int":
        return _int(a + b)
    if kind == "uint":
        return _uint(a + b)
    if kind in ("double", "string", "bytes", "list", "google.protobuf.Duration"):
        return a + b
    raise CelError(NO_OVERLOAD)


def _sub(a: Any, b: Any) -> Any:
    ka, kb = kind_of(a), kind_of(b)
    if ka == "google.protobuf.Timestamp" and kb == "google.protobuf.Duration":
        return a - b
    kind = _same_kind(a, b)
    if kind == "int":
        return _int(a - b)
    if kind == "uint":
        return _uint(a - b)
    if kind in ("double", "google.protobuf.Duration", "google.protobuf.Timestamp"):
        return a - b
    raise CelError(NO_OVERLOAD)


def _mul(a: Any, b: Any) -> Any:
    kind = _same_kind(a, b)
    if kind == "int":
        return _int(a * b)
    if kind == "uint":
        return _uint(a * b)
    if kind == "double":
        return a * b
    raise CelError(NO_OVERLOAD)


def _truncated(a: int, b: int) -> tuple[int, int]:
    """Go's integer division: the quotient rounds toward zero, the remainder takes a's sign."""
    quotient = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        quotient = -quotient
    return quotient, a - b * quotient


def _div(a: Any, b: Any) -> Any:
    kind = _same_kind(a, b)
    if kind == "double":
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
        return a / b
    if kind not in ("int", "uint"):
        raise CelError(NO_OVERLOAD)
    if b == 0:
        raise CelError("division by zero")
    quotient = _truncated(a, b)[0]
    return _int(quotient) if kind == "int" else UInt(quotient)


def _mod(a: Any, b: Any) -> Any:
    kind = _same_kind(a, b)
    if kind not in ("int", "uint"):
        raise CelError(NO_OVERLOAD)
    if b == 0:
        raise CelError("modulus by zero")
    if kind == "int" and a == INT_MIN and b == -1:
        raise CelError("integer overflow")
    remainder = _truncated(a, b)[1]
    return remainder if kind == "int" else UInt(remainder)


def _in(a: Any, b: Any) -> bool:
    if isinstance(b, list):
        return any(equal(a, item) for item in b)
    if isinstance(b, dict):
        return _has_key(b, a)
    raise CelError(NO_OVERLOAD)


def _has_key(mapping: dict[Any, Any], key: Any) -> bool:
    if isinstance(key, str):
        return key in mapping
    return any(equal(k, key) for k in mapping)


_ORDER: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add, "-": _sub, "*": _mul, "/": _div, "%": _mod, "in": _in,
    "==": equal, "!=": lambda a, b: not equal(a, b),
}  # fmt: skip


def _select(value: Any, name: str) -> Any:
    if not isinstance(value, dict):
        if isinstance(value, Optional):  # `a.?b.c`: c of an optional is optional too
            return _optional_select(value, name)
        raise CelError(NO_OVERLOAD)
    if name in value:
        return value[name]
    escaped = _unescape(name)
    if escaped in value:
        return value[escaped]
    raise CelError(f"no such key: {name}")


_ESCAPED = re.compile(r"__(underscores|dot|dash|slash|[a-z]+)__")


def _unescape(name: str) -> str:
    """Kubernetes' escaping of property names CEL cannot spell (`__dot__` for `.`, …)."""
    if "__" not in name:
        return name
    words = {"underscores": "__", "dot": ".", "dash": "-", "slash": "/"}
    return _ESCAPED.sub(lambda m: words.get(m.group(1), m.group(1)), name)


def _optional_select(value: Any, name: str) -> Optional:
    """`value.?name`: the field as an optional, none where it is absent."""
    if isinstance(value, Optional):
        if not value.present:
            return NONE
        value = value.value
    if not isinstance(value, dict):
        raise CelError(NO_OVERLOAD)
    if name in value:
        return Optional(True, value[name])
    escaped = _unescape(name)
    return Optional(True, value[escaped]) if escaped in value else NONE


def _optional_index(value: Any, key: Any) -> Optional:
    """`value[?key]`: the element as an optional, none where it is absent."""
    if isinstance(value, Optional):
        if not value.present:
            return NONE
        value = value.value
    try:
        return Optional(True, _index(value, key))
    except CelError as exc:
        if str(exc).startswith(("no such key", "index out of bounds")):
            return NONE
        raise


def _index(value: Any, key: Any) -> Any:
    if isinstance(value, list):
        kind = kind_of(key)
        if kind == "double" and key.is_integer():
            key = int(key)
        elif kind not in ("int", "uint"):
            raise CelError(NO_OVERLOAD)
        if not 0 <= key < len(value):
            raise CelError(f"index out of bounds: {key}")
        return value[key]
    if isinstance(value, dict):
        if isinstance(key, str) and key in value:
            return value[key]
        found = [v for k, v in value.items() if not isinstance(k, str) and equal(k, key)]
        if found:
            return found[0]
        shown = key if isinstance(key, str) else to_string(key)
        raise CelError(f"no such key: {shown}")
    if isinstance(value, Optional):  # `a[?b][c]`: c of an optional is optional too
        return _optional_index(value, key)
    raise CelError(NO_OVERLOAD)


def _truth(value: Any) -> bool:
    if value is True or value is False:
        return bool(value)
    raise CelError(NO_OVERLOAD)


# ------------------------------------------------------------------ functions


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, dict)):
        return len(value)
    raise CelError(NO_OVERLOAD)


#: The decimal text Go's strconv.ParseInt / ParseUint take (Python's int() also takes
#: spaces around it, `_` between digits and any script's digits).
_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_UINT = re.compile(r"[0-9]+")


def _to_int(value: Any) -> int:
    kind = kind_of(value)
    if kind in ("int", "uint"):
        return _int(int(value))
    if kind == "double":
        # cel-go's doubleToInt64Checked: -2**63 itself is refused too
        if math.isnan(value) or not -(2.0**63) < value < 2.0**63:
            raise CelError("integer overflow")
        return int(value)
    if kind == "string":
        if not _GO_INT.fullmatch(value):  # Go's ParseInt: no spaces, `_` or non-ASCII digits
            raise CelError(f"cannot convert '{value}' to int")
        return _int(int(value, 10))
    if kind == "google.protobuf.Timestamp":
        return int(value.timestamp())
    raise CelError(NO_OVERLOAD)


def _to_uint(value: Any) -> UInt:
    kind = kind_of(value)
    if kind in ("int", "uint"):
        return _uint(int(value))
    if kind == "double":
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise CelError("unsigned integer overflow")
        return UInt(int(value))
    if kind == "string":
        if not _GO_UINT.fullmatch(value):  # Go's ParseUint: not even a sign
            raise CelError(f"cannot convert '{value}' to uint")
        return _uint(int(value, 10))
    raise CelError(NO_OVERLOAD)


def _to_double(value: Any) -> float:
    kind = kind_of(value)
    if kind in _NUMERIC:
        return float(value)
    if kind == "string":
        try:
            if value.strip() != value or "_" in value or not value.isascii():
                raise ValueError(value)  # Go's ParseFloat takes none of what Python's does
            return float(value)
        except ValueError:
            raise CelError(f"cannot convert '{value}' to double") from None
    raise CelError(NO_OVERLOAD)


def to_string(value: Any) -> str:
    """`string(value)`: a value's text as CEL's `string()` gives it."""
    kind = kind_of(value)
    if kind == "string":
        return str(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int", "uint"):
        return str(int(value))
    if kind == "double":
        return _format_double(value)
    if kind == "bytes":
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    if kind == "google.protobuf.Duration":
        return _format_duration(value)
    if kind == "google.protobuf.Timestamp":
        return _format_timestamp(value)
    shown = getattr(value, "cel_string", None)  # a library's value that has a text form
    if callable(shown):
        return str(shown())
    raise CelError(NO_OVERLOAD)


def _format_timestamp(value: datetime.datetime) -> str:
    """As Go's time.RFC3339Nano: a fraction without its trailing zeros (`…:30.5Z`, not
    `…:30.500000Z`), `Z` for UTC."""
    text = value.isoformat().replace("+00:00", "Z")
    return re.sub(r"\.(\d+)", lambda m: f".{m[1].rstrip('0')}", text, count=1)


def _format_double(value: float) -> str:
    """A double as Go's strconv.FormatFloat(v, 'g', -1, 64) prints it."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    text = repr(value)
    if text.endswith(".0"):
        text = text[:-2]
    mantissa, _, exponent = text.partition("e")
    if exponent:
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{exponent.lstrip('+-').zfill(2)}"
    return text


def _to_bool(value: Any) -> bool:
    kind = kind_of(value)
    if kind == "bool":
        return bool(value)
    if kind == "string":
        if value in ("true", "True", "TRUE", "t", "1"):
            return True
        if value in ("false", "False", "FALSE", "f", "0"):
            return False
        raise CelError("type conversion error from 'string' to 'bool'")
    raise CelError(NO_OVERLOAD)


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise CelError(NO_OVERLOAD)


_DURATION_UNITS = {
    "h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1.0,
}  # fmt: skip
_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(h|ms|m|s|us|µs|ns)")


def parse_duration(text: str) -> datetime.timedelta:
    """Go's time.ParseDuration ("1h30m", "-1.5s")."""
    body, sign = text, 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return datetime.timedelta(0)
    total, pos = 0.0, 0
    while pos < len(body):
        match = _DURATION.match(body, pos)
        if match is None or match.group(1) in ("", "."):
            raise CelError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if not body:
        raise CelError(f'time: invalid duration "{text}"')
    return datetime.timedelta(microseconds=sign * total / 1e3)


def _format_duration(value: datetime.timedelta) -> str:
    seconds = value.total_seconds()
    return f"{_format_double(seconds)}s"


def _to_duration(value: Any) -> datetime.timedelta:
    if isinstance(value, datetime.timedelta):
        return value
    if isinstance(value, str):
        return parse_duration(value)
    raise CelError(NO_OVERLOAD)


def parse_timestamp(text: str) -> datetime.datetime:
    """An RFC 3339 timestamp."""
    match = re.fullmatch(
        r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text
    )
    if match is None:
        raise CelError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    day, clock, fraction, zone = match.groups()
    micro = (fraction or ".0")[1:7].ljust(6, "0")
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        return datetime.datetime.fromisoformat(f"{day}T{clock}.{micro}{zone}")
    except ValueError:
        raise CelError(f'parsing time "{text}": out of range') from None


def _to_timestamp(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        return parse_timestamp(value)
    if kind_of(value) == "int":
        return datetime.datetime.fromtimestamp(value, datetime.UTC)
    raise CelError(NO_OVERLOAD)


def _type(value: Any) -> CelType:
    return CelType(kind_of(value))


def _string_arg(value: Any) -> str:
    if not isinstance(value, str):
        raise CelError(NO_OVERLOAD)
    return value


def _int_arg(value: Any) -> int:
    if kind_of(value) != "int":
        raise CelError(NO_OVERLOAD)
    return int(value)


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re2.compile_re2(pattern)
    except re.error as exc:
        raise CelError(f"error parsing regexp: {exc}") from None


def _matches(text: Any, pattern: Any) -> bool:
    return _regex(_string_arg(pattern)).search(_string_arg(text)) is not None


def _find(text: Any, pattern: Any) -> str:
    found = _regex(_string_arg(pattern)).search(_string_arg(text))
    return found.group() if found else ""


def _find_all(text: Any, pattern: Any, limit: Any = -1) -> list[str]:
    count = _int_arg(limit)
    found = _regex(_string_arg(pattern)).finditer(_string_arg(text))
    return [m.group() for m in itertools.islice(found, None if count < 0 else count)]


def _char_at(target: Any, index: Any) -> str:
    text, at = _string_arg(target), _int_arg(index)
    if not 0 <= at <= len(text):
        raise CelError(f"index out of range: {at}")
    return text[at : at + 1]


def _index_of(target: Any, item: Any, offset: Any = 0) -> int:
    if isinstance(target, list):
        return next((i for i, v in enumerate(target) if equal(v, item)), -1)
    text, sub, start = _string_arg(target), _string_arg(item), _int_arg(offset)
    if not 0 <= start <= len(text):
        raise CelError(f"index out of range: {start}")
    return text.find(sub, start)


def _last_index_of(target: Any, item: Any, *offset: Any) -> int:
    if isinstance(target, list):
        found = [i for i, v in enumerate(target) if equal(v, item)]
        return found[-1] if found else -1
    text, sub = _string_arg(target), _string_arg(item)
    end = len(text) if not offset else _int_arg(offset[0])
    if not 0 <= end <= len(text):
        raise CelError(f"index out of range: {end}")
    return text.rfind(sub, 0, end + len(sub))


def _ascii(text: Any, upper: bool) -> str:
    mapped = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if upper else "abcdefghijklmnopqrstuvwxyz",
    )
    return _string_arg(text).translate(mapped)


def _replace(text: Any, old: Any, new: Any, count: Any = -1) -> str:
    return _string_arg(text).replace(_string_arg(old), _string_arg(new), _int_arg(count))


def _split(target: Any, separator: Any, count: Any = -1) -> list[str]:
    text, sep, limit = _string_arg(target), _string_arg(separator), _int_arg(count)
    if limit == 0:
        return []
    if sep == "":
        chars = list(text)
        return (
            chars if limit < 0 or limit >= len(chars) else [*chars[: limit - 1], text[limit - 1 :]]
        )
    return text.split(sep, limit - 1 if limit > 0 else -1)


def _substring(target: Any, start: Any, *end: Any) -> str:
    text, begin = _string_arg(target), _int_arg(start)
    stop = len(text) if not end else _int_arg(end[0])
    if not 0 <= begin <= len(text):
        raise CelError(f"index out of range: {begin}")
    if not begin <= stop <= len(text):
        raise CelError(f"index out of range: {stop}")
    return text[begin:stop]


def _trim(text: Any) -> str:
    return _string_arg(text).strip(
        " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
    )


def _join(items: Any, sep: Any = "") -> str:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise CelError(NO_OVERLOAD)
    return _string_arg(sep).join(items)


def _list_arg(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CelError(NO_OVERLOAD)
    return value


def _is_sorted(items: Any) -> bool:
    items = _list_arg(items)
    return all(_compare(a, b) <= 0 for a, b in itertools.pairwise(items))


def _sum(items: Any) -> Any:
    items = _list_arg(items)
    if not items:
        return 0
    total = items[0]
    for item in items[1:]:
        total = _add(total, item)
    return total


def _extreme(items: Any, sign: int) -> Any:
    items = _list_arg(items)
    if not items:
        raise CelError(f"{'max' if sign > 0 else 'min'}(list) argument must not be empty")
    best = items[0]
    for item in items[1:]:
        if _compare(item, best) * sign > 0:
            best = item
    return best


def _starts_with(text: Any, prefix: Any) -> bool:
    return _string_arg(text).startswith(_string_arg(prefix))


def _ends_with(text: Any, suffix: Any) -> bool:
    return _string_arg(text).endswith(_string_arg(suffix))


def _contains(text: Any, sub: Any) -> bool:
    return _string_arg(sub) in _string_arg(text)


def _optional_arg(value: Any) -> Optional:
    if not isinstance(value, Optional):
        raise CelError(NO_OVERLOAD)
    return value


def _optional_value(value: Any) -> Any:
    if not _optional_arg(value).present:
        raise CelError("optional.none() dereference")
    return value.value


def _zero(value: Any) -> bool:
    """Whether `value` is its type's zero value (`optional.ofNonZeroValue`)."""
    if isinstance(value, (bool, int, float, str, bytes, list, dict)):
        return not value
    return value is None or value == datetime.timedelta(0)


# name → (argument counts, implementation); methods take the receiver first.
_FUNCTIONS: dict[str, tuple[tuple[int, ...], Callable[..., Any]]] = {
    "size": ((1,), _size),
    "int": ((1,), _to_int),
    "uint": ((1,), _to_uint),
    "double": ((1,), _to_double),
    "string": ((1,), to_string),
    "bool": ((1,), _to_bool),
    "bytes": ((1,), _to_bytes),
    "type": ((1,), _type),
    "dyn": ((1,), lambda v: v),
    "duration": ((1,), _to_duration),
    "timestamp": ((1,), _to_timestamp),
    "matches": ((2,), _matches),
    "optional.of": ((1,), lambda v: Optional(True, v)),
    "optional.ofNonZeroValue": ((1,), lambda v: NONE if _zero(v) else Optional(True, v)),
    "optional.none": ((0,), lambda: NONE),
}
_METHODS: dict[str, tuple[tuple[int, ...], Callable[..., Any]]] = {
    "size": ((0,), _size),
    "startsWith": ((1,), _starts_with),
    "endsWith": ((1,), _ends_with),
    "contains": ((1,), _contains),
    "matches": ((1,), _matches),
    "find": ((1,), _find),
    "findAll": ((1, 2), _find_all),
    "charAt": ((1,), _char_at),
    "indexOf": ((1, 2), _index_of),
    "lastIndexOf": ((1, 2), _last_index_of),
    "lowerAscii": ((0,), lambda t: _ascii(t, upper=False)),
    "upperAscii": ((0,), lambda t: _ascii(t, upper=True)),
    "replace": ((2, 3), _replace),
    "split": ((1, 2), _split),
    "substring": ((1, 2), _substring),
    "trim": ((0,), _trim),
    "join": ((0, 1), _join),
    "isSorted": ((0,), _is_sorted),
    "sum": ((0,), _sum),
    "min": ((0,), lambda items: _extreme(items, -1)),
    "max": ((0,), lambda items: _extreme(items, 1)),
    "hasValue": ((0,), lambda o: _optional_arg(o).present),
    "value": ((0,), _optional_value),
    # `or` / `orValue` are compiled to `_optional_or`, lazy in their argument; listed here
    # for their declaration
    "orValue": ((1,), _optional_arg),
    "or": ((1,), _optional_arg),
}

# ------------------------------------------------------------------ compiler: AST → closures


@dataclass(frozen=True)
class Program:
    """A compiled expression: `evaluate({"self": …})` gives its value or raises CelError."""

    source: str
    run: Eval
    variables: frozenset[str]

    def evaluate(self, bindings: Mapping[str, Any]) -> Any:
        try:
            return self.run(dict(bindings))
        except OverflowError:  # a timestamp past year 9999 (or before year 1)
            raise CelError("timestamp overflow") from None


def _variable(name: str, env: Env) -> Any:
    if name not in env:  # oldSelf on a create
        raise CelError(f"no such attribute: {name}")
    return env[name]


Functions = Mapping[str, tuple[tuple[int, ...], Callable[..., Any]]]


@dataclass(frozen=True, eq=False)  # hashed by identity: a compile_expr cache key
class Library:
    """Functions and methods beyond the core (name → argument counts, implementation;
    a method's implementation takes the receiver first). A value of a library's own type
    has a class attribute `cel_type`, its type name; it compares by `==`."""

    functions: Functions
    methods: Functions


_CORE = Library({}, {})


@functools.lru_cache(maxsize=2048)
def compile_expr(
    text: str, variables: frozenset[str] = frozenset({"self"}), library: Library = _CORE
) -> Program:
    """Parse and compile `text` once; `variables`: the names it may refer to; `library`:
    functions beyond the core.

    Raises CelSyntaxError for text that does not parse, Unsupported for a function (or
    a name) this interpreter does not know.
    """
    src = _Source(text)
    ast = _Parser(src).parse()
    used: set[str] = set()
    run = _Compiler(variables, used, library).compile(ast, frozenset())
    return Program(text, run, frozenset(used))


class _Compiler:
    def __init__(self, variables: frozenset[str], used: set[str], library: Library) -> None:
        self.variables = variables
        self.used = used
        self.library = library

    def compile(self, node: Node, scope: frozenset[str]) -> Eval:
        method = getattr(self, "_" + node[0])
        result: Eval = method(node, scope)
        return result

    def _unsupported(self, node: Node, scope: frozenset[str]) -> Eval:
        raise Unsupported(node[1])

    def _lit(self, node: Node, scope: frozenset[str]) -> Eval:
        value = node[1]
        return lambda env: value

    def _ident(self, node: Node, scope: frozenset[str]) -> Eval:
        name = node[1]
        if name in scope or name in self.variables:
            if name not in scope:
                self.used.add(name)
            return functools.partial(_variable, name)
        if name in _TYPE_NAMES:
            value = CelType(_TYPE_NAMES[name])
            return lambda env: value
        raise Unsupported(f"undeclared reference to '{name}'")

    def _select(self, node: Node, scope: frozenset[str]) -> Eval:
        operand, name = self.compile(node[1], scope), node[2]
        return lambda env: _select(operand(env), name)

    def _has(self, node: Node, scope: frozenset[str]) -> Eval:
        operand, name = self.compile(node[1], scope), node[2]
        escaped = _unescape(name)

        def has(env: Env) -> bool:
            value = operand(env)
            if not isinstance(value, dict):
                raise CelError(NO_OVERLOAD)
            return name in value or escaped in value

        return has

    def _optselect(self, node: Node, scope: frozenset[str]) -> Eval:
        operand, name = self.compile(node[1], scope), node[2]
        return lambda env: _optional_select(operand(env), name)

    def _optindex(self, node: Node, scope: frozenset[str]) -> Eval:
        operand, key = self.compile(node[1], scope), self.compile(node[2], scope)
        return lambda env: _optional_index(operand(env), key(env))

    def _index(self, node: Node, scope: frozenset[str]) -> Eval:
        operand, key = self.compile(node[1], scope), self.compile(node[2], scope)
        return lambda env: _index(operand(env), key(env))

    def _list(self, node: Node, scope: frozenset[str]) -> Eval:
        items = [self.compile(item, scope) for item in node[1]]
        return lambda env: [item(env) for item in items]

    def _optlist(self, node: Node, scope: frozenset[str]) -> Eval:
        items = [(self.compile(item, scope), flag) for item, flag in zip(*node[1:], strict=True)]

        def build(env: Env) -> list[Any]:
            out = []
            for item, optional in items:
                value = item(env)
                if not optional:
                    out.append(value)
                elif _optional_arg(value).present:
                    out.append(value.value)
            return out

        return build

    def _optmap(self, node: Node, scope: frozenset[str]) -> Eval:
        entries = [(k, ("optional_entry", v)) if flag else (k, v)
                   for (k, v), flag in zip(*node[1:], strict=True)]  # fmt: skip
        build = self._map(("map", [(k, v) for k, v in entries]), scope)

        def prune(env: Env) -> dict[Any, Any]:
            return {k: v for k, v in build(env).items() if v is not _ABSENT}

        return prune

    def _optional_entry(self, node: Node, scope: frozenset[str]) -> Eval:
        value = self.compile(node[1], scope)

        def unwrap(env: Env) -> Any:
            given = _optional_arg(value(env))
            return given.value if given.present else _ABSENT

        return unwrap

    def _map(self, node: Node, scope: frozenset[str]) -> Eval:
        entries = [(self.compile(k, scope), self.compile(v, scope)) for k, v in node[1]]

        def build(env: Env) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for key_of, value_of in entries:
                key = key_of(env)
                if kind_of(key) not in ("string", "int", "uint", "bool"):
                    raise CelError(f"unsupported key type: {kind_of(key)}")
                if _has_key(out, key):
                    raise CelError(f"Failed with repeated key: {to_string(key)}")
                out[key] = value_of(env)
            return out

        return build

    def _unary(self, node: Node, scope: frozenset[str]) -> Eval:
        operand = self.compile(node[2], scope)
        if node[1] == "!":
            return lambda env: not _truth(operand(env))

        def negate(env: Env) -> Any:
            value = operand(env)
            kind = kind_of(value)
            if kind == "int":
                return _int(-value)
            if kind in ("double", "google.protobuf.Duration"):
                return -value
            raise CelError(NO_OVERLOAD)

        return negate

    def _cond(self, node: Node, scope: frozenset[str]) -> Eval:
        cond, yes, no = (self.compile(n, scope) for n in node[1:])
        return lambda env: yes(env) if _truth(cond(env)) else no(env)

    def _binary(self, node: Node, scope: frozenset[str]) -> Eval:
        op = node[1]
        left, right = self.compile(node[2], scope), self.compile(node[3], scope)
        if op in ("||", "&&"):
            return _logical(left, right, winner=op == "||")
        if op in _ORDER:
            holds = _ORDER[op]
            return lambda env: holds(_compare(left(env), right(env)))
        apply = _ARITHMETIC[op]
        return lambda env: apply(left(env), right(env))

    def _call(self, node: Node, scope: frozenset[str]) -> Eval:
        name, target, arg_nodes = node[1], node[2], node[3]
        args = [self.compile(a, scope) for a in arg_nodes]
        if target is not None and target[0] == "ident" and target[1] not in scope:
            qualified = f"{target[1]}.{name}"  # a namespaced function: `sets.contains(…)`
            known = qualified in self.library.functions or qualified in _FUNCTIONS
            if target[1] not in self.variables and known:
                target, name = None, qualified
        if target is None:
            entry = self.library.functions.get(name) or _FUNCTIONS.get(name)
        else:
            entry = self.library.methods.get(name) or _METHODS.get(name)
        if entry is None or len(args) not in entry[0]:
            raise Unsupported(f"undeclared reference to '{name}'")
        impl = entry[1]
        if target is not None and name in ("or", "orValue"):
            return _optional_or(self.compile(target, scope), args[0], unwrap=name == "orValue")
        if target is not None:
            args.insert(0, self.compile(target, scope))
        if len(args) == 1:
            only = args[0]
            return lambda env: impl(only(env))
        return lambda env: impl(*(a(env) for a in args))

    def _macro(self, node: Node, scope: frozenset[str]) -> Eval:
        name, target, var, rest = node[1], node[2], node[3], node[4]
        source = self.compile(target, scope)
        inner = scope | {var}
        steps = [self.compile(n, inner) for n in rest]

        def items(env: Env) -> list[Any]:
            value = source(env)
            if isinstance(value, list):
                return value
            if isinstance(value, dict):
                return list(value)
            raise CelError(NO_OVERLOAD)

        def each(env: Env, item: Any) -> Env:
            return {**env, var: item}

        if name in ("all", "exists"):
            predicate, winner = steps[0], name == "exists"

            def quantify(env: Env) -> bool:
                error: CelError | None = None
                for item in items(env):
                    try:
                        if _truth(predicate(each(env, item))) is winner:
                            return winner
                    except CelError as exc:
                        error = error or exc
                if error is not None:
                    raise error
                return not winner

            return quantify
        if name == "exists_one":
            predicate = steps[0]
            return lambda env: sum(_truth(predicate(each(env, i))) for i in items(env)) == 1
        if name == "filter":
            predicate = steps[0]
            return lambda env: [i for i in items(env) if _truth(predicate(each(env, i)))]
        if len(steps) == 1:
            transform = steps[0]
            return lambda env: [transform(each(env, i)) for i in items(env)]
        keep, transform = steps

        def map_filtered(env: Env) -> list[Any]:
            out = []
            for item in items(env):
                scoped = each(env, item)
                if _truth(keep(scoped)):
                    out.append(transform(scoped))
            return out

        return map_filtered


def _optional_or(optional: Eval, other: Eval, *, unwrap: bool) -> Eval:
    """`o.or(p)` / `o.orValue(v)`: the alternative is evaluated only when `o` has no value,
    as cel-go's interpreter does (`o.orValue(self.x[0])` errs only where it is needed)."""

    def either(env: Env) -> Any:
        given = _optional_arg(optional(env))
        if given.present:
            return given.value if unwrap else given
        return other(env) if unwrap else _optional_arg(other(env))

    return either


def _logical(left: Eval, right: Eval, *, winner: bool) -> Eval:
    """`||` (winner True) or `&&` (winner False), commutative as CEL's: the operand that
    decides wins over an error in the other; else the error stands."""

    def evaluate(env: Env) -> bool:
        error: CelError | None = None
        try:
            if _truth(left(env)) is winner:
                return winner
        except CelError as exc:
            error = exc
        try:
            if _truth(right(env)) is winner:
                return winner
        except CelError as exc:
            error = error or exc
        if error is not None:
            raise error
        return not winner

    return evaluate
