"""Whom a document applies to: the vocabulary, and whether it applies to a customer (pure, no database)."""

import re

import pytest

from kb.applicability import Applicability, Audience, AudienceError, audience, parse_attributes


@pytest.mark.parametrize("given, expected", [
    ({}, Audience()),
    ({"segment": "Home"}, Audience(segment="home")),
    ({"plans": ["f100", "Fibra"]}, Audience(plans=("F100", "fibra"))),
    ({"plans": "E500, e1000"}, Audience(plans=("E500", "E1000"))),
    ({"segment": "home", "plans": ["fibra"], "term": "annual"}, Audience("home", ("fibra",), "annual")),
])
def test_the_vocabulary_is_normalised(given, expected):
    assert audience(**given) == expected


@pytest.mark.parametrize("given, field, message", [
    ({"segment": "hogar"}, "segment", "segment must be one of home, business (got 'hogar')"),
    ({"segment": ["home"]}, "segment", "segment must be one word"),
    ({"plans": ["F200"]}, "plans", "plan 'F200' is neither a plan code"),
    ({"plans": {"a": 1}}, "plans", "plans must be a list"),
    ({"term": "yearly"}, "term", "term must be one of monthly, annual, trial"),
    ({"segment": "home", "plans": ["E500", "F100"]}, "plans", "plan E500 is not a home plan (segment: home)"),
])
def test_a_value_outside_the_vocabulary_is_refused_naming_the_field(given, field, message):
    with pytest.raises(AudienceError, match=re.escape(message)) as refused:
        audience(**given)
    assert refused.value.field == field


@pytest.mark.parametrize("whom, customer, reason", [
    (Audience(), Applicability(segment="home"), ""),  # for everyone
    (Audience(segment="business"), None, ""),  # nobody identified: keep
    (Audience(segment="business"), Applicability(), ""),  # nothing known of the customer: keep
    (Audience(segment="business"), Applicability(segment="home"), "for business customers"),
    (Audience(segment="business"), Applicability(plan="F300"), "for business customers"),  # segment of the plan
    (Audience(segment="home"), Applicability(segment="home", plan="HB30"), ""),
    (Audience(plans=("fibra",)), Applicability(plan="HB30"), "for Fibra plans"),
    (Audience(plans=("fibra",)), Applicability(plan="F600"), ""),
    (Audience(plans=("fibra",)), Applicability(segment="business"), "for home customers"),  # plans say the segment
    (Audience(plans=("F100",)), Applicability(plan="F2000"), ""),  # a code the vocabulary does not know: keep
    (Audience(term="annual"), Applicability(plan="F100"), ""),  # billing reports no term: keep
    (Audience(term="annual"), Applicability(plan="F100", term="monthly"), "for the annual plan"),
])
def test_a_document_is_left_out_only_when_what_is_known_of_the_customer_rules_it_out(whom, customer, reason):
    assert whom.excludes(customer) == reason


def test_a_customer_profile_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="segment must be one of"):
        Applicability(segment="empresa")
    assert Applicability(plan=" f300 ").plan == "F300"


def test_a_section_narrows_its_document_and_may_not_contradict_it():
    home_fibra = Audience(segment="home", plans=("fibra",))
    assert home_fibra.narrowed(parse_attributes("plans=F100,F300")) == Audience("home", ("F100", "F300"))
    assert home_fibra.narrowed(parse_attributes("term=annual")) == Audience("home", ("fibra",), "annual")
    assert Audience().narrowed(parse_attributes("segment=business")) == Audience(segment="business")
    with pytest.raises(AudienceError, match="contradicts the document's"):
        home_fibra.narrowed(parse_attributes("segment=business"))
    with pytest.raises(AudienceError, match="plan HB30 is outside the document's"):
        home_fibra.narrowed(parse_attributes("plans=HB30"))


@pytest.mark.parametrize("text, message", [
    ("segmnt=home", "unknown heading attribute 'segmnt=home'"),
    ("segment=home segment=business", "segment is given twice"),
    ("business", "unknown heading attribute 'business'"),
])
def test_bad_heading_attributes_are_refused(text, message):
    with pytest.raises(AudienceError, match=message):
        parse_attributes(text)


def test_an_audience_reads_as_labels_and_as_heading_attributes():
    whom = Audience(segment="home", plans=("fibra", "HB30"), term="annual")
    assert whom.labels() == ["Home customers", "Fibra plans", "Hogar Básico", "Annual plan"]
    assert parse_attributes(whom.attributes()) == whom
    assert Audience().labels() == [] and not Audience()
