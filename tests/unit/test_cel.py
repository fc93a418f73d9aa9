"""The CEL interpreter the local cluster evaluates CRD rules with: a table of expressions
and what cel-go gives for them (values, or its errors), the commutative `&&` / `||`, and
random integer arithmetic against Python's (Go's truncating division, int64 overflow)."""

from __future__ import annotations

import contextlib
import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster import cel
from stackwright.localcluster.cel import CelError, CelSyntaxError, UInt, Unsupported

SELF = {
    "a": 1,
    "name": "web",
    "items": [1, 2, 3],
    "labels": {"app": "web"},
    "a.b": 7,
    "namespace": "ns",
}


def run(text: str, **bindings: Any) -> Any:
    program = cel.compile_expr(text, frozenset({"self", "oldSelf"}))
    return program.evaluate({"self": SELF, **bindings})


VALUES: list[tuple[str, Any]] = [
    # literals
    ("1", 1),
    ("-9223372036854775808", -(2**63)),
    ("0x1F", 31),
    ("1u", 1),
    ("1.5e2", 150.0),
    (".5", 0.5),
    ("'a\\tb'", "a\tb"),
    ('"\\u00e9\\x41\\101"', "éAA"),
    ("r'\\d+'", "\\d+"),
    ("'''multi\nline'''", "multi\nline"),
    ("b'\\xff'", b"\xff"),
    ("null", None),
    ("[1, 'a', true]", [1, "a", True]),
    ("{'k': 1}", {"k": 1}),
    # precedence and associativity
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 - 4 - 3", 3),
    ("1 < 2 == true", True),
    ("true || false && false", True),
    ("!false && true", True),
    ("--5", 5),
    ("true ? 1 : false ? 2 : 3", 1),
    ("false ? 1 : false ? 2 : 3", 3),
    # arithmetic (Go's truncating division) and comparisons across numeric types
    ("7 / -2", -3),
    ("-7 % 3", -1),
    ("7.0 / 2.0", 3.5),
    ("3u * 2u", 6),
    ("1 == 1.0", True),
    ("1 == 1u", True),
    ("1 < 1.5", True),
    ("1 == true", False),
    ("'a' == 1", False),
    ("[1, 2] == [1, 2.0]", True),
    ("{'a': 1} == {'a': 1}", True),
    ("'abc' < 'abd'", True),
    ("'a' + 'b'", "ab"),
    ("[1] + [2]", [1, 2]),
    ("2 in [1, 2]", True),
    ("'app' in self.labels", True),
    # fields, indexing, has()
    ("self.a", 1),
    ("self.items[2]", 3),
    ("self.labels['app']", "web"),
    ("self.a__dot__b", 7),
    ("self.namespace", "ns"),  # a reserved word names a field
    ("self.__namespace__", "ns"),  # as Kubernetes escapes it
    ("has(self.a)", True),
    ("has(self.missing)", False),
    ("has(self.labels.app)", True),
    # macros
    ("self.items.all(x, x > 0)", True),
    ("self.items.exists(x, x > 2)", True),
    ("self.items.exists_one(x, x > 1)", False),
    ("self.items.map(x, x * 2)", [2, 4, 6]),
    ("self.items.map(x, x > 1, x * 10)", [20, 30]),
    ("self.items.filter(x, x % 2 == 1)", [1, 3]),
    ("self.labels.all(k, k == 'app')", True),
    ("[].all(x, x > 0)", True),
    ("[].exists(x, x > 0)", False),
    # functions and conversions
    ("size(self.items)", 3),
    ("self.name.size()", 3),
    ("size('héllo')", 5),
    ("int('42') + int(2.9)", 44),
    ("uint(3)", 3),
    ("double(1)", 1.0),
    ("string(1.5) + string(2) + string(true)", "1.52true"),
    ("bool('true')", True),
    ("type(1) == int", True),
    ("type('a') == string", True),
    ("type(self) == map", True),
    ("dyn(1) == 1.0", True),
    ("duration('1h30m') > duration('90m')", False),
    ("duration('1h') == duration('60m')", True),
    # Go's time.RFC3339Nano: no trailing zeros in the fraction
    ("string(timestamp('2024-06-01T00:00:00.500Z'))", "2024-06-01T00:00:00.5Z"),
    ("string(timestamp('2024-06-01T00:00:00Z') + duration('1ms'))", "2024-06-01T00:00:00.001Z"),
    ("string(timestamp('2024-06-01T00:00:00.120-05:30'))", "2024-06-01T00:00:00.12-05:30"),
    ("timestamp('2024-01-01T00:00:00Z') < timestamp('2024-06-01T00:00:00+02:00')", True),
    (
        "timestamp('2024-01-01T00:00:00Z') + duration('24h') == timestamp('2024-01-02T00:00:00Z')",
        True,
    ),
    # string methods and the Kubernetes strings library
    ("self.name.startsWith('w')", True),
    ("self.name.endsWith('eb')", True),
    ("self.name.contains('e')", True),
    ("self.name.matches('^[a-z]+$')", True),
    ("matches('abc', 'b')", True),
    # RE2: \d, \w and \s are ASCII; POSIX classes; (?i) folds Unicode case
    ("'١٢'.matches('^\\\\d+$')", False),
    ("'café'.matches('^\\\\w+$')", False),
    ("'Ab_'.matches('^[[:upper:]][[:lower:]_]+$')", True),
    ("'É'.matches('(?i)é')", True),
    ("'Hello'.lowerAscii()", "hello"),
    ("'héllo'.upperAscii()", "HéLLO"),
    ("'a,b,c'.split(',')", ["a", "b", "c"]),
    ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
    ("['a', 'b'].join('-')", "a-b"),
    ("['a', 'b'].join()", "ab"),
    ("'aaa'.replace('a', 'b', 2)", "bba"),
    ("'  x \\n'.trim()", "x"),
    ("'hello'.indexOf('l')", 2),
    ("'hello'.indexOf('l', 3)", 3),
    ("'hello'.lastIndexOf('l')", 3),
    ("'hello'.substring(1, 3)", "el"),
    ("'hello'.substring(3)", "lo"),
    ("'hello'.charAt(1)", "e"),
    ("'hello'.charAt(5)", ""),
    # the Kubernetes lists library
    ("[1, 2, 2].isSorted()", True),
    ("[2, 1].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("[1.5, 2.5].sum()", 4.0),
    ("[3, 1, 2].min()", 1),
    ("['b', 'c', 'a'].max()", "c"),
    ("[1, 2, 3].indexOf(2)", 1),
    ("[1, 2, 1].lastIndexOf(1)", 2),
]


@pytest.mark.parametrize(("text", "expected"), VALUES)
def test_expression_values(text: str, expected: Any) -> None:
    result = run(text)
    assert result == expected
    assert type(result) is type(expected) or isinstance(result, UInt)


ERRORS: list[tuple[str, str]] = [
    ("self.missing", "no such key: missing"),
    ("self.labels['nope']", "no such key: nope"),
    ("self.items[3]", "index out of bounds: 3"),
    ("1 / 0", "division by zero"),
    ("1 % 0", "modulus by zero"),
    ("9223372036854775807 + 1", "integer overflow"),
    ("-9223372036854775808 - 1", "integer overflow"),
    ("-(-9223372036854775808)", "integer overflow"),
    ("-9223372036854775808 / -1", "integer overflow"),
    ("1u - 2u", "unsigned integer overflow"),
    ("1 + 1u", "no such overload"),
    ("1 + 1.0", "no such overload"),
    ("'a' < 1", "no such overload"),
    ("1 ? 2 : 3", "no such overload"),
    ("!1", "no such overload"),
    ("has(self.a.b)", "no such overload"),
    ("int('x')", "cannot convert 'x' to int"),
    # Go's strconv, not Python's int()/float(): no spaces, `_` or non-ASCII digits
    ("int(' 12')", "cannot convert ' 12' to int"),
    ("int('1_000')", "cannot convert '1_000' to int"),
    ("int('١٢')", "cannot convert '١٢' to int"),
    ("uint('+5')", "cannot convert '+5' to uint"),
    ("double('1_0')", "cannot convert '1_0' to double"),
    ("double(' 1.5')", "cannot convert ' 1.5' to double"),
    # cel-go's doubleToInt64Checked: the bound itself overflows
    ("int(-9223372036854775808.0)", "integer overflow"),
    ("int(1e99)", "integer overflow"),
    ("uint(-1.0)", "unsigned integer overflow"),
    ("'abc'.substring(4)", "index out of range: 4"),
    ("[].max()", "max(list) argument must not be empty"),
    ("duration('forever') > duration('1s')", 'time: invalid duration "forever"'),
    ("self.items.exists_one(x, x / 0 == 1)", "division by zero"),
    ("self.items.map(x, self.missing)", "no such key: missing"),
    ("oldSelf == self", "no such attribute: oldSelf"),  # a create has no old value
    ("timestamp('9999-12-31T00:00:00Z') + duration('48h') > self.ts", "timestamp overflow"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_expression_errors(text: str, message: str) -> None:
    with pytest.raises(CelError) as caught:
        run(text)
    assert str(caught.value) == message


# `&&` and `||` are commutative: the operand that decides the result wins over an error
# in the other, whichever side either is on; otherwise the error stands. `all` and
# `exists` fold the same way over their elements; `?:` evaluates only its chosen branch.
LOGIC: list[tuple[str, Any]] = [
    ("true || 1 / 0 == 1", True),
    ("1 / 0 == 1 || true", True),
    ("false && 1 / 0 == 1", False),
    ("1 / 0 == 1 && false", False),
    ("self.missing || true", True),
    ("self.missing && false", False),
    ("has(self.missing) && self.missing > 1", False),
    ("!has(self.missing) || self.missing > 1", True),
    ("[0, 1].exists(x, 1 / x == 1)", True),
    ("[0, 1].all(x, 1 / x == 5)", False),
    ("1 || true", True),
    ("true ? 1 : 1 / 0", 1),
    ("false ? 1 / 0 : 2", 2),
]


@pytest.mark.parametrize(("text", "expected"), LOGIC)
def test_short_circuit_and_commutative_errors(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 / 0 == 1 || false", "division by zero"),
        ("false || 1 / 0 == 1", "division by zero"),
        ("true && self.missing", "no such key: missing"),
        ("[0, 1].all(x, 1 / x == 1)", "division by zero"),
        ("[0, 1].exists(x, 1 / x == 5)", "division by zero"),
        ("1 || false", "no such overload"),  # a non-bool operand is an error, too
    ],
)
def test_an_error_stands_when_the_other_operand_does_not_decide(text: str, message: str) -> None:
    with pytest.raises(CelError) as caught:
        run(text)
    assert str(caught.value) == message


def test_old_self_and_variables() -> None:
    program = cel.compile_expr("self == oldSelf", frozenset({"self", "oldSelf"}))
    assert program.variables == {"self", "oldSelf"}
    assert program.evaluate({"self": {"a": 1}, "oldSelf": {"a": 1.0}}) is True
    assert program.evaluate({"self": "x", "oldSelf": "y"}) is False
    # a comprehension variable is not a free variable
    assert cel.compile_expr("self.all(x, x > 0)").variables == {"self"}


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("self.a <", "1:9", "mismatched input '<EOF>' expecting an expression"),
        ("self.a +* 1", "1:9", "mismatched input '*' expecting an expression"),
        ("(1 + 2", "1:7", "mismatched input '<EOF>' expecting ')'"),
        ("1 2", "1:3", "extraneous input '2' expecting <EOF>"),
        ("'open", "1:1", "unterminated string literal"),
        ("'\\q'", "1:2", "invalid escape sequence: \\q"),
        ("a # b", "1:3", "token recognition error at: '#'"),
        ("has(self)", "1:10", "invalid argument to has() macro"),
        ("self.all(1, true)", "1:18", "argument must be a simple name"),
        ("if", "1:1", "reserved identifier: if"),
        ("namespace + 1", "1:1", "reserved identifier: namespace"),
        ("in", "1:1", "reserved identifier: in"),
        ("9223372036854775808", "1:20", "invalid int literal: 9223372036854775808"),
        ("1\n  +", "2:4", "mismatched input '<EOF>' expecting an expression"),
    ],
)
def test_syntax_errors_name_line_and_column(text: str, where: str, what: str) -> None:
    with pytest.raises(CelSyntaxError) as caught:
        cel.compile_expr(text)
    assert str(caught.value) == f"<input>:{where}: Syntax error: {what}"


@pytest.mark.parametrize(
    "text",
    [
        "self.url.isURL()",
        "quantity(self.q) > quantity('1Gi')",
        "undeclared > 1",
        "size(1, 2)",
        "google.protobuf.Duration{seconds: 1} == duration('1s')",
    ],
)
def test_what_is_not_implemented_is_told_apart_from_a_syntax_error(text: str) -> None:
    with pytest.raises(Unsupported):
        cel.compile_expr(text)


def test_values_of_durations_and_timestamps() -> None:
    assert run("duration('1.5s')") == datetime.timedelta(seconds=1.5)
    assert run("timestamp('2024-01-01T00:00:00.5Z')") == datetime.datetime(
        2024, 1, 1, 0, 0, 0, 500000, tzinfo=datetime.UTC
    )


def test_public_surface() -> None:
    assert cel.__all__ == sorted(cel.__all__)


# ---------------------------------------------------------------- random integer arithmetic

INT_MIN, INT_MAX = -(2**63), 2**63 - 1


class Undefined(Exception):
    """The expression has no value in CEL (overflow, division by zero): it must error."""


def _go_div(a: int, b: int) -> int:
    if b == 0:
        raise Undefined
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _checked(value: int) -> int:
    if not INT_MIN <= value <= INT_MAX:
        raise Undefined
    return value


def _reference(tree: Any) -> Any:
    """Python's value of a generated expression with CEL's integer rules."""
    if isinstance(tree, int):
        return tree
    op, left, right = tree
    a, b = _reference(left), _reference(right)
    if op in ("==", "!="):  # heterogeneous equality: an int is never a bool
        return (type(a) is type(b) and a == b) == (op == "==")
    if op in ("<", "<=", ">", ">="):
        if type(a) is not type(b):
            raise Undefined  # int against bool: no such overload
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if isinstance(a, bool) or isinstance(b, bool):
        raise Undefined
    if op == "+":
        return _checked(a + b)
    if op == "-":
        return _checked(a - b)
    if op == "*":
        return _checked(a * b)
    if op == "/":
        return _checked(_go_div(a, b))
    if b == 0 or (a == INT_MIN and b == -1):
        raise Undefined
    return a - b * _go_div(a, b)


def _render(tree: Any) -> str:
    if isinstance(tree, int):
        return str(tree) if tree >= 0 else f"({tree})"
    op, left, right = tree
    return f"({_render(left)} {op} {_render(right)})"


INTS = st.one_of(
    st.integers(-20, 20), st.integers(INT_MIN + 1, INT_MAX), st.sampled_from([INT_MAX, INT_MIN + 1])
)
TREES = st.recursive(
    INTS,
    lambda inner: st.tuples(
        st.sampled_from(["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!="]), inner, inner
    ),
    max_leaves=8,
)


@given(TREES)
@settings(max_examples=400, deadline=None)
def test_integer_arithmetic_agrees_with_python(tree: Any) -> None:
    text = _render(tree)
    try:
        expected = _reference(tree)
    except Undefined:
        with pytest.raises(CelError):
            cel.compile_expr(text).evaluate({"self": None})
        return
    assert cel.compile_expr(text).evaluate({"self": None}) == expected


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_text_parses_or_is_a_syntax_error(text: str) -> None:
    try:
        program = cel.compile_expr(text, frozenset({"self"}))
    except (CelSyntaxError, Unsupported):
        return
    with contextlib.suppress(CelError):
        program.evaluate({"self": SELF})


# A sample of cel-spec's conformance suite (tests/simple/testdata/*.textproto), file and
# test name beside each: the value it expects, or ERROR where it expects an eval_error
# (as of heterogeneous equality).
ERROR = object()
CONFORMANCE: list[tuple[str, str, Any]] = [
    ("conversions/bytes/string_unicode", "bytes('ÿ')", b"\xc3\xbf"),
    ("conversions/bytes/string_unicode_vs_literal", "bytes('\\377') == b'\\377'", False),
    ("conversions/double/int_range", "double(9223372036854775807)", 9.223372036854775807e18),
    ("conversions/double/uint_range", "double(18446744073709551615u)", 1.8446744073709551615e19),
    ("conversions/double/string_neg_zero", "double('-0.0')", -0.0),
    ("conversions/double/string_exp_neg_pos", "double('-84.32e7')", -8.432e8),
    ("conversions/int/uint_range", "int(18446744073709551615u)", ERROR),
    ("conversions/int/double_truncate_neg", "int(-7.9)", -7),
    ("conversions/int/double_half_neg", "int(-3.5)", -3),
    ("conversions/int/double_range", "int(1e99)", ERROR),
    ("conversions/int/timestamp", "int(timestamp('2004-09-16T23:59:59Z'))", 1095379199),
    ("conversions/string/double_hard", "string(-4.5e-3)", "-0.0045"),
    ("conversions/string/bytes_unicode", "string(b'\\303\\277')", "ÿ"),
    ("conversions/string/bytes_invalid", "string(b'\\000\\xff')", ERROR),
    ("conversions/type/lists_monomorphic", "type([1, 2, 3]) == type(['one', 'two'])", True),
    ("conversions/type/map_monomorphic", "type({'one': 1}) == type({1: 'one'})", True),
    ("conversions/type/eq_diff", "type(7) == type(7u)", False),
    ("conversions/type/neq_same", "type(0.0) != type(-0.0)", False),
    ("conversions/type/meta", "type(type(7)) == type(type(7u))", True),
    ("conversions/type/type_type", "type(type) == type", True),
    ("conversions/uint/int_neg", "uint(-1)", ERROR),
    ("conversions/uint/double_range_beyond_uint", "uint(1e19)", 10000000000000000000),
    ("conversions/uint/double_range_err", "uint(6.022e23)", ERROR),
    ("logic/conditional/error_case", "2 / 0 > 4 ? 'baz' : 'quux'", ERROR),
    ("logic/conditional/mixed_type", "true ? 'cows' : 17", "cows"),
    ("logic/conditional/bad_type", "'cows' ? false : 17", ERROR),
    ("logic/AND/short_circuit_type_left", "false && 32", False),
    ("logic/AND/short_circuit_type_right", "'horses' && false", False),
    ("logic/AND/short_circuit_error_right", "(2 / 0 > 3 ? false : true) && false", False),
    ("logic/AND/error_right", "true && 1/0 != 0", ERROR),
    ("logic/AND/no_overload", "'less filling' && 'tastes great'", ERROR),
    ("logic/OR/short_circuit_type_right", "'horses' || true", True),
    ("logic/OR/short_circuit_error_right", "(2 / 0 > 3 ? false : true) || true", True),
    ("logic/OR/error_left", "1/0 != 0 || false", ERROR),
    ("integer_math/int64_math/mod_positive_negative", "42 % (-5)", 2),
    ("integer_math/int64_math/mod_negative_negative", "-42 % (-5)", -2),
    ("integer_math/uint64_math/negtive_no_overload", "-(5u)", ERROR),
    ("integer_math/uint64_math/devide_zero", "15u / 0u", ERROR),
    ("macros/exists/list_elem_type_shortcircuit", "[1, 'foo', 3].exists(e, e != '1')", True),
    # heterogeneous equality (cel-spec since 2022): 1 == '10' is false, not an error
    ("macros/exists/list_elem_type_exhaustive", "[1, 'foo', 3].exists(e, e == '10')", False),
    ("macros/exists/map_key_type_shortcircuit", "{'key':1, 1:21}.exists(k, k != 2)", True),
    ("macros/exists/map_key_type_exhaustive", "!{'key':1, 1:42}.exists(k, k == 2)", True),
    ("macros/all/list_elem_type_shortcircuit", "[1, 'foo', 3].all(e, e == 1)", False),
    ("macros/all/list_elem_type_exhaustive", "[1, 'foo', 3].all(e, e % 2 == 1)", ERROR),
    ("macros/all/list_elem_error_shortcircuit", "[1, 2, 3].all(e, 6 / (2 - e) == 6)", False),
    ("macros/exists_one/list_many", "[0, 1, 2, 3, 4].exists_one(n, n % 2 == 1)", False),
    ("macros/exists_one/list_no_shortcircuit", "[3, 2, 1, 0].exists_one(n, 12 / n > 1)", ERROR),
    (
        "macros/exists_one/map_one",
        "{6: 'six', 7: 'seven', 8: 'eight'}.exists_one(foo, foo % 5 == 2)",
        True,
    ),
    ("macros/map/list_error", "[2, 1, 0].map(n, 4 / n)", ERROR),
    ("macros/map/map_many", "{1: 1, 2: 4, 3: 9}.map(x, x * x)", [1, 4, 9]),
    ("macros/filter/list_no_shortcircuit", "[3, 2, 1, 0].filter(n, 12 / n > 4)", ERROR),
    ("macros/filter/map_some", "{0: 10, 1: 11, 2: 12, 3: 13, 4: 14}.filter(x, x % 2 == 1)", [1, 3]),
    ("lists/concatentation/list_not_commutative", "[0, 1, 2]+[3, 4, 5]==[3, 4, 5, 0, 1, 2]", False),
    ("string/size/unicode", "size('πέντε')", 5),
    ("string/starts_with/empty_target", "''.startsWith('foo')", False),
    ("string/ends_with/unicode", "'forté'.endsWith('té')", True),
    ("string/matches/basic", "'hubba'.matches('ubb')", True),
    ("string/matches/empty_target", "''.matches('foo|bar')", False),
    ("string/matches/re_rep", "'banana'.matches('ba(na)*')", True),
    ("string/matches/unicode", "'mañana'.matches('a+ñ+a+')", True),
    ("string/concatentation/unicode_unicode", "'¢' + 'ÿ' + 'Ȁ'", "¢ÿȀ"),
    ("string/contains/contains_unicode", "'Straße'.contains('aß')", True),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CONFORMANCE], ids=[c[0] for c in CONFORMANCE]
)
def test_cel_spec_conformance_sample(text: str, expected: Any) -> None:
    if expected is ERROR:
        with pytest.raises(CelError):
            run(text)
        return
    result = run(text)
    assert result == expected
    assert type(result) is type(expected) or isinstance(result, UInt)
    if isinstance(expected, float):
        assert str(result) == str(expected)  # -0.0 is not 0.0
