from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from cairn.ranking.dates import GRACE, occurred_within, query_ranges

NOW = datetime(2026, 8, 5, 12, 0, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(
    "text",
    [
        "What did we decide on 3 March 2026?",
        "decision of the 3rd of March, 2026",
        "What happened on March 3, 2026",
        "deploy of 2026-03-03",
        "on march 3rd 2026",
    ],
)
def test_a_named_day_is_a_one_day_range(text: str) -> None:
    assert query_ranges(text, NOW) == [(date(2026, 3, 3), date(2026, 3, 3))]


def test_a_month_with_a_year_covers_the_month() -> None:
    assert query_ranges("the outage in July 2025", NOW) == [(date(2025, 7, 1), date(2025, 7, 31))]
    assert query_ranges("releases of 2024-02", NOW) == [(date(2024, 2, 1), date(2024, 2, 29))]
    assert query_ranges("what changed in December, 2025", NOW) == [
        (date(2025, 12, 1), date(2025, 12, 31))
    ]


def test_a_month_alone_matches_that_month_of_recent_years() -> None:
    ranges = query_ranges("When did Melanie go camping in June?", NOW)
    assert (date(2026, 6, 1), date(2026, 6, 30)) in ranges
    assert (date(2023, 6, 1), date(2023, 6, 30)) in ranges
    assert all(start.month == 6 for start, _ in ranges)


def test_may_the_verb_is_not_a_month() -> None:
    assert query_ranges("this may be wrong", NOW) == []
    assert query_ranges("we may need a retry", NOW) == []


def test_a_year_alone_and_versions_that_look_like_years() -> None:
    assert query_ranges("what did we ship in 2024?", NOW) == [
        (date(2024, 1, 1), date(2024, 12, 31))
    ]
    assert query_ranges("bump to v2.0.2023", NOW) == []
    assert query_ranges("ticket 120245", NOW) == []


def test_relative_times_count_from_now() -> None:
    assert query_ranges("what broke yesterday", NOW) == [(date(2026, 8, 4), date(2026, 8, 4))]
    assert query_ranges("done today", NOW) == [(date(2026, 8, 5), date(2026, 8, 5))]
    assert query_ranges("changes last week", NOW) == [(date(2026, 7, 27), date(2026, 8, 2))]
    assert query_ranges("this week", NOW) == [(date(2026, 8, 3), date(2026, 8, 9))]
    assert query_ranges("last month", NOW) == [(date(2026, 7, 1), date(2026, 7, 31))]
    assert query_ranges("this year", NOW) == [(date(2026, 1, 1), date(2026, 12, 31))]
    january = datetime(2026, 1, 10, tzinfo=UTC)
    assert query_ranges("last month", january) == [(date(2025, 12, 1), date(2025, 12, 31))]


def test_no_time_named_no_range() -> None:
    assert query_ranges("how do we deploy the billing service", NOW) == []
    assert query_ranges("version 2 of the api", NOW) == []


def test_occurred_within_allows_a_week_of_grace_after_the_range() -> None:
    ranges = [(date(2026, 3, 3), date(2026, 3, 3))]
    assert occurred_within(datetime(2026, 3, 3, 23, 0, tzinfo=UTC), ranges)
    assert occurred_within(datetime(2026, 3, 3, tzinfo=UTC) + GRACE, ranges)
    assert not occurred_within(datetime(2026, 3, 11, 1, 0, tzinfo=UTC), ranges)
    assert not occurred_within(datetime(2026, 3, 2, 23, 0, tzinfo=UTC), ranges)
