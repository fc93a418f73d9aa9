"""cel-go's extension libraries that Kubernetes enables for CRD rules (ext/lists.go,
ext/sets.go, ext/math.go, ext/strings.go) and the timestamp / duration getters of CEL's
standard library, as a `cel.Library`.

Each function follows cel-go's semantics and error words where a rule can tell them
apart. Pure: no I/O.
"""

from __future__ import annotations

import datetime
import math
import re
import zoneinfo
from collections.abc import Callable
from typing import Any

from stackwright.localcluster import cel

__all__ = ["EXTENSIONS"]


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise cel.CelError(cel.NO_OVERLOAD)
    return value


def _int(value: Any) -> int:
    if cel.kind_of(value) != "int":
        raise cel.CelError(cel.NO_OVERLOAD)
    return int(value)


# ------------------------------------------------------------------ lists (ext/lists.go)


def _slice(items: Any, start: Any, end: Any) -> list[Any]:
    elements, begin, stop = _list(items), _int(start), _int(end)
    if begin < 0 or stop < 0:
        raise cel.CelError(f"cannot slice([{begin}:{stop}]), negative indexes not supported")
    if begin > stop:
        raise cel.CelError(
            f"cannot slice([{begin}:{stop}]), start index must be less than or equal to end index"
        )
    if stop > len(elements):
        raise cel.CelError(f"cannot slice([{begin}:{stop}]), list is length {len(elements)}")
    return elements[begin:stop]


def _flatten(items: Any, depth: Any = 1) -> list[Any]:
    items, levels = _list(items), _int(depth)
    if levels < 0:
        raise cel.CelError("level must be non-negative")
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and levels > 0:
            out.extend(_flatten(item, levels - 1))
        else:
            out.append(item)
    return out


def _distinct(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list(items):
        if not any(cel.equal(item, seen) for seen in out):
            out.append(item)
    return out


def _reverse(value: Any) -> Any:
    """`list.reverse()` (ext/lists.go) and `string.reverse()` (ext/strings.go)."""
    if isinstance(value, (list, str)):
        return value[::-1]
    raise cel.CelError(cel.NO_OVERLOAD)


_SORTABLE = frozenset(
    {"int", "uint", "double", "string", "bytes", "bool",
     "google.protobuf.Duration", "google.protobuf.Timestamp"}
)  # fmt: skip


def _sort(items: Any) -> list[Any]:
    items = _list(items)
    kinds = {cel.kind_of(i) for i in items}
    if len(kinds) > 1:  # cel-go's two words for the two faults
        raise cel.CelError("list elements must have the same type")
    if not kinds <= _SORTABLE:
        raise cel.CelError("list elements must be comparable")
    return sorted(items)


def _range(count: Any) -> list[int]:
    return list(range(_int(count)))


def _first(items: Any) -> cel.Optional:
    items = _list(items)
    return cel.Optional(True, items[0]) if items else cel.NONE


def _last(items: Any) -> cel.Optional:
    items = _list(items)
    return cel.Optional(True, items[-1]) if items else cel.NONE


# ------------------------------------------------------------------ sets (ext/sets.go)


def _contains_all(items: Any, wanted: Any) -> bool:
    items = _list(items)
    return all(any(cel.equal(w, i) for i in items) for w in _list(wanted))


def _intersects(a: Any, b: Any) -> bool:
    items = _list(a)
    return any(any(cel.equal(x, i) for i in items) for x in _list(b))


# ------------------------------------------------------------------ math (ext/math.go)


def _numbers(args: tuple[Any, ...], name: str) -> list[Any]:
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
    if not values:
        raise cel.CelError(f"{name}(list) argument must not be empty")
    for value in values:
        if cel.kind_of(value) not in ("int", "uint", "double"):
            raise cel.CelError(f"{name}(list) argument must not contain non-numeric values")
    return values


def _greatest(*args: Any) -> Any:
    return max(_numbers(args, "math.greatest"))


def _least(*args: Any) -> Any:
    return min(_numbers(args, "math.least"))


def _abs(value: Any) -> Any:
    kind = cel.kind_of(value)
    if kind == "int":
        if value == cel.INT_MIN:
            raise cel.CelError("integer overflow")
        return abs(value)
    if kind in ("uint", "double"):
        return abs(value) if kind == "double" else value
    raise cel.CelError(cel.NO_OVERLOAD)


def _double(value: Any) -> float:
    if cel.kind_of(value) != "double":
        raise cel.CelError(cel.NO_OVERLOAD)
    return float(value)


def _round(value: Any) -> float:
    number = _double(value)
    if math.isnan(number) or math.isinf(number):
        return number
    # half away from zero as Go's math.Round: from the truncated value, exact for every
    # double (floor(x + 0.5) rounds 0.49999999999999994 and 2**52 + 1 up)
    whole = math.trunc(number)
    if abs(number - whole) >= 0.5:
        whole += 1 if number > 0 else -1
    return math.copysign(float(whole), number)


# ------------------------------------------------------------------ strings (ext/strings.go)


def _quote(text: Any) -> str:
    if not isinstance(text, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}  # fmt: skip
    return '"' + "".join(escapes.get(c, c) for c in text) + '"'


_VERB = re.compile(r"%(?:\.(\d+))?([sdfeboxX%])")


def _format(template: Any, args: Any) -> str:
    """`"%s has %d".format([a, b])`: cel-go's verbs %s %d %f %e %b %o %x %X and %%."""
    if not isinstance(template, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    values, used = _list(args), 0

    def verb(match: re.Match[str]) -> str:
        nonlocal used
        if match[2] == "%":
            return "%"
        if used >= len(values):
            raise cel.CelError(f"index {used} out of range")
        value = values[used]
        used += 1
        return _format_one(match[2], value, match[1])

    text = _VERB.sub(verb, template)
    unknown = re.search(r"%(?:\.\d*)?(.?)", _VERB.sub("", template))
    if unknown:
        raise cel.CelError(
            f'could not parse formatting clause: unrecognized formatting clause "{unknown[1]}"'
        )
    return text


# verb → (the kinds it formats, what cel-go's error says of them)
_CLAUSES = {
    "d": (("int", "uint"), "decimal clause can only be used on integers"),
    "f": (("double",), "fixed-point clause can only be used on doubles"),
    "e": (("double",), "scientific clause can only be used on doubles"),
    "b": (("int", "uint", "bool"), "only integers and bools can be formatted as binary"),
    "o": (("int", "uint"), "octal clause can only be used on integers"),
    "x": (
        ("int", "uint", "string", "bytes"),
        "only integers, byte buffers, and strings can be formatted as hex",
    ),
}
_NOT_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _format_one(verb: str, value: Any, precision: str | None) -> str:
    kind = cel.kind_of(value)
    if kind == "double" and not math.isfinite(value) and verb in "sdfe":
        return _NOT_FINITE[str(value)]  # cel-go's words for these, not string()'s +Inf
    if verb == "s":
        if kind == "list":
            return "[" + ", ".join(_format_one("s", v, None) for v in value) + "]"
        if kind == "map":
            pairs = sorted(
                (_format_one("s", k, None), _format_one("s", v, None)) for k, v in value.items()
            )
            return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        if kind == "null_type":
            return "null"
        if kind == "type":
            return str(value.name)
        return cel.to_string(value)
    kinds, refusal = _CLAUSES[verb.lower()]
    if kind not in kinds:
        raise cel.CelError(f"error during formatting: {refusal}, was given {kind}")
    if verb in "fe":
        return f"{float(value):.{6 if precision is None else int(precision)}{verb}}"
    if verb == "d":
        return str(int(value))
    if kind in ("string", "bytes"):
        raw = value.encode() if isinstance(value, str) else value
        return raw.hex() if verb == "x" else raw.hex().upper()
    number = int(value)
    sign, number = ("-", -number) if number < 0 else ("", number)
    body = {"b": f"{number:b}", "o": f"{number:o}", "x": f"{number:x}", "X": f"{number:X}"}[verb]
    return sign + body


# ------------------------------------------------------------------ timestamps and durations


def _zone(name: Any) -> datetime.tzinfo:
    if not isinstance(name, str):
        raise cel.CelError(cel.NO_OVERLOAD)
    offset = re.fullmatch(r"([+-]?)(\d{1,2}):(\d{2})", name)
    if offset:
        minutes = int(offset[2]) * 60 + int(offset[3])
        return datetime.timezone(
            datetime.timedelta(minutes=-minutes if offset[1] == "-" else minutes)
        )
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise cel.CelError(f"unknown time zone {name}") from None


def _timestamp_getter(part: Callable[[datetime.datetime], int]) -> Callable[..., int]:
    def get(value: Any, *zone: Any) -> int:
        if not isinstance(value, datetime.datetime):
            raise cel.CelError(cel.NO_OVERLOAD)
        return part(value.astimezone(_zone(zone[0]) if zone else datetime.UTC))

    return get


def _time_getter(
    of_timestamp: Callable[[datetime.datetime], int],
    of_duration: Callable[[datetime.timedelta], int],
) -> Callable[..., int]:
    """A getter that timestamps and durations both have (`getHours`, …): a duration's is
    its whole length in that unit, truncated toward zero as Go's."""
    stamp = _timestamp_getter(of_timestamp)

    def get(value: Any, *zone: Any) -> int:
        if isinstance(value, datetime.timedelta) and not zone:
            return of_duration(value)
        return stamp(value, *zone)

    return get


def _truncate(value: datetime.timedelta, unit: datetime.timedelta) -> int:
    micros, per = (
        value // datetime.timedelta(microseconds=1),
        unit // datetime.timedelta(microseconds=1),
    )
    return int(micros / per) if micros >= 0 else -int(-micros / per)


_HOUR, _MINUTE = datetime.timedelta(hours=1), datetime.timedelta(minutes=1)
_SECOND, _MILLI = datetime.timedelta(seconds=1), datetime.timedelta(milliseconds=1)

_GETTERS: dict[str, tuple[tuple[int, ...], Callable[..., Any]]] = {
    "getFullYear": ((0, 1), _timestamp_getter(lambda t: t.year)),
    "getMonth": ((0, 1), _timestamp_getter(lambda t: t.month - 1)),
    "getDate": ((0, 1), _timestamp_getter(lambda t: t.day)),
    "getDayOfMonth": ((0, 1), _timestamp_getter(lambda t: t.day - 1)),
    "getDayOfYear": ((0, 1), _timestamp_getter(lambda t: t.timetuple().tm_yday - 1)),
    "getDayOfWeek": ((0, 1), _timestamp_getter(lambda t: (t.weekday() + 1) % 7)),
    "getHours": ((0, 1), _time_getter(lambda t: t.hour, lambda d: _truncate(d, _HOUR))),
    "getMinutes": ((0, 1), _time_getter(lambda t: t.minute, lambda d: _truncate(d, _MINUTE))),
    "getSeconds": ((0, 1), _time_getter(lambda t: t.second, lambda d: _truncate(d, _SECOND))),
    "getMilliseconds": (
        (0, 1),
        _time_getter(lambda t: t.microsecond // 1000, lambda d: _truncate(d, _MILLI)),
    ),
}

EXTENSIONS = cel.Library(
    functions={
        "lists.range": ((1,), _range),
        "sets.contains": ((2,), _contains_all),
        "sets.equivalent": ((2,), lambda a, b: _contains_all(a, b) and _contains_all(b, a)),
        "sets.intersects": ((2,), _intersects),
        "math.greatest": ((1, 2, 3, 4, 5, 6), _greatest),
        "math.least": ((1, 2, 3, 4, 5, 6), _least),
        "math.abs": ((1,), _abs),
        "math.ceil": (
            (1,),
            lambda v: float(math.ceil(_double(v))) if math.isfinite(_double(v)) else v,
        ),
        "math.floor": (
            (1,),
            lambda v: float(math.floor(_double(v))) if math.isfinite(_double(v)) else v,
        ),
        "math.round": ((1,), _round),
        "math.trunc": (
            (1,),
            lambda v: float(math.trunc(_double(v))) if math.isfinite(_double(v)) else v,
        ),
        "math.isNaN": ((1,), lambda v: math.isnan(_double(v))),
        "math.isInf": ((1,), lambda v: math.isinf(_double(v))),
        "math.isFinite": ((1,), lambda v: math.isfinite(_double(v))),
        "strings.quote": ((1,), _quote),
    },
    methods={
        "slice": ((2,), _slice),
        "flatten": ((0, 1), _flatten),
        "distinct": ((0,), _distinct),
        "reverse": ((0,), _reverse),
        "sort": ((0,), _sort),
        "first": ((0,), _first),
        "last": ((0,), _last),
        "format": ((1,), _format),
        **_GETTERS,
    },
)
