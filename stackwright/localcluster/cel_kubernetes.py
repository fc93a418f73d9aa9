"""Kubernetes' CEL libraries that need more than the core (k8s.io/apiserver/pkg/cel/library):
quantities (`quantity('1Gi').isGreaterThan(quantity('500Mi'))`) and URLs (`isURL`,
`url(s).getHost()`), as a `cel.Library` for CRD rules.

URLs follow Go's url.ParseRequestURI in what a rule meets (an absolute URL or an absolute
path; a bad port, host character, escape or control character refused); where it is not
exact, it takes rather than refuses. Pure: no I/O.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from stackwright.localcluster import cel
from stackwright.localcluster.quantities import parse_quantity

__all__ = ["KUBERNETES", "CelQuantity", "CelURL"]


@dataclass(frozen=True)
class CelQuantity:
    """A quantity as CEL sees it: equal to another of the same value (`1` == `1000m`)."""

    cel_type: ClassVar[str] = "kubernetes.Quantity"
    value: Fraction


def _quantity(text: Any) -> CelQuantity:
    if not isinstance(text, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    try:
        return CelQuantity(parse_quantity(text).value)
    except ValueError as exc:
        raise cel.CelError(str(exc)) from None


def _is_quantity(text: Any) -> bool:
    try:
        _quantity(text)
    except cel.CelError:
        return False
    return True


def _q(value: Any) -> CelQuantity:
    if not isinstance(value, CelQuantity):
        raise cel.CelError(cel.NO_OVERLOAD)
    return value


def _operand(value: Any) -> Fraction:
    if isinstance(value, CelQuantity):
        return value.value
    if cel.kind_of(value) == "int":
        return Fraction(value)
    raise cel.CelError(cel.NO_OVERLOAD)


def _as_integer(value: Any) -> int:
    amount = _q(value).value
    if amount.denominator != 1 or not cel.INT_MIN <= amount <= cel.INT_MAX:
        raise cel.CelError("cannot convert value to integer")
    return int(amount)


def _compare_to(a: Any, b: Any) -> int:
    x, y = _q(a).value, _q(b).value
    return int(x > y) - int(x < y)


@dataclass(frozen=True)
class CelURL:
    """A URL as `url()` parses it."""

    cel_type: ClassVar[str] = "kubernetes.URL"
    scheme: str
    host: str  # with the port, as Go's URL.Host
    path: str
    query: str


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_BAD_HOST = re.compile(r"[\s<>\"{}|\\^`]")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _parse_url(text: Any) -> CelURL | None:
    if not isinstance(text, str) or not text or re.search(r"[\x00-\x1f\x7f]", text):
        return None
    if _BAD_ESCAPE.search(text):
        return None
    scheme, rest = "", text
    head, colon, tail = text.partition(":")
    if colon and "/" not in head and "?" not in head:
        if not _SCHEME.fullmatch(head):
            return None
        scheme, rest = head, tail
    if not rest.startswith("/"):
        return None  # an opaque URL, or a relative path: not a request URI
    host = ""
    if scheme and rest.startswith("//"):
        after = rest[2:]
        cut = min((after.find(c) for c in "/?" if c in after), default=len(after))
        authority, rest = after[:cut], after[cut:]
        host = authority.rpartition("@")[2]
        if not _valid_host(host):
            return None
    path, _, query = rest.partition("?")
    return CelURL(scheme, host, path, query)


def _valid_host(host: str) -> bool:
    """Go's parseHost: no character a host cannot hold, closed brackets, and digits (or
    nothing) after the last colon outside them."""
    if _BAD_HOST.search(host):
        return False
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return False
        host = host[end + 1 :]
        if host and not host.startswith(":"):
            return False
    port = host.rpartition(":")[2] if ":" in host else ""
    return re.fullmatch(r"[0-9]*", port) is not None


def _url(text: Any) -> CelURL:
    parsed = _parse_url(text)
    if parsed is None:
        raise cel.CelError(
            f'URL parse error during conversion from string: parse "{text}": invalid URI for request'
        )
    return parsed


def _u(value: Any) -> CelURL:
    if not isinstance(value, CelURL):
        raise cel.CelError(cel.NO_OVERLOAD)
    return value


def _hostname(value: Any) -> str:
    host = _u(value).host
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rpartition(":")[0] if ":" in host else host


def _port(value: Any) -> str:
    host = _u(value).host
    if host.startswith("["):
        host = host[host.find("]") + 1 :]
    return host.rpartition(":")[2] if ":" in host else ""


def _query(value: Any) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(_u(value).query, keep_blank_values=True)


KUBERNETES = cel.Library(
    functions={
        "quantity": ((1,), _quantity),
        "isQuantity": ((1,), _is_quantity),
        "url": ((1,), _url),
        "isURL": ((1,), lambda text: _parse_url(text) is not None),
    },
    methods={
        "sign": ((0,), lambda q: (_q(q).value > 0) - (_q(q).value < 0)),
        "isInteger": ((0,), lambda q: _q(q).value.denominator == 1),
        "asInteger": ((0,), _as_integer),
        "asApproximateFloat": ((0,), lambda q: float(_q(q).value)),
        "add": ((1,), lambda q, other: CelQuantity(_q(q).value + _operand(other))),
        "sub": ((1,), lambda q, other: CelQuantity(_q(q).value - _operand(other))),
        "isLessThan": ((1,), lambda a, b: _compare_to(a, b) < 0),
        "isGreaterThan": ((1,), lambda a, b: _compare_to(a, b) > 0),
        "compareTo": ((1,), _compare_to),
        "getScheme": ((0,), lambda u: _u(u).scheme),
        "getHost": ((0,), lambda u: _u(u).host),
        "getHostname": ((0,), _hostname),
        "getPort": ((0,), _port),
        "getEscapedPath": ((0,), lambda u: _u(u).path),
        "getQuery": ((0,), _query),
    },
)
