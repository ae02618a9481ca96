"""Re-run affected cases: the golden cases a document touches and what a save did to their ranks."""

import pytest
from django.urls import reverse

from evals.affected import affected_cases, affected_rerun, default_before_version, move_verdict
from evals.models import GoldenCase, GoldenSet
from kb.editing import section_save
from kb.embeddings import get_embedder
from kb.models import Document

DOWNGRADE = "if i downgrade mid month do i get money back for the days left"
# The customer's words, added to the proration document's "Rules that surprise customers" section.
FIX = ("Downgrading mid-month gives no money back for the days left: you keep the current plan until the "
       "end of the cycle and the lower price starts on the next invoice.")


@pytest.mark.parametrize("before, after, negative_before, negative_after, verdict", [
    (5, 1, None, None, "better"),
    (1, 3, None, None, "worse"),
    (2, 2, None, None, "same"),
    (None, 4, None, None, "better"),  # found at last
    (3, None, None, None, "worse"),  # lost
    (None, None, None, None, "same"),
    (2, 2, None, "trial-refund-en", "worse"),  # same rank, but a hard negative now sits above the hit
    (2, 2, "trial-refund-en", None, "better"),
    (4, 1, "trial-refund-en", None, "better"),
])
def test_the_verdict_of_a_move(before, after, negative_before, negative_after, verdict):
    assert move_verdict(before_rank=before, after_rank=after, before_negative=negative_before,
                        after_negative=negative_after) == verdict


def _case(golden_set, case_id, hits, hard_negatives=(), query=DOWNGRADE, **extra):
    return GoldenCase.objects.create(golden_set=golden_set, case_id=case_id, query=query, hits=list(hits),
                                     hard_negatives=list(hard_negatives), **extra)


@pytest.mark.django_db
def test_affected_cases_are_those_naming_the_document_as_hit_or_hard_negative_in_every_set():
    document = Document.objects.create(slug="t-proration", title="Proration", language="en", version=1)
    first, second = GoldenSet.objects.create(name="t-first"), GoldenSet.objects.create(name="t-second")
    as_hit = _case(first, "c1", ["other-doc", "t-proration"])
    as_negative = _case(second, "c2", ["other-doc"], ["t-proration"])
    reviewed_synthetic = _case(second, "c3", ["t-proration"], synthetic=True, reviewed=True)
    _case(first, "c4", ["other-doc"], ["another-doc"])  # names something else
    _case(first, "c5", ["t-proration"], synthetic=True, reviewed=False)  # nobody reviewed it: gates nothing
    _case(first, "c6", ["t-proration-2"])  # a slug that only starts the same

    assert affected_cases(document=document) == [as_hit, as_negative, reviewed_synthetic]


@pytest.mark.django_db
def test_an_untouched_document_has_no_affected_cases_and_its_rerun_is_empty():
    document = Document.objects.create(slug="t-lonely", title="Lonely", language="en", version=1)
    _case(GoldenSet.objects.create(name="t-set"), "c1", ["other-doc"])
    assert affected_cases(document=document) == []
    assert affected_rerun(document=document) == []


def _fix_proration(django_capture_on_commit_callbacks):
    """Save FIX into proration-en's last section the way the editor does; run the queued re-embedding."""
    document = Document.objects.get(slug="proration-en")
    section = document.sections.live().get(heading_path__endswith="Rules that surprise customers")
    with django_capture_on_commit_callbacks(execute=True):
        result = section_save(document=document, section=section, text=section.text + "\n\n" + FIX,
                              base_hash=section.content_hash, embedder=get_embedder())
    document.refresh_from_db()
    return document, result


@pytest.fixture
def proration_cases(sample_kb):
    golden_set = GoldenSet.objects.create(name="t-affected")
    return {
        # The demo's failure: the customer's words; proration-en is not the first document today.
        "fixed": _case(golden_set, "fixed", ["proration-en"]),
        # Someone who wants the failed-debit policy for the same words (first today) now loses it to proration-en.
        "hurt": _case(golden_set, "hurt", ["direct-debit-en"], ["proration-en"]),
        # A Spanish upgrade question the edit does not touch.
        "untouched": _case(golden_set, "untouched", ["prorrateo-es", "proration-en"], ["cambio-de-plan-es"],
                           query="cuanto me van a cobrar si subo de 100 a 600 a mitad de mes"),
    }


@pytest.mark.django_db
def test_a_fix_moves_its_case_to_rank_1_and_the_case_it_hurt_is_listed_first(
        proration_cases, django_capture_on_commit_callbacks):
    document, result = _fix_proration(django_capture_on_commit_callbacks)
    assert default_before_version(document=document) == result.index_version - 1

    moves = {m.case_id: m for m in affected_rerun(document=document)}
    ordered = [m.case_id for m in affected_rerun(document=document)]

    assert moves["fixed"].before_rank > 1 and moves["fixed"].before_chunk > 1  # not what the bot read first
    assert (moves["fixed"].after_rank, moves["fixed"].after_chunk, moves["fixed"].verdict) == (1, 1, "better")
    assert moves["hurt"].verdict == "worse" and moves["hurt"].after_negative == "proration-en"
    assert moves["untouched"].verdict == "same"
    assert moves["untouched"].before_rank == moves["untouched"].after_rank
    assert ordered == ["hurt", "fixed", "untouched"]  # worse first, then better, then same


@pytest.mark.django_db
def test_any_two_versions_can_be_compared_and_the_same_version_twice_changes_nothing(
        proration_cases, django_capture_on_commit_callbacks):
    document, result = _fix_proration(django_capture_on_commit_callbacks)
    before = result.index_version - 1

    same = affected_rerun(document=document, before_version=before, after_version=before)
    assert {m.verdict for m in same} == {"same"} and len(same) == 3
    backwards = {m.case_id: m for m in affected_rerun(document=document, before_version=result.index_version,
                                                      after_version=before)}
    assert backwards["fixed"].verdict == "worse" and backwards["fixed"].before_rank == 1


# --- the page -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["analyst", "agent"])
def test_only_kb_editors_may_open_or_run_the_page(client, make_staff, role):
    Document.objects.create(slug="t-doc", title="Doc", language="en", version=1)
    url = reverse("evals:affected_cases", args=["t-doc"])
    assert client.get(url).status_code == 302  # anonymous: to the login page
    client.force_login(make_staff("someone", role))
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403


@pytest.mark.django_db
def test_after_a_save_the_editor_reruns_the_affected_cases_and_sees_before_and_after_ranks(
        client, make_staff, proration_cases, django_capture_on_commit_callbacks):
    client.force_login(make_staff("eva", "kb_editor"))
    document = Document.objects.get(slug="proration-en")
    url = reverse("evals:affected_cases", args=["proration-en"])
    before_any_save = client.get(reverse("kb:document", args=["proration-en"])).content.decode()
    assert url not in before_any_save
    document, _ = _fix_proration(django_capture_on_commit_callbacks)

    detail = client.get(reverse("kb:document", args=["proration-en"])).content.decode()
    assert f'action="{url}"' in detail and "Re-run affected cases" in detail

    listing = client.get(url).content.decode()
    assert "3 cases name this document" in listing and "t-affected/fixed" in listing

    page = client.post(url).content.decode()
    assert '<strong id="affected-summary">1 better, 1 worse, 1 same</strong>' in page
    rows = [page.index(f'data-case="{case_id}"') for case_id in ("hurt", "fixed", "untouched")]
    assert rows == sorted(rows)  # the worse row first
    assert 'class="move-worse" data-case="hurt"' in page and 'class="move-better" data-case="fixed"' in page
    fixed_row = page[rows[1]:rows[2]]
    assert '<span class="rank-after">1</span>' in fixed_row

    partial = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    assert "1 better, 1 worse, 1 same" in partial and "<html" not in partial

    version = document.versions.get(number=document.version).index_version
    same = client.post(url, {"before": version, "after": version}).content.decode()
    assert "0 better, 0 worse, 3 same" in same
