"""Cron schedules as CronJobs read them (robfig/cron v3's standard parser).

Five fields — minute, hour, day of month, month, day of week — each `*` or `?`,
a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from a to the end), or a
comma list of those; months and weekdays also by name (`JAN`, `mon`). The
descriptors `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily`
(`@midnight`) and `@hourly` stand for their usual fields, and a `CRON_TZ=Zone` or
`TZ=Zone` prefix sets the time zone. As in Vixie cron, a day matches when both
day fields match — or either one, when neither is a plain `*`.

`Schedule.next_after(t)` is the first matching minute strictly after `t`,
searched in the schedule's zone (a wall-clock minute that does not exist in that
zone, inside a daylight-saving gap, is skipped), within five years.

Pure: no I/O, no clock — callers pass the times.
"""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass

__all__ = ["Schedule", "ScheduleError", "parse_schedule"]


class ScheduleError(ValueError):
    """A schedule that cannot be parsed; the message says which field and why."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]


_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day of month", 1, 31, {}),
    _Field("month", 1, 12, _MONTHS),
    _Field("day of week", 0, 6, _DAYS),
)
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    #: A day field that was a plain `*` / `?` (robfig's star bit): days then need both fields.
    any_day: bool
    any_weekday: bool
    zone: datetime.tzinfo | None = None

    def _day_matches(self, moment: datetime.datetime) -> bool:
        day = moment.day in self.days
        weekday = (moment.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return day and weekday
        return day or weekday

    def next_after(self, moment: datetime.datetime) -> datetime.datetime | None:
        """The first scheduled minute strictly after `moment` (aware), in the schedule's zone."""
        zone = self.zone or moment.tzinfo or datetime.UTC
        local = moment.astimezone(zone).replace(tzinfo=None)
        candidate = local.replace(second=0, microsecond=0) + datetime.timedelta(minutes=1)
        limit = candidate.year + 5
        while candidate.year <= limit:
            if candidate.month not in self.months:
                year, month = (
                    (candidate.year + 1, 1)
                    if candidate.month == 12
                    else (candidate.year, candidate.month + 1)
                )
                candidate = datetime.datetime(year, month, 1)
                continue
            if not self._day_matches(candidate):
                candidate = datetime.datetime(
                    candidate.year, candidate.month, candidate.day
                ) + datetime.timedelta(days=1)
                continue
            if candidate.hour not in self.hours:
                candidate = candidate.replace(minute=0) + datetime.timedelta(hours=1)
                continue
            if candidate.minute not in self.minutes:
                candidate += datetime.timedelta(minutes=1)
                continue
            aware = candidate.replace(tzinfo=zone)
            if aware.astimezone(datetime.UTC).astimezone(zone).replace(tzinfo=None) != candidate:
                candidate += datetime.timedelta(minutes=1)  # inside a daylight-saving gap
                continue
            return aware
        return None


def parse_schedule(text: str, time_zone: str | None = None) -> Schedule:
    """Parse a standard cron schedule; `time_zone` (spec.timeZone) unless the text names one."""
    spec = text.strip()
    zone_name = time_zone
    if spec.startswith(("CRON_TZ=", "TZ=")):
        prefix, _, spec = spec.partition(" ")
        zone_name = prefix.split("=", 1)[1]
        spec = spec.strip()
    zone: datetime.tzinfo | None = None
    if zone_name:
        zone = load_zone(zone_name)
    if spec.startswith("@"):
        expanded = _DESCRIPTORS.get(spec.lower())
        if expanded is None:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = expanded
    parts = spec.split()
    if len(parts) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(parts)}: {spec}")
    sets: list[frozenset[int]] = []
    stars: list[bool] = []
    for part, field in zip(parts, _FIELDS, strict=True):
        values, star = _parse_field(part, field)
        sets.append(values)
        stars.append(star)
    return Schedule(
        minutes=sets[0], hours=sets[1], days=sets[2], months=sets[3], weekdays=sets[4],
        any_day=stars[2], any_weekday=stars[4], zone=zone,
    )  # fmt: skip


def load_zone(name: str) -> datetime.tzinfo:
    if name in ("UTC", "Etc/UTC"):
        return datetime.UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {name}") from None


def _parse_field(text: str, field: _Field) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for term in text.split(","):
        if not term:
            raise ScheduleError(f"empty term in {field.name} field: {text!r}")
        term_values, term_star = _parse_term(term, field)
        values |= term_values
        star = star or term_star
    return frozenset(values), star


def _parse_term(term: str, field: _Field) -> tuple[set[int], bool]:
    range_part, slash, step_part = term.partition("/")
    star = False
    if range_part in ("*", "?"):
        low, high = field.low, field.high
        star = True
    else:
        bounds = range_part.split("-")
        if len(bounds) > 2:
            raise ScheduleError(f"too many hyphens in {field.name}: {term}")
        low = _value(bounds[0], field)
        high = _value(bounds[1], field) if len(bounds) == 2 else low
        if slash and len(bounds) == 1:
            high = field.high  # `a/n` runs from a to the end of the range
    step = 1
    if slash:
        try:
            step = int(step_part)
        except ValueError:
            raise ScheduleError(
                f"failed to parse int from {step_part}: {field.name} field {term!r}"
            ) from None
        if step <= 0:
            raise ScheduleError(f"step of range should be a positive number: {term}")
        if step > 1:
            star = False
    if low < field.low:
        raise ScheduleError(f"beginning of range ({low}) below minimum ({field.low}): {term}")
    if high > field.high:
        raise ScheduleError(f"end of range ({high}) above maximum ({field.high}): {term}")
    if low > high:
        raise ScheduleError(f"beginning of range ({low}) beyond end of range ({high}): {term}")
    return set(range(low, high + 1, step)), star


def _value(text: str, field: _Field) -> int:
    named = field.names.get(text.lower())
    if named is not None:
        return named
    try:
        value = int(text)
    except ValueError:
        raise ScheduleError(f"failed to parse int from {text}: {field.name} field") from None
    if value < 0:
        raise ScheduleError(f"negative number ({value}) not allowed: {text}")
    return value
