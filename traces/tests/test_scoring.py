"""Score definitions and values: checked, written in one canonical spelling (pure)."""

import pytest

from traces.scoring import ScoreError, ScoreSpec, bucket_of, buckets, spec_check, value_number, value_parse

ANSWERED = ScoreSpec(key="answered", name="Answered the question", kind="boolean")
TONE = ScoreSpec(key="tone", name="Tone", kind="categorical", values=("warm", "neutral", "curt"))
STARS = ScoreSpec(key="stars", name="Stars", kind="numeric", low=1, high=5)
LATENESS = ScoreSpec(key="lateness", name="Minutes late", kind="numeric", low=0, high=100)


@pytest.mark.parametrize("spec, raw, value", [
    (ANSWERED, "Yes", "yes"), (ANSWERED, "no", "no"), (ANSWERED, "sí", "yes"), (ANSWERED, "", None),
    (TONE, "WARM", "warm"), (TONE, " curt ", "curt"),
    (STARS, "4", "4"), (STARS, "4.0", "4"), (STARS, "2,5", "2.5"),
])
def test_values_are_read_into_one_spelling(spec, raw, value):
    assert value_parse(spec, raw) == value


@pytest.mark.parametrize("spec, raw, message", [
    (ANSWERED, "maybe", "answer yes or no"), (TONE, "rude", "choose one of warm, neutral, curt"),
    (STARS, "6", "between 1 and 5"), (STARS, "1e3", "write a number"), (STARS, "nan", "write a number"),
])
def test_a_bad_value_says_what_to_write(spec, raw, message):
    with pytest.raises(ScoreError, match=message):
        value_parse(spec, raw)


def test_definitions_are_checked():
    assert spec_check(key="Tone", name=" Tone ", kind="categorical", values=["warm", "Warm", "curt", ""]).values \
        == ("warm", "curt")
    for bad in ({"key": "1x", "name": "n", "kind": "boolean"}, {"key": "k", "name": "", "kind": "boolean"},
                {"key": "k", "name": "n", "kind": "stars"},
                {"key": "k", "name": "n", "kind": "categorical", "values": ["one"]},
                {"key": "k", "name": "n", "kind": "numeric", "low": 5, "high": 1}):
        with pytest.raises(ScoreError):
            spec_check(**bad)


def test_numbers_and_buckets_for_the_dashboard():
    assert (value_number(ANSWERED, "yes"), value_number(STARS, "2.5"), value_number(TONE, "warm")) == (1.0, 2.5, None)
    assert STARS.choices() == ["1", "2", "3", "4", "5"] and bucket_of(STARS, "3") == "3"
    assert buckets(LATENESS)[0] == "0–20" and bucket_of(LATENESS, "100") == "80–100"
    assert bucket_of(LATENESS, "20") == "20–40"
