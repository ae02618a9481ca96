"""From a failure to the chunk: document usage, chunk page, "open in KB", playground versions."""

import datetime as dt
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from core import clock
from desk.models import Contact, Conversation
from evals.kb_usage import score_chunks
from evals.models import GoldenCase, GoldenSet
from kb.editing import document_delete
from kb.embeddings import get_embedder
from kb.inspect import rank_changes, section_edit_url
from kb.models import Chunk, Document, EmbeddingSpace
from kb.search import search
from kb.services import documents_import
from tests.support.kb_docs import REFUND, TRIAL
from traces.models import ReviewNote, ReviewSession, Trace

QUERY = "Can I cancel my annual plan and get a refund?"


# ── pure: rank changes between two index versions ──────────────────────────────────────────────

@pytest.mark.parametrize("now, then, expected", [
    ([1, 2, 3], [1, 2, 3], {1: "same", 2: "same", 3: "same"}),
    ([2, 1], [1, 2], {2: "up 1", 1: "down 1"}),
    ([1, 4], [1, 2], {1: "same", 4: "new", 2: "gone"}),
    ([], [7], {7: "gone"}),
    ([7], [], {7: "new"}),
])
def test_rank_changes_mark_moved_new_and_gone_chunks(now, then, expected):
    changes = rank_changes(now, then)
    assert {c: change.change for c, change in changes.items()} == expected


# ── fixtures: a two-document knowledge base and traces made as bot/turn.py makes them ───────────

pytestmark_db = pytest.mark.django_db


@pytest.fixture
def embedder():
    return get_embedder()


@pytest.fixture
def small_kb(tmp_path, embedder, make_staff):
    cache.clear()  # the document list keeps its usage counts for a few minutes
    Document.objects.all().delete()
    EmbeddingSpace.objects.all().delete()
    (tmp_path / "a.md").write_text(REFUND, encoding="utf-8")
    (tmp_path / "b.md").write_text(TRIAL, encoding="utf-8")
    documents_import(paths=[tmp_path], embedder=embedder, author=make_staff("importer"))
    return tmp_path


def chunk_of(slug, heading=""):
    chunks = Chunk.objects.live().filter(document__slug=slug, section__heading_path__contains=heading)
    return chunks.first()


def conversation():
    contact = Contact.objects.create(channel="webchat", name="T", language="en")
    return Conversation.objects.create(contact=contact, channel="webchat")


def make_trace(*, query=QUERY, hits=(), cited=(), days_ago=0):
    """hits: (chunk, kept, prune_reason) in rank order; cited: chunks the answer cited."""
    retrieval, evidence = [], []
    for rank, (chunk, kept, reason) in enumerate(hits, start=1):
        retrieval.append({"chunk_id": chunk.pk, "doc": chunk.document.slug,
                          "section": chunk.section.heading_path, "language": "en", "rank": rank, "rrf": 0.02,
                          "vector_score": 0.8, "vector_rank": rank,
                          "text_rank": None, "text_position": None, "matched_by_text": False,
                          "matched_by_identifier": False, "kept": kept, "prune_reason": reason})
        if kept:
            evidence.append({"id": f"E{len(evidence) + 1}", "text": chunk.text, "value": None,
                             "kind": "chunk", "chunk_id": chunk.pk, "doc": chunk.document.slug,
                             "section": chunk.section.heading_path,
                             "language": "en"})
    citations = [e["id"] for e in evidence if e["chunk_id"] in {c.pk for c in cited}]
    trace = Trace.objects.create(conversation=conversation(), channel="webchat", outcome="answered",
                                 language="en", route="document", query=query, retrieval=retrieval,
                                 evidence=evidence, citations=citations,
                                 index_version=EmbeddingSpace.objects.first().index_version)
    if days_ago:
        Trace.objects.filter(pk=trace.pk).update(created_at=clock.now() - dt.timedelta(days=days_ago))
    return trace


def fail_note(trace, author, stage="retrieval", chunk=None):
    session = ReviewSession.objects.create(name="s", window_start=clock.now() - dt.timedelta(days=7),
                                           window_end=clock.now(), seed=1, requested_size=10)
    return ReviewNote.objects.create(session=session, trace=trace, author=author, verdict="fail", stage=stage,
                                     first_failure="the trial policy outranked the annual one", chunk=chunk)


def golden_case(trace=None, *, case_id="refund-annual", hits=("t-refund-annual",),
                negatives=("t-refund-trial",)):
    golden_set, _ = GoldenSet.objects.get_or_create(name="billing")
    return GoldenCase.objects.create(golden_set=golden_set, case_id=case_id, query=QUERY, hits=list(hits),
                                     hard_negatives=list(negatives), trace=trace,
                                     origin="trace" if trace else "file")


def row_cells(html, slug):
    """Return the usage numbers (retrieved, kept, cited, notes) of one document row."""
    row = re.search(rf'<tr[^>]*data-doc="{slug}">(.*?)</tr>', html, re.DOTALL)
    assert row, f"no row for {slug}"
    cells = []
    for name in ("retrieved", "kept", "cited", "notes"):
        cell = re.search(rf'class="num usage-{name}">(.*?)</td>', row.group(1), re.DOTALL).group(1)
        cells.append(int(re.sub(r"<[^>]+>", "", cell).strip()))
    return tuple(cells)


# ── document list ────────────────────────────────────────────────────────────────────────────────

@pytestmark_db
def test_document_list_counts_traces_and_failure_notes_of_the_last_30_days(client, make_staff, small_kb):
    editor = make_staff("eva", "kb_editor")
    annual, account = chunk_of("t-refund-annual", "14 days"), chunk_of("t-refund-annual", "Collection")
    trial = chunk_of("t-refund-trial")
    make_trace(hits=[(annual, True, "within margin"), (account, True, "within margin")], cited=[annual])
    pruned = make_trace(hits=[(trial, True, "within margin"), (annual, False, "below margin")])
    make_trace(hits=[(annual, True, "within margin")], cited=[annual], days_ago=40)  # outside the window
    fail_note(pruned, editor, chunk=trial)  # names the trial chunk: counts there, not on the annual one it retrieved
    # A failure note naming no chunk on a trace that cited none; its golden case expects the annual policy.
    wrong = make_trace(hits=[(trial, True, "within margin")])
    golden_case(wrong)
    fail_note(wrong, editor)

    client.force_login(editor)
    html = client.get(reverse("evals:document_usage")).content.decode()
    # Two chunks of the annual document in one trace count that trace once.
    assert row_cells(html, "t-refund-annual") == (2, 1, 1, 1)
    assert row_cells(html, "t-refund-trial") == (2, 2, 0, 1)
    assert "Usage in traces, last 30 days" in html
    assert "by importer" in client.get(reverse("kb:documents")).content.decode()


@pytestmark_db
def test_document_list_needs_a_constant_number_of_queries(client, make_staff, small_kb, embedder, tmp_path,
                                                          django_assert_max_num_queries):
    editor = make_staff("eva", "kb_editor")
    client.force_login(editor)
    client.get(reverse("evals:document_usage"))  # warm the session and permission caches
    with django_assert_max_num_queries(7) as few:  # session, user, 2 × permissions, documents, usage, space
        assert client.get(reverse("evals:document_usage") + "?recount=1").status_code == 200
    more = tmp_path / "more"
    more.mkdir()
    for n in range(6):
        (more / f"d{n}.md").write_text(TRIAL.replace("t-refund-trial", f"t-extra-{n}")
                                       .replace("7 days", f"{n + 8} days"), encoding="utf-8")
    documents_import(paths=[more], embedder=embedder)
    for chunk in Chunk.objects.live()[:5]:
        fail_note(make_trace(hits=[(chunk, True, "within margin")], cited=[chunk]), editor)
    with django_assert_max_num_queries(len(few.captured_queries)):
        html = client.get(reverse("evals:document_usage") + "?recount=1").content.decode()
    slugs = re.findall(r'data-doc="([^"]+)"', html)
    # Five traces of one chunk each.
    assert len(slugs) == 8 and sum(row_cells(html, slug)[0] for slug in slugs) == 5


@pytestmark_db
def test_document_list_keeps_its_counts_until_recount(client, make_staff, small_kb):
    client.force_login(make_staff("eva", "kb_editor"))
    assert row_cells(client.get(reverse("evals:document_usage")).content.decode(), "t-refund-trial")[0] == 0
    make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    assert row_cells(client.get(reverse("evals:document_usage")).content.decode(), "t-refund-trial")[0] == 0
    recounted = client.get(reverse("evals:document_usage") + "?recount=1").content.decode()
    assert row_cells(recounted, "t-refund-trial")[0] == 1


@pytestmark_db
def test_deleted_documents_show_only_behind_the_filter(client, make_staff, small_kb):
    editor = make_staff("eva", "kb_editor")
    document_delete(document=Document.objects.get(slug="t-refund-trial"), author=editor)
    client.force_login(editor)
    listing = client.get(reverse("kb:documents")).content.decode()
    assert "t-refund-annual" in listing and "t-refund-trial" not in listing
    with_deleted = client.get(reverse("kb:documents") + "?deleted=1").content.decode()
    assert 'data-doc="t-refund-trial"' in with_deleted and "deleted " in with_deleted
    assert re.search(r'data-doc="t-refund-trial">.*?delete by eva', with_deleted, re.DOTALL)


# ── score_chunks agrees with the full search ───────────────────────────────────────────────────

@pytestmark_db
def test_score_chunks_gives_the_scores_and_ranks_the_search_gives(small_kb, embedder):
    result = search(QUERY, k=5, embedder=embedder)
    ids = [hit.chunk_id for hit in result.fused]
    assert len(ids) == 3
    scores = score_chunks(QUERY, ids, embedder=embedder)
    for hit in result.fused:
        score = scores[hit.chunk_id]
        assert (score.fused_rank, score.vector_score, score.text_rank, score.kept, score.prune_reason) == \
            (hit.rank, hit.vector_score, hit.text_rank, hit.kept, hit.prune_reason)
        assert score.in_top_k
    # A chunk outside the top k still gets its scores and its rank in the whole fused list.
    narrow = score_chunks(QUERY, ids, k=1, embedder=embedder)
    last = result.fused[-1]
    assert narrow[last.chunk_id].fused_rank == last.rank and not narrow[last.chunk_id].in_top_k
    assert narrow[last.chunk_id].vector_score == last.vector_score


# ── open in KB ───────────────────────────────────────────────────────────────────────────────────

@pytestmark_db
def test_open_in_kb_puts_the_retrieved_chunks_beside_the_expected_ones(client, make_staff, small_kb,
                                                                       embedder):
    annual, trial = chunk_of("t-refund-annual", "14 days"), chunk_of("t-refund-trial")
    trace = make_trace(hits=[(trial, True, "within margin"), (annual, False, "below margin")])
    golden_case(trace)
    client.force_login(make_staff("eva", "kb_editor"))
    page = client.get(reverse("evals:open_trace", args=[trace.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    left, right = html.split('id="expected"')
    # Left: what it retrieved, the hard negative labelled because it ranks above the expected chunk.
    assert left.index("t-refund-trial") < left.index("t-refund-annual")
    assert "hard negative above the expected chunk" in left and "below margin" in left
    assert "Best expected chunk then: rank <strong>2</strong>" in left
    # Right: every live chunk of the expected document, scored for the query now.
    now = {hit.chunk_id: hit for hit in search(QUERY, k=5, embedder=embedder).fused}
    for chunk in Chunk.objects.live().filter(document__slug="t-refund-annual"):
        assert reverse("kb:chunk", args=[chunk.pk]) in right
        assert str(now[chunk.pk].vector_score) in right
    best = min(now[c.pk].rank for c in Chunk.objects.live().filter(document__slug="t-refund-annual"))
    assert re.search(rf'id="best-now">{best}<', right)
    assert section_edit_url("t-refund-annual", annual.section_id) in html


@pytestmark_db
def test_open_in_kb_without_a_golden_case_offers_to_make_one(client, make_staff, small_kb):
    trace = make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    client.force_login(make_staff("eva", "kb_editor", "analyst"))
    html = client.get(reverse("evals:open_trace", args=[trace.pk])).content.decode()
    assert "No golden case comes from this trace" in html
    assert reverse("traces:detail", args=[trace.pk]) + "#golden" in html and "Make a golden case" in html


@pytestmark_db
def test_of_several_golden_cases_from_a_trace_the_must_pass_one_is_compared(client, make_staff, small_kb):
    trace = make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    golden_case(trace, case_id="a-trial", hits=("t-refund-trial",), negatives=())
    golden_case(trace, case_id="b-annual")
    GoldenCase.objects.filter(case_id="b-annual").update(must_pass=True)
    client.force_login(make_staff("eva", "kb_editor"))
    right = client.get(reverse("evals:open_trace", args=[trace.pk])).content.decode().split('id="expected"')[1]
    assert "Golden case billing/b-annual" in right and "1 other case from this trace: billing/a-trial" in right


@pytestmark_db
def test_a_failure_note_opens_its_trace_in_the_kb(client, make_staff, small_kb):
    editor = make_staff("eva", "kb_editor", "analyst")
    trace = make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    note = fail_note(trace, editor, stage="pruning")
    golden_case(trace, negatives=())
    client.force_login(editor)
    html = client.get(reverse("evals:open_note", args=[note.pk])).content.decode()
    assert "Failure note by eva" in html and "the trial policy outranked the annual one" in html
    assert "billing/refund-annual" in html
    # The trace page links to it for a kb_editor, for the trace and for the retrieval failure note.
    trace_page = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert reverse("evals:open_trace", args=[trace.pk]) in trace_page
    assert reverse("evals:open_note", args=[note.pk]) in trace_page


@pytestmark_db
def test_taxonomy_and_review_pages_link_a_retrieval_failure_to_the_kb(client, make_staff, small_kb):
    from traces.models import SessionTrace

    editor = make_staff("eva", "analyst", "kb_editor")
    trace = make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    note = fail_note(trace, editor, stage="retrieval")
    SessionTrace.objects.create(session=note.session, trace=trace, source="uniform", position=1)
    writing = fail_note(make_trace(), editor, stage="writing")
    open_note = reverse("evals:open_note", args=[note.pk])
    client.force_login(editor)
    taxonomy = client.get(reverse("traces:taxonomy", args=[note.session_id])).content.decode()
    assert open_note in taxonomy
    assert reverse("evals:open_note", args=[writing.pk]) not in client.get(
        reverse("traces:taxonomy", args=[writing.session_id])).content.decode()
    assert open_note in client.get(reverse("traces:review", args=[note.session_id, 1])).content.decode()
    client.force_login(make_staff("ann", "analyst"))
    assert open_note not in client.get(reverse("traces:taxonomy", args=[note.session_id])).content.decode()


@pytestmark_db
def test_open_in_kb_is_for_kb_editors_only(client, make_staff, small_kb):
    trace = make_trace(hits=[(chunk_of("t-refund-trial"), True, "within margin")])
    note = fail_note(trace, make_staff("ana", "analyst"))
    client.force_login(make_staff("agent", "agent"))
    assert client.get(reverse("evals:open_trace", args=[trace.pk])).status_code == 403
    assert client.get(reverse("evals:open_note", args=[note.pk])).status_code == 403
    client.force_login(make_staff("ann", "analyst"))
    assert client.get(reverse("evals:open_trace", args=[trace.pk])).status_code == 403
    trace_page = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert "Open in KB" not in trace_page


# ── chunk page ───────────────────────────────────────────────────────────────────────────────────

@pytestmark_db
def chunk_page(client, chunk_id) -> str:
    """The KB's chunk page and the evals panel it loads beside it (traces, notes, golden cases)."""
    page = client.get(reverse("kb:chunk", args=[chunk_id])).content.decode()
    panel = reverse("evals:chunk_usage", args=[chunk_id])
    assert f'hx-get="{panel}"' in page
    return page + client.get(panel).content.decode()


def test_chunk_page_shows_traces_notes_and_golden_cases_and_the_retired_status(client, make_staff, small_kb,
                                                                               embedder):
    editor = make_staff("eva", "kb_editor")
    annual = chunk_of("t-refund-annual", "14 days")
    kept = make_trace(hits=[(annual, True, "within margin")], cited=[annual])
    pruned = make_trace(query="refund in full", hits=[(chunk_of("t-refund-trial"), True, "within margin"),
                                                      (annual, False, "below margin")])
    make_trace(hits=[(annual, True, "within margin")], days_ago=45)
    fail_note(pruned, editor, chunk=annual)
    golden_case(None, case_id="from-file")
    client.force_login(editor)
    html = chunk_page(client, annual.pk)
    assert "live, added at version" in html
    assert reverse("kb:section_edit", args=["t-refund-annual", annual.section_id]) in html
    assert re.search(r'usage-retrieved">2<', html) and re.search(r'usage-kept">1<', html)
    assert re.search(r'usage-cited">1<', html)
    assert html.count(reverse("evals:open_trace", args=[kept.pk])) == 1 and "refund in full" in html
    assert "3 traces that retrieved it" in html  # the list is not limited to 30 days
    assert "the trial policy outranked the annual one" in html and "billing/from-file" in html

    # Editing the section retires the chunk; the page says at which version.
    (small_kb / "a.md").write_text(REFUND.replace("refunded in full", "refunded in full, no questions asked"),
                                   encoding="utf-8")
    documents_import(paths=[small_kb], embedder=embedder)
    version = EmbeddingSpace.objects.first().index_version
    html = chunk_page(client, annual.pk)
    assert f"retired at version {version}" in html
    assert "Edit this section" not in html and "Current document" in html  # a retired section is not edited


# ── playground ───────────────────────────────────────────────────────────────────────────────────

@pytestmark_db
def test_playground_compares_the_current_index_with_an_earlier_version(client, make_staff, small_kb,
                                                                        embedder):
    before = EmbeddingSpace.objects.first().index_version
    old = chunk_of("t-refund-annual", "14 days")
    (small_kb / "a.md").write_text(REFUND.replace("refunded in full", "refunded in full to the card"),
                                   encoding="utf-8")
    documents_import(paths=[small_kb], embedder=embedder)
    new = chunk_of("t-refund-annual", "14 days")
    assert new.pk != old.pk
    client.force_login(make_staff("eva", "kb_editor"))
    url = reverse("kb:search") + f"?q=cancel+annual+plan+refund&language=en&version={before}"
    page = client.get(url).content.decode()
    assert f'<option value="{before}" selected>' in page
    now, then = page.split('class="version-then"')
    assert re.search(rf'data-chunk="{new.pk}">.*?change-new', now, re.DOTALL)
    assert re.search(rf'data-chunk="{old.pk}">.*?gone since', then, re.DOTALL)
    assert "Full-text branch" in now and "A text hit holds every one of" in now and "Pruned" in now
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<h1>" not in partial and 'class="version-then"' in partial
    # Spanish only: the English documents drop out.
    spanish = client.get(reverse("kb:search") + "?q=cancel+annual+plan+refund&language=es").content.decode()
    assert "t-refund-annual" not in spanish.split('id="results"')[1]


@pytestmark_db
def test_playground_without_a_version_shows_one_column(client, make_staff, small_kb):
    client.force_login(make_staff("eva", "kb_editor"))
    page = client.get(reverse("kb:search") + "?q=refund&version=abc").content.decode()
    assert 'class="version-then"' not in page and "Fused and pruned" in page
    assert client.get(reverse("kb:search") + "?q=refund&version=1").status_code == 200
