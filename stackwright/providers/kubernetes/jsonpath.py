"""A small JSONPath reader for `stackwright.io/wait-for: jsonpath={...}=value`.

The subset of Kubernetes' JSONPath that waiting conditions use, inside one optional
`{...}` with an optional leading `$`:

    .field   .field\\.with\\.dots   ['quoted.key']   ["quoted"]   [0]   [-1]   [*]   .*
    ..field (recursive descent)     [?(@.type=="Ready")]   [?(@.a.b != 3)]   [?(@.ready)]

Filters compare with ==, !=, <, <=, >, >= against a quoted string, a number, true,
false or null; a bare `@.path` keeps the elements where that path exists.
Evaluation is lenient (a missing field is no match, not an error); only a malformed
expression raises `ValueError` naming the position. Pure: no I/O, no mutation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["compile_path", "evaluate", "format_value"]


@dataclass(frozen=True)
class _Key:
    name: str


@dataclass(frozen=True)
class _Index:
    index: int


@dataclass(frozen=True)
class _All:
    pass


@dataclass(frozen=True)
class _Descend:
    pass


@dataclass(frozen=True)
class _Filter:
    path: tuple[Any, ...]
    op: str  # "" means "exists"
    value: Any


_OPS = ("==", "!=", "<=", ">=", "<", ">")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"JSONPath {self.text!r}: {what} at position {self.pos}")

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.text[i] if i < len(self.text) else ""

    def path(self, *, relative: bool) -> tuple[Any, ...]:
        steps: list[Any] = []
        if not relative and self.peek() == "$":
            self.pos += 1
        elif relative:
            if self.peek() != "@":
                raise self.fail("a filter path must start with @")
            self.pos += 1
        if not relative and self.peek() not in (".", "[", ""):
            # kubectl reads a bare `status.phase` as `.status.phase`.
            steps.append(_Key(self.name()))
        while True:
            c = self.peek()
            if c == ".":
                if self.peek(1) == ".":
                    self.pos += 2
                    steps.append(_Descend())
                    if self.peek() == "[":
                        continue
                    if self.peek() == "*":
                        self.pos += 1
                        steps.append(_All())
                        continue
                    steps.append(_Key(self.name()))
                    continue
                self.pos += 1
                if self.peek() == "*":
                    self.pos += 1
                    steps.append(_All())
                elif self.peek() in ("", "}", ")") or self.peek() in " =!<>":
                    continue  # `{.}`: the node itself
                else:
                    steps.append(_Key(self.name()))
            elif c == "[":
                steps.append(self.bracket())
            else:
                return tuple(steps)

    def name(self) -> str:
        out: list[str] = []
        while True:
            c = self.peek()
            if c == "\\" and self.peek(1):
                out.append(self.peek(1))
                self.pos += 2
            elif c and c not in ".[]{}()=!<> \t":
                out.append(c)
                self.pos += 1
            else:
                break
        if not out:
            raise self.fail("expected a field name")
        return "".join(out)

    def bracket(self) -> Any:
        self.pos += 1  # [
        c = self.peek()
        if c in ("'", '"'):
            key = self.quoted()
            self.expect("]")
            return _Key(key)
        if c == "*":
            self.pos += 1
            self.expect("]")
            return _All()
        if c == "?":
            self.pos += 1
            self.expect("(")
            self.skip_spaces()
            path = self.path(relative=True)
            self.skip_spaces()
            op = next((o for o in _OPS if self.text.startswith(o, self.pos)), "")
            value: Any = None
            if op:
                self.pos += len(op)
                self.skip_spaces()
                value = self.literal()
                self.skip_spaces()
            self.expect(")")
            self.expect("]")
            return _Filter(path, op, value)
        start = self.pos
        if self.peek() == "-":
            self.pos += 1
        while self.peek().isdigit():
            self.pos += 1
        digits = self.text[start : self.pos]
        if digits in ("", "-"):
            raise self.fail("expected an index, a quoted key, * or ?(...)")
        self.expect("]")
        return _Index(int(digits))

    def quoted(self) -> str:
        quote = self.peek()
        self.pos += 1
        out: list[str] = []
        while True:
            c = self.peek()
            if not c:
                raise self.fail("unterminated quoted string")
            self.pos += 1
            if c == "\\" and self.peek():
                out.append(self.peek())
                self.pos += 1
            elif c == quote:
                return "".join(out)
            else:
                out.append(c)

    def literal(self) -> Any:
        c = self.peek()
        if c in ("'", '"'):
            return self.quoted()
        start = self.pos
        while self.peek() and self.peek() not in ") \t":
            self.pos += 1
        word = self.text[start : self.pos]
        if word in ("true", "false"):
            return word == "true"
        if word == "null":
            return None
        try:
            return int(word)
        except ValueError:
            pass
        try:
            return float(word)
        except ValueError:
            raise self.fail(
                f"expected a quoted string, a number, true, false or null, got {word!r}"
            ) from None

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def skip_spaces(self) -> None:
        while self.peek() in (" ", "\t"):
            self.pos += 1


def compile_path(expression: str) -> tuple[Any, ...]:
    """Parse `{.status.phase}` (braces optional) into steps; raises ValueError when malformed."""
    text = expression.strip()
    if text.startswith("{"):
        if not text.endswith("}"):
            raise ValueError(f"JSONPath {expression!r}: missing the closing }}")
        text = text[1:-1].strip()
    if not text:
        raise ValueError(f"JSONPath {expression!r} is empty")
    parser = _Parser(text)
    steps = parser.path(relative=False)
    if parser.pos != len(text):
        raise parser.fail("unexpected text")
    return steps


def evaluate(expression: str | tuple[Any, ...], document: Any) -> list[Any]:
    """Every value the path selects in `document`, in document order."""
    steps = compile_path(expression) if isinstance(expression, str) else expression
    return list(_walk(steps, [document]))


def _walk(steps: tuple[Any, ...], nodes: list[Any]) -> Iterator[Any]:
    for step in steps:
        nodes = list(_step(step, nodes))
    yield from nodes


def _step(step: Any, nodes: list[Any]) -> Iterator[Any]:
    for node in nodes:
        if isinstance(step, _Key):
            if isinstance(node, Mapping) and step.name in node:
                yield node[step.name]
        elif isinstance(step, _Index):
            if isinstance(node, list) and -len(node) <= step.index < len(node):
                yield node[step.index]
        elif isinstance(step, _All):
            if isinstance(node, Mapping):
                yield from node.values()
            elif isinstance(node, list):
                yield from node
        elif isinstance(step, _Descend):
            yield from _descendants(node)
        elif isinstance(step, _Filter):
            items = node if isinstance(node, list) else [node] if isinstance(node, Mapping) else []
            for item in items:
                if _matches(step, item):
                    yield item


def _descendants(node: Any) -> Iterator[Any]:
    yield node
    children = (
        node.values() if isinstance(node, Mapping) else node if isinstance(node, list) else ()
    )
    for child in children:
        if isinstance(child, (Mapping, list)):
            yield from _descendants(child)


def _matches(step: _Filter, item: Any) -> bool:
    found = list(_walk(step.path, [item]))
    if not step.op:
        return bool(found)
    return any(_compare(value, step.op, step.value) for value in found)


def _compare(left: Any, op: str, right: Any) -> bool:
    numbers = (int, float)
    if isinstance(left, bool) or isinstance(right, bool) or left is None or right is None:
        if op == "==":
            return bool(left == right and type(left) is type(right))
        if op == "!=":
            return not (left == right and type(left) is type(right))
        return False
    comparable = (isinstance(left, numbers) and isinstance(right, numbers)) or (
        isinstance(left, str) and isinstance(right, str)
    )
    if not comparable:
        return op == "!="
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


def format_value(value: Any) -> str:
    """A value as kubectl prints it for comparison: strings bare, others as JSON (true, 3)."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
