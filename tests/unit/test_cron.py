"""The cron schedule parser and next-time search, against examples and a brute force."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster.cron import ScheduleError, parse_schedule

UTC = datetime.UTC


def at(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_fields_ranges_steps_lists_and_names() -> None:
    s = parse_schedule("*/15 9-17 1,15 JAN-mar MON-FRI")
    assert s.minutes == {0, 15, 30, 45}
    assert s.hours == set(range(9, 18))
    assert s.days == {1, 15}
    assert s.months == {1, 2, 3}
    assert s.weekdays == {1, 2, 3, 4, 5}
    assert not s.any_day and not s.any_weekday
    assert parse_schedule("5/20 * * * *").minutes == {5, 25, 45}  # `a/n` runs to the end
    assert parse_schedule("0 0 * * ?").any_weekday


@pytest.mark.parametrize(
    ("descriptor", "fields"),
    [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
    ],
)
def test_descriptors_are_their_fields(descriptor: str, fields: str) -> None:
    assert parse_schedule(descriptor) == parse_schedule(fields)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("60 * * * *", "end of range (60) above maximum (59)"),
        ("* * 0 * *", "beginning of range (0) below minimum (1)"),
        ("* * * * 7", "end of range (7) above maximum (6)"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1)"),
        ("*/0 * * * *", "step of range should be a positive number"),
        ("x * * * *", "failed to parse int from x"),
        ("@fortnightly", "unrecognized descriptor"),
        ("1,,2 * * * *", "empty term"),
    ],
)
def test_bad_schedules_say_why(text: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_schedule(text)


def test_time_zones_from_the_prefix_or_the_spec() -> None:
    tokyo = parse_schedule("CRON_TZ=Asia/Tokyo 0 9 * * *")
    assert tokyo.next_after(at("2026-01-01T00:30:00")) == datetime.datetime(
        2026, 1, 2, 9, 0, tzinfo=tokyo.zone
    )
    assert parse_schedule("0 9 * * *", "Asia/Tokyo") == tokyo
    assert parse_schedule("TZ=UTC 0 9 * * *").zone is UTC
    with pytest.raises(ScheduleError, match="unknown time zone Mars/Olympus"):
        parse_schedule("0 9 * * *", "Mars/Olympus")


def test_next_after_is_strictly_later_and_on_the_minute() -> None:
    every = parse_schedule("* * * * *")
    assert every.next_after(at("2026-01-01T10:00:00")) == at("2026-01-01T10:01:00")
    assert every.next_after(at("2026-01-01T10:00:59.9")) == at("2026-01-01T10:01:00")
    assert parse_schedule("0 0 1 1 *").next_after(at("2026-06-15T12:00:00")) == at(
        "2027-01-01T00:00:00"
    )
    assert parse_schedule("0 0 29 2 *").next_after(at("2026-03-01T00:00:00")) == at(
        "2028-02-29T00:00:00"
    )
    assert parse_schedule("0 0 31 2 *").next_after(at("2026-01-01T00:00:00")) is None  # never


def test_day_of_month_and_weekday_match_either_unless_one_is_a_star() -> None:
    # 2026-03-13 is a Friday; 2026-03-06 the Friday before.
    either = parse_schedule("0 0 13 * FRI")
    assert either.next_after(at("2026-03-01T00:00:00")) == at("2026-03-06T00:00:00")
    both = parse_schedule("0 0 13 * *")
    assert both.next_after(at("2026-03-01T00:00:00")) == at("2026-03-13T00:00:00")
    stepped = parse_schedule("0 0 */2 * 1")  # a stepped day field is not a star: either
    assert stepped.next_after(at("2026-03-01T00:00:00")) == at("2026-03-02T00:00:00")


def test_minutes_inside_a_daylight_saving_gap_are_skipped() -> None:
    paris = parse_schedule("30 2 * * *", "Europe/Paris")
    # 2026-03-29: clocks go from 02:00 to 03:00 in Paris, so 02:30 does not exist that day.
    found = paris.next_after(at("2026-03-28T02:00:00"))
    assert found is not None
    assert found.replace(tzinfo=None) == datetime.datetime(2026, 3, 30, 2, 30)
    assert found.utcoffset() == datetime.timedelta(hours=2)


def _brute(
    minutes: set[int], hours: set[int], weekdays: set[int], start: datetime.datetime
) -> datetime.datetime:
    moment = start.replace(second=0, microsecond=0) + datetime.timedelta(minutes=1)
    while True:
        if (
            moment.minute in minutes
            and moment.hour in hours
            and moment.isoweekday() % 7 in weekdays
        ):
            return moment
        moment += datetime.timedelta(minutes=1)


def _field(values: set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


@settings(max_examples=60, deadline=None)
@given(
    minutes=st.sets(st.integers(0, 59), min_size=1, max_size=4),
    hours=st.sets(st.integers(0, 23), min_size=1, max_size=3),
    weekdays=st.sets(st.integers(0, 6), min_size=1, max_size=3),
    start=st.datetimes(datetime.datetime(2024, 1, 1), datetime.datetime(2030, 1, 1)),
)
def test_next_after_agrees_with_a_minute_by_minute_search(
    minutes: set[int], hours: set[int], weekdays: set[int], start: datetime.datetime
) -> None:
    schedule = parse_schedule(f"{_field(minutes)} {_field(hours)} * * {_field(weekdays)}")
    found = schedule.next_after(start.replace(tzinfo=UTC))
    assert found == _brute(minutes, hours, weekdays, start).replace(tzinfo=UTC)


@settings(max_examples=40, deadline=None)
@given(
    low=st.integers(0, 59),
    span=st.integers(0, 59),
    step=st.integers(1, 30),
)
def test_a_stepped_range_is_every_step_from_its_start(low: int, span: int, step: int) -> None:
    high = min(low + span, 59)
    schedule = parse_schedule(f"{low}-{high}/{step} * * * *")
    assert schedule.minutes == set(range(low, high + 1, step))
