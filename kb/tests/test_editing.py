"""The editing engine (kb/editing.py) against the real PostgreSQL + pgvector, on small documents of its own."""

import uuid

import pytest

from kb.editing import (
    EditConflict,
    chunk_preview,
    document_delete,
    document_restore,
    document_revert,
    document_save,
    reembed_job_retry,
    reembed_job_run,
    section_save,
)
from kb.embeddings import get_embedder
from kb.models import Chunk, Document, DocumentVersion, EmbeddingSpace, ReembedJob
from kb.search import search
from tests.support.kb_docs import PLANS, REFUND, CountingEmbedder, FailingEmbedder

pytestmark = pytest.mark.django_db


def index_version():
    return EmbeddingSpace.objects.get().index_version


def live_chunks(slug):
    return dict(Chunk.objects.live().filter(document__slug=slug).values_list("pk", "text"))


def test_a_save_makes_a_version_and_revert_makes_another_with_the_old_content(kb):
    plans = kb["t-plans"]
    edited = PLANS.replace("USD 25.00", "USD 27.00")
    first = document_save(document=plans, source=edited, base_version=1, note="price rise", embedder=get_embedder())
    assert first.version.number == 2 and first.version.changed_sections == ["Fibre 300"]
    plans.refresh_from_db()
    reverted = document_revert(document=plans, number=1, embedder=get_embedder())
    assert (reverted.version.number, reverted.version.kind, reverted.version.reverted_from) == (3, "revert", 1)
    plans.refresh_from_db()
    assert plans.source == PLANS and plans.version == 3
    assert list(plans.versions.values_list("number", "kind")) == [(3, "revert"), (2, "edit"), (1, "import")]
    assert any("USD 25.00" in text for text in live_chunks("t-plans").values())
    # The revert reused the stored vector of the old text: nothing to embed, no job.
    assert reverted.job is None and reverted.chunks_reused == 1


def test_a_second_editor_of_the_document_is_refused_with_the_diff_and_nothing_is_lost(kb):
    plans = kb["t-plans"]
    document_save(document=plans, source=PLANS.replace("a router", "a wifi 6 router"), base_version=1,
                  embedder=get_embedder())
    theirs = PLANS.replace("USD 20.00 otherwise", "USD 15.00 otherwise")
    with pytest.raises(EditConflict) as refused:
        document_save(document=plans, source=theirs, base_version=1, embedder=get_embedder())
    conflict = refused.value
    assert conflict.yours == theirs and conflict.current_version == 2
    assert "+Fibre 300 costs USD 25.00 a month and includes a wifi 6 router." in conflict.diff
    assert "wifi 6" in conflict.theirs
    assert Document.objects.get(pk=plans.pk).version == 2  # nothing saved
    # A deliberate re-save on top of the current version works.
    resaved = document_save(document=plans, source=conflict.theirs.replace("USD 20.00", "USD 15.00"),
                            base_version=conflict.current_version, embedder=get_embedder())
    assert resaved.version.number == 3
    assert "wifi 6" in resaved.document.source and "USD 15.00" in resaved.document.source


def test_a_second_editor_of_the_same_section_is_refused_and_can_resave(kb):
    plans = kb["t-plans"]
    section = plans.sections.live().get(heading_path="Fibre 600")
    base_hash, base_text = section.content_hash, section.text
    section_save(document=plans, section=section, text="Fibre 600 costs USD 39.00 a month.", base_hash=base_hash,
                 base_text=base_text, embedder=get_embedder())
    mine = "Fibre 600 costs USD 35.00 a month and includes a mesh kit of two nodes."
    with pytest.raises(EditConflict) as refused:
        section_save(document=plans, section=section, text=mine, base_hash=base_hash, base_text=base_text,
                     embedder=get_embedder())
    conflict = refused.value
    assert conflict.yours == mine and conflict.theirs == "Fibre 600 costs USD 39.00 a month."
    assert "+Fibre 600 costs USD 39.00 a month." in conflict.diff
    current = plans.sections.live().get(heading_path="Fibre 600")
    assert conflict.current_hash == current.content_hash
    section_save(document=plans, section=current, text=mine, base_hash=conflict.current_hash,
                 embedder=get_embedder())
    assert plans.sections.live().get(heading_path="Fibre 600").text == mine
    # An edit of another section by someone else is no conflict for this one.
    other = plans.sections.live().get(heading_path="Installation")
    result = section_save(document=plans, section=other, text="Installation is free.",
                          base_hash=other.content_hash, embedder=get_embedder())
    assert result.version.number == 4


def test_a_double_clicked_save_or_delete_acts_once(kb):
    plans = kb["t-plans"]
    edited = PLANS.replace("USD 25.00", "USD 26.00").replace("\n", "\r\n")  # a browser textarea sends CRLF
    assert document_save(document=plans, source=edited, base_version=1, embedder=get_embedder()).version
    again = document_save(document=plans, source=edited, base_version=1, embedder=get_embedder())
    assert again.version is None and Document.objects.get(pk=plans.pk).version == 2
    section = plans.sections.live().get(heading_path="Installation")
    for _ in range(2):
        section_save(document=plans, section=section, text="Installation is free.", base_hash=section.content_hash,
                     embedder=get_embedder())
    assert document_delete(document=plans).version is not None
    assert document_delete(document=plans).version is None
    assert list(plans.versions.values_list("kind", flat=True)) == ["delete", "edit", "edit", "import"]


def test_a_save_reembeds_only_the_changed_section_and_unchanged_chunks_keep_their_ids(kb):
    plans = kb["t-plans"]
    before = live_chunks("t-plans")
    version_before = index_version()
    result = document_save(document=plans, source=PLANS.replace("a mesh kit", "a mesh kit of three nodes"),
                           base_version=1, embedder=get_embedder())
    assert index_version() == version_before + 1 == result.index_version
    assert (result.chunks_created, result.chunks_retired, result.job.total) == (1, 1, 1)
    after = live_chunks("t-plans")
    kept = set(before) & set(after)
    assert len(kept) == 2 and all("three nodes" not in after[pk] for pk in kept)
    embedder = CountingEmbedder()
    job = reembed_job_run(job=result.job, embedder=embedder)
    assert embedder.embedded == ["Fibre plans\nFibre 600\n\nFibre 600 costs USD 35.00 a month and includes a mesh "
                                 "kit of three nodes."]
    assert (job.status, job.done, job.total, job.percent) == ("done", 1, 1, 100)
    assert not Chunk.objects.live().filter(document=plans, embedding__isnull=True).exists()


def test_the_background_job_runs_after_commit_and_fills_the_vectors(kb, django_capture_on_commit_callbacks):
    plans = kb["t-plans"]
    with django_capture_on_commit_callbacks(execute=True):
        result = document_save(document=plans, source=PLANS.replace("Installation is free", "Setup is free"),
                               base_version=1, embedder=get_embedder())
        assert ReembedJob.objects.get(pk=result.job.pk).status == "queued"  # until the save commits
    job = ReembedJob.objects.get(pk=result.job.pk)
    assert (job.status, job.done, job.total, job.finished_at is not None) == ("done", 1, 1, True)
    new_chunk = Chunk.objects.live().get(document=plans, text__contains="Setup is free")
    assert len(new_chunk.embedding) == 384


def test_a_failed_job_records_its_error_and_a_retry_fills_the_vectors(kb, django_capture_on_commit_callbacks):
    plans = kb["t-plans"]
    result = document_save(document=plans, source=PLANS.replace("a router", "a new router"), base_version=1,
                           embedder=get_embedder())
    with pytest.raises(RuntimeError):
        reembed_job_run(job=result.job, embedder=FailingEmbedder())
    job = ReembedJob.objects.get(pk=result.job.pk)
    assert job.status == "failed" and "unreachable" in job.error
    with django_capture_on_commit_callbacks(execute=True):
        reembed_job_retry(job=job)
    job.refresh_from_db()
    assert (job.status, job.error, job.done) == ("done", "", 1)
    assert not Chunk.objects.live().filter(document=plans, embedding__isnull=True).exists()


def test_retired_chunks_survive_an_edit_and_the_old_index_still_finds_them(kb):
    plans = kb["t-plans"]
    old = Chunk.objects.live().get(document=plans, section__heading_path="Fibre 300")
    old_version = index_version()
    document_save(document=plans, source=PLANS.replace("USD 25.00", "USD 29.00"), base_version=1,
                  embedder=get_embedder())
    old.refresh_from_db()
    assert old.retired_in == old_version + 1 and "USD 25.00" in old.text
    assert Chunk.objects.at_version(old_version).filter(pk=old.pk).exists()
    assert not Chunk.objects.live().filter(pk=old.pk).exists()


def test_a_deleted_document_leaves_search_but_an_old_index_version_still_finds_it(kb):
    version_before = index_version()
    query = "I cancelled my annual plan after ten days, do I get all my money back?"
    assert search(query, k=5).results[0].doc == "t-refund-annual"
    document_delete(document=kb["t-refund-annual"])
    assert "t-refund-annual" not in {hit.doc for hit in search(query, k=5).results}
    assert search(query, k=5, at_version=version_before).results[0].doc == "t-refund-annual"
    restored = document_restore(document=Document.objects.get(slug="t-refund-annual"), embedder=get_embedder())
    assert restored.job is None and restored.version.kind == DocumentVersion.Kind.RESTORE
    assert search(query, k=5).results[0].doc == "t-refund-annual"


def test_the_preview_shows_the_exact_chunk_texts_and_what_changes(kb):
    plans = kb["t-plans"]
    source = (PLANS.replace("USD 25.00", "USD 26.00").replace("## Installation\nInstallation is free for annual plans "
                                                              "and USD 20.00 otherwise.\n", "## Routers\nA router.\n"))
    preview = chunk_preview(document=plans, source=source, slug="t-plans", embedder=get_embedder())
    assert [(s.heading_path, s.status) for s in preview.sections] == [
        ("Fibre 300", "changed"), ("Fibre 600", "unchanged"), ("Routers", "new")]
    assert preview.sections[2].chunks[0].text == "Fibre plans\nRouters\n\nA router."
    assert preview.sections[2].chunks[0].tokens > 0
    assert preview.removed == ["Installation"]
    broken = chunk_preview(document=plans, source=PLANS.replace("slug: t-plans", "slug: other"), slug="t-plans",
                           embedder=get_embedder())
    assert "slug cannot change" in broken.error


def test_a_bot_turn_after_an_edit_records_the_new_index_version_and_retrieves_the_new_chunk(kb):
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from desk.models import Contact, Conversation, Message

    result = document_save(document=kb["t-refund-annual"],
                           source=REFUND.replace("refunded in full", "refunded in full (USD 120.00 at most)"),
                           base_version=1, embedder=get_embedder())
    reembed_job_run(job=result.job, embedder=get_embedder())
    contact = Contact.objects.create(channel="webchat", name="T", customer_id="C-1001", language="en")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text="I cancelled my annual plan after ten days, do I get my money back?",
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    trace = run_turn(message_id=message.pk, writer=TemplateWriter())
    assert trace.index_version == result.index_version
    new_chunk = Chunk.objects.live().get(document__slug="t-refund-annual", text__contains="USD 120.00")
    assert trace.retrieval[0]["chunk_id"] == new_chunk.pk
