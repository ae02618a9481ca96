"""Configuration fingerprints: the pure parts (traces/fingerprint.py), the stored row and the trace page."""

from dataclasses import replace

import pytest
from django.urls import reverse

from traces.fingerprint import PARTS, TUNING, ConfigurationParts, differences, phrases_hash
from traces.models import Configuration
from traces.services import configuration_record
from traces.tests.test_trace_browser import listed, make_trace

BASE = ConfigurationParts(prompt_version="writer-7", model="gpt-4o-mini", router_version="rules-3/e5/ex-1a2b/t0.55",
                          index_version=12, kb_prune_margin=0.12, kb_context_min_score=0.835, bot_max_rewrites=2,
                          phrases_hash=phrases_hash('{"languages": {}}', "como modelo de lenguaje", ""))


def test_equal_parts_give_equal_fingerprints():
    same = ConfigurationParts(**{name: getattr(BASE, name) for name in ConfigurationParts.__dataclass_fields__})
    assert same.fingerprint == BASE.fingerprint and len(BASE.fingerprint) == 16
    assert same.tuning_hash == BASE.tuning_hash


@pytest.mark.parametrize("name, value", [
    ("prompt_version", "writer-8"), ("model", "gpt-4.1"), ("router_version", "llm:x+rules-3"), ("index_version", 13),
    ("index_version", None), ("kb_prune_margin", 0.15), ("kb_context_min_score", 0.84), ("bot_max_rewrites", 1),
    ("phrases_hash", phrases_hash('{"languages": {"es": []}}', "como modelo de lenguaje", "")),
])
def test_any_changed_part_changes_the_fingerprint_and_is_named(name, value):
    changed = replace(BASE, **{name: value})
    assert changed.fingerprint != BASE.fingerprint
    [difference] = differences(BASE, changed)
    assert (difference.part.name, difference.before, difference.after) == (name, getattr(BASE, name), value)
    assert (changed.tuning_hash != BASE.tuning_hash) is (name in TUNING)


def test_a_phrase_moved_from_one_list_to_another_changes_the_phrases_hash():
    assert phrases_hash("a\nb", "") != phrases_hash("a", "b")


def test_every_part_has_a_human_label():
    assert [part.name for part in PARTS] == list(ConfigurationParts.__dataclass_fields__)
    assert all(part.label and part.label != part.name for part in PARTS)


@pytest.mark.django_db
def test_a_configuration_is_stored_once_and_gives_its_parts_back():
    assert configuration_record(parts=BASE) == configuration_record(parts=BASE) == BASE.fingerprint
    stored = Configuration.objects.get(pk=BASE.fingerprint)
    assert stored.parts() == BASE and stored.tuning_hash == BASE.tuning_hash


@pytest.mark.django_db
def test_the_trace_page_shows_the_configuration_with_human_labels(client, make_staff):
    client.force_login(make_staff("luis", "analyst"))
    trace = make_trace(configuration_id=configuration_record(parts=BASE))
    page = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert "<code title=\"Configuration fingerprint" in page and BASE.fingerprint in page
    assert '<th scope="row" title="kb_context_min_score · setting KB_CONTEXT_MIN_SCORE">Minimum score to count as ' \
           'context</th><td class="wrap">0.835</td>' in page
    assert ">Knowledge-base index version</th><td class=\"wrap\">12</td>" in page
    older = make_trace()
    assert "not recorded" in client.get(reverse("traces:detail", args=[older.pk])).content.decode()


@pytest.mark.django_db
def test_the_browser_lists_the_traces_of_one_configuration(client, make_staff):
    client.force_login(make_staff("luis", "analyst"))
    other = replace(BASE, kb_context_min_score=0.9)
    mine = make_trace(configuration_id=configuration_record(parts=BASE))
    theirs = make_trace(configuration_id=configuration_record(parts=other))
    assert listed(client, {mine.pk, theirs.pk}, configuration=BASE.fingerprint) == [mine.pk]
    assert listed(client, {mine.pk, theirs.pk}, configuration="no-such-configuration") == []
