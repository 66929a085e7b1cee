"""The one formatter per kind of figure (``foundation.units``): durations, plain numbers, figures by unit."""

from __future__ import annotations

import math

import pytest

from policy_engine.foundation.units import (
    Unit,
    duration_spec,
    duration_text,
    figure_text,
    money_text,
    number_text,
    parse_duration,
)


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (45, "45s"), (2.5, "2.5s"), (60, "1m 00s"), (723, "12m 03s"), (11100, "3h 05m"),
    (190800, "2d 5h"), (1909678.681, "22d 2h"), (-90, "-1m 30s"), (None, "-"), (math.inf, "-"), (math.nan, "-")])
def test_durations_read_as_people_write_them(seconds, text):
    assert duration_text(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (9 * 86400 + 15 * 3600 + 50 * 60, "9d 16h"), (86399, "1d 0h"), (3570, "1h 00m"), (59.6, "1m 00s"),
    (9.96, "10s"), (80000, "22h 13m"), (3 * 3600 + 29, "3h 00m"), (3 * 3600 + 31, "3h 01m")])
def test_durations_round_to_the_unit_shown_instead_of_cutting_it(seconds, text):
    assert duration_text(seconds) == text


@pytest.mark.parametrize(("value", "text"), [
    (1234567, "1234567"), (1234567.0, "1234567"), (0.25, "0.25"), (1234567.25, "1234567.25"), (0.0, "0"),
    (1e17, "100000000000000000"), (10.3 - 0.1, "10.2"), (0.00001, "0.00001"), (7117.938999951, "7117.939"),
])
def test_plain_numbers_have_no_e_notation_or_float_noise(value, text):
    assert number_text(value) == text


@pytest.mark.parametrize(("amount", "text"), [
    (1115.356475, "1,115.36"), (2 * 12.5, "25.00"), (-0.001, "0.00"), (-1234.5, "-1,234.50"), (0.0, "0.00"),
])
def test_money_reads_to_the_cent_and_never_as_minus_zero(amount, text):
    assert money_text(amount) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (1909678.681, Unit.SECONDS, "22d 2h"), (0.6514, Unit.FRACTION, "65.1%"), (1234.0, Unit.COUNT, "1,234"),
    (1115.356475, Unit.INSTANCE_HOURS, "1,115.36"), (2.625, Unit.INSTANCES, "2.62"), (0.1 + 0.2, Unit.NUMBER, "0.3"),
])
def test_a_figure_is_written_as_its_unit_reads(value, unit, text):
    assert figure_text(value, unit) == text


@pytest.mark.parametrize(("seconds", "text"), [(3600, "1h"), (43200, "12h"), (5400, "90m"), (3601, "3601s"),
                                               (2592000, "30d"), (90.5, "90.5s")])
def test_a_duration_written_back_to_a_file_reads_as_typed_and_parses_to_the_same(seconds, text):
    assert duration_spec(seconds) == text and parse_duration(text) == seconds
