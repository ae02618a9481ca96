"""Files on conversations: a customer's image, voice note, video, document or sticker fetched from WhatsApp,
checked, stored and thumbnailed; an agent's image or PDF stored for sending.

The webhook only records that a message carries media (`attachment_track`, inside the inbound transaction)
and queues `desk.fetch_media` on commit; the download runs in a Celery worker (`media_fetch`), never in the
webhook request. What a file is, is read from its bytes (desk.media_types), never from its name or the type
the sender declared. Every failure — WhatsApp not configured, the media id gone (404), a timeout, a file over
DESK_MEDIA_MAX_BYTES, a type outside the list — leaves the message stored and the attachment `failed` with a
sentence the thread shows beside a Retry button (`media_fetch_retry`, idempotent).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError
from PIL import Image, ImageOps, UnidentifiedImageError

from core import clock
from core.tasks import task_queue
from desk.access import require_desk_worker
from desk.graph_media import MediaUnavailable, media_download
from desk.media_types import HEAD_BYTES, OUTGOING, FileType, allowed_labels, refused_as, size_label, sniff
from desk.models import Attachment, Message

logger = logging.getLogger(__name__)

FETCH_TASK = "desk.fetch_media"
THUMBNAIL_PX = 320
# An image with more pixels than this gets no thumbnail (a decompression bomb is a few KB on the wire).
THUMBNAIL_MAX_PIXELS = 40_000_000
# A download that has said nothing for this long may be retried (its task was lost with a broker restart).
STUCK_AFTER = timedelta(minutes=2)


class MediaActionError(Exception):
    """A file action that cannot be done; the message says why."""


class MediaUnchanged(MediaActionError):
    """The attachment is already as the action would leave it (a double click)."""


def attachment_track(*, message_id: int, payload: dict) -> Attachment:
    """Record that an inbound message carries WhatsApp media and queue its download after commit.

    Call inside the transaction that stored the message.
    """
    attachment = Attachment.objects.create(
        message_id=message_id, media_id=str(payload.get("media_id") or ""),
        declared_type=str(payload.get("mime_type") or "")[:100],
        filename=str(payload.get("filename") or "")[:255])
    transaction.on_commit(partial(fetch_queue, attachment.pk))
    return attachment


def fetch_queue(attachment_id: int) -> None:
    """Queue a download (after commit); with the broker away the thread offers Retry once it is stuck."""
    try:
        task_queue(FETCH_TASK, attachment_id)
    except BrokerError:
        logger.exception("Could not queue the download of attachment %s: the broker is unreachable", attachment_id)


@transaction.atomic
def media_fetch(*, attachment_id: int) -> Attachment | None:
    """Download, check and store the attachment's file; record why not when it cannot be.

    The attachment row stays locked from the claim to the result, so two downloads of one file (a retried task,
    a double-clicked Retry) fetch it once: the second finds it locked (returns None) or stored.
    """
    attachment = Attachment.objects.select_for_update(skip_locked=True).filter(pk=attachment_id).first()
    if attachment is None or attachment.state == Attachment.State.STORED:
        return attachment
    attachment.attempts += 1
    try:
        _fetch_and_store(attachment)
    except MediaUnavailable as exc:
        attachment.state, attachment.error = Attachment.State.FAILED, str(exc)
        logger.warning("Attachment %s of message %s not stored: %s", attachment.pk, attachment.message_id, exc)
    attachment.save()
    return attachment


def _fetch_and_store(attachment: Attachment) -> None:
    token, phone_number_id = settings.WHATSAPP_ACCESS_TOKEN, settings.WHATSAPP_PHONE_NUMBER_ID
    if not (token and phone_number_id):
        raise MediaUnavailable("WhatsApp is not connected here (WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID "
                               "are not set), so the file cannot be fetched.")
    if not attachment.media_id:
        raise MediaUnavailable("WhatsApp sent no media id with this message, so there is no file to fetch.")
    media = media_download(base_url=settings.WHATSAPP_API_BASE_URL, access_token=token,
                           media_id=attachment.media_id, max_bytes=settings.DESK_MEDIA_MAX_BYTES,
                           timeout_s=settings.DESK_MEDIA_TIMEOUT_S)
    if media.declared_type and not attachment.declared_type:
        attachment.declared_type = media.declared_type[:100]
    file_type = _checked_type(media.content, declared=attachment.declared_type)
    _store(attachment, media.content, file_type)


def _checked_type(content: bytes, *, declared: str) -> FileType:
    """Return the allowed type the bytes prove; raise MediaUnavailable naming what they are instead."""
    if not content:
        raise MediaUnavailable("WhatsApp sent an empty file.")
    head = content[:HEAD_BYTES]
    file_type = sniff(head)
    if file_type is None:
        said = f" (it declared itself {declared})" if declared else ""
        raise MediaUnavailable(f"The file's bytes are {refused_as(head)}{said}, not a type the desk keeps "
                               f"({allowed_labels()}); it was not stored.")
    return file_type


def _store(attachment: Attachment, content: bytes, file_type: FileType) -> None:
    attachment.file.save(f"file.{file_type.extension}", ContentFile(content), save=False)
    attachment.content_type, attachment.size = file_type.mime, len(content)
    attachment.state, attachment.error = Attachment.State.STORED, ""
    if file_type.is_image:
        thumbnail = image_thumbnail(content)
        if thumbnail is not None:
            attachment.thumbnail.save("thumb.jpg", ContentFile(thumbnail), save=False)


def image_thumbnail(content: bytes) -> bytes | None:
    """Return a JPEG at most THUMBNAIL_PX on a side, upright; None when the image cannot be read."""
    try:
        with Image.open(io.BytesIO(content)) as image:
            if image.width * image.height > THUMBNAIL_MAX_PIXELS:
                return None
            image = ImageOps.exif_transpose(image)
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
            if image.mode not in ("RGB", "L"):
                image = image.convert("RGBA")
                background = Image.new("RGB", image.size, (255, 255, 255))
                background.paste(image, mask=image.getchannel("A"))
                image = background
            out = io.BytesIO()
            image.save(out, format="JPEG", quality=80)
            return out.getvalue()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        logger.warning("An image could not be read for its thumbnail", exc_info=True)
        return None


@transaction.atomic
def media_fetch_retry(*, attachment_id: int, agent) -> Attachment:
    """Download a failed (or stuck) attachment again; a second click while it downloads changes nothing."""
    require_desk_worker(agent)
    attachment = Attachment.objects.select_for_update().get(pk=attachment_id)
    if attachment.message.direction != Message.Direction.INBOUND:
        raise MediaActionError("Only a file the customer sent is downloaded from WhatsApp.")
    if attachment.state == Attachment.State.STORED:
        raise MediaUnchanged("This file is stored already.")
    if attachment.state == Attachment.State.PENDING and clock.now() - attachment.updated_at < STUCK_AFTER:
        raise MediaUnchanged("This file is being downloaded already.")
    attachment.state, attachment.error = Attachment.State.PENDING, ""
    attachment.save(update_fields=["state", "error", "updated_at"])
    transaction.on_commit(partial(fetch_queue, attachment.pk))
    return attachment


@dataclass(frozen=True)
class CheckedUpload:
    content: bytes
    file_type: FileType
    filename: str

    @property
    def kind(self) -> str:
        return "image" if self.file_type.is_image else "document"


def upload_check(*, content: bytes, filename: str) -> CheckedUpload:
    """Return an agent's file when it may be sent (an image or a PDF, under the cap); raise MediaActionError."""
    limit = settings.DESK_MEDIA_MAX_BYTES
    if not content:
        raise MediaActionError("The file is empty.")
    if len(content) > limit:
        raise MediaActionError(f"The file is {size_label(len(content))}; attach files up to {size_label(limit)}.")
    head = content[:HEAD_BYTES]
    file_type = sniff(head)
    if file_type is None or file_type.mime not in OUTGOING:
        what = file_type.label if file_type else refused_as(head)
        raise MediaActionError(f"The file is {what}: attach a JPEG or PNG image, or a PDF.")
    name = "".join(c for c in filename if c.isprintable() and c not in '/\\"').strip()[:200]
    return CheckedUpload(content=content, file_type=file_type, filename=name or f"file.{file_type.extension}")


def attachment_store_outgoing(*, message: Message, upload: CheckedUpload) -> Attachment:
    """Store an agent's checked file on its (queued) message; call inside the transaction that created it."""
    attachment = Attachment(message=message, filename=upload.filename, declared_type=upload.file_type.mime)
    _store(attachment, upload.content, upload.file_type)
    attachment.save()
    return attachment


def attachment_bytes(attachment: Attachment) -> bytes:
    """Return the stored file's bytes."""
    with attachment.file.open("rb") as stored:
        return stored.read()

