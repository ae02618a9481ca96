"""A failure note counts on the chunk it names, else on the chunk the reply cited — never on every chunk the
trace retrieved (the KB's "failure notes" counts on the document list and the chunk page)."""

import re

import pytest
from django.urls import reverse

from evals.tests.test_kb_usage import (  # noqa: F401 - small_kb and embedder are fixtures
    chunk_of,
    chunk_page,
    embedder,
    fail_note,
    make_trace,
    row_cells,
    small_kb,
)

pytestmark = pytest.mark.django_db


def notes_on_chunk(html) -> int:
    return int(re.search(r'<span class="usage-notes">(\d+)</span>', html).group(1))


def test_a_note_counts_on_the_named_or_cited_chunk_only(client, make_staff, small_kb):
    editor = make_staff("eva", "kb_editor")
    annual, account = chunk_of("t-refund-annual", "14 days"), chunk_of("t-refund-annual", "Collection")
    trial = chunk_of("t-refund-trial")
    # Retrieved all three, cited the annual chunk; the note names no chunk: it counts on the cited one.
    cited = make_trace(hits=[(annual, True, "top"), (account, True, "within margin"), (trial, True, "within margin")],
                       cited=[annual])
    fail_note(cited, editor)
    # Retrieved all three, cited the annual chunk, but the note names the trial chunk: it counts there.
    named = make_trace(hits=[(annual, True, "top"), (trial, True, "within margin"), (account, False, "below")],
                       cited=[annual])
    fail_note(named, editor, chunk=trial)
    # Retrieved all three, cited nothing, named nothing, no golden case: it counts on no chunk.
    fail_note(make_trace(hits=[(annual, True, "top"), (trial, True, "within margin")]), editor)

    client.force_login(editor)
    assert notes_on_chunk(chunk_page(client, annual.pk)) == 1
    assert notes_on_chunk(chunk_page(client, trial.pk)) == 1
    assert notes_on_chunk(chunk_page(client, account.pk)) == 0
    html = client.get(reverse("evals:document_usage") + "?recount=1").content.decode()
    assert row_cells(html, "t-refund-annual")[3] == 1  # the cited note; not the named-trial or uncited ones
    assert row_cells(html, "t-refund-trial")[3] == 1


def test_a_note_names_only_a_chunk_its_trace_retrieved(client, make_staff, small_kb):
    from traces import services
    from traces.models import ReviewSession

    annual, trial = chunk_of("t-refund-annual", "14 days"), chunk_of("t-refund-trial")
    trace = make_trace(hits=[(annual, True, "top")], cited=[annual])
    session = ReviewSession.objects.create(name="s", window_start=trace.created_at, window_end=trace.created_at,
                                           seed=1, requested_size=1)
    session.items.create(trace=trace, source="uniform", position=1)
    author = make_staff("ana", "analyst")
    with pytest.raises(services.ReviewError, match="retrieved"):
        services.review_note_save(session=session, trace=trace, author=author, verdict="fail",
                                  first_failure="x", stage="retrieval", chunk_id=trial.pk)
    note = services.review_note_save(session=session, trace=trace, author=author, verdict="fail",
                                     first_failure="x", stage="retrieval", chunk_id=annual.pk)
    assert note.chunk == annual
