"""Files customers send on WhatsApp: fetched by a worker after the webhook answered, checked on their bytes,
stored and thumbnailed, shown in the thread; every way a download fails leaves the message and says why."""

from __future__ import annotations

import io
import json

import pytest
from celery import current_app
from PIL import Image

from desk import media, services
from desk.models import Attachment, Channel, Message
from desk.tests.media_support import OGG, PDF, ZIP, graph, image_bytes, media_storage  # noqa: F401
from tests.support.factories import CUSTOMER, conversation_start
from tests.support.fake_graph import change_value, inbound_message, webhook_body

pytestmark = pytest.mark.django_db


def media_body(kind="image", *, media_id="1001", wamid="wamid.MEDIA1", mime="image/jpeg", **extra):
    return webhook_body(change_value(messages=[inbound_message(kind, wamid=wamid, **{
        kind: {"id": media_id, "mime_type": mime, "sha256": "abc", **extra}})]))


@pytest.fixture
def fetches(monkeypatch):
    """Record the downloads queued (instead of running them) to see what the webhook request itself does."""
    ids: list[int] = []
    monkeypatch.setattr(current_app.tasks["desk.fetch_media"], "delay", ids.append)
    return ids


def stored_attachment(wamid="wamid.MEDIA1") -> Attachment:
    return Attachment.objects.select_related("message").get(message__provider_message_id=wamid)


def test_the_webhook_only_queues_the_download_and_the_worker_stores_the_image_with_a_thumbnail(
        deliver, queued, fetches, graph):
    photo = image_bytes("JPEG", size=(1600, 1200))
    graph.media["1001"] = (photo, "image/jpeg")
    response = deliver(media_body(caption="mi recibo"))
    assert response.status_code == 200
    attachment = stored_attachment()
    # Nothing was fetched inside the webhook's request: the download waits for a worker.
    assert fetches == [attachment.pk] and graph.requests == [] and attachment.state == "pending"
    assert attachment.message.text == "mi recibo" and attachment.declared_type == "image/jpeg"

    media.media_fetch(attachment_id=attachment.pk)  # what the worker runs
    attachment.refresh_from_db()
    assert attachment.state == "stored" and attachment.content_type == "image/jpeg"
    assert attachment.size == len(photo) and attachment.file.read() == photo
    with Image.open(attachment.thumbnail) as thumb:
        assert max(thumb.size) == media.THUMBNAIL_PX and thumb.format == "JPEG"
    assert [r["path"].split("?")[0] for r in graph.requests] == ["/v21.0/1001", "/download/1001"]
    assert all(r["headers"]["Authorization"] == "Bearer test-token" for r in graph.requests)


@pytest.mark.parametrize("kind, content, mime, expected", [
    ("document", PDF, "application/pdf", "application/pdf"),
    ("audio", OGG, "audio/ogg; codecs=opus", "audio/ogg"),
    ("sticker", image_bytes("WEBP", size=(512, 512)), "image/webp", "image/webp"),
    ("image", image_bytes("PNG", size=(40, 30)), "image/jpeg", "image/png"),  # the bytes decide, not the label
])
def test_each_kind_is_stored_with_the_type_its_bytes_prove(deliver, queued, graph, kind, content, mime, expected):
    graph.media["2002"] = (content, mime)
    deliver(media_body(kind, media_id="2002", mime=mime))  # eager Celery: the download runs after commit
    attachment = stored_attachment()
    assert attachment.state == "stored" and attachment.content_type == expected
    assert bool(attachment.thumbnail) == expected.startswith("image/")


def test_a_file_over_the_cap_is_not_downloaded_and_the_message_says_why(deliver, queued, graph, settings):
    settings.DESK_MEDIA_MAX_BYTES = 50_000
    graph.media["3003"] = (image_bytes("PNG", size=(900, 900), color=(1, 2, 3)) + b"\x00" * 60_000, "image/png")
    deliver(media_body(media_id="3003", mime="image/png"))
    attachment = stored_attachment()
    assert attachment.state == "failed" and "DESK_MEDIA_MAX_BYTES" in attachment.error
    assert "48 KB" in attachment.error and not attachment.file
    assert [r["path"] for r in graph.requests] == ["/v21.0/3003"]  # the size Meta declared was enough
    assert Message.objects.filter(provider_message_id="wamid.MEDIA1").exists()


def test_a_type_outside_the_list_is_refused_on_its_bytes_whatever_it_calls_itself(deliver, queued, graph):
    graph.media["4004"] = (ZIP, "application/pdf")
    deliver(media_body("document", media_id="4004", mime="application/pdf", filename="factura.pdf"))
    attachment = stored_attachment()
    assert attachment.state == "failed" and not attachment.file
    assert "ZIP archive" in attachment.error and "declared itself application/pdf" in attachment.error


def test_a_media_id_whatsapp_does_not_know_leaves_the_message_with_the_reason(deliver, queued, graph):
    deliver(media_body(media_id="5005"))  # nothing registered: the fake answers 404 as Meta does
    attachment = stored_attachment()
    assert attachment.state == "failed" and "no longer has this file" in attachment.error
    assert "404" in attachment.error and attachment.message.kind == "image"


def test_a_download_that_times_out_fails_with_a_clear_note_and_retry_then_stores_it(
        deliver, queued, graph, settings, client, make_staff, django_capture_on_commit_callbacks):
    settings.DESK_MEDIA_TIMEOUT_S = 0.3
    photo = image_bytes()
    graph.media["6006"] = (photo, "image/jpeg")
    graph.media_delay_s = 1.0
    deliver(media_body(media_id="6006"))
    attachment = stored_attachment()
    assert attachment.state == "failed" and "timed out after 0.3 s" in attachment.error

    graph.media_delay_s = 0.0
    agent = make_staff("ana", "agent")
    client.force_login(agent)
    page = client.get(f"/desk/conversations/{attachment.message.conversation_id}/").content.decode()
    assert "could not be downloaded" in page and f"/desk/files/{attachment.pk}/retry/" in page
    with django_capture_on_commit_callbacks(execute=True):  # the download is queued after the commit
        response = client.post(f"/desk/files/{attachment.pk}/retry/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    attachment.refresh_from_db()
    assert attachment.state == "stored" and attachment.attempts == 2
    # A second click changes nothing and fetches nothing more.
    before = len(graph.requests)
    again = client.post(f"/desk/files/{attachment.pk}/retry/", HTTP_HX_REQUEST="true")
    assert again.status_code == 200 and "stored already" in again.content.decode()
    assert len(graph.requests) == before


def test_without_whatsapp_settings_the_attachment_says_it_cannot_be_fetched(deliver, queued, media_storage):
    deliver(media_body())
    attachment = stored_attachment()
    assert attachment.state == "failed" and "WHATSAPP_ACCESS_TOKEN" in attachment.error


def test_the_thread_shows_the_thumbnail_the_audio_player_and_the_document_link_to_staff_only(
        deliver, queued, graph, client, make_staff):
    graph.media.update({"7001": (image_bytes(), "image/jpeg"), "7002": (OGG, "audio/ogg"),
                        "7003": (PDF, "application/pdf")})
    deliver(webhook_body(change_value(messages=[
        inbound_message("image", wamid="wamid.A", image={"id": "7001", "mime_type": "image/jpeg",
                                                         "caption": "el recibo"}),
        inbound_message("audio", wamid="wamid.B", audio={"id": "7002", "mime_type": "audio/ogg", "voice": True}),
        inbound_message("document", wamid="wamid.C", document={"id": "7003", "mime_type": "application/pdf",
                                                               "filename": "factura-octubre.pdf"}),
    ])))
    image, audio, document = (stored_attachment(w) for w in ("wamid.A", "wamid.B", "wamid.C"))
    conversation_id = image.message.conversation_id
    page_url = f"/desk/conversations/{conversation_id}/"
    assert client.get(f"/desk/files/{image.pk}/").status_code == 302  # to the login page: never public

    client.force_login(make_staff("ana", "agent"))
    page = client.get(page_url).content.decode()
    assert f'src="/desk/files/{image.pk}/thumbnail/"' in page and f'href="/desk/files/{image.pk}/"' in page
    assert "el recibo" in page and "[image]" not in page
    assert f'<audio controls preload="none" src="/desk/files/{audio.pk}/"' in page
    assert "factura-octubre.pdf" in page and f'href="/desk/files/{document.pk}/"' in page
    full = client.get(f"/desk/files/{image.pk}/")
    assert full.status_code == 200 and full["Content-Type"] == "image/jpeg"
    assert b"".join(full.streaming_content) == graph.media["7001"][0]
    thumb = client.get(f"/desk/files/{image.pk}/thumbnail/")
    assert thumb.status_code == 200 and "private" in thumb["Cache-Control"]

    client.force_login(make_staff("kim", "kb_editor"))
    assert client.get(f"/desk/files/{image.pk}/").status_code == 403


def test_the_media_escalation_card_and_the_inbox_show_the_file(deliver, graph, client, make_staff, settings):
    graph.media["8001"] = (image_bytes(), "image/jpeg")
    deliver(media_body(media_id="8001", caption="comprobante de pago"))  # the bot's turn runs too (eager)
    attachment = stored_attachment()
    escalation = attachment.message.conversation.escalations.get()
    assert escalation.reason == "MEDIA"
    client.force_login(make_staff("ana", "agent"))
    inbox = client.get("/desk/").content.decode()
    assert "Customer sent a photo, voice note or file" in inbox
    assert f'src="/desk/files/{attachment.pk}/thumbnail/"' in inbox
    page = client.get(f"/desk/conversations/{attachment.message.conversation_id}/").content.decode()
    card = page.split('id="escalation"', 1)[1].split("</section>", 1)[0]
    assert 'id="escalation-files"' in card and f"/desk/files/{attachment.pk}/thumbnail/" in card


# An agent's file ---------------------------------------------------------------------------------------

def whatsapp_held_by(agent):
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    return conversation


def upload(name, content, content_type):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type=content_type)


def test_an_agent_attaches_a_pdf_it_is_uploaded_to_whatsapp_and_sent_by_media_id(
        graph, client, make_staff, django_capture_on_commit_callbacks):
    agent = make_staff("ana", "agent")
    conversation = whatsapp_held_by(agent)
    client.force_login(agent)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/desk/conversations/{conversation.pk}/attach/", {
            "file": upload("nota-de-credito.pdf", PDF, "application/pdf"), "caption": "Su nota de crédito",
            "form_key": "k1"})
    assert response.status_code == 302
    message = Message.objects.get(conversation=conversation, author="agent")
    assert (message.kind, message.text, message.status) == ("document", "Su nota de crédito", "sent")
    (media_id, uploaded), = graph.uploads.items()
    assert uploaded["content"] == PDF and uploaded["type"] == "application/pdf"
    sent = [r["body"] for r in graph.requests if r["path"].endswith("/messages")]
    assert sent == [{"messaging_product": "whatsapp", "recipient_type": "individual", "to": CUSTOMER,
                     "type": "document", "document": {"id": media_id, "caption": "Su nota de crédito",
                                                      "filename": "nota-de-credito.pdf"}}]
    # The same form posted twice sends once.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(f"/desk/conversations/{conversation.pk}/attach/", {
            "file": upload("nota-de-credito.pdf", PDF, "application/pdf"), "form_key": "k1"})
    assert again.status_code == 302 and Message.objects.filter(author="agent").count() == 1


@pytest.mark.parametrize("name, content, expected", [
    ("virus.pdf", ZIP, "ZIP archive"),
    ("voice.ogg", OGG, "OGG/Opus audio"),
    ("empty.png", b"", "empty"),
])
def test_an_attachment_of_the_wrong_kind_is_refused_with_a_sentence(graph, client, make_staff, name, content,
                                                                   expected):
    agent = make_staff("ana", "agent")
    conversation = whatsapp_held_by(agent)
    client.force_login(agent)
    response = client.post(f"/desk/conversations/{conversation.pk}/attach/",
                           {"file": upload(name, content, "application/pdf")})
    assert response.status_code == 400 and expected in response.content.decode()
    assert not Message.objects.filter(author="agent").exists() and not graph.requests


def test_an_oversized_attachment_is_refused_before_it_is_read(graph, client, make_staff, settings):
    settings.DESK_MEDIA_MAX_BYTES = 1000
    agent = make_staff("ana", "agent")
    conversation = whatsapp_held_by(agent)
    client.force_login(agent)
    response = client.post(f"/desk/conversations/{conversation.pk}/attach/",
                           {"file": upload("big.png", image_bytes("PNG", size=(300, 300)) + b"\x00" * 2000,
                                           "image/png")})
    assert response.status_code == 400 and "attach files up to 1000 bytes" in response.content.decode()
    assert not Message.objects.filter(author="agent").exists()


def test_media_kinds_read_from_the_first_bytes():
    from desk.media_types import refused_as, sniff

    assert sniff(image_bytes("JPEG")[:32]).mime == "image/jpeg"
    assert sniff(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 8).mime == "video/mp4"
    assert sniff(b"\x00\x00\x00\x18ftypM4A " + b"\x00" * 8).mime == "audio/mp4"
    assert sniff(b"ID3\x03" + b"\x00" * 20).mime == "audio/mpeg"
    assert sniff(b"<html><script>") is None and refused_as(b"  <html>") == "HTML or XML text"
    assert sniff(b"MZ\x90\x00") is None and refused_as(b"MZ\x90\x00") == "a Windows program"
    assert json.dumps(refused_as(b"\x01\x02")) == '"an unknown type"'


def test_a_thumbnail_of_an_unreadable_image_is_skipped_not_fatal():
    assert media.image_thumbnail(b"\xff\xd8\xff\xe0 not really a jpeg") is None
    assert media.image_thumbnail(image_bytes("PNG", size=(10, 10))) is not None
    with Image.open(io.BytesIO(media.image_thumbnail(image_bytes("WEBP", size=(640, 200))))) as thumb:
        assert thumb.size == (320, 100)


@pytest.mark.django_db(transaction=True)
def test_two_downloads_of_one_file_at_once_fetch_it_once(graph):
    from tests.support.factories import in_thread

    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="image",
                                     provider_message_id="wamid.TWICE")
    attachment = Attachment.objects.create(message=message, media_id="1234", declared_type="image/jpeg")
    graph.media["1234"] = (image_bytes(), "image/jpeg")
    graph.media_delay_s = 0.5  # the first download is still running when the second starts
    errors: list = []
    threads = [in_thread(lambda: media.media_fetch(attachment_id=attachment.pk), errors) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    attachment.refresh_from_db()
    assert attachment.state == "stored" and attachment.attempts == 1
    assert [r["path"] for r in graph.requests].count("/download/1234?ext=1") == 1


def test_with_the_broker_down_the_message_is_kept_and_a_stuck_download_may_be_retried(
        deliver, queued, graph, monkeypatch, caplog, make_staff):
    from datetime import timedelta

    from kombu.exceptions import OperationalError

    from core import clock

    def refuse(*args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks["desk.fetch_media"], "delay", refuse)
    graph.media["1111"] = (image_bytes(), "image/jpeg")
    assert deliver(media_body(media_id="1111")).status_code == 200
    attachment = stored_attachment()
    assert attachment.state == "pending" and "Could not queue the download of attachment" in caplog.text
    agent = make_staff("ana", "agent")
    with pytest.raises(media.MediaUnchanged, match="being downloaded already"):
        media.media_fetch_retry(attachment_id=attachment.pk, agent=agent)
    Attachment.objects.filter(pk=attachment.pk).update(updated_at=clock.now() - timedelta(minutes=3))
    monkeypatch.undo()
    media.media_fetch_retry(attachment_id=attachment.pk, agent=agent)  # queued on commit: run it as the worker
    media.media_fetch(attachment_id=attachment.pk)
    attachment.refresh_from_db()
    assert attachment.state == "stored"
