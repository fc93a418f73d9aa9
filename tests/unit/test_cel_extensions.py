"""The CEL libraries beyond the core that CRD rules call, as cel-go and
k8s.io/apiserver/pkg/cel/library define them: IP addresses and CIDRs, regex find,
optionals (`.?`, `[?]`, `optional.*`), lists / sets / math / strings extensions, and the
timestamp and duration getters."""

from __future__ import annotations

from typing import Any

import pytest

from stackwright.localcluster import cel
from stackwright.localcluster.cel_kubernetes import KUBERNETES, CelCIDR, CelIP


def run(text: str, **bindings: Any) -> Any:
    names = frozenset({"self", "oldSelf", *bindings})
    return cel.compile_expr(text, names, KUBERNETES).evaluate(bindings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("isIP('10.0.0.1')", True),
        ("isIP('2001:db8::1')", True),
        ("isIP('10.0.0.256')", False),
        ("isIP('010.0.0.1')", False),  # Go's netip refuses leading zeros
        ("isIP('::ffff:10.0.0.1')", False),  # Kubernetes refuses IPv4-mapped IPv6
        ("isIP('fe80::1%eth0')", False),  # and zones
        ("ip('10.0.0.1').family()", 4),
        ("ip('::1').family()", 6),
        ("ip('::1').isLoopback()", True),
        ("ip('0.0.0.0').isUnspecified()", True),
        ("ip('224.0.0.1').isLinkLocalMulticast()", True),
        ("ip('169.254.1.1').isLinkLocalUnicast()", True),
        ("ip('10.0.0.1').isGlobalUnicast()", True),
        ("ip('255.255.255.255').isGlobalUnicast()", False),
        ("ip.isCanonical('2001:db8::1')", True),
        ("ip.isCanonical('2001:DB8::1')", False),
        ("string(ip('2001:0db8::0001'))", "2001:db8::1"),
        ("ip('10.0.0.1') == ip('10.0.0.1')", True),
        ("isCIDR('10.0.0.0/8')", True),
        ("isCIDR('10.0.0.0')", False),
        ("isCIDR('10.0.0.0/33')", False),
        ("cidr('10.0.0.0/8').containsIP('10.255.0.1')", True),
        ("cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", False),
        ("cidr('10.0.0.0/8').containsIP('::1')", False),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
        ("cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", False),
        ("cidr('10.1.2.3/8').prefixLength()", 8),
        ("string(cidr('10.1.2.3/8').ip())", "10.1.2.3"),
        ("string(cidr('10.1.2.3/8').masked())", "10.0.0.0/8"),
        ("type(ip('::1')) == type(ip('10.0.0.1'))", True),
    ],
)
def test_ip_and_cidr_library(text: str, expected: Any) -> None:
    assert run(text) == expected


def test_ip_and_cidr_values_and_errors() -> None:
    assert isinstance(run("ip('10.0.0.1')"), CelIP)
    assert isinstance(run("cidr('10.0.0.0/8')"), CelCIDR)
    with pytest.raises(cel.CelError, match=r"IP Address '1\.2\.3' parse error"):
        run("ip('1.2.3')")
    with pytest.raises(cel.CelError, match=r"network address '10\.0\.0\.0/x' parse error"):
        run("cidr('10.0.0.0/x')")
    with pytest.raises(cel.CelError, match="no such overload"):
        run("ip('10.0.0.1').prefixLength()")


def test_namespace_names_a_function_only_where_no_variable_has_that_name() -> None:
    assert run("['10.0.0.1', '::1'].all(ip, isIP(ip))") is True
    with pytest.raises(cel.Unsupported):  # `ip` the macro's variable: no such method
        run("['10.0.0.1'].all(ip, ip.isCanonical('10.0.0.1'))")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("'team/app'.find('^[^/]+')", "team"),
        ("'abc'.find('[0-9]+')", ""),
        ("'a1b22c333'.findAll('[0-9]+')", ["1", "22", "333"]),
        ("'a1b22c333'.findAll('[0-9]+', 2)", ["1", "22"]),
    ],
)
def test_regex_find(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("self.?a.hasValue()", True),
        ("self.?missing.hasValue()", False),
        ("self.?a.?b.orValue(0)", 1),
        ("self.?missing.?b.orValue(0)", 0),
        ("self.?a.b.value()", 1),  # a field of an optional is optional
        ("self.list[?1].orValue(-1)", 20),
        ("self.list[?5].orValue(-1)", -1),
        ("self.?a[?'b'].value()", 1),
        ("optional.of(3).value()", 3),
        ("optional.none().orValue('x')", "x"),
        ("optional.ofNonZeroValue('').hasValue()", False),
        ("optional.none().or(optional.of(2)).value()", 2),
        ("optional.of(1) == optional.of(1)", True),
        ("[?self.?missing, 1, ?self.?a.?b]", [1, 1]),  # optional list elements
        ("{?'x': self.?missing, 'y': 2, ?'z': self.?a.?b}", {"y": 2, "z": 1}),  # and entries
    ],
)
def test_optionals(text: str, expected: Any) -> None:
    assert run(text, self={"a": {"b": 1}, "list": [10, 20]}) == expected


def test_an_empty_optional_has_no_value() -> None:
    with pytest.raises(cel.CelError, match=r"optional.none\(\) dereference"):
        run("self.?missing.value()", self={})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2, 3, 4].slice(1, 3)", [2, 3]),
        ("[1, [2, [3, [4]]]].flatten()", [1, 2, [3, [4]]]),
        ("[1, [2, [3, [4]]]].flatten(2)", [1, 2, 3, [4]]),
        ("[1, 2, 1, 3, 2].distinct()", [1, 2, 3]),
        ("[1, 2, 3].reverse()", [3, 2, 1]),
        ("'abc'.reverse()", "cba"),
        ("['b', 'a', 'c'].sort()", ["a", "b", "c"]),
        ("lists.range(3)", [0, 1, 2]),
        ("[5, 6].first().value()", 5),
        ("[].last().hasValue()", False),
        ("sets.contains([1, 2, 3], [3, 1])", True),
        ("sets.contains([1, 2], [4])", False),
        ("sets.equivalent([1, 2, 2], [2, 1])", True),
        ("sets.intersects([1, 2], [2, 5])", True),
        ("sets.intersects([1], [])", False),
        ("math.greatest(1, 5, 3)", 5),
        ("math.greatest([1.5, 0.5])", 1.5),
        ("math.least(4, -2)", -2),
        ("math.abs(-3)", 3),
        ("math.ceil(1.2)", 2.0),
        ("math.floor(-1.2)", -2.0),
        ("math.round(2.5)", 3.0),
        ("math.round(-2.5)", -3.0),
        ("math.trunc(-1.7)", -1.0),
        ("math.isNaN(0.0 / 0.0)", True),
        ("strings.quote('a\"b\\n')", '"a\\"b\\n"'),
        ("'%s wants %d replicas'.format(['web', 3])", "web wants 3 replicas"),
        ("'%.2f %x %o %b %%'.format([1.5, 255, 8, 5])", "1.50 ff 10 101 %"),
        ("'%s'.format([[1, 'a']])", "[1, a]"),
    ],
)
def test_lists_sets_math_and_strings_extensions(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2].slice(1, 3)", "list is length 2"),
        ("[1, 2].slice(2, 1)", "start index must be less than or equal to end index"),
        ("[1, 'a'].sort()", "^list elements must have the same type$"),
        ("[[1], [2]].sort()", "^list elements must be comparable$"),  # cel-go's words
        ("'%d'.format(['x'])", "decimal clause can only be used on integers"),
        ("'%s %s'.format(['x'])", "index 1 out of range"),
        ("math.greatest([])", "must not be empty"),
    ],
)
def test_extension_errors(text: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        run(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("self.getFullYear()", 2024),
        ("self.getMonth()", 1),  # zero-based
        ("self.getDate()", 29),  # one-based
        ("self.getDayOfMonth()", 28),  # zero-based
        ("self.getDayOfYear()", 59),
        ("self.getDayOfWeek()", 4),  # Thursday; Sunday is 0
        ("self.getHours()", 23),
        ("self.getHours('+02:00')", 1),
        ("self.getDate('Europe/Paris')", 1),
        ("self.getMinutes()", 30),
        ("self.getSeconds()", 15),
        ("self.getMilliseconds()", 250),
        ("duration('90m').getHours()", 1),
        ("duration('90m').getMinutes()", 90),
        ("duration('-1.5s').getSeconds()", -1),
        ("duration('1.5s').getMilliseconds()", 1500),
    ],
)
def test_timestamp_and_duration_getters(text: str, expected: Any) -> None:
    stamp = cel.parse_timestamp("2024-02-29T23:30:15.25Z")
    assert run(text, self=stamp) == expected


def test_or_and_or_value_evaluate_their_alternative_only_when_needed() -> None:
    # cel-go's interpreter is lazy here: the alternative errs only where it is used
    assert run("optional.of(1).orValue(1 / 0)") == 1
    assert run("optional.of(1).or(optional.of(1 / 0)).value()") == 1
    assert run("self.?a.orValue(self.list[9])", self={"a": 2, "list": []}) == 2
    with pytest.raises(cel.CelError, match="division by zero"):
        run("optional.none().orValue(1 / 0)")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("math.round(0.49999999999999994)", 0.0),  # Go's math.Round; floor(x + 0.5) gives 1
        ("math.round(4503599627370497.0)", 4503599627370497.0),  # 2**52 + 1 stays odd
        ("math.round(-4503599627370497.0)", -4503599627370497.0),
    ],
)
def test_math_round_is_exact_for_every_double(text: str, expected: float) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # google/cel-spec tests/simple/testdata/string_ext.textproto
        ("'%d'.format([double('NaN')])", "NaN"),
        ("'%f'.format([double('-Infinity')])", "-Infinity"),
        ("'%s'.format([[double('NaN'), double('Infinity'), double('-Infinity')]])",
         "[NaN, Infinity, -Infinity]"),
        ("'%b'.format([true])", "1"),
    ],
)  # fmt: skip
def test_format_as_the_cel_conformance_tests(text: str, expected: str) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [  # google/cel-spec tests/simple/testdata/string_ext.textproto, format_errors
        ("'%f'.format([1])", "fixed-point clause can only be used on doubles, was given int"),
        ("'%e'.format([1u])", "scientific clause can only be used on doubles, was given uint"),
        ("'%o'.format([true])", "octal clause can only be used on integers, was given bool"),
        ("'%x'.format([true])",
         "only integers, byte buffers, and strings can be formatted as hex, was given bool"),
        ("'%b'.format(['abc'])",
         "only integers and bools can be formatted as binary, was given string"),
        ("'%d'.format([duration('30m2s')])",
         "decimal clause can only be used on integers, was given google.protobuf.Duration"),
        ("'%E'.format([0.5])",
         'could not parse formatting clause: unrecognized formatting clause "E"'),
    ],
)  # fmt: skip
def test_format_refuses_as_the_cel_conformance_tests(text: str, message: str) -> None:
    with pytest.raises(cel.CelError) as raised:
        run(text)
    assert str(raised.value).endswith(message)
