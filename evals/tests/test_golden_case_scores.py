"""The team's scores on a golden case's expected answer: set, shown, refused with a reason, reviewers only."""

import pytest
from django.urls import reverse

from evals.models import GoldenCase, GoldenCaseScore, GoldenSet
from traces.scores import score_definition_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def case():
    score_definition_create(key="tone", name="Tone", kind="categorical", values=["warm", "curt"],
                            description="How the expected answer sounds.")
    golden_set = GoldenSet.objects.create(name="billing")
    return GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="¿cuánto cuesta?")


def test_an_analyst_scores_a_golden_answer(client, make_staff, case):
    client.force_login(make_staff("ana", "analyst"))
    url = reverse("evals:golden_case_scores", args=[case.pk])
    for _ in range(2):  # a double submit keeps one value
        assert client.post(url, {"score_tone": "Warm", "model_faithful": "yes"}).status_code == 302
    assert list(GoldenCaseScore.objects.values_list("definition__key", "value")) == [("tone", "warm")]
    assert '<option value="warm" selected>' in client.get(url).content.decode()
    assert f'hx-get="{url}"' in client.get(reverse("evals:golden_case", args=[case.pk])).content.decode()
    bad = client.post(url, {"score_tone": "rude"})
    assert bad.status_code == 400 and "choose one of warm, curt" in bad.content.decode()
    assert GoldenCaseScore.objects.get().value == "warm"
    client.post(url, {"score_tone": ""})
    assert not GoldenCaseScore.objects.exists()


def test_only_reviewers_score_golden_answers(client, make_staff, case):
    client.force_login(make_staff("eva", "kb_editor"))
    assert client.post(reverse("evals:golden_case_scores", args=[case.pk]), {"score_tone": "warm"}).status_code == 403
