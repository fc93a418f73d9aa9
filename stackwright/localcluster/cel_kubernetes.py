"""Kubernetes' CEL libraries that need more than the core (k8s.io/apiserver/pkg/cel/library):
quantities (`quantity('1Gi').isGreaterThan(quantity('500Mi'))`), URLs (`isURL`,
`url(s).getHost()`) and IP addresses and CIDRs (`isIP`, `cidr(s).containsIP(ip)`), with
cel-go's extensions (`cel_ext`), as one `cel.Library` for CRD rules.

URLs follow Go's url.ParseRequestURI in what a rule meets (an absolute URL or an absolute
path; a bad port, host character, escape or control character refused); where it is not
exact, it takes rather than refuses. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from stackwright.localcluster import cel
from stackwright.localcluster.cel_ext import EXTENSIONS
from stackwright.localcluster.quantities import parse_quantity

__all__ = ["KUBERNETES", "CelCIDR", "CelIP", "CelQuantity", "CelURL"]


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


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class CelIP:
    """An IP address as `ip()` parses it (library/ip.go)."""

    cel_type: ClassVar[str] = "net.IP"
    address: IPAddress

    def cel_string(self) -> str:
        return str(self.address)


@dataclass(frozen=True)
class CelCIDR:
    """A CIDR as `cidr()` parses it (library/cidr.go): the address as written and its
    prefix length (`10.0.0.1/8` keeps its host bits until `masked()`)."""

    cel_type: ClassVar[str] = "net.CIDR"
    address: IPAddress
    prefix: int

    def cel_string(self) -> str:
        return f"{self.address}/{self.prefix}"

    @property
    def network(self) -> IPNetwork:
        return ipaddress.ip_network((self.address, self.prefix), strict=False)


def _parse_ip(text: str) -> IPAddress:
    """As Go's netip.ParseAddr, then Kubernetes' refusals: no zone, no IPv4-mapped IPv6."""
    if "%" in text:
        raise ValueError(f"IP address {text!r} with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"ParseAddr({text!r}): unable to parse IP") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def _ip(text: Any) -> CelIP:
    if not isinstance(text, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    try:
        return CelIP(_parse_ip(text))
    except ValueError as exc:
        raise cel.CelError(
            f"IP Address {text!r} parse error during conversion from string: {exc}"
        ) from None


def _parse_cidr(text: str) -> CelCIDR:
    address, slash, bits = text.partition("/")
    if not slash or not re.fullmatch(r"0|[1-9][0-9]{0,2}", bits):
        raise ValueError(f"netip.ParsePrefix({text!r}): bad bits after slash: {bits!r}")
    parsed = _parse_ip(address)
    if int(bits) > parsed.max_prefixlen:
        raise ValueError(f"netip.ParsePrefix({text!r}): prefix length out of range")
    return CelCIDR(parsed, int(bits))


def _cidr(text: Any) -> CelCIDR:
    if not isinstance(text, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    try:
        return _parse_cidr(text)
    except ValueError as exc:
        raise cel.CelError(
            f"network address {text!r} parse error during conversion from string: {exc}"
        ) from None


def _valid(parse: Any, text: Any) -> bool:
    if not isinstance(text, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _addr(value: Any) -> IPAddress:
    if not isinstance(value, CelIP):
        raise cel.CelError(cel.NO_OVERLOAD)
    return value.address


def _net(value: Any) -> CelCIDR:
    if not isinstance(value, CelCIDR):
        raise cel.CelError(cel.NO_OVERLOAD)
    return value


def _contains_ip(net: Any, other: Any) -> bool:
    address = _ip(other).address if isinstance(other, str) else _addr(other)
    network = _net(net).network
    return address.version == network.version and address in network


def _contains_cidr(net: Any, other: Any) -> bool:
    inner = (_cidr(other) if isinstance(other, str) else _net(other)).network
    outer = _net(net).network
    return (
        inner.version == outer.version
        and inner.prefixlen >= outer.prefixlen
        and inner.network_address in outer
    )


def _is_canonical(text: Any) -> bool:
    return bool(str(_ip(text).address) == text)


def _masked(net: Any) -> CelCIDR:
    network = _net(net).network
    return CelCIDR(network.network_address, network.prefixlen)


def _link_local_multicast(ip: Any) -> bool:
    """Go's IsLinkLocalMulticast: 224.0.0.0/24, ff02::/16."""
    address = _addr(ip)
    if address.version == 4:
        return address in ipaddress.ip_network("224.0.0.0/24")
    return address in ipaddress.ip_network("ff02::/16")


def _global_unicast(ip: Any) -> bool:
    """Go's IsGlobalUnicast: not unspecified, loopback, link-local, multicast or the IPv4
    broadcast address (private ranges count as global here, as Go's)."""
    address = _addr(ip)
    return not (
        address.is_unspecified
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address == ipaddress.IPv4Address("255.255.255.255")
    )


_KUBERNETES = cel.Library(
    functions={
        "quantity": ((1,), _quantity),
        "isQuantity": ((1,), _is_quantity),
        "url": ((1,), _url),
        "isURL": ((1,), lambda text: _parse_url(text) is not None),
        "ip": ((1,), _ip),
        "isIP": ((1,), lambda text: _valid(_parse_ip, text)),
        "ip.isCanonical": ((1,), _is_canonical),
        "cidr": ((1,), _cidr),
        "isCIDR": ((1,), lambda text: _valid(_parse_cidr, text)),
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
        "family": ((0,), lambda ip: _addr(ip).version),
        "isUnspecified": ((0,), lambda ip: _addr(ip).is_unspecified),
        "isLoopback": ((0,), lambda ip: _addr(ip).is_loopback),
        "isLinkLocalMulticast": ((0,), _link_local_multicast),
        "isLinkLocalUnicast": ((0,), lambda ip: _addr(ip).is_link_local),
        "isGlobalUnicast": ((0,), _global_unicast),
        "containsIP": ((1,), _contains_ip),
        "containsCIDR": ((1,), _contains_cidr),
        "ip": ((0,), lambda net: CelIP(_net(net).address)),
        "masked": ((0,), _masked),
        "prefixLength": ((0,), lambda net: _net(net).prefix),
    },
)

KUBERNETES = cel.Library(
    functions={**EXTENSIONS.functions, **_KUBERNETES.functions},
    methods={**EXTENSIONS.methods, **_KUBERNETES.methods},
)
