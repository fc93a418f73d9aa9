"""Kubernetes resource quantities (`500m`, `1Gi`, `1e3`): apimachinery's
resource.ParseQuantity and Quantity.String(), exactly, over Fractions.

Shared by validation (and the admission plugins) and the CEL quantity library; pure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Quantity", "parse_quantity"]

_QTY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_QTY_SUFFIX = "unable to parse quantity's suffix"
_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {v: k for k, v in _BINARY_SUFFIXES.items()} | {0: ""}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)


@dataclass(frozen=True)
class Quantity:
    """A parsed resource.Quantity: its exact value (rounded up to nano units) and format."""

    value: Fraction
    format: str  # "DecimalSI", "BinarySI" or "DecimalExponent"

    def canonical(self) -> str:
        """Quantity.String(): how the API server writes the quantity back (`0.5` → `500m`)."""
        value = self.value
        if value == 0:
            return "0"
        fmt = self.format
        if fmt == "BinarySI" and (-1024 < value < 1024 or value.denominator != 1):
            fmt = "DecimalSI"
        if fmt == "BinarySI":
            amount, exponent = int(value), 0
            while amount % 1024 == 0 and exponent < 60:
                amount //= 1024
                exponent += 10
            return f"{amount}{_BINARY_BY_EXPONENT[exponent]}"
        scaled = value / _NANO  # an integer: values are held at nano precision
        amount, exponent = int(scaled), -9
        while amount % 10 == 0:
            amount //= 10
            exponent += 1
        shift = exponent - (exponent // 3) * 3
        amount, exponent = amount * 10**shift, exponent - shift
        if fmt == "DecimalSI" and exponent in _DECIMAL_BY_EXPONENT:
            return f"{amount}{_DECIMAL_BY_EXPONENT[exponent]}"
        return f"{amount}e{exponent}" if exponent else str(amount)


def parse_quantity(text: str) -> Quantity:
    """resource.ParseQuantity; raises ValueError with the apimachinery error text."""
    if not text:
        raise ValueError(_QTY_FORMAT)
    end = len(text)
    pos = 0
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    denom = ""
    suffix = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    if pos < end:
        suffix_start = pos
        while pos < end and text[pos] in _SUFFIX_CHARS:
            pos += 1
        if pos < end and text[pos] in "+-":
            pos += 1
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        if pos < end:
            raise ValueError(_QTY_FORMAT)
        suffix = text[suffix_start:]
    magnitude = Fraction(int(num or "0")) + (Fraction(int(denom), 10 ** len(denom)) if denom else 0)
    if suffix in _DECIMAL_SUFFIXES:
        fmt, factor = "DecimalSI", Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        fmt, factor = "BinarySI", Fraction(2) ** _BINARY_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?\d+", suffix[1:]):
        fmt, factor = "DecimalExponent", Fraction(10) ** int(suffix[1:])
    else:
        raise ValueError(_QTY_SUFFIX)
    value = magnitude * factor
    if value.denominator != 1 and (value / _NANO).denominator != 1:
        value = Fraction(math.ceil(value / _NANO)) * _NANO  # below nano: rounded up
    return Quantity(-value if negative else value, fmt)
